// The built gprof-report run as a user runs it (GPROF_REPORT_EXE, through the shell), for the tests of its command
// line: exit status, stdout and stderr. A test helper: nothing here is installed.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "trace_fixture.h"

namespace gprof::testing {

struct CliResult {
    int status = -1;  // exit status; 128+N for signal N
    std::string out, err;
};

// A whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// gprof-report with `args` (split by the shell), stdout and stderr through files in `dir` (cli.out, cli.err);
// `prefix` goes before it on the command line (a `timeout`, a `setpriv`).
inline CliResult run_report(const std::string& args, const TempDir& dir, const std::string& prefix = "") {
    std::string out = dir.file("cli.out"), err = dir.file("cli.err");
    std::string cmd = prefix + GPROF_REPORT_EXE + " " + args + " >" + out + " 2>" + err;
    int rc = std::system(cmd.c_str());
    CliResult r;
    if (WIFEXITED(rc)) r.status = WEXITSTATUS(rc);
    else if (WIFSIGNALED(rc)) r.status = 128 + WTERMSIG(rc);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

}  // namespace gprof::testing
