// GPU metrics (issue 37) in a process: what GPROF_GPU_METRICS_DEVICES / _FREQUENCY / _SET ask for, at the moment
// CUDA starts in the process. Until the PM sampler lands (issue 37, step 4) nothing is sampled, and this says so in
// one line (stderr unless gprof-run's summary restates it, and a Status record) rather than recording nothing
// silently. A set name the list does not hold (the variable set by hand: gprof-run checks its option) is said too.
#pragma once

#include "base/config.h"
#include "pipeline/pipeline.h"

namespace gprof::collector {

void start_gpu_metrics(const Config& config, Pipeline& pipeline);

}  // namespace gprof::collector
