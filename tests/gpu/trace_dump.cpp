// gprof-test-trace-dump: every record of one or more gprof-run traces as JSON lines, for scripts/gpu-check.
//
// The check driver compares what the collector recorded with the known answers record by record (overlaps on a
// stream, durations against the app's wall time, bytes of every copy); it reads traces through the project's own
// reader so it does not depend on the report's summaries. One line per record, {"k": kind, ...}; first a
// "header" line per file, last a "read" line with the reader's statistics and warnings.
//
// Every field of every kind is printed, under its struct member's name, straight from the field lists of
// gprof/trace/fields.h (so a field added there shows up here with no change): string ids as their text,
// enumerations as their names.h names, a build id as hex, backtrace frames as a list. "k" is record_kind_name;
// kernels add "demangled".
//
//   gprof-test-trace-dump TRACE... > records.jsonl     exit 0 read, 2 a file could not be opened at all
#include <cxxabi.h>

#include <type_traits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "gprof/trace/fields.h"
#include "gprof/trace/names.h"
#include "gprof/trace/reader.h"

namespace {

using json = nlohmann::ordered_json;  // fields in their on-disk order, "k" first
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

// Enumerations print as their display names; every other number as itself.
json shown(MemcpyKind v) { return memcpy_kind_name(v); }
json shown(MemoryKind v) { return memory_kind_name(v); }
json shown(SyncType v) { return sync_type_name(v); }
json shown(NvtxType v) { return nvtx_type_name(v); }
json shown(NvtxPayload v) { return nvtx_payload_name(v); }
json shown(DropSource v) { return drop_source_name(v); }
json shown(CaptureAction v) { return capture_action_name(v); }
json shown(CaptureReason v) { return capture_reason_name(v); }
json shown(Component v) { return component_name(v); }
json shown(StatusLevel v) { return status_level_name(v); }
json shown(ApiDomain v) { return api_domain_name(v); }
json shown(MemoryOp v) { return memory_op_name(v); }
json shown(MemoryPoolType v) { return memory_pool_type_name(v); }
json shown(MemoryPoolOp v) { return memory_pool_op_name(v); }
json shown(TraceClock v) { return trace_clock_name(v); }
json shown(ExecImage v) { return exec_image_name(v); }
template <class T> json shown(T v) {
    if constexpr (std::is_enum_v<T>) return static_cast<std::underlying_type_t<T>>(v);  // no name defined yet
    else return v;
}

// A field visitor (see fields.h) that puts each field into a JSON object under its name.
struct JsonFields {
    const TraceReader& reader;
    json& out;

    template <class T> void u(const char* name, const T& v) { out[name] = shown(v); }
    template <class T> void s(const char* name, const T& v) { out[name] = v; }
    void str(const char* name, const StringId& id) { out[name] = std::string(reader.string(id)); }
    void time(const char* name, const Timestamp& t) { out[name] = t; }
    void end(const char* name, const Timestamp& e, const Timestamp&) { out[name] = e; }
    void corr(const char* name, const uint32_t& c) { out[name] = c; }
    void bytes(const char* name, const uint8_t* data, const uint32_t& size, uint32_t max) {
        static const char kHex[] = "0123456789abcdef";
        std::string hex;
        for (uint32_t i = 0; i < size && i < max; ++i) {
            hex += kHex[data[i] >> 4];
            hex += kHex[data[i] & 15];
        }
        out[name] = hex;
    }
    void frames(const char* name, const uint64_t* f, const uint32_t& count, uint32_t max) {
        out[name] = std::vector<uint64_t>(f, f + (count < max ? count : max));
    }
    void reals(const char* name, const double* values, const uint32_t& count, uint32_t max) {
        out[name] = std::vector<double>(values, values + (count < max ? count : max));
    }
    void text(const char* name, const std::string& t) { out[name] = t; }
    void texts(const char* name, const TraceHeader& h) { out[name] = h.argv; }
};

json record_json(const TraceReader& r, const Record& rec) {
    json j = {{"k", std::string(record_kind_name(rec.kind))}};
    JsonFields fields{r, j};
    visit(rec, [&](const auto& record) {
        using R = std::remove_cvref_t<decltype(record)>;
        describe(fields, const_cast<R&>(record));  // JsonFields only reads
        if constexpr (std::is_same_v<R, Kernel>) j["demangled"] = demangle(r.string(record.name));
    });
    return j;
}

json header_json(const TraceReader& r, const char* file) {
    const TraceHeader& h = r.header();
    json j = {{"k", "header"}, {"file", file},
              {"version", std::to_string(h.version_major) + "." + std::to_string(h.version_minor)},
              {"features", h.features}};
    JsonFields fields{r, j};
    describe_header(fields, h);
    return j;
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
            emit(header_json(r, argv[i]));
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
