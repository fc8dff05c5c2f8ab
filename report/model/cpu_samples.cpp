#include "model/cpu_samples.h"

#include <string_view>

namespace gprof::report {

namespace {

bool is_collector_frame(const SourceFrame& f) { return !f.python && f.module.starts_with("libgprof-collector"); }

void add_python_frames(const ProcessTrace& p, uint32_t py_stack, std::vector<SourceFrame>& out) {
    auto ps = p.py_stacks.find(py_stack);
    if (ps == p.py_stacks.end()) return;
    for (uint32_t id : ps->second) {
        auto pf = p.py_frames.find(id);
        if (pf == p.py_frames.end()) continue;
        SourceFrame f;
        f.python = true;
        f.file = std::string(p.str(pf->second.file));
        f.function = std::string(p.str(pf->second.function));
        f.line = pf->second.line;
        out.push_back(std::move(f));
    }
}

}  // namespace

bool is_interpreter_frame(const SourceFrame& f) {
    if (f.python) return false;
    std::string_view m = f.module;
    if (m.starts_with("libpython")) return true;
    if (m.starts_with("python")) {  // python3, python3.11, python3.11d: the executable itself
        std::string_view rest = m.substr(6);
        if (rest.find_first_not_of("0123456789.dmut") == std::string_view::npos) return true;
    }
    std::string_view fn = f.function;
    return fn.starts_with("_PyEval_") || fn.starts_with("PyEval_") || fn.starts_with("_PyFunction_") ||
           fn.starts_with("_PyObject_Vectorcall") || fn.starts_with("PyObject_Vectorcall") ||
           fn.starts_with("_PyObject_Call") || fn.starts_with("PyObject_Call");
}

SampleStacks::SampleStacks(const ProcessTrace& process) : process_(process), symbolizer_(process) {}

const std::vector<SourceFrame>& SampleStacks::of(const trace::CpuSample& s) { return resolve(s.ip, s.stack, s.py_stack); }

const std::vector<SourceFrame>& SampleStacks::of(const trace::OsRuntimeCall& c) { return resolve(0, c.stack, c.py_stack); }

const std::vector<SourceFrame>& SampleStacks::resolve(uint64_t ip, uint32_t stack, uint32_t py_stack) {
    auto key = std::make_tuple(ip, stack, py_stack);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    std::vector<SourceFrame> out;
    bool python = py_stack && process_.py_stacks.count(py_stack);
    auto add = [&](std::vector<SourceFrame> frames) {
        for (auto& f : frames) {
            if (is_collector_frame(f)) continue;
            out.push_back(std::move(f));
        }
    };
    // The instruction itself: Symbolizer looks a return address up one byte back, so ask for ip + 1.
    if (ip) add(symbolizer_.frames(ip + 1));
    for (uint64_t address : process_.stack_frames(stack)) add(symbolizer_.frames(address));
    if (python) {
        // The native frames above the interpreter (the C code Python called), then the Python frames in its place.
        // The dynamic loader's own frames there (__tls_get_addr: the interpreter reading its thread state) are the
        // interpreter's doing, not code the program called: the Python line gets them.
        size_t keep = 0;
        while (keep < out.size() && !is_interpreter_frame(out[keep])) ++keep;
        out.resize(keep);
        bool only_loader = true;
        for (const auto& f : out) only_loader = only_loader && f.module.starts_with("ld-linux");
        if (only_loader) out.clear();
        add_python_frames(process_, py_stack, out);
    }
    return cache_.emplace(key, std::move(out)).first->second;
}

std::pair<std::string, std::string> sample_key(const SourceFrame& f, SampleKey by) {
    std::string name = f.function.empty() ? f.location() : f.function;
    if (f.file.empty()) return {name, f.function.empty() ? std::string() : f.location()};
    std::string where = by == SampleKey::Line && f.line ? f.file + ":" + std::to_string(f.line) : f.file;
    return {name, where};
}

std::string folded_frame(const SourceFrame& f) {
    std::string s = f.function.empty() ? f.location() : f.function;
    if (f.python && !f.file.empty()) s += " (" + f.location() + ")";
    for (char& c : s)
        if (c == ';' || c == '\n' || c == '\r') c = ' ';
    return s;
}

}  // namespace gprof::report
