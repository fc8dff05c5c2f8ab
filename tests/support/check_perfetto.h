// Runs tests/report/check_perfetto.py on a run or job directory: the gprof-report under test writes its Perfetto
// timeline, protoc decodes it with the schema subset (report/timeline/perfetto_trace_subset.proto), the rules Perfetto
// relies on are checked and every slice, counter sample and flow of the JSON timeline is looked for in it. Needs
// GPROF_SOURCE_DIR and GPROF_REPORT_EXE, as the report tests define them.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

struct PerfettoCheck {
    int exit_code = -1;
    std::string output;  // what the script printed: its counts ("N slices, M counter samples, ...") or what failed
};

// `output_file`: where the script's output is kept (a file of the test's own temporary directory).
inline PerfettoCheck check_perfetto(const std::string& dir, const std::string& output_file) {
    std::string cmd = std::string("python3 ") + GPROF_SOURCE_DIR + "/tests/report/check_perfetto.py --report " +
                      GPROF_REPORT_EXE + " --proto " + GPROF_SOURCE_DIR +
                      "/report/timeline/perfetto_trace_subset.proto " + dir + " > " + output_file + " 2>&1";
    PerfettoCheck check;
    check.exit_code = std::system(cmd.c_str());
    std::ifstream in(output_file);
    std::stringstream text;
    text << in.rdbuf();
    check.output = text.str();
    return check;
}
