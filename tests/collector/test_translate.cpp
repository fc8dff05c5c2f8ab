// Translation of every activity kind the session enables, from synthetic buffers built with the real structs
// of cupti_activity.h (CUDA 13.0), walked with the REAL libcupti.so.13's cuptiActivityGetNextRecord (it works with
// no GPU), written with TraceWriter, decoded with TraceReader and compared field by field (activity_buffers.h; the
// same checks with CUPTI 12: test_cupti12_real.cpp).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "activity_buffers.h"

using namespace gprof;
using namespace gprof::collector::cupti;
using namespace gprof::testing;

namespace {

const CuptiApi* real_cupti() {
    static LoadResult r = load_cupti_file(GPROF_TEST_REAL_CUPTI, "test");
    return r.api;
}

}  // namespace

TEST_CASE("the real libcupti loads and walks caller-built buffers", "[translate]") {
    const CuptiApi* api = real_cupti();
    REQUIRE(api != nullptr);
    CHECK(api->version >= kMinCupti13ApiVersion);
    CHECK(api->path.find("libcupti.so") != std::string::npos);
}

TEST_CASE("struct sizes of the 13.0 headers are the record strides of the real libcupti", "[translate]") {
    strides_are_struct_sizes<Layout13>(real_cupti());
}

TEST_CASE("every enabled activity kind translates field by field", "[translate]") {
    every_kind_field_by_field<Layout13>(real_cupti());
}

TEST_CASE("device records carry name, compute capability, memory and UUID", "[translate]") {
    const CuptiApi* api = real_cupti();
    REQUIRE(api);
    ActivityBuffer b;
    auto& d = b.add<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
    d.id = 3;
    d.name = "NVIDIA H100 80GB HBM3";
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
    d.numMultiprocessors = 132;
    d.globalMemorySize = 85ull << 30;
    for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(0x10 + i);
    Built f = freeze(b);
    TempDir dir;
    std::string path = dir.file("d.gprof");
    Translator t(api);
    gprof::testing::write_trace(path, [&](trace::TraceWriter& w) { t.translate(w, f.data, f.size); });
    trace::TraceReader reader(path);
    auto recs = gprof::testing::read_all_records(reader);
    REQUIRE(recs.size() >= 1);
    REQUIRE(recs[0].kind == trace::RecordKind::Device);
    CHECK(recs[0].device.id == 3);
    CHECK(reader.string(recs[0].device.name) == "NVIDIA H100 80GB HBM3");
    CHECK(recs[0].device.cc_major == 9);
    CHECK(recs[0].device.sm_count == 132);
    CHECK(recs[0].device.global_memory_bytes == (85ull << 30));
    CHECK(reader.string(recs[0].device.uuid) == "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
}

TEST_CASE("a timestamp offset moves known times and leaves unknown ones at 0", "[translate]") {
    const CuptiApi* api = real_cupti();
    REQUIRE(api);
    ActivityBuffer b;
    auto& k = b.add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = 5000;
    k.end = 0;
    k.name = "k";
    Built f = freeze(b);
    auto recs = translate_and_read(api, f.data, f.size, nullptr, nullptr, -1000);
    REQUIRE(recs.size() == 1);
    CHECK(recs[0].kernel.start == 4000);
    CHECK(recs[0].kernel.end == 0);
}

TEST_CASE("an empty or null buffer writes nothing", "[translate]") {
    const CuptiApi* api = real_cupti();
    REQUIRE(api);
    TranslateStats stats;
    auto recs = translate_and_read(api, nullptr, 0, &stats);
    CHECK(recs.empty());
    CHECK(stats.buffers == 1);
}

TEST_CASE("names are re-interned for a new writer", "[translate]") {
    const CuptiApi* api = real_cupti();
    REQUIRE(api);
    ActivityBuffer b;
    auto& a = b.add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020;
    auto& k = b.add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.name = "_Z1kv";
    Built f = freeze(b);
    Translator t(api);
    TempDir dir;
    for (int round = 0; round < 2; ++round) {
        std::string path = dir.file("r" + std::to_string(round) + ".gprof");
        gprof::testing::write_trace(path, [&](trace::TraceWriter& w) {
            // The second round's writer lives at another address or not: reset() makes it safe either way.
            if (round == 1) t.reset();
            t.translate(w, f.data, f.size);
        });
        trace::TraceReader reader(path);
        auto recs = gprof::testing::read_all_records(reader);
        REQUIRE(recs.size() >= 2);
        CHECK(reader.string(recs[0].api.name) == "cudaMemcpy");
        CHECK(reader.string(recs[1].kernel.name) == "_Z1kv");
    }
}

TEST_CASE("uuid text follows nvidia-smi", "[translate]") {
    uint8_t bytes[16];
    for (int i = 0; i < 16; ++i) bytes[i] = static_cast<uint8_t>(i * 17);
    char out[41];
    format_uuid(bytes, out);
    CHECK(std::string(out) == "GPU-00112233-4455-6677-8899-aabbccddeeff");
}
