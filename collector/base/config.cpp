#include "base/config.h"

#include <cstdlib>
#include <string_view>

#include "gprof/env/variables.h"

namespace gprof::collector {

namespace {

const char* default_lookup(const char* name) { return std::getenv(name); }

}  // namespace

Config parse_config(EnvLookup lookup) {
    if (!lookup) lookup = default_lookup;
    Config c;
    auto bad = [&c](const char* name, const char* value, const char* why) {
        c.warnings.push_back(std::string(name) + "=\"" + value + "\" ignored: " + why);
    };
    auto expected = [&bad](const char* name, const char* value, const char* what) {
        bad(name, value, (std::string("expected ") + what).c_str());
    };
    uint64_t n = 0;

    if (const char* v = lookup(env::kOutputDir); v && *v) c.output_dir = v;
    if (const char* v = lookup(env::kRunId); v) c.run_id = v;

    if (const char* v = lookup(env::kTrace); v && *v) {
        env::TraceSelection t;
        if (env::parse_trace(v, t)) {
            c.trace_cuda = t.cuda;
            c.trace_nvtx = t.nvtx;
            c.trace_osrt = t.osrt;
        } else {
            bad(env::kTrace, v, "expected a comma list of cuda, nvtx, osrt, or none");
        }
    }
    if (const char* v = lookup(env::kSample); v && *v) {
        if (!env::parse_sample(v, c.sample)) expected(env::kSample, v, env::kSampleExpected);
    }
    if (const char* v = lookup(env::kSamplingFrequency); v && *v) {
        if (!env::parse_sampling_frequency(v, c.sampling_frequency))
            expected(env::kSamplingFrequency, v, env::kSamplingFrequencyExpected);
    }
    if (const char* v = lookup(env::kOsrtThreshold); v && *v) {
        if (!env::parse_nanoseconds(v, c.osrt_threshold_ns)) expected(env::kOsrtThreshold, v, "nanoseconds");
    }
    if (const char* v = lookup(env::kOsrtBacktraceThreshold); v && *v) {
        if (!env::parse_nanoseconds(v, c.osrt_backtrace_threshold_ns))
            expected(env::kOsrtBacktraceThreshold, v, "nanoseconds");
    }

    if (const char* v = lookup(env::kBacktrace); v && *v) {
        if (!env::parse_backtrace(v, c.backtrace_depth)) bad(env::kBacktrace, v, "expected 0, 1 or a depth in frames");
    }
    if (const char* v = lookup(env::kCudaBacktrace); v && *v) {
        env::CudaBacktraceSpec spec;
        std::string why = env::parse_cuda_backtrace(v, spec);
        if (!why.empty()) {
            bad(env::kCudaBacktrace, v, why.c_str());
        } else {
            c.call_sites = spec;
            if (!spec.any()) c.backtrace_depth = 0;                              // none
            else if (c.backtrace_depth == 0) c.backtrace_depth = kDefaultBacktraceDepth;  // depth from GPROF_BACKTRACE
        }
    }
    if (const char* v = lookup(env::kCallSiteMaxStacks); v && *v) {
        if (!env::parse_count(v, n) || n == 0 || n > (1u << 22)) bad(env::kCallSiteMaxStacks, v, "expected 1..4194304");
        else c.call_site_max_stacks = static_cast<uint32_t>(n);
    }

    if (const char* v = lookup(env::kCaptureRange); v && *v) {
        env::CaptureRange range;
        if (env::parse_capture_range(v, range)) {
            c.capture = range.mode;
            c.capture_nvtx_name = range.nvtx_name;
            c.capture_nvtx_domain = range.nvtx_domain;
            c.capture_nvtx_any_domain = range.nvtx_any_domain;
        } else if (std::string_view(v).substr(0, 5) == "nvtx:" && v[5] != '\0') {
            bad(env::kCaptureRange, v, "empty range or domain name");
        } else {
            bad(env::kCaptureRange, v, "expected none, cudaProfilerApi or nvtx:NAME[@DOMAIN]");
        }
    }
    if (const char* v = lookup(env::kCaptureRangeEnd); v && *v) {
        env::CaptureEnd end;
        if (env::parse_capture_range_end(v, end)) {
            c.capture_end = end.end;
            c.capture_end_count = end.count;
        } else {
            expected(env::kCaptureRangeEnd, v, env::kCaptureRangeEndExpected);
        }
    }
    if (const char* v = lookup(env::kCudaGraphTrace); v && *v) {
        if (!env::parse_graph_trace(v, c.graph_trace)) expected(env::kCudaGraphTrace, v, env::kGraphTraceExpected);
    }
    if (const char* v = lookup(env::kCudaNestedDriverCalls); v && *v) {
        if (!env::parse_switch(v, c.nested_driver_calls)) bad(env::kCudaNestedDriverCalls, v, "expected 0 or 1");
    }

    if (const char* v = lookup(env::kCudaApi); v && *v) {
        if (!env::parse_api_source(v, c.api_source)) expected(env::kCudaApi, v, env::kApiSourceExpected);
    }
    if (const char* v = lookup(env::kGpuMetricsDevices); v && *v) {
        if (!env::parse_gpu_metrics_devices(v, c.gpu_metrics_devices))
            expected(env::kGpuMetricsDevices, v, env::kGpuMetricsDevicesExpected);
    }
    if (const char* v = lookup(env::kGpuMetricsFrequency); v && *v) {
        if (!env::parse_gpu_metrics_frequency(v, c.gpu_metrics_hz))
            expected(env::kGpuMetricsFrequency, v, env::kGpuMetricsFrequencyExpected);
    }
    if (const char* v = lookup(env::kGpuMetricsSet); v && *v) c.gpu_metrics_set = v;
    if (const char* v = lookup(env::kCuptiDeviceBufferMb); v && *v) {
        if (!env::parse_count(v, n) || n == 0 || n > 1024) bad(env::kCuptiDeviceBufferMb, v, "expected MiB, 1..1024");
        else c.cupti_device_buffer_mb = static_cast<uint32_t>(n);
    }
    if (const char* v = lookup(env::kCuptiPreallocate); v && *v) {
        if (!env::parse_count(v, n) || n == 0 || n > 1024) bad(env::kCuptiPreallocate, v, "expected a count of buffers, 1..1024");
        else c.cupti_preallocate = static_cast<uint32_t>(n);
    }
    if (const char* v = lookup(env::kCuptiZeroedBuffers); v && *v) {
        if (!env::parse_switch(v, c.cupti_zeroed_buffers)) bad(env::kCuptiZeroedBuffers, v, "expected 0 or 1");
    }

    if (const char* v = lookup(env::kDelay); v && *v) {
        if (!env::parse_seconds(v, c.delay_sec)) bad(env::kDelay, v, "expected seconds >= 0");
    }
    if (const char* v = lookup(env::kDuration); v && *v) {
        if (!env::parse_seconds(v, c.duration_sec)) bad(env::kDuration, v, "expected seconds >= 0");
    }

    if (const char* v = lookup(env::kNoChildren); v && *v) c.no_children = std::string_view(v) == "1";
    if (const char* v = lookup(env::kRootPid); v && *v) {
        if (env::parse_count(v, n)) c.root_pid = static_cast<int64_t>(n);
        else bad(env::kRootPid, v, "expected a process id");
    }

    if (const char* v = lookup(env::kLogLevel); v && *v) {
        if (env::is_log_level(v)) c.log_level = v;
        else bad(env::kLogLevel, v, "expected trace|debug|info|warn|error|off");
    }

    if (const char* v = lookup(env::kStatusInSummary); v && *v) {
        if (!env::parse_switch(v, c.status_in_summary)) bad(env::kStatusInSummary, v, "expected 0 or 1");
    }

    if (const char* v = lookup(env::kFlushMs); v && *v) {
        if (!env::parse_count(v, n)) bad(env::kFlushMs, v, "expected milliseconds");
        else c.flush_ms = static_cast<uint32_t>(n < 10 ? 10 : n > 200 ? 200 : n);
    }
    if (const char* v = lookup(env::kBufferMb); v && *v) {
        if (!env::parse_count(v, n) || n == 0) bad(env::kBufferMb, v, "expected MiB >= 1");
        else c.buffer_mb = static_cast<uint32_t>(n > 256 ? 256 : n);
    }
    return c;
}

}  // namespace gprof::collector
