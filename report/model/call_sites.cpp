#include "model/call_sites.h"

#include <string_view>

namespace gprof::report {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernel<char>(...)": an API entry point's name.
bool is_api_entry(std::string_view f) {
    if (starts_with(f, "cuda") && f.size() > 4 && f[4] >= 'A' && f[4] <= 'Z') return true;
    if (starts_with(f, "cu") && f.size() > 2 && f[2] >= 'A' && f[2] <= 'Z') return true;
    return false;
}

bool is_cuda_module(std::string_view m) {
    for (std::string_view p : {"libcupti.so", "libcuda.so", "libcudart.so", "libgprof-collector", "libnvidia-"})
        if (starts_with(m, p)) return true;
    return false;
}

}  // namespace

bool is_cuda_internal_frame(const SourceFrame& f) {
    if (f.python) return false;
    if (is_cuda_module(f.module)) return true;
    std::string_view fn = f.function;
    return starts_with(fn, "cudart::") || starts_with(fn, "__cudart") || starts_with(fn, "__device_stub_") ||
           is_api_entry(fn);
}

CallSites::CallSites(const ProcessTrace& process) : process_(process), symbolizer_(process) {}

const ResolvedStack* CallSites::of_correlation(uint32_t correlation) {
    const BacktraceFrames* bt = process_.backtrace_for_correlation(correlation);
    return bt ? &of(*bt) : nullptr;
}

const ResolvedStack& CallSites::of(const BacktraceFrames& bt) {
    auto key = std::make_pair(bt.stack, bt.py_stack);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    ResolvedStack r;
    if (bt.py_stack) {
        if (auto ps = process_.py_stacks.find(bt.py_stack); ps != process_.py_stacks.end()) {
            for (uint32_t id : ps->second) {
                if (r.frames.size() >= trace::kMaxBacktraceFrames) break;
                auto pf = process_.py_frames.find(id);
                if (pf == process_.py_frames.end()) continue;
                SourceFrame f;
                f.python = true;
                f.file = process_.str(pf->second.file);
                f.function = process_.str(pf->second.function);
                f.line = pf->second.line;
                r.frames.push_back(std::move(f));
            }
        }
    }
    bool leading = true;  // still inside CUDA's own frames
    for (uint64_t address : process_.stack_frames(bt.stack)) {
        for (auto& f : symbolizer_.frames(address)) {
            if (leading && is_cuda_internal_frame(f)) continue;
            leading = false;
            if (r.frames.size() < kMaxShownFrames) r.frames.push_back(std::move(f));
        }
    }
    if (!r.frames.empty()) {
        r.site = r.frames.front().location();
        r.function = r.frames.front().function;
    }
    return cache_.emplace(key, std::move(r)).first->second;
}

}  // namespace gprof::report
