// Which CUDA API calls get a call site (a native call stack), in nsys's form:
//   --cudabacktrace=all|kernel|memory|sync|other[:THRESHOLD_NS][,...]   or   none
// gprof-run checks the value (a bad one exits 2 with parse_cuda_backtrace's reason) and passes it unchanged in
// GPROF_CUDABACKTRACE; the collector parses it again with this same function: one grammar for both sides.
//
// nsys's documented semantics (Nsight Systems User Guide, CLI profile options): values combine with ','; each value
// except none may carry ':THRESHOLD', the time in nanoseconds a call must take before its backtrace is collected;
// the default threshold of each value is 80000 ns (80 us); the option's default is none. A later value for the same
// category replaces an earlier one ("kernel:0,all" leaves kernel at 80000, as all comes later).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gprof::env {

// The categories, by the CUDA call's name (collector/cupti/call_categories.cpp says which calls fall where).
enum class CallCategory : uint8_t { Kernel = 0, Memory = 1, Sync = 2, Other = 3 };
inline constexpr int kCallCategories = 4;
inline constexpr const char* kCallCategoryNames[kCallCategories] = {"kernel", "memory", "sync", "other"};

// nsys's default threshold for a value given without ':THRESHOLD'.
inline constexpr uint64_t kDefaultCudaBacktraceThresholdNs = 80000;
// The largest threshold accepted (one hour): anything above is a typo, not a threshold.
inline constexpr uint64_t kMaxCudaBacktraceThresholdNs = 3600ull * 1000 * 1000 * 1000;

struct CudaBacktraceSpec {
    bool on[kCallCategories] = {};
    uint64_t threshold_ns[kCallCategories] = {};  // a call shorter than this gets no call site
    bool any() const { return on[0] || on[1] || on[2] || on[3]; }
    // --backtrace alone: every call, whatever it takes.
    static CudaBacktraceSpec every_call() {
        CudaBacktraceSpec s;
        for (int i = 0; i < kCallCategories; ++i) s.on[i] = true;
        return s;
    }
};

// Parses `text`; on success fills `out` and returns "", else returns why (one line naming the bad part).
std::string parse_cuda_backtrace(std::string_view text, CudaBacktraceSpec& out);

}  // namespace gprof::env
