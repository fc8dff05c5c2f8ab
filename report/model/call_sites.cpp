#include "model/call_sites.h"

#include <string_view>
#include <vector>

namespace gprof::report {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "cudaLaunchKernel<char>(char const*, dim3, ...)" -> "cudaLaunchKernel": the identifier a frame's function starts
// with (cuda_runtime.h's C++ overloads are templates around the C entry point).
std::string_view base_identifier(std::string_view f) {
    size_t end = f.find_first_of("<( ");
    return end == std::string_view::npos ? f : f.substr(0, end);
}

// Looks like an API entry point ("cudaLaunchKernel", "cuLaunchKernel"): the rule when the trace names none.
bool looks_like_api_entry(std::string_view f) {
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

ApiEntryNames::ApiEntryNames(const ProcessTrace& process) {
    std::vector<bool> seen(process.strings.size());  // one string made per distinct name, not per call
    for (const trace::ApiCall& c : process.api_calls) {
        if (c.name < seen.size() && seen[c.name]) continue;
        if (c.name < seen.size()) seen[c.name] = true;
        names_.emplace(process.str(c.name));
    }
}

bool ApiEntryNames::is_entry(std::string_view function) const {
    std::string_view id = base_identifier(function);
    return names_.empty() ? looks_like_api_entry(id) : names_.count(id) != 0;
}

bool is_cuda_internal_frame(const SourceFrame& f, const ApiEntryNames& api) {
    if (f.python) return false;
    if (is_cuda_module(f.module)) return true;
    std::string_view fn = f.function;
    return starts_with(fn, "cudart::") || starts_with(fn, "__cudart") || starts_with(fn, "__device_stub_") ||
           api.is_entry(fn);
}

CallSites::CallSites(const ProcessTrace& process) : process_(process), symbolizer_(process), api_(process) {}

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
            if (leading && is_cuda_internal_frame(f, api_)) continue;
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
