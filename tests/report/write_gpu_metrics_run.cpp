// Test double: writes the generated GPU-metrics run of gpu_metrics_fixture.h into a directory, so that scripts (the
// browser check of report.html) can render a run with GPU metrics without a GPU.
//   gprof-test-gpu-metrics-run DIR
#include <cstdio>
#include <filesystem>

#include "gpu_metrics_fixture.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    std::filesystem::create_directories(argv[1]);
    gprof::testing::write_trace((std::filesystem::path(argv[1]) / "app.4242.gprof").string(),
                                gprof::testing::fill_gpu_metrics_run);
    return 0;
}
