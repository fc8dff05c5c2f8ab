// The call site of an API call as a user reads it (issue 18): the stack from the program's own call into the CUDA
// runtime or driver API outward. A Python thread's call shows its Python frames first (innermost first, from the
// PyStack of its CallSite), then the native frames. Native frames are symbolised to file:line (model/symbolize.h);
// the leading frames that are not the user's are dropped (user_frame_index): the collector's, CUPTI's and the
// driver's modules (a 1.4 collector drops those already; older traces hold them), libcudart.so, NVIDIA's libraries
// (cuBLAS, cuDNN, NCCL, ...), a statically linked runtime inside the program's own image, recognised by its symbols
// (cudart::, __cudart*, libcudart_static_*, the API entry points the trace's calls name (ApiEntryNames)), code of
// CUDA's headers inlined into the program (crt/, cuda_runtime.h, Thrust, CUB), nvcc's __device_stub_* launch stubs
// and the host function of the kernel they launch, and the C library's frames among them (pthread_once, exit).
// Seen on an H200 (2026-11-27, tests/data/h200/): each of these was the first frame of some real stack.
//
// Each distinct (stack, Python stack) pair is resolved once per CallSites; symbolisation is cached process-wide.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/model.h"
#include "model/symbolize.h"

namespace gprof::report {

struct ResolvedStack {
    std::vector<SourceFrame> frames;  // as shown: the user's frame first; at most kMaxShownFrames
    std::string site;                 // frames[0].location(): what call-site reports group by; "" when empty
    std::string function;             // frames[0].function
};

inline constexpr size_t kMaxShownFrames = 2 * trace::kMaxBacktraceFrames;

// The CUDA API entry points a trace's program called: the names of its ApiCall records. A statically linked
// runtime's public entry point (cudaMalloc inside the program's image) is recognised by its name being one of
// them, so that the program's own cudaSafeMalloc or cuHelper, calling the runtime, is not taken for the runtime's
// and stays the call site. A trace without API calls (API tracing off) falls back to the shape of the name:
// cuda[A-Z]... or cu[A-Z]....
class ApiEntryNames {
public:
    ApiEntryNames() = default;
    explicit ApiEntryNames(const ProcessTrace& process);
    template <class... S> static ApiEntryNames of(S... names) {
        ApiEntryNames a;
        (a.names_.insert(std::string(names)), ...);
        return a;
    }
    // `function` as symbolised: "cudaMalloc", "cudaLaunchKernel<char>(char const*, dim3, ...)".
    bool is_entry(std::string_view function) const;

private:
    std::set<std::string, std::less<>> names_;
};

// True for a native frame that is the CUDA runtime/driver/CUPTI/collector's own, NVIDIA's libraries' (cuBLAS, cuDNN,
// NCCL, ...) or code of CUDA's headers inlined into the program, not the program's.
bool is_cuda_internal_frame(const SourceFrame& frame, const ApiEntryNames& api);
// The C and C++ runtime's (libc, libpthread, ld.so, libgcc_s, libstdc++): passed over between CUDA's frames.
bool is_system_frame(const SourceFrame& frame);
// Where the user's frames start in `frames` (native, innermost first): after the leading run of CUDA's frames, the
// C library's frames among and after them, and the host function nvcc made for a kernel after its launch stub. With
// no frame of the program in the stack: the last (outermost) CUDA frame, the nearest one to the program's call.
size_t user_frame_index(const std::vector<SourceFrame>& frames, const ApiEntryNames& api);

class CallSites {
public:
    explicit CallSites(const ProcessTrace& process);
    // The call site of the API call with this correlation id; nullptr when the trace has none for it.
    const ResolvedStack* of_correlation(uint32_t correlation);
    const ResolvedStack& of(const BacktraceFrames& bt);

private:
    const ProcessTrace& process_;
    Symbolizer symbolizer_;
    ApiEntryNames api_;
    std::map<std::pair<uint32_t, uint32_t>, ResolvedStack> cache_;  // (stack, py_stack)
};

}  // namespace gprof::report
