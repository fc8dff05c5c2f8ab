// Traces whose stacks are real: tests/apps/callsite_app.cpp (built -g -O2) records its own return addresses at three
// "CUDA calls" through a statically linked runtime stand-in and prints them with its module (path, base, size, build
// id) and the file:line the report must show. The fixture runs it and writes traces around those addresses.
#pragma once

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "trace_fixture.h"

namespace gprof::testing {

struct CallsiteApp {
    std::string path;
    uint64_t base = 0, size = 0;
    std::vector<uint8_t> build_id;
    std::map<std::string, std::vector<uint64_t>> stacks;          // name -> return addresses, innermost first
    std::map<std::string, std::pair<std::string, std::string>> expect;          // name -> (file:line, function)
    std::map<std::string, std::pair<std::string, std::string>> expect_inlined;  // the frame it was inlined into
};

inline std::string command_stdout(const std::string& cmd) {
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) throw std::runtime_error("popen failed: " + cmd);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    if (::pclose(f) != 0) throw std::runtime_error("failed: " + cmd);
    return out;
}

inline CallsiteApp run_callsite_app(const std::string& exe) {
    CallsiteApp app;
    std::istringstream in(command_stdout("'" + exe + "'"));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string what, name;
        l >> what;
        if (what == "module") {
            std::string id;
            l >> app.path >> app.base >> app.size >> id;
            for (size_t i = 0; i + 1 < id.size(); i += 2) app.build_id.push_back(uint8_t(std::stoul(id.substr(i, 2), nullptr, 16)));
        } else if (what == "stack") {
            l >> name;
            uint64_t a;
            while (l >> a) app.stacks[name].push_back(a);
        } else if (what == "expect" || what == "expect_inlined") {
            std::string loc, fn;
            l >> name >> loc;
            // __FILE__ is relative to the build folder (the compiler's working directory) under ninja; the report
            // shows it joined to DWARF's compilation directory.
            if (!loc.empty() && loc[0] != '/') loc = (std::filesystem::path(GPROF_BINARY_DIR) / loc).lexically_normal().string();
            std::getline(l, fn);
            fn.erase(0, fn.find_first_not_of(' '));
            (what == "expect" ? app.expect : app.expect_inlined)[name] = {loc, fn};
        }
    }
    if (app.path.empty() || app.stacks.size() != 3 || app.expect.size() != 3)
        throw std::runtime_error("callsite app printed too little:\n" + line);
    return app;
}

inline trace::Module module_record(trace::TraceWriter& w, const CallsiteApp& app, const std::string& path) {
    trace::Module m;
    m.base = app.base;
    m.size = app.size;
    m.path = w.intern(path.c_str());
    m.build_id_size = static_cast<uint32_t>(std::min<size_t>(app.build_id.size(), sizeof m.build_id));
    std::copy(app.build_id.begin(), app.build_id.begin() + m.build_id_size, m.build_id);
    return m;
}

}  // namespace gprof::testing
