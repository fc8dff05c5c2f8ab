// The REAL CUPTI 12.4 and 12.9 (libcupti.so.12 of the nvidia-cuda-cupti-cu12 wheels 12.4.127 and 12.9.79, fetched and
// pinned by scripts/setup): what the loader learns from each, the strides its cuptiActivityGetNextRecord walks, every
// field the translator reads from the structs each writes, and the 13.0 headers' declarations of those structs
// against each wheel's own headers. No GPU needed: the walk only reads the caller's buffer.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <string>

#include "activity_buffers.h"
#include "collector_run.h"
#include "cupti12_wheels.h"
#include "cupti_loader/search.h"

using namespace gprof;
using namespace gprof::testing;
using namespace gprof::collector::cupti;

namespace {

// What each release is, as measured on the libraries (2026-11-27) and documented in their headers.
struct Expected {
    uint32_t api_version;
    const char* name;
    uint32_t driver_cbids, runtime_cbids;  // CUPTI_DRIVER_TRACE_CBID_SIZE / CUPTI_RUNTIME_TRACE_CBID_SIZE
    bool driver_api_filter;                // cuptiActivityEnableDriverApi: 12.5 and later
};
const Expected kExpected[] = {
    {22, "12.4", 754, 468, false},
    {28, "12.9 Update 1", 784, 487, true},
};

const Expected* expected_for(uint32_t api_version) {
    for (const Expected& e : kExpected)
        if (e.api_version == api_version) return &e;
    return nullptr;
}

// Each wheel's library, loaded once per process. Says SKIPPED (ctest: skipped) when scripts/setup could not fetch them.
struct Loaded {
    const Cupti12Wheel* wheel;
    const CuptiApi* api;
};
std::vector<Loaded> wheels() {
    std::vector<Loaded> out;
    for (const Cupti12Wheel* w = kCupti12Wheels; w->version; ++w) {
        static std::map<std::string, LoadResult> loaded;
        auto it = loaded.find(w->library);
        if (it == loaded.end()) it = loaded.emplace(w->library, load_cupti_file(w->library, "test")).first;
        INFO(it->second.reason);
        REQUIRE(it->second.api != nullptr);
        out.push_back({w, it->second.api});
    }
    if (out.empty())
        std::cout << "SKIPPED: no CUPTI 12 wheel under .deps/cupti-wheels (scripts/setup fetches them from PyPI)\n";
    return out;
}

template <class Fn>
void with_layout(const CuptiApi* api, Fn&& fn) {
    if (api->version == 22)
        fn(Layout12_4{});
    else
        fn(Layout12_9{});
}

std::set<std::string> lines_of(const std::string& text) {
    std::set<std::string> out;
    std::string line;
    for (char c : text) {
        if (c != '\n') {
            line += c;
            continue;
        }
        if (line.rfind("CUPTI_API_VERSION", 0) != 0) out.insert(line);
        line.clear();
    }
    return out;
}

}  // namespace

TEST_CASE("real CUPTI 12: both releases are fetched, and each is a release this build reads", "[cupti12][real]") {
    auto all = wheels();
    if (all.empty()) return;
    std::set<uint32_t> versions;
    for (auto& [wheel, api] : all) {
        INFO("wheel " << wheel->version);
        versions.insert(api->version);
        const Expected* e = expected_for(api->version);
        REQUIRE(e != nullptr);
        CHECK(api->release.name == e->name);
        CHECK(api->release.cuda_major == 12);
        CHECK(api->release.supported);
        CHECK(api->path == wheel->library);
    }
    CHECK(versions == std::set<uint32_t>{22, 28});  // scripts/setup's two pins: 12.4.127 and 12.9.79
}

TEST_CASE("real CUPTI 12: the loader learns its callback-id counts and which functions it lacks", "[cupti12][real]") {
    for (auto& [wheel, api] : wheels()) {
        INFO("wheel " << wheel->version);
        const Expected* e = expected_for(api->version);
        REQUIRE(e != nullptr);
        CHECK(api->driver_cbids == e->driver_cbids);
        CHECK(api->runtime_cbids == e->runtime_cbids);
        CHECK(api->knows_cbid(CUPTI_CB_DOMAIN_DRIVER_API, e->driver_cbids - 1));
        CHECK_FALSE(api->knows_cbid(CUPTI_CB_DOMAIN_DRIVER_API, e->driver_cbids));
        CHECK((api->ActivityEnableDriverApi != nullptr) == e->driver_api_filter);
        CHECK((api->ActivityEnableRuntimeApi != nullptr) == e->driver_api_filter);
        CHECK(api->Subscribe_v2 == nullptr);  // 13.0 added it
        CHECK(api->ActivityRegisterTimestampCallback != nullptr);
    }
}

TEST_CASE("real CUPTI 12: it walks its structs at exactly their sizes, and the loader asked it the same",
          "[cupti12][real]") {
    for (auto& [wheel, api] : wheels()) {
        INFO("wheel " << wheel->version);
        with_layout(api, [&]<class L>(L) { strides_are_struct_sizes<L>(api); });
    }
}

TEST_CASE("real CUPTI 12: every kind translates field by field, nothing read past a record", "[cupti12][real]") {
    for (auto& [wheel, api] : wheels()) {
        INFO("wheel " << wheel->version);
        with_layout(api, [&]<class L>(L) { every_kind_field_by_field<L>(api); });
        CHECK(fields_unknown(*api) == "a kernel's isDeviceLaunched (Kernel9), a memory pool's isManagedPool (MemoryPool2)");
    }
}

TEST_CASE("real CUPTI 12: the 13.0 headers declare the structs each wheel's own headers do", "[cupti12][real]") {
    auto all = wheels();
    if (all.empty()) return;
    TempDir dir;
    auto dump = [&](const std::string& program) {
        RunResult r = run_program({program}, {}, dir.path().string());
        REQUIRE(r.exit_code() == 0);
        return r.out;
    };
    const std::string thirteen = dump(GPROF_TEST_CUPTI_LAYOUT_13);
    const std::set<std::string> declared = lines_of(thirteen);
    for (auto& [wheel, api] : all) {
        INFO("wheel " << wheel->version);
        const std::string own = dump(wheel->layout_dump);
        CHECK(own.find("CUPTI_API_VERSION " + std::to_string(api->version) + "\n") == 0);
        std::set<std::string> lines = lines_of(own);
        CHECK(lines.size() > 100);  // every struct read and its fields, not an empty dump
        for (const std::string& line : lines) {
            INFO(line);
            CHECK(declared.count(line) == 1);
        }
    }
}
