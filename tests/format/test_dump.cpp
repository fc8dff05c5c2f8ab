// gprof-test-trace-dump (tests/gpu/trace_dump.cpp) prints every field of every record kind: the GPU check
// compares its output with the known-answer app, so a kind it shows as {"k": "memory"} alone checks nothing.
// The expected values are add_every_kind's, written out by hand.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "gprof/trace/names.h"
#include "record_samples.h"
#include "trace_fixture.h"

using namespace gprof::trace;
using namespace gprof::testing;
using nlohmann::json;

namespace {

std::vector<json> dump(const std::string& trace) {
    std::string cmd = std::string(GPROF_TEST_BINARY_DIR) + "/apps/gprof-test-trace-dump '" + trace + "'";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::vector<json> lines;
    std::string line;
    for (int c; (c = std::fgetc(p)) != EOF;) {
        if (c != '\n') {
            line += static_cast<char>(c);
            continue;
        }
        lines.push_back(json::parse(line));
        line.clear();
    }
    CHECK(::pclose(p) == 0);
    return lines;
}

}  // namespace

TEST_CASE("the trace dumper prints every field of every record kind") {
    TempDir dir;
    auto path = dir.file("every.gprof");
    write_trace(path, [](TraceWriter& w) { add_every_kind(w); });
    auto lines = dump(path);
    std::map<std::string, json> by_kind;
    for (const auto& l : lines) by_kind[l.at("k").get<std::string>()] = l;

    for (RecordKind k : kDataRecordKinds) {
        INFO(record_kind_name(k));
        REQUIRE(by_kind.count(std::string(record_kind_name(k))) == 1);
        CHECK(by_kind[std::string(record_kind_name(k))].size() >= 3);  // "k" and at least two fields
    }

    const json& h = by_kind["header"];
    CHECK(h["producer"] == "gprof-run test");
    CHECK(h["pid"] == 4242);
    CHECK(h["pid_ns"] == 4026531836);
    CHECK(h["hostname"] == "testhost");
    CHECK(h["argv"] == json::array({"./app", "--steps", "3"}));
    CHECK(h["clock"] == "realtime");
    CHECK(h["realtime_ns"] == 1'700'000'000'000'000'000);
    CHECK(h["run_id"] == "test-run");
    CHECK(h["version"] == "1.7");

    const json& k = by_kind["kernel"];
    CHECK(k["name"] == "_Z6vecAddPKfS0_Pfi");
    CHECK(k["demangled"] == "vecAdd(float const*, float const*, float*, int)");
    CHECK(k["grid_x"] == 1024);
    CHECK(k["grid_y"] == 2);
    CHECK(k["block_x"] == 256);
    CHECK(k["correlation"] == 77);
    CHECK(k["registers_per_thread"] == 32);
    CHECK(k["dynamic_shared_bytes"] == 49152);
    CHECK(k["local_bytes_per_thread"] == 16);
    CHECK(k["graph_node_id"] == (1ull << 40));
    CHECK(k["device_launched"] == 1);
    CHECK(k["end"].get<uint64_t>() - k["start"].get<uint64_t>() == 20'000);

    const json& mc = by_kind["memcpy"];
    CHECK(mc["copy_kind"] == "PtoP");
    CHECK(mc["src_kind"] == "Pinned");
    CHECK(mc["dst_kind"] == "Device");
    CHECK(mc["bytes"] == (1ull << 33));
    CHECK(mc["peer_device"] == 1);

    CHECK(by_kind["memset"]["value"] == 0xAB);
    CHECK(by_kind["memset"]["memory_kind"] == "Managed");
    CHECK(by_kind["sync"]["type"] == "ContextSynchronize");
    CHECK(by_kind["sync"]["stream"] == 0xFFFFFFFFu);

    const json& nv = by_kind["nvtx"];
    CHECK(nv["domain"] == "my.domain");
    CHECK(nv["category_name"] == "layers");
    CHECK(nv["payload_type"] == "double");
    CHECK(nv["type"] == "StartEnd");
    CHECK(nv["end"] == 0);
    CHECK(nv["end_tid"] == 12346);
    CHECK(nv["depth"] == 2);

    const json& me = by_kind["memory"];
    CHECK(me["address"] == 0x7F1234567000ull);
    CHECK(me["op"] == "release");
    CHECK(me["memory_kind"] == "Device");
    CHECK(me["correlation"] == 81);
    CHECK(me["async"] == 1);
    CHECK(me["pool_type"] == "local");
    CHECK(me["pool_size"] == (1ull << 31));
    CHECK(me["pool_used"] == (3ull << 20));
    const json& mp = by_kind["memory_pool"];
    CHECK(mp["op"] == "trimmed");
    CHECK(mp["pool_type"] == "local");
    CHECK(mp["size"] == (1ull << 30));
    CHECK(mp["min_bytes_to_keep"] == (1u << 21));
    CHECK(mp["managed"] == 1);
    CHECK(mp["correlation"] == 82);

    CHECK(by_kind["overhead"]["overhead_kind"] == (1u << 16));
    CHECK(by_kind["overhead"]["object_id"] == 99);
    CHECK(by_kind["dropped"]["source"] == "cupti_buffer");
    CHECK(by_kind["dropped"]["count"] == 17);
    CHECK(by_kind["capture"]["action"] == "stop");
    CHECK(by_kind["capture"]["reason"] == "profiler_api");
    CHECK(by_kind["backtrace"]["frames"].size() == kMaxBacktraceFrames);
    CHECK(by_kind["backtrace"]["frames"][1] == 0x55'5555'0000ull + 0x1234 - 0x100000);
    CHECK(by_kind["module"]["path"] == "/lib/libapp.so");
    CHECK(by_kind["module"]["build_id"] == "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff00010203");
    CHECK(by_kind["graph_launch"]["graph_id"] == 5);
    CHECK(by_kind["external_correlation"]["external_id"] == (1ull << 50));
    CHECK(by_kind["exec"]["path"] == "/sbin/ldconfig.real");
    CHECK(by_kind["exec"]["command"] == "/sbin/ldconfig.real -p");
    CHECK(by_kind["exec"]["image"] == "static");
    CHECK(by_kind["exec"]["spawned"] == 1);
    CHECK(by_kind["exec"]["pid"] == 4243);
    CHECK(by_kind["role"]["rank"] == 3);
    CHECK(by_kind["role"]["local_rank"] == 1);
    CHECK(by_kind["role"]["world_size"] == -1);
    CHECK(by_kind["role"]["variables"] == "RANK=3 LOCAL_RANK=1");
    CHECK(by_kind["end"]["signal"] == 0);
    CHECK(by_kind["status"]["message"] == "CUPTI unavailable: no driver");
    CHECK(by_kind["status"]["component"] == "cupti");
    CHECK(by_kind["status"]["level"] == "warning");
    CHECK(by_kind["status"]["code"] == 999);
    CHECK(by_kind["api_call"]["result"] == -3);
    CHECK(by_kind["api_call"]["domain"] == "driver");
    CHECK(by_kind["api_call"]["cbid"] == 211);
    CHECK(by_kind["device"]["uuid"] == "GPU-1234");
    CHECK(by_kind["device"]["global_memory_bytes"] == 85'520'809'984ull);
    CHECK(by_kind["cuda_info"]["cupti_library"] == "/usr/local/cuda/lib64/libcupti.so.13");
    CHECK(by_kind["thread"]["name"] == "worker-1");
    CHECK(by_kind["end"]["records_written"] == kEveryKindCount);
    CHECK(by_kind["read"]["has_end"] == true);
}
