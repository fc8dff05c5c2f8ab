#include "gprof/env/values.h"

#include <cstdlib>
#include <utility>

namespace gprof::env {
namespace {

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

bool parse_count(std::string_view text, uint64_t& out) {
    if (text.size() > 19 || !all_digits(text)) return false;
    uint64_t v = 0;
    for (char c : text) v = v * 10 + static_cast<uint64_t>(c - '0');
    out = v;
    return true;
}

bool parse_trace(std::string_view text, TraceSelection& out) {
    TraceSelection s{false, false, false};
    while (!text.empty()) {
        size_t comma = text.find(',');
        std::string_view item = trim(text.substr(0, comma));
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        if (item == "cuda") s.cuda = true;
        else if (item == "nvtx") s.nvtx = true;
        else if (item == "osrt") s.osrt = true;
        else if (item != "none" && !item.empty()) return false;
    }
    out = s;
    return true;
}

std::string trace_text(TraceSelection selection) {
    // cuda, nvtx, osrt: the order the collector lists them in.
    std::string out;
    for (auto [on, name] : {std::pair{selection.cuda, "cuda"}, {selection.nvtx, "nvtx"}, {selection.osrt, "osrt"}})
        if (on) out += (out.empty() ? "" : ",") + std::string(name);
    return out.empty() ? "none" : out;
}

bool parse_sample(std::string_view text, bool& on) {
    text = trim(text);
    if (text == "process-tree") on = true;
    else if (text == "none") on = false;
    else return false;
    return true;
}

bool parse_sampling_frequency(std::string_view text, uint32_t& hz) {
    uint64_t n = 0;
    if (!parse_count(trim(text), n) || n < kMinSamplingFrequency || n > kMaxSamplingFrequency) return false;
    hz = static_cast<uint32_t>(n);
    return true;
}

bool parse_nanoseconds(std::string_view text, uint64_t& ns) {
    uint64_t n = 0;
    if (!parse_count(trim(text), n) || n > (uint64_t{1} << 40)) return false;  // up to ~18 minutes
    ns = n;
    return true;
}

bool parse_backtrace(std::string_view text, uint32_t& depth) {
    uint64_t n = 0;
    if (!parse_count(text, n)) return false;
    depth = n == 0 ? 0 : n == 1 ? kDefaultBacktraceDepth : static_cast<uint32_t>(n > kMaxBacktraceDepth ? kMaxBacktraceDepth : n);
    return true;
}

bool parse_capture_range(std::string_view text, CaptureRange& out) {
    CaptureRange r;
    if (text == "none") {
        r.mode = CaptureMode::None;
    } else if (text == "cudaProfilerApi") {
        r.mode = CaptureMode::CudaProfilerApi;
    } else if (text.substr(0, 5) == "nvtx:") {
        std::string_view spec = text.substr(5);
        size_t at = spec.rfind('@');
        std::string_view name = at == std::string_view::npos ? spec : spec.substr(0, at);
        if (name.empty()) return false;
        r.mode = CaptureMode::NvtxRange;
        r.nvtx_name = std::string(name);
        if (at != std::string_view::npos) {
            std::string_view domain = spec.substr(at + 1);
            if (domain.empty()) return false;
            if (domain == "*") r.nvtx_any_domain = true;
            else r.nvtx_domain = std::string(domain);
        }
    } else {
        return false;
    }
    out = std::move(r);
    return true;
}

bool parse_capture_range_end(std::string_view text, CaptureEnd& out) {
    uint64_t n = 0;
    if (text == "stop") out = {CaptureRangeEnd::Stop, 0};
    else if (text == "none") out = {CaptureRangeEnd::None, 0};
    else if (text == "repeat") out = {CaptureRangeEnd::Repeat, 0};
    else if (text.substr(0, 7) == "repeat:" && parse_count(text.substr(7), n) && n > 0 && n <= 0xFFFFFFFFu)
        out = {CaptureRangeEnd::Repeat, static_cast<uint32_t>(n)};
    else return false;
    return true;
}

bool parse_graph_trace(std::string_view text, GraphTrace& out) {
    if (text == "node") out = GraphTrace::Node;
    else if (text == "graph") out = GraphTrace::Graph;
    else return false;
    return true;
}

bool parse_api_source(std::string_view text, ApiSource& out) {
    if (text == "activity") out = ApiSource::Activity;
    else if (text == "callback") out = ApiSource::Callback;
    else if (text == "off") out = ApiSource::Off;
    else return false;
    return true;
}

bool parse_seconds(std::string_view text, double& out) {
    size_t dot = text.find('.');
    if (!all_digits(text.substr(0, dot))) return false;
    if (dot != std::string_view::npos && !all_digits(text.substr(dot + 1))) return false;
    out = std::strtod(std::string(text).c_str(), nullptr);
    return true;
}

bool parse_switch(std::string_view text, bool& out) {
    if (text == "1") out = true;
    else if (text == "0") out = false;
    else return false;
    return true;
}

bool is_log_level(std::string_view text) {
    return text == "trace" || text == "debug" || text == "info" || text == "warn" || text == "error" || text == "off";
}

bool parse_gpu_metrics_devices(std::string_view text, GpuMetricsDevices& out) {
    if (text == "none") {
        out = GpuMetricsDevices{};
        return true;
    }
    if (text == "all") {
        out = GpuMetricsDevices{true, 0};
        return true;
    }
    GpuMetricsDevices d;
    while (true) {
        size_t comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        uint64_t n = 0;
        if (!parse_count(item, n) || n >= 64 || (d.listed >> n) & 1u) return false;
        d.listed |= uint64_t{1} << n;
        if (comma == std::string_view::npos) break;
        text = text.substr(comma + 1);
    }
    out = d;
    return true;
}

bool parse_gpu_metrics_frequency(std::string_view text, uint32_t& hz) {
    uint64_t n = 0;
    if (!parse_count(text, n) || n < kGpuMetricsMinHz || n > kGpuMetricsMaxHz) return false;
    hz = static_cast<uint32_t>(n);
    return true;
}

}  // namespace gprof::env
