#include "core/config.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "gprof/inject/environment.h"

namespace gprof::collector {

namespace {

const char* default_lookup(const char* name) { return std::getenv(name); }

bool parse_u64(std::string_view s, uint64_t& out) {
    if (s.empty() || s.size() > 19) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    out = v;
    return true;
}

bool parse_seconds(const char* s, double& out) {
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !std::isfinite(v) || v < 0) return false;
    out = v;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

Config parse_config(EnvLookup lookup) {
    if (!lookup) lookup = default_lookup;
    Config c;
    auto bad = [&c](const char* name, const char* value, const char* why) {
        c.warnings.push_back(std::string(name) + "=\"" + value + "\" ignored: " + why);
    };

    if (const char* v = lookup(env::kOutputDir); v && *v) c.output_dir = v;
    if (const char* v = lookup(env::kRunId); v) c.run_id = v;

    if (const char* v = lookup(env::kTrace); v && *v) {
        bool cuda = false, nvtx = false, ok = true;
        std::string_view rest(v);
        while (!rest.empty()) {
            size_t comma = rest.find(',');
            std::string_view item = trim(rest.substr(0, comma));
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
            if (item == "cuda") cuda = true;
            else if (item == "nvtx") nvtx = true;
            else if (item == "none" || item.empty()) {
            } else ok = false;
        }
        if (ok) {
            c.trace_cuda = cuda;
            c.trace_nvtx = nvtx;
        } else {
            bad(env::kTrace, v, "expected a comma list of cuda, nvtx, or none");
        }
    }

    if (const char* v = lookup(env::kBacktrace); v && *v) {
        uint64_t n = 0;
        if (!parse_u64(v, n)) bad(env::kBacktrace, v, "expected 0, 1 or a depth in frames");
        else if (n == 0) c.backtrace_depth = 0;
        else if (n == 1) c.backtrace_depth = kDefaultBacktraceDepth;
        else c.backtrace_depth = static_cast<uint32_t>(n > 64 ? 64 : n);
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
        uint64_t n = 0;
        if (!parse_u64(v, n) || n == 0 || n > (1u << 22)) bad(env::kCallSiteMaxStacks, v, "expected 1..4194304");
        else c.call_site_max_stacks = static_cast<uint32_t>(n);
    }

    if (const char* v = lookup(env::kCaptureRange); v && *v) {
        std::string_view s(v);
        if (s == "none") c.capture = CaptureMode::None;
        else if (s == "cudaProfilerApi") c.capture = CaptureMode::CudaProfilerApi;
        else if (s.substr(0, 5) == "nvtx:" && s.size() > 5) {
            std::string_view spec = s.substr(5);
            size_t at = spec.rfind('@');
            c.capture = CaptureMode::NvtxRange;
            c.capture_nvtx_name = std::string(at == std::string_view::npos ? spec : spec.substr(0, at));
            if (at != std::string_view::npos) {
                std::string_view domain = spec.substr(at + 1);
                if (domain == "*") c.capture_nvtx_any_domain = true;
                else c.capture_nvtx_domain = std::string(domain);
            }
            if (c.capture_nvtx_name.empty()) {
                c.capture = CaptureMode::None;
                bad(env::kCaptureRange, v, "empty range name");
            }
        } else {
            bad(env::kCaptureRange, v, "expected none, cudaProfilerApi or nvtx:NAME[@DOMAIN]");
        }
    }
    if (const char* v = lookup(env::kCaptureRangeEnd); v && *v) {
        std::string_view s(v);
        uint64_t n = 0;
        if (s == "stop") c.capture_end = CaptureRangeEnd::Stop;
        else if (s == "none") c.capture_end = CaptureRangeEnd::None;
        else if (s == "repeat") c.capture_end = CaptureRangeEnd::Repeat;
        else if (s.substr(0, 7) == "repeat:" && parse_u64(s.substr(7), n) && n > 0 && n <= 0xFFFFFFFFu) {
            c.capture_end = CaptureRangeEnd::Repeat;
            c.capture_end_count = static_cast<uint32_t>(n);
        } else {
            bad(env::kCaptureRangeEnd, v, "expected stop, repeat, repeat:N (N >= 1) or none");
        }
    }
    if (const char* v = lookup(env::kCudaGraphTrace); v && *v) {
        std::string_view s(v);
        if (s == "node") c.graph_trace = GraphTrace::Node;
        else if (s == "graph") c.graph_trace = GraphTrace::Graph;
        else bad(env::kCudaGraphTrace, v, "expected node or graph");
    }
    if (const char* v = lookup(env::kCudaNestedDriverCalls); v && *v) {
        std::string_view s(v);
        if (s == "1") c.nested_driver_calls = true;
        else if (s == "0") c.nested_driver_calls = false;
        else bad(env::kCudaNestedDriverCalls, v, "expected 0 or 1");
    }

    if (const char* v = lookup(env::kCudaApi); v && *v) {
        std::string_view s(v);
        if (s == "activity") c.api_source = ApiSource::Activity;
        else if (s == "callback") c.api_source = ApiSource::Callback;
        else if (s == "off") c.api_source = ApiSource::Off;
        else bad(env::kCudaApi, v, "expected activity, callback or off");
    }
    if (const char* v = lookup(env::kCuptiDeviceBufferMb); v && *v) {
        uint64_t n = 0;
        if (!parse_u64(v, n) || n == 0 || n > 1024) bad(env::kCuptiDeviceBufferMb, v, "expected MiB, 1..1024");
        else c.cupti_device_buffer_mb = static_cast<uint32_t>(n);
    }
    if (const char* v = lookup(env::kCuptiPreallocate); v && *v) {
        uint64_t n = 0;
        if (!parse_u64(v, n) || n == 0 || n > 1024) bad(env::kCuptiPreallocate, v, "expected a count of buffers, 1..1024");
        else c.cupti_preallocate = static_cast<uint32_t>(n);
    }
    if (const char* v = lookup(env::kCuptiZeroedBuffers); v && *v) {
        std::string_view s(v);
        if (s == "1") c.cupti_zeroed_buffers = true;
        else if (s == "0") c.cupti_zeroed_buffers = false;
        else bad(env::kCuptiZeroedBuffers, v, "expected 0 or 1");
    }

    if (const char* v = lookup(env::kDelay); v && *v) {
        if (!parse_seconds(v, c.delay_sec)) bad(env::kDelay, v, "expected seconds >= 0");
    }
    if (const char* v = lookup(env::kDuration); v && *v) {
        if (!parse_seconds(v, c.duration_sec)) bad(env::kDuration, v, "expected seconds >= 0");
    }

    if (const char* v = lookup(env::kNoChildren); v && *v) c.no_children = std::string_view(v) == "1";
    if (const char* v = lookup(env::kRootPid); v && *v) {
        uint64_t n = 0;
        if (parse_u64(v, n)) c.root_pid = static_cast<int64_t>(n);
        else bad(env::kRootPid, v, "expected a process id");
    }

    if (const char* v = lookup(env::kLogLevel); v && *v) {
        std::string_view s(v);
        if (s == "trace" || s == "debug" || s == "info" || s == "warn" || s == "error" || s == "off") c.log_level = v;
        else bad(env::kLogLevel, v, "expected trace|debug|info|warn|error|off");
    }

    if (const char* v = lookup(env::kFlushMs); v && *v) {
        uint64_t n = 0;
        if (!parse_u64(v, n)) bad(env::kFlushMs, v, "expected milliseconds");
        else c.flush_ms = static_cast<uint32_t>(n < 10 ? 10 : n > 200 ? 200 : n);
    }
    if (const char* v = lookup(env::kBufferMb); v && *v) {
        uint64_t n = 0;
        if (!parse_u64(v, n) || n == 0) bad(env::kBufferMb, v, "expected MiB >= 1");
        else c.buffer_mb = static_cast<uint32_t>(n > 256 ? 256 : n);
    }
    return c;
}

}  // namespace gprof::collector
