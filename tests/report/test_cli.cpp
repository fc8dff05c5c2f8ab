// The built gprof-report binary on good, malformed and truncated input: clear message, non-zero exit, no crash.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "report_cli.h"
#include "report_fixture.h"

using namespace gprof::testing;

TEST_CASE("cli: summary of a run directory", "[cli]") {
    TempDir dir;
    write_small_run(dir);
    auto r = run_report(dir.path().string(), dir);
    CHECK(r.status == 0);
    CHECK(r.out.find("GPU activities:") != std::string::npos);
    CHECK(r.out.find("API calls:") != std::string::npos);
    CHECK(r.out.find("NVTX ranges:") != std::string::npos);
    CHECK(r.out.find("\nAnalysis: ") != std::string::npos);
    CHECK(r.out.find("NVTX result:") == std::string::npos);  // nvprof's per-thread block: --full
    auto full = run_report("--full " + dir.path().string(), dir);
    CHECK(full.out.find("NVTX result:") != std::string::npos);
}

TEST_CASE("cli: json to a file, reports chosen by name", "[cli]") {
    TempDir dir;
    write_small_run(dir);
    auto r = run_report("cuda_api_sum cuda_gpu_trace --format json -o " + dir.file("r.json") + " " + dir.path().string(), dir);
    REQUIRE(r.status == 0);
    std::ifstream in(dir.file("r.json"));
    auto j = nlohmann::json::parse(in);
    CHECK(j["reports"].contains("cuda_api_sum"));
    CHECK(j["reports"].contains("cuda_gpu_trace"));
}

TEST_CASE("cli: timeline subcommand", "[cli]") {
    TempDir dir;
    write_small_run(dir);
    auto r = run_report("timeline -o " + dir.file("t.json") + " " + dir.path().string(), dir);
    CHECK(r.status == 0);
    std::ifstream in(dir.file("t.json"));
    CHECK(nlohmann::json::parse(in).contains("traceEvents"));
    // Perfetto's protobuf by --format or by the output's name; --gzip is for JSON only.
    auto first_byte = [](const std::string& path) {
        std::ifstream f(path, std::ios::binary);
        return f.get();
    };
    CHECK(run_report("timeline -o " + dir.file("t.perfetto-trace") + " " + dir.path().string(), dir).status == 0);
    CHECK(first_byte(dir.file("t.perfetto-trace")) == 0x0A);
    CHECK(run_report("timeline --format perfetto -o " + dir.file("t.bin") + " " + dir.path().string(), dir).status == 0);
    CHECK(first_byte(dir.file("t.bin")) == 0x0A);
    CHECK(run_report("timeline --format json -o " + dir.file("t2.pftrace") + " " + dir.path().string(), dir).status == 0);
    CHECK(first_byte(dir.file("t2.pftrace")) == '{');
    auto gz = run_report("timeline --gzip -o " + dir.file("t.pftrace") + " " + dir.path().string(), dir);
    CHECK(gz.status == 2);
    CHECK(run_report("timeline --format xml " + dir.path().string(), dir).status == 2);
}

TEST_CASE("cli: not a trace -> clear message, exit 2", "[cli]") {
    TempDir dir;
    std::ofstream(dir.file("junk.gprof")) << "this is not a trace at all, just text\n";
    auto r = run_report(dir.file("junk.gprof"), dir);
    CHECK(r.status == 2);
    CHECK(r.err.find("not a gprof-run trace") != std::string::npos);
    auto t = run_report("timeline -o " + dir.file("t.json") + " " + dir.file("junk.gprof"), dir);
    CHECK(t.status == 2);
}

TEST_CASE("cli: empty file, missing path, directory without traces, bad options", "[cli]") {
    TempDir dir;
    std::ofstream(dir.file("empty.gprof")).close();
    CHECK(run_report(dir.file("empty.gprof"), dir).status == 2);
    auto missing = run_report(dir.file("nope"), dir);
    CHECK(missing.status == 2);
    CHECK(missing.err.find("does not exist") != std::string::npos);
    std::filesystem::create_directory(dir.path() / "emptyrun");
    auto none = run_report((dir.path() / "emptyrun").string(), dir);
    CHECK(none.status == 2);
    CHECK(none.err.find("no *.gprof traces") != std::string::npos);
    write_small_run(dir);
    CHECK(run_report("--format xml " + dir.path().string(), dir).status == 2);
    CHECK(run_report("--time-range 5s:1s " + dir.path().string(), dir).status == 2);
    CHECK(run_report("--kernel-filter '(' " + dir.path().string(), dir).status == 2);
    CHECK(run_report("cuda_api_sum nvtx_sum --format csv " + dir.path().string(), dir).status == 2);
}

TEST_CASE("cli: truncated trace at many cut points -> report of what is intact, exit 2, never a crash", "[cli]") {
    TempDir dir;
    std::string full = dir.file("whole.bin");
    write_trace(full, fill_small_run, true, test_header(), 512);  // small chunks: many cut points
    std::ifstream in(full, std::ios::binary);
    std::string bytes(std::istreambuf_iterator<char>(in), {});
    for (size_t cut : {size_t(9), size_t(40), bytes.size() / 3, bytes.size() / 2, bytes.size() - 7}) {
        std::string path = dir.file("cut.gprof");
        std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(cut));
        for (const char* what : {"", "cuda_gpu_trace ", "timeline -o /dev/null "}) {
            auto r = run_report(std::string(what) + path, dir);
            INFO("cut at " << cut << " of " << bytes.size() << ", args '" << what << "': " << r.err);
            CHECK(r.status < 128);  // no signal
            if (std::string(what).rfind("timeline", 0) != 0) CHECK(r.status == 2);
            CHECK(!r.err.empty());
        }
    }
    // Corrupt bytes in the middle: same.
    std::string mid = bytes;
    for (size_t i = mid.size() / 2; i < mid.size() / 2 + 16; ++i) mid[i] = static_cast<char>(mid[i] ^ 0x5a);
    std::ofstream(dir.file("cut.gprof"), std::ios::binary | std::ios::trunc) << mid;
    auto r = run_report(dir.file("cut.gprof"), dir);
    CHECK(r.status == 2);
    CHECK(r.err.find("damaged") != std::string::npos);
    CHECK(run_report("--ignore-damage " + dir.file("cut.gprof"), dir).status == 0);
}
