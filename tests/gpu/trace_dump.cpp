// gprof-test-trace-dump: every record of one or more gprof-run traces as JSON lines, for scripts/gpu-check.
//
// The check driver compares what the collector recorded with the known answers record by record (overlaps on a
// stream, durations against the app's wall time, bytes of every copy); it reads traces through the project's own
// reader so it does not depend on the report's summaries. One line per record, {"k": kind, ...}; first a
// "header" line per file, last a "read" line with the reader's statistics and warnings.
//
//   gprof-test-trace-dump TRACE... > records.jsonl     exit 0 read, 2 a file could not be opened at all
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "gprof/trace/names.h"
#include "gprof/trace/reader.h"

namespace {

using nlohmann::json;
using namespace gprof::trace;

std::string demangle(std::string_view name) {
    std::string s(name);
    if (s.rfind("_Z", 0) != 0) return s;
    int status = 0;
    char* out = abi::__cxa_demangle(s.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !out) return s;
    std::string d(out);
    std::free(out);
    return d;
}

void emit(const json& j) {
    std::cout << j.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
}

json record_json(const TraceReader& r, const Record& rec) {
    auto str = [&](StringId id) { return std::string(r.string(id)); };
    switch (rec.kind) {
    case RecordKind::Kernel: {
        const Kernel& k = rec.kernel;
        std::string name = str(k.name);
        return {{"k", "kernel"}, {"name", name}, {"demangled", demangle(name)}, {"start", k.start}, {"end", k.end},
                {"device", k.device}, {"context", k.context}, {"stream", k.stream}, {"corr", k.correlation},
                {"grid", {k.grid_x, k.grid_y, k.grid_z}}, {"block", {k.block_x, k.block_y, k.block_z}},
                {"dyn_smem", k.dynamic_shared_bytes}, {"static_smem", k.static_shared_bytes},
                {"registers", k.registers_per_thread}, {"graph_id", k.graph_id}};
    }
    case RecordKind::Memcpy: {
        const Memcpy& m = rec.memcpy;
        return {{"k", "memcpy"}, {"kind", memcpy_kind_name(m.copy_kind)}, {"src", memory_kind_name(m.src_kind)},
                {"dst", memory_kind_name(m.dst_kind)}, {"bytes", m.bytes}, {"start", m.start}, {"end", m.end},
                {"device", m.device}, {"peer", m.peer_device}, {"stream", m.stream}, {"corr", m.correlation},
                {"graph_id", m.graph_id}, {"async", m.async}};
    }
    case RecordKind::Memset: {
        const Memset& m = rec.memset;
        return {{"k", "memset"}, {"bytes", m.bytes}, {"value", m.value}, {"start", m.start}, {"end", m.end},
                {"device", m.device}, {"stream", m.stream}, {"corr", m.correlation}, {"graph_id", m.graph_id}};
    }
    case RecordKind::ApiCall: {
        const ApiCall& a = rec.api;
        return {{"k", "api"}, {"name", str(a.name)}, {"start", a.start}, {"end", a.end}, {"tid", a.tid},
                {"corr", a.correlation}, {"result", a.result},
                {"domain", a.domain == ApiDomain::Runtime ? "runtime" : "driver"}};
    }
    case RecordKind::Nvtx: {
        const Nvtx& n = rec.nvtx;
        return {{"k", "nvtx"}, {"name", str(n.name)}, {"domain", str(n.domain)}, {"type", nvtx_type_name(n.type)},
                {"start", n.start}, {"end", n.end}, {"tid", n.tid}, {"depth", n.depth}};
    }
    case RecordKind::GraphLaunch: {
        const GraphLaunch& g = rec.graph_launch;
        return {{"k", "graph_launch"}, {"graph_id", g.graph_id}, {"start", g.start}, {"end", g.end},
                {"stream", g.stream}, {"corr", g.correlation}};
    }
    case RecordKind::Dropped:
        return {{"k", "dropped"}, {"count", rec.dropped.count}, {"source", drop_source_name(rec.dropped.source)}};
    case RecordKind::Capture:
        return {{"k", "capture"}, {"action", rec.capture.action == CaptureAction::Start ? "start" : "stop"},
                {"reason", capture_reason_name(rec.capture.reason)}, {"timestamp", rec.capture.timestamp}};
    case RecordKind::Status:
        return {{"k", "status"}, {"component", component_name(rec.status.component)},
                {"level", status_level_name(rec.status.level)}, {"code", rec.status.code},
                {"message", str(rec.status.message)}};
    case RecordKind::CudaInfo:
        return {{"k", "cuda_info"}, {"driver", rec.cuda_info.driver_version},
                {"cupti_api", rec.cuda_info.cupti_api_version}, {"cupti_library", str(rec.cuda_info.cupti_library)}};
    case RecordKind::Device:
        return {{"k", "device"}, {"id", rec.device.id}, {"name", str(rec.device.name)},
                {"cc", std::to_string(rec.device.cc_major) + "." + std::to_string(rec.device.cc_minor)}};
    case RecordKind::Thread:
        return {{"k", "thread"}, {"tid", rec.thread.tid}, {"name", str(rec.thread.name)}};
    case RecordKind::End:
        return {{"k", "end"}, {"records_written", rec.end.records_written},
                {"records_dropped", rec.end.records_dropped}, {"timestamp", rec.end.timestamp}};
    default:
        return {{"k", std::string(record_kind_name(rec.kind))}};
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: gprof-test-trace-dump TRACE...\n");
        return 2;
    }
    std::ios::sync_with_stdio(false);
    int rc = 0;
    for (int i = 1; i < argc; ++i) {
        try {
            TraceReader r(argv[i]);
            const TraceHeader& h = r.header();
            emit({{"k", "header"}, {"file", argv[i]}, {"pid", h.pid}, {"ppid", h.ppid}, {"executable", h.executable},
                  {"argv", h.argv}, {"producer", h.producer}, {"run_id", h.run_id},
                  {"version", std::to_string(h.version_major) + "." + std::to_string(h.version_minor)}});
            Record rec;
            while (r.next(rec)) emit(record_json(r, rec));
            const ReadStats& s = r.stats();
            emit({{"k", "read"}, {"file", argv[i]}, {"has_end", s.has_end}, {"records", s.records},
                  {"truncated_bytes", s.truncated_bytes}, {"corrupt_chunks", s.corrupt_chunks},
                  {"unknown_records", s.unknown_records}, {"warnings", r.warnings()}});
        } catch (const std::exception& e) {
            emit({{"k", "error"}, {"file", argv[i]}, {"message", e.what()}});
            rc = 2;
        }
    }
    std::cout.flush();
    return rc;
}
