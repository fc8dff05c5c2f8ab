// gprof-report typed from nsys stats habit: -r/--report lists, -f/--format, --timeunit spellings, options anywhere
// on the line, nsys's old report names, reports gprof-run cannot make (skipped with the reason), unknown names
// (exit 2 with the list), --kernel-filter on the demangled names, a .gz timeline name.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "report_cli.h"
#include "report_fixture.h"

using namespace gprof::testing;
using nlohmann::json;

TEST_CASE("nsys habits: options anywhere, -r lists, -f, --timeunit", "[nsys]") {
    TempDir dir;
    write_small_run(dir);  // pid 4242
    const std::string run = dir.path().string();

    // The option's value must not swallow the run directory.
    auto r = run_report("summary --process 4242 " + run, dir);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("process 4242:") != std::string::npos);
    CHECK(run_report("--process 4242 --device 0 cuda_gpu_kern_sum " + run, dir).status == 0);

    // -r NAME,NAME -f json -o FILE (nsys stats spelling), old and new names, duplicates made once.
    r = run_report("-r cuda_gpu_kern_sum,nvtxsum,nvtx_sum -f json -o " + dir.file("r.json") + " " + run, dir);
    REQUIRE(r.status == 0);
    json j = json::parse(slurp(dir.file("r.json")));
    CHECK(j["reports"].size() == 2);
    CHECK(j["reports"]["cuda_gpu_kern_sum"]["rows"].size() == 2);
    CHECK(j["reports"]["nvtx_sum"]["rows"].size() >= 4);
    CHECK(run_report("--report gpukernsum --report cudaapisum " + run, dir).out.find("(cuda_api_sum)") != std::string::npos);

    // --timeunit: nsys's names and prefixes; -f column is nsys's name for the console table.
    r = run_report("cuda_gpu_kern_sum -f csv --timeunit usec " + run, dir);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("Total Time (us)") != std::string::npos);
    CHECK(r.out.find("66.000") != std::string::npos);  // 66000 ns
    CHECK(run_report("cuda_gpu_kern_sum -f column --timeunit milliseconds " + run, dir).out.find("Total Time (ms)") !=
          std::string::npos);
    CHECK(run_report("cuda_gpu_kern_sum --timeunit sec " + run, dir).out.find("Total Time (s)") != std::string::npos);
    r = run_report("cuda_gpu_kern_sum --timeunit m " + run, dir);  // msec or microseconds: ambiguous
    CHECK(r.status == 2);
    CHECK(r.err.find("unknown time unit 'm'") != std::string::npos);
}

TEST_CASE("nsys habits: unknown and unavailable reports", "[nsys]") {
    TempDir dir;
    write_small_run(dir);
    const std::string run = dir.path().string();

    auto r = run_report("cuda_gpu_kern_summ " + run, dir);
    CHECK(r.status == 2);
    CHECK(r.err.find("unknown report 'cuda_gpu_kern_summ'") != std::string::npos);
    CHECK(r.err.find("cuda_gpu_kern_sum, ") != std::string::npos);  // the list of known ones
    r = run_report("-r nosuch " + run, dir);
    CHECK(r.status == 2);
    CHECK(r.err.find("unknown report 'nosuch'") != std::string::npos);

    // A report nsys has and gprof-run cannot make: skipped with the reason, the others still made.
    r = run_report("-r syscall_sum,nvtx_sum,um_sum " + run, dir);
    CHECK(r.status == 0);
    CHECK(r.err.find("skipped syscall_sum: gprof-run does not trace system calls") != std::string::npos);
    CHECK(r.err.find("skipped um_sum: no unified-memory records") != std::string::npos);
    CHECK(r.out.find("(nvtx_sum)") != std::string::npos);
    r = run_report("-r syscall_sum " + run, dir);
    CHECK(r.status == 2);  // nothing could be made
    r = run_report("-r syscall_sum,nvtx_sum -f json " + run, dir);
    REQUIRE(r.status == 0);
    CHECK(json::parse(r.out)["skipped"].contains("syscall_sum"));
    // osrt_sum is made since issue 35 (OS-runtime calls): a run without any gives its empty table, not a skip.
    r = run_report("-r osrt_sum " + run, dir);
    CHECK(r.status == 0);
    CHECK(r.err.find("skipped osrt_sum") == std::string::npos);

    // nsys's report arguments are ignored with a note, not an error.
    r = run_report("cuda_gpu_kern_sum:base " + run, dir);
    CHECK(r.status == 0);
    CHECK(r.err.find("report arguments (':base') are ignored") != std::string::npos);
}

TEST_CASE("nsys habits: --kernel-filter matches the demangled names, .gz means gzip", "[nsys]") {
    TempDir dir;
    write_small_run(dir);
    const std::string run = dir.path().string();
    // kernel(float*, int) and other_kernel() as the table shows them.
    auto r = run_report("cuda_gpu_kern_sum -f csv --kernel-filter '^kernel\\(float' " + run, dir);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("kernel(float*, int)") != std::string::npos);
    CHECK(r.out.find("other_kernel") == std::string::npos);
    r = run_report("cuda_gpu_kern_sum -f csv --kernel-filter '^_Z12other' " + run, dir);  // mangled still works
    CHECK(r.out.find("other_kernel()") != std::string::npos);
    CHECK(r.out.find("kernel(float*, int)") == std::string::npos);

    REQUIRE(run_report("timeline -o " + dir.file("t.json.gz") + " " + run, dir).status == 0);
    std::string gz = slurp(dir.file("t.json.gz"));
    REQUIRE(gz.size() > 2);
    CHECK(static_cast<unsigned char>(gz[0]) == 0x1f);  // gzip magic
    CHECK(static_cast<unsigned char>(gz[1]) == 0x8b);
}
