#include "session/gpu_metrics.h"

#include <string>

#include "base/log.h"
#include "metrics/metric_sets.h"

namespace gprof::collector {

namespace tr = trace;

void start_gpu_metrics(const Config& config, Pipeline& pipeline) {
    if (!config.gpu_metrics_devices.any()) return;
    std::string line = "GPU metrics not sampled: this gprof-run does not sample them yet (issue 37)";
    if (!config.gpu_metrics_set.empty() && !metrics::find_metric_set(config.gpu_metrics_set))
        line += "; and GPROF_GPU_METRICS_SET=\"" + config.gpu_metrics_set + "\" is no metric set (" +
                metrics::metric_set_names() + ")";
    // Under gprof-run the summary lists the process's warnings (GPROF_STATUS_IN_SUMMARY); alone, stderr is all.
    if (!config.status_in_summary) log::warn("{}", line);
    pipeline.post_status(tr::Component::Collector, tr::StatusLevel::Warning, 0, line);
}

}  // namespace gprof::collector
