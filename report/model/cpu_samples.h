// CPU samples and OS-runtime calls as a user reads them (issue 35): each sample's stack, leaf first, the way py-spy
// --native and perf show a Python program. Native frames are symbolised (model/symbolize.h); a thread running Python
// shows its Python frames in place of the interpreter's own (the native frames from the leaf up to the first frame
// of the interpreter, then the Python frames, innermost first); a thread without Python shows its native stack.
// Frames of the collector itself (the sampler's handler never appears: the collector cuts it) are dropped.
//
// Everything derived from samples starts here: cpu_sample_sum, the folded stacks, the timeline's sample events,
// report.html's flame graph and "what the host did" in GPU idle gaps, and analyze's CPU-bound finding.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "model/model.h"
#include "model/symbolize.h"

namespace gprof::report {

// Cuts stacks and keeps them: one per distinct (ip, stack, py_stack) of a process.
class SampleStacks {
public:
    explicit SampleStacks(const ProcessTrace& process);
    // The frames of a sample, leaf first (never empty for a sample with any frame; at most 2 x 64 + 64).
    const std::vector<SourceFrame>& of(const trace::CpuSample& s);
    // The frames of an OS-runtime call's call site, the program's frame first (empty when it has none).
    const std::vector<SourceFrame>& of(const trace::OsRuntimeCall& c);

private:
    const std::vector<SourceFrame>& resolve(uint64_t ip, uint32_t stack, uint32_t py_stack);
    const ProcessTrace& process_;
    Symbolizer symbolizer_;
    std::map<std::tuple<uint64_t, uint32_t, uint32_t>, std::vector<SourceFrame>> cache_;
};

// What a flat profile groups by: the function (its file, or its module when there is no line table), or the line.
enum class SampleKey : uint8_t { Function, Line };
// The name and location a frame is counted under: ("work_a(long)", "app.cpp") by function, ("work_a(long)",
// "app.cpp:12") by line; Python ("Model.forward", "train.py:42"); no debug info ("f+0x1c (libx.so)" as the location).
std::pair<std::string, std::string> sample_key(const SourceFrame& f, SampleKey by);

// A frame as one word of a folded stack line ("work_a(long)", "Model.forward (train.py:42)"): no ';' and no newline.
std::string folded_frame(const SourceFrame& f);

// Whether a native frame is the Python interpreter's own (libpython, the python executable, a _Py/Py symbol).
bool is_interpreter_frame(const SourceFrame& f);

// The CPU time a sample stands for (periods x period).
inline uint64_t sample_cpu_ns(const trace::CpuSample& s) { return uint64_t{s.periods} * s.period_ns; }

}  // namespace gprof::report
