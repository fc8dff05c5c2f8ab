// Structure-aware libFuzzer target (issue #15): an input is a trace file. The custom mutator splits it into its
// records (tests/support/hostile_trace.h), changes values, kinds, lengths and string ids, and frames the result
// again with correct sizes and CRC-32C, so the inputs get past the checksum that stops a byte-level fuzzer; then
// every output is made from it in-process (every_output.h: the summary and every nsys-named report, memory,
// timeline JSON and Perfetto, analyze, diff, gprof-run's end-of-run summary). A crash, a sanitizer report, an
// exception escaping, a timeout or going over -rss_limit_mb / -malloc_limit_mb is a bug.
//
// Seeded from the real H100 traces (tests/data/h100/*/*.gprof); inputs that do not parse (libFuzzer's own
// mutations and cross-overs) get a byte-level mutation instead, which keeps the framing itself fuzzed too.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "every_output.h"
#include "hostile_trace.h"

namespace fs = std::filesystem;

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

struct Scratch {
    fs::path dir, trace;
    gprof::report::RunFigures baseline;
    Scratch() {
        std::string base = fs::exists("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string();
        std::string tmpl = base + "/gprof-fuzz-XXXXXX";
        if (!::mkdtemp(tmpl.data())) std::abort();
        dir = tmpl;
        trace = dir / "app.1.gprof";
        fs::path seed = fs::path(GPROF_SOURCE_DIR) / "tests/data/h100/ka-static-kernels/gprof-test-ka.434.gprof";
        baseline = gprof::report::extract_figures(gprof::report::load_run({seed}), {});
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

Scratch& scratch() {
    static Scratch s;
    return s;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    return gprof::testing::mutate_trace_input(data, size, max_size, seed, LLVMFuzzerMutate);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Scratch& s = scratch();
    {
        std::ofstream f(s.trace, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    gprof::testing::run_every_output(s.dir, s.trace, s.baseline);
    return 0;
}
