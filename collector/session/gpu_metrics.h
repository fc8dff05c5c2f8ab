// GPU metrics (issue 37) in a process: PM sampling of the devices GPROF_GPU_METRICS_DEVICES names, at
// GPROF_GPU_METRICS_FREQUENCY, with GPROF_GPU_METRICS_SET (else each chip's default set), from the moment CUDA starts
// in the process to the end of its session. A thread of its own (signals blocked, never sampled) opens the devices,
// then drains each about every 50 ms and posts the evaluated samples through the pipeline: a GpuMetricSet record per
// device, then its GpuMetricSample records (trace format 1.7). At the end the devices are stopped and drained under
// the end's watchdog. What cannot be sampled is one line each (stderr unless gprof-run's summary restates it, and a
// Status record): a CUPTI without PM sampling, no such device, no set for its chip, profiling not permitted, another
// profiler holding the counters, a MIG slice; samples lost to a full hardware buffer are said with their number.
#pragma once

#include "base/config.h"
#include "cupti_loader/loader.h"
#include "pipeline/pipeline.h"

namespace gprof::collector {

// At CUDA's start in the process, once CUPTI is loaded (`cupti`: null when it could not be: said in one line).
void start_gpu_metrics(const Config& config, Pipeline& pipeline, const cupti::CuptiApi* cupti);

// Whether a sampler thread runs (finish_session stops it, under its watchdog, before the pipeline finishes).
bool gpu_metrics_running() noexcept;
// Stops the sampler thread and the devices and posts their last samples and what was lost. Idempotent.
void stop_gpu_metrics() noexcept;

// In a forked child: the parent's sampler (its thread does not exist here) is forgotten, never touched.
void gpu_metrics_after_fork() noexcept;

}  // namespace gprof::collector
