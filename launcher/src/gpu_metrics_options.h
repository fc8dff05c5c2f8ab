// gprof-run's GPU metrics options (issue 37; nsys's spellings): --gpu-metrics-devices none|all|N[,N],
// --gpu-metrics-frequency HZ, --gpu-metrics-set NAME|help. Checked with the contract's parsers (gprof/env/values.h)
// and the collector's one list of metric sets (collector/metrics/metric_sets.h), so that a typo stops gprof-run
// before the program runs and both sides read a value alike. Kept apart from options.cpp, which only calls these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "options.h"

namespace CLI {
class App;
}

namespace gprof::launcher {

struct GpuMetricsText {  // the three values as typed
    std::string devices, frequency, set;
};

// Adds the three options to `app`; their values land in `text`.
void add_gpu_metrics_options(CLI::App& app, GpuMetricsText& text);
// After parsing: whether --gpu-metrics-set help was asked for (then print gpu_metrics_set_help() and exit 0).
bool gpu_metrics_help_asked(const CLI::App& app, const GpuMetricsText& text);
// Checks the options given and sets `o`'s fields (--gpu-metrics-devices none sets nothing). Returns the error line
// of the first bad one, or empty; a rate or a set without devices adds a note that it changes nothing.
std::string take_gpu_metrics_options(const CLI::App& app, const GpuMetricsText& text, LaunchOptions& o,
                                     std::vector<std::string>& notes);

// Each returns an empty string when `text` is valid, else the error line (naming the option).
std::string check_gpu_metrics_devices(std::string_view text);
std::string check_gpu_metrics_frequency(std::string_view text);
std::string check_gpu_metrics_set(std::string_view text);

// --gpu-metrics-set help: every set, its chips and metrics.
std::string gpu_metrics_set_help();

}  // namespace gprof::launcher
