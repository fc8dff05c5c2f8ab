#include "model/resolved_call_sites.h"

#include "gprof/trace/cuda_modules.h"

#include <initializer_list>
#include <string>
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

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> prefixes) {
    return trace::base_name_starts_with_any(s, prefixes);
}

// CUDA's own modules, NVIDIA's libraries built on them (gprof/trace/cuda_modules.h: a call from cuBLAS into the
// runtime was made for the program's call into cuBLAS, which is the site), the collector and the driver's helpers.
bool is_cuda_module(std::string_view m) {
    return trace::is_cuda_or_nvidia_library(m) || starts_with_any(m, {"libgprof-collector", "libnvidia-"});
}

bool is_system_module(std::string_view m) { return trace::is_system_library(m); }

// Source that CUDA's headers and nvcc put into the program: the runtime's inline helpers (crt/device_functions.h's
// __cudaLaunchKernel_helper, the template overloads of cuda_runtime.h), the launch stubs nvcc generates
// (tmpxft_*.cudafe1.stub.c), and the CUDA C++ libraries under the toolkit's include folder (Thrust, CUB, libcu++).
bool is_cuda_header(std::string_view file) {
    if (file.empty()) return false;
    for (std::string_view dir : {"/include/crt/", "/include/thrust/", "/include/cub/", "/include/cuda/", "/include/cccl/"})
        if (file.find(dir) != std::string_view::npos) return true;
    size_t slash = file.rfind('/');
    std::string_view base = slash == std::string_view::npos ? file : file.substr(slash + 1);
    if (base.ends_with(".cudafe1.stub.c")) return true;
    return file.find("/include/") != std::string_view::npos &&
           (starts_with(base, "cuda_runtime") || base == "cuda.h");
}

// "ns::kern<int>(int*)" -> "kern", "(anonymous namespace)::k(float*)" -> "k": the name a kernel is declared with.
std::string_view unqualified_name(std::string_view f) {
    constexpr std::string_view anon = "(anonymous namespace)";
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i < f.size(); ++i) {
        if (depth == 0 && f.substr(i, anon.size()) == anon) {
            i += anon.size() - 1;
            continue;
        }
        char c = f[i];
        if (c == '<' || c == '(') {
            if (depth == 0 && i > start) return f.substr(start, i - start);
            ++depth;
        } else if (c == '>' || c == ')') {
            --depth;
        } else if (depth == 0 && c == ':' && i + 1 < f.size() && f[i + 1] == ':') {
            start = i + 2;
            ++i;
        }
    }
    return f.substr(start);
}

// The host function nvcc generates for a kernel (`kern(args)` calling `__device_stub__<mangled kern>(args)`, at the
// kernel's definition line): the frame that follows the stub, when it names the stub's kernel.
bool is_kernel_of_stub(std::string_view function, std::string_view stub) {
    constexpr std::string_view prefix = "__device_stub__";
    if (!starts_with(stub, prefix)) return false;
    std::string_view mangled = base_identifier(stub.substr(prefix.size()));  // "Z10ka_vec_addPKfS0_Pfi", "ka_c"
    std::string_view name = unqualified_name(function);
    if (name.empty()) return false;
    if (mangled == name) return true;  // extern "C"
    std::string length_and_name = std::to_string(name.size());
    length_and_name += name;
    return mangled.find(length_and_name) != std::string_view::npos;
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
    if (is_cuda_module(f.module) || is_cuda_header(f.file)) return true;
    std::string_view fn = f.function;
    return starts_with_any(fn, {"cudart::", "__cudart", "libcudart_static_", "__device_stub_"}) || api.is_entry(fn);
}

bool is_system_frame(const SourceFrame& f) { return !f.python && is_system_module(f.module); }

size_t user_frame_index(const std::vector<SourceFrame>& frames, const ApiEntryNames& api) {
    size_t after_cuda = 0;  // just after the last CUDA frame passed
    std::string_view stub;  // the last __device_stub_ frame passed, while the next frame may be its kernel's
    size_t i = 0;
    for (; i < frames.size(); ++i) {
        const SourceFrame& f = frames[i];
        if (!stub.empty() && !f.python && is_kernel_of_stub(f.function, stub)) {
            after_cuda = i + 1;
            stub = {};
            continue;
        }
        if (is_cuda_internal_frame(f, api)) {
            // A template kernel's stub is called through nvcc's __wrapper__device_stub_<kernel><T> (its stub file):
            // the kernel's host function comes after that.
            after_cuda = i + 1;
            if (starts_with(f.function, "__device_stub_")) stub = f.function;
            continue;
        }
        stub = {};
        if (!is_system_frame(f)) return i;
    }
    // No frame of the program in the stack (cut at its depth inside cuBLAS, by a collector before 2026-11-27 that
    // kept NVIDIA's libraries' frames): the outermost CUDA frame, the nearest to the program's call; none: nothing.
    return after_cuda > 0 ? after_cuda - 1 : 0;
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
    std::vector<SourceFrame> native;
    for (uint64_t address : process_.stack_frames(bt.stack))
        for (auto& f : symbolizer_.frames(address)) native.push_back(std::move(f));
    for (size_t i = user_frame_index(native, api_); i < native.size() && r.frames.size() < kMaxShownFrames; ++i)
        r.frames.push_back(std::move(native[i]));
    if (!r.frames.empty()) {
        r.site = r.frames.front().location();
        r.function = r.frames.front().function;
    }
    return cache_.emplace(key, std::move(r)).first->second;
}

}  // namespace gprof::report
