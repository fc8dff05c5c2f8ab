#include "gprof/env/cuda_backtrace.h"

namespace gprof::env {

std::string parse_cuda_backtrace(std::string_view text, CudaBacktraceSpec& out) {
    CudaBacktraceSpec s;
    if (text.empty()) return "empty value: expected all, kernel, memory, sync, other (each with an optional "
                              ":THRESHOLD_NS) or none, comma-separated";
    bool saw_none = false, saw_other = false;
    while (true) {
        size_t comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        size_t colon = item.find(':');
        std::string_view name = item.substr(0, colon);
        uint64_t threshold = kDefaultCudaBacktraceThresholdNs;
        if (colon != std::string_view::npos) {
            std::string_view digits = item.substr(colon + 1);
            if (digits.empty() || digits.size() > 13)
                return "'" + std::string(item) + "': the threshold must be a number of nanoseconds, 0 to " +
                       std::to_string(kMaxCudaBacktraceThresholdNs);
            threshold = 0;
            for (char c : digits) {
                if (c < '0' || c > '9')
                    return "'" + std::string(item) + "': the threshold must be a number of nanoseconds, 0 to " +
                           std::to_string(kMaxCudaBacktraceThresholdNs);
                threshold = threshold * 10 + static_cast<uint64_t>(c - '0');
            }
            if (threshold > kMaxCudaBacktraceThresholdNs)
                return "'" + std::string(item) + "': the threshold must be a number of nanoseconds, 0 to " +
                       std::to_string(kMaxCudaBacktraceThresholdNs);
        }
        if (name == "none") {
            if (colon != std::string_view::npos) return "'" + std::string(item) + "': none takes no threshold";
            saw_none = true;
        } else {
            int which = -1;
            for (int i = 0; i < kCallCategories; ++i)
                if (name == kCallCategoryNames[i]) which = i;
            if (name == "all") {
                for (int i = 0; i < kCallCategories; ++i) {
                    s.on[i] = true;
                    s.threshold_ns[i] = threshold;
                }
            } else if (which >= 0) {
                s.on[which] = true;
                s.threshold_ns[which] = threshold;
            } else {
                return "'" + std::string(name) + "' is not a call category: expected all, kernel, memory, sync, "
                                                 "other (each with an optional :THRESHOLD_NS) or none";
            }
            saw_other = true;
        }
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    if (saw_none && saw_other) return "none cannot be combined with call categories";
    out = s;
    return {};
}

}  // namespace gprof::env
