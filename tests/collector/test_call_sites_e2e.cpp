// Call sites end to end (issue 18, native part): test_cupti_standin_app run through this build's gprof-run with the
// CUPTI stand-in as its CUPTI (GPROF_CUPTI_LIB) and the libcuda stand-in as its driver. Each CUDA call of the app is
// made from a function of its own; the first frame of each stack must lie inside that function (its extent read
// from the app's symbol table, its run-time address printed by the app), and no frame may lie in the collector,
// CUPTI or the driver (their ranges from the trace's Module records).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collector_run.h"
#include "elf_symbols.h"

using namespace gprof;
using namespace gprof::testing;

namespace {

std::string gprof_run() { return std::string(GPROF_BINARY_DIR) + "/bin/gprof-run"; }

struct Run {
    TempDir dir;
    RunResult result;
    std::map<std::string, uint64_t> site_address;  // "gprof_test_site_launch" -> run-time address

    // with_driver: the app initialises CUDA through the libcuda stand-in (its cuInit is then a call of the program,
    // with a call site); without, it calls InitializeInjection itself.
    Run(const std::vector<std::string>& options, const std::string& mode, int n,
        std::map<std::string, std::string> env = {}, bool with_driver = false) {
        env["GPROF_CUPTI_LIB"] = GPROF_TEST_CUPTI_STANDIN;
        env["GPROF_TEST_CUDA_STANDIN"] = with_driver ? GPROF_TEST_CUDA_STANDIN : "\x01";
        env["GPROF_TEST_STANDIN_SCRIPT"] = "\x01";
        std::vector<std::string> argv = {gprof_run(), "-o", "run", "--summary=none", "--no-timeline"};
        argv.insert(argv.end(), options.begin(), options.end());
        argv.insert(argv.end(), {test_program("test_cupti_standin_app"), mode, std::to_string(n)});
        result = run_program(argv, env, dir.path().string());
        std::istringstream out(result.out);
        std::string word, name, address;
        while (out >> word)
            if (word == "site" && out >> name >> address) site_address[name] = std::stoull(address, nullptr, 16);
    }
    std::vector<std::string> trace_paths() const {
        std::vector<std::string> out;
        for (auto& p : traces_in((dir.path() / "run").string())) out.push_back(p.string());
        return out;
    }
};

struct CallSites {
    LoadedTrace trace;
    // The Stack records CallSite records name. The trace's stack table is shared with CPU samples and OS-runtime
    // calls (issue 35), whose stacks are not call sites and are left out here.
    std::map<uint32_t, trace::Stack> stacks;
    std::vector<trace::CallSite> sites;
    std::map<uint32_t, std::string> api_name;  // correlation -> ApiCall name
    bool order_ok = true;                      // every CallSite after the Stack it names

    explicit CallSites(const std::string& path) : trace(load_trace(path)) {
        std::map<uint32_t, trace::Stack> all;
        for (auto& r : trace.records) {
            if (r.kind == trace::RecordKind::Stack) all[r.stack.id] = r.stack;
            if (r.kind == trace::RecordKind::CallSite) {
                if (r.call_site.stack != 0 && !all.count(r.call_site.stack)) order_ok = false;
                sites.push_back(r.call_site);
                if (r.call_site.stack != 0 && all.count(r.call_site.stack))
                    stacks[r.call_site.stack] = all[r.call_site.stack];
            }
            if (r.kind == trace::RecordKind::ApiCall) api_name[r.api.correlation] = std::string(trace.str(r.api.name));
            CHECK(r.kind != trace::RecordKind::Backtrace);
        }
    }
    // Call sites per first-frame function.
    size_t sites_from(const Run& run, const std::string& function) const {
        size_t n = 0;
        for (auto& s : sites)
            if (s.stack && in_function(run, function, stacks.at(s.stack).frames[0])) ++n;
        return n;
    }
    static bool in_function(const Run& run, const std::string& function, uint64_t address) {
        auto extent = elf_function(test_program("test_cupti_standin_app"), function);
        REQUIRE(extent.has_value());
        REQUIRE(run.site_address.count(function) == 1);
        uint64_t start = run.site_address.at(function);
        return address > start && address <= start + extent->size;  // a return address: after its call
    }
};

// [base, base + size) of every loaded object whose path contains `part`, from the trace's Module records.
std::vector<std::pair<uint64_t, uint64_t>> module_ranges(const LoadedTrace& t, const std::string& part) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (auto& r : t.records)
        if (r.kind == trace::RecordKind::Module && t.str(r.module.path).find(part) != std::string::npos)
            out.emplace_back(r.module.base, r.module.base + r.module.size);
    return out;
}

}  // namespace

TEST_CASE("call sites: every call's stack starts in the function that made it, none in the collector, CUPTI or "
          "the driver", "[call-sites][e2e]") {
    constexpr int kCalls = 25;
    Run run({"--backtrace"}, "call-sites", kCalls, {}, /*with_driver=*/true);
    INFO(run.result.err);
    REQUIRE(run.result.exit_code() == 0);
    auto paths = run.trace_paths();
    REQUIRE(paths.size() == 1);
    CallSites cs(paths[0]);
    CHECK(cs.order_ok);
    // 5 sites x kCalls calls, and the program's cuInit (through the driver stand-in, from main); one Stack per site,
    // one CallSite per call, each naming an API call of the trace.
    REQUIRE(cs.sites.size() == 5 * kCalls + 1);
    CHECK(cs.stacks.size() == 6);
    for (const char* f : {"gprof_test_site_launch", "gprof_test_site_memcpy", "gprof_test_site_slow_sync",
                          "gprof_test_site_fast_sync", "gprof_test_site_other"}) {
        INFO(f);
        CHECK(cs.sites_from(run, f) == kCalls);
    }
    std::map<std::string, size_t> by_name;
    for (auto& s : cs.sites) {
        CHECK(s.tid != 0);
        CHECK(s.py_stack == 0);
        REQUIRE(cs.api_name.count(s.correlation) == 1);
        ++by_name[cs.api_name.at(s.correlation)];
    }
    CHECK(by_name["cudaLaunchKernel"] == kCalls);
    CHECK(by_name["cudaMemcpy"] == kCalls);
    CHECK(by_name["cudaDeviceSynchronize"] == 2 * kCalls);
    CHECK(by_name["cudaEventRecord"] == kCalls);
    CHECK(by_name["cuInit"] == 1);
    // No frame of any stack in the collector, the stand-in CUPTI or the stand-in driver.
    auto collector = module_ranges(cs.trace, "libgprof-collector.so");
    auto cupti = module_ranges(cs.trace, "libgprof-test-cupti-standin.so");
    auto driver = module_ranges(cs.trace, "cuda_standin/libcuda.so");
    REQUIRE(collector.size() == 1);
    REQUIRE(cupti.size() == 1);
    REQUIRE(driver.size() == 1);
    for (auto& [id, st] : cs.stacks) {
        CHECK(st.frame_count > 1);
        CHECK(st.frame_count <= 16);
        for (uint32_t i = 0; i < st.frame_count; ++i)
            for (auto* ranges : {&collector, &cupti, &driver})
                for (auto& [lo, hi] : *ranges) CHECK_FALSE((st.frames[i] >= lo && st.frames[i] < hi));
    }
    CHECK(cs.trace.count_status("call sites: 126 calls recorded, 6 distinct stacks", trace::StatusLevel::Info) == 1);
}

TEST_CASE("call sites: --cudabacktrace picks calls by kind and threshold", "[call-sites][e2e]") {
    constexpr int kCalls = 10;
    SECTION("sync:2000000: only the synchronisations that took 2 ms or more") {
        Run run({"--cudabacktrace=sync:2000000"}, "call-sites", kCalls);
        INFO(run.result.err);
        REQUIRE(run.result.exit_code() == 0);
        auto paths = run.trace_paths();
        REQUIRE(paths.size() == 1);
        CallSites cs(paths[0]);
        CHECK(cs.sites.size() == kCalls);
        CHECK(cs.sites_from(run, "gprof_test_site_slow_sync") == kCalls);
        CHECK(cs.stacks.size() == 1);
    }
    SECTION("kernel:0,memory:0: launches and copies, every one") {
        Run run({"--cudabacktrace=kernel:0,memory:0"}, "call-sites", kCalls);
        REQUIRE(run.result.exit_code() == 0);
        CallSites cs(run.trace_paths().at(0));
        CHECK(cs.sites.size() == 2 * kCalls);
        CHECK(cs.sites_from(run, "gprof_test_site_launch") == kCalls);
        CHECK(cs.sites_from(run, "gprof_test_site_memcpy") == kCalls);
    }
    SECTION("other:0 with --backtrace=4: the event record only, 4 frames") {
        Run run({"--cudabacktrace=other:0", "--backtrace=4"}, "call-sites", kCalls);
        REQUIRE(run.result.exit_code() == 0);
        CallSites cs(run.trace_paths().at(0));
        CHECK(cs.sites.size() == kCalls);
        CHECK(cs.sites_from(run, "gprof_test_site_other") == kCalls);
        REQUIRE(cs.stacks.size() == 1);
        CHECK(cs.stacks.begin()->second.frame_count == 4);
    }
    SECTION("kernel (nsys's default threshold, 80 us): the stand-in's launches are faster, none is recorded") {
        Run run({"--cudabacktrace=kernel"}, "call-sites", kCalls);
        REQUIRE(run.result.exit_code() == 0);
        CallSites cs(run.trace_paths().at(0));
        CHECK(cs.trace.count(trace::RecordKind::ApiCall) >= 5 * kCalls);  // the calls themselves are all there
        CHECK(cs.sites.empty());
        CHECK(cs.stacks.empty());
    }
}

TEST_CASE("call sites: the runtime's initialisation inside libc's pthread_once still starts at the program's call",
          "[call-sites][e2e]") {
    // The real shape (H200, CUDA 13.0, tests/data/h200/call-sites-shared): the driver calls the runtime makes while
    // it initialises run inside pthread_once, so libc's frame lies between the runtime's own; before the cut passed
    // over it, those calls' stacks started in libc with the runtime's frames after it.
    constexpr int kDriverCalls = 5;
    Run run({"--backtrace"}, "call-sites-init", kDriverCalls);
    INFO(run.result.err);
    REQUIRE(run.result.exit_code() == 0);
    CallSites cs(run.trace_paths().at(0));
    CHECK(cs.order_ok);
    std::map<std::string, size_t> by_name;
    auto cupti = module_ranges(cs.trace, "libgprof-test-cupti-standin.so");
    REQUIRE(cupti.size() == 1);
    for (auto& s : cs.sites) {
        std::string name = cs.api_name.at(s.correlation);
        ++by_name[name];
        INFO(name);
        REQUIRE(s.stack != 0);
        const trace::Stack& st = cs.stacks.at(s.stack);
        CHECK(CallSites::in_function(run, "gprof_test_site_first_call", st.frames[0]));
        for (uint32_t i = 0; i < st.frame_count; ++i)
            for (auto& [lo, hi] : cupti) CHECK_FALSE((st.frames[i] >= lo && st.frames[i] < hi));
    }
    CHECK(by_name["cuDriverGetVersion"] == kDriverCalls);
    CHECK(by_name["cudaGetDeviceCount"] == 2);
}

TEST_CASE("call sites: a full stack table gives stack 0, counted and said", "[call-sites][e2e]") {
    // 10 distinct stacks (recursion depth 0..9), 3 calls each, in a table of 4. Without CPU samples and OS-runtime
    // calls, whose stacks would share the table.
    Run run({"--backtrace", "-s", "none", "-t", "cuda,nvtx"}, "call-sites-deep", 10,
            {{"GPROF_CALL_SITE_MAX_STACKS", "4"}});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code() == 0);
    CallSites cs(run.trace_paths().at(0));
    CHECK(cs.order_ok);
    CHECK(cs.stacks.size() == 4);
    REQUIRE(cs.sites.size() == 30);
    size_t without = 0;
    for (auto& s : cs.sites) {
        if (s.stack == 0) {
            ++without;
            continue;
        }
        CHECK(CallSites::in_function(run, "gprof_test_site_recurse", cs.stacks.at(s.stack).frames[0]));
    }
    CHECK(without == 18);
    CHECK(cs.trace.count_status("call-site table full at 4 distinct stacks", trace::StatusLevel::Warning) == 1);
    CHECK(cs.trace.count_status("call sites: 18 calls without their stack: the table of 4 distinct stacks was full",
                                trace::StatusLevel::Warning) == 1);
}

TEST_CASE("call sites: a forked child's trace has its own stacks from id 1", "[call-sites][e2e]") {
    // Without CPU samples and OS-runtime calls: their stacks share the table and may take id 1 first.
    Run run({"--backtrace", "-s", "none", "-t", "cuda,nvtx"}, "call-sites-fork", 12);
    INFO(run.result.err);
    REQUIRE(run.result.exit_code() == 0);
    CHECK(run.result.out.find("child 0") != std::string::npos);
    auto paths = run.trace_paths();
    REQUIRE(paths.size() == 2);
    for (auto& p : paths) {
        INFO(p);
        CallSites cs(p);
        CHECK(cs.order_ok);
        REQUIRE(cs.stacks.size() == 1);
        CHECK(cs.stacks.begin()->first == 1);
        CHECK(cs.sites.size() == 12);
        CHECK(cs.sites_from(run, "gprof_test_site_launch") == 12);
    }
}

TEST_CASE("call sites: a bad --cudabacktrace exits 2 with one clear line, the app never runs", "[call-sites][e2e]") {
    for (const char* bad : {"--cudabacktrace=kernal", "--cudabacktrace=sync:fast", "--cudabacktrace=none,all"}) {
        Run run({bad}, "call-sites", 1);
        INFO(bad << "\n" << run.result.err);
        CHECK(run.result.exit_code() == 2);
        CHECK(run.result.out.empty());
        CHECK(run.result.err.rfind("gprof-run: error: --cudabacktrace=", 0) == 0);
        CHECK_FALSE(std::filesystem::exists(run.dir.path() / "run"));
    }
}

// The whole way (issue 18): gprof-run --backtrace on the stand-in app, then gprof-report cuda_callsite_sum names the
// source line of each site's call (read from the app's source here), with its kernels and copies.
TEST_CASE("call sites: gprof-report names the file:line of the program's call", "[call-sites][e2e][report]") {
    constexpr int kCalls = 5;
    Run run({"--backtrace"}, "call-sites", kCalls);
    REQUIRE(run.result.exit_code() == 0);
    auto line_of = [](const std::string& text) {
        std::ifstream src(std::string(GPROF_SOURCE_DIR) + "/tests/collector/cupti_standin/standin_app.cpp");
        std::string l;
        for (int n = 1; std::getline(src, l); ++n)
            if (l.find(text) != std::string::npos) return n;
        return 0;
    };
    int launch = line_of("SI(gprof_test_standin_launch_kernel)(\"_Z4sitev\", 7)");
    int copy = line_of("SI(gprof_test_standin_memcpy)(1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD)");
    REQUIRE(launch > 0);
    REQUIRE(copy > 0);
    RunResult r = run_program({std::string(GPROF_BINARY_DIR) + "/bin/gprof-report", "cuda_callsite_sum", "--format",
                               "csv", (run.dir.path() / "run").string()},
                              {}, run.dir.path().string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code() == 0);
    auto row_with = [&](int line) {
        std::string key = "standin_app.cpp:" + std::to_string(line) + ",";
        size_t at = r.out.find(key);
        if (at == std::string::npos) return std::string();
        size_t begin = r.out.rfind('\n', at) + 1;
        return r.out.substr(begin, r.out.find('\n', at) - begin);
    };
    std::string launch_row = row_with(launch), copy_row = row_with(copy);
    CHECK(launch_row.find(",gprof_test_site_launch," + std::to_string(kCalls) + ",") != std::string::npos);
    CHECK(copy_row.find(",gprof_test_site_memcpy," + std::to_string(kCalls) + ",") != std::string::npos);
}
