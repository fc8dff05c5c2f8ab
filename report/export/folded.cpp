#include "export/folded.h"

#include <map>
#include <string>

#include "model/cpu_samples.h"

namespace gprof::report {

namespace {

std::string clean(std::string s) {
    for (char& c : s)
        if (c == ';' || c == '\n' || c == '\r') c = ' ';
    return s;
}

std::string process_frame(const ProcessTrace& p) {
    std::string exe = p.header.executable;
    if (size_t slash = exe.rfind('/'); slash != std::string::npos) exe = exe.substr(slash + 1);
    // A Python program is known by its script: "python3 train.py" -> "train.py".
    for (size_t i = 1; i < p.header.argv.size() && exe.rfind("python", 0) == 0; ++i) {
        const std::string& a = p.header.argv[i];
        if (!a.empty() && a[0] != '-') {
            exe = a.substr(a.rfind('/') == std::string::npos ? 0 : a.rfind('/') + 1);
            break;
        }
    }
    return clean(exe + " (pid " + std::to_string(p.pid()) + ")");
}

}  // namespace

FoldedStats write_folded(const Run& run, std::ostream& out) {
    std::map<std::string, uint64_t> lines;
    FoldedStats st;
    for (const auto& p : run.processes) {
        if (p.cpu_samples.empty()) continue;
        SampleStacks stacks(p);
        std::string proc = process_frame(p);
        std::map<uint64_t, std::string> thread_frames;
        for (const auto& s : p.cpu_samples) {
            std::string& thread = thread_frames[s.tid];
            if (thread.empty()) {
                std::string name(p.thread_name(s.tid));
                thread = clean((name.empty() ? std::string("thread") : name) + " (tid " + std::to_string(s.tid) + ")");
            }
            std::string line = proc + ";" + thread;
            const auto& frames = stacks.of(s);
            for (auto it = frames.rbegin(); it != frames.rend(); ++it) line += ";" + folded_frame(*it);
            lines[line] += s.periods;
            st.samples += s.periods;
        }
    }
    for (const auto& [stack, count] : lines) out << stack << ' ' << count << '\n';
    st.lines = lines.size();
    return st;
}

}  // namespace gprof::report
