#include "gpu_metrics_options.h"

#include <CLI/CLI.hpp>

#include <vector>

#include "gprof/env/values.h"
#include "metrics/metric_sets.h"
#include "output/suggest.h"

namespace gprof::launcher {

namespace metrics = gprof::collector::metrics;

void add_gpu_metrics_options(CLI::App& app, GpuMetricsText& text) {
    app.add_option("--gpu-metrics-devices", text.devices,
                   "Sample GPU metrics (SM, tensor-core, DRAM, PCIe activity over time) on these CUDA devices: none "
                   "(default), all, or a comma list of device numbers")
        ->type_name("none|all|N[,N]");
    app.add_option("--gpu-metrics-frequency", text.frequency,
                   "GPU metric samples per second, 10 to 200000 (default 10000)")
        ->type_name("HZ");
    app.add_option("--gpu-metrics-set", text.set,
                   "The GPU metric set (default: the one of each device's chip); help lists them")
        ->type_name("NAME");
}

bool gpu_metrics_help_asked(const CLI::App& app, const GpuMetricsText& text) {
    return app.count("--gpu-metrics-set") && text.set == "help";
}

std::string take_gpu_metrics_options(const CLI::App& app, const GpuMetricsText& text, LaunchOptions& o,
                                     std::vector<std::string>& notes) {
    if (app.count("--gpu-metrics-devices")) {
        if (auto e = check_gpu_metrics_devices(text.devices); !e.empty()) return e;
        if (text.devices != "none") o.gpu_metrics_devices = text.devices;
    }
    if (app.count("--gpu-metrics-frequency")) {
        if (auto e = check_gpu_metrics_frequency(text.frequency); !e.empty()) return e;
        o.gpu_metrics_frequency = text.frequency;
    }
    if (app.count("--gpu-metrics-set")) {
        if (auto e = check_gpu_metrics_set(text.set); !e.empty()) return e;
        o.gpu_metrics_set = text.set;
    }
    if ((o.gpu_metrics_frequency || o.gpu_metrics_set) && !o.gpu_metrics_devices)
        notes.push_back(std::string(o.gpu_metrics_set ? "--gpu-metrics-set" : "--gpu-metrics-frequency") +
                        " changes nothing without --gpu-metrics-devices all or N[,N]: no GPU is sampled");
    return {};
}

std::string check_gpu_metrics_devices(std::string_view text) {
    gprof::env::GpuMetricsDevices devices;
    if (gprof::env::parse_gpu_metrics_devices(text, devices)) return {};
    return "--gpu-metrics-devices: '" + std::string(text) + "' is not " + gprof::env::kGpuMetricsDevicesExpected;
}

std::string check_gpu_metrics_frequency(std::string_view text) {
    uint32_t hz = 0;
    if (gprof::env::parse_gpu_metrics_frequency(text, hz)) return {};
    return "--gpu-metrics-frequency: '" + std::string(text) + "' is not " +
           gprof::env::kGpuMetricsFrequencyExpected;
}

std::string check_gpu_metrics_set(std::string_view text) {
    if (metrics::find_metric_set(text)) return {};
    std::vector<std::string> names;
    for (const auto& s : metrics::metric_sets()) names.emplace_back(s.name);
    return "--gpu-metrics-set: '" + std::string(text) + "' is no metric set (" + metrics::metric_set_names() +
           "; --gpu-metrics-set help lists them)" + gprof::report::did_you_mean(text, names);
}

std::string gpu_metrics_set_help() {
    std::string out = "GPU metric sets (--gpu-metrics-set NAME; default: the set of each device's chip). A set's "
                      "metrics are sampled most wanted first; what a chip cannot count in one pass is left out and "
                      "said.\n";
    for (const auto& s : metrics::metric_sets()) {
        out += "\n" + std::string(s.name) + "  " + std::string(s.description) + "\n  chips:";
        for (const char* c : s.chips) out += std::string(" ") + c;
        out += "\n";
        for (const char* m : s.metrics) out += std::string("  ") + m + "\n";
    }
    return out;
}

}  // namespace gprof::launcher
