// `gprof-report export --format sqlite RUN -o run.sqlite`: the run in nsys's SQLite export schema.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/subcommands.h"
#include "export/sqlite.h"
#include "model/model.h"
#include "output/table.h"

namespace gprof::report {

namespace {

struct ExportArgs {
    std::vector<std::string> inputs;
    std::string format = "sqlite";
    std::string output;
    std::string force = "false";
    std::vector<int64_t> pids;
};

int run_export(const ExportArgs& a) {
    namespace fs = std::filesystem;
    auto fail = [](const std::string& why) {
        std::cerr << "gprof-report export: error: " << why << '\n';
        return 2;
    };
    if (a.format != "sqlite")
        return fail("format '" + a.format + "' is not exported (sqlite; for JSON use gprof-report --format json, "
                                             "for the events gprof-report timeline)");
    if (a.force != "true" && a.force != "false") return fail("--force-overwrite: '" + a.force + "' is not true or false");
    fs::path out = a.output.empty() ? fs::path("report.sqlite") : fs::path(a.output);
    std::error_code ec;
    // Like every output gprof-report writes (output/output_file.h): a link planted at the name is never followed
    // nor replaced, --force-overwrite or not.
    if (fs::is_symlink(fs::symlink_status(out, ec)))
        return fail(out.string() + " is a symbolic link: not written through (name the file itself)");
    if (fs::exists(fs::symlink_status(out, ec)) && a.force != "true")
        return fail(out.string() + " exists (--force-overwrite=true replaces it)");
    if (fs::is_directory(out, ec)) return fail(out.string() + " is a directory");
    try {
        LoadOptions lo;
        lo.filter.pids = a.pids;
        lo.keep_backtraces = false;
        std::vector<fs::path> in(a.inputs.begin(), a.inputs.end());
        Run run = load_run(in, lo);
        for (const auto& w : run.all_warnings()) std::cerr << "gprof-report: warning: " << w << '\n';
        if (run.processes.empty()) return fail("no readable trace among the inputs");
        SqliteExportStats st = export_sqlite(run, out);
        std::cerr << "gprof-report: wrote " << out.string() << " (" << st.rows << " rows in " << st.tables.size()
                  << " tables)\n";
        return 0;
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}

}  // namespace

void register_export_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand("export", "The run as an SQLite database with nsys's export tables "
                                             "(docs/sqlite-export.md)");
    auto a = std::make_shared<ExportArgs>();
    cmd->add_option("inputs", a->inputs, "Run directories or trace files")->required();
    cmd->add_option("-f,--format,-t,--type", a->format, "sqlite (nsys export's --type)")->capture_default_str();
    cmd->add_option("-o,--output", a->output, "Database to write (default: report.sqlite)");
    cmd->add_option("--force-overwrite", a->force, "true: replace an existing database")
        ->expected(0, 1)
        ->default_str("true");
    cmd->add_option("--process", a->pids, "Only these processes (PID; repeatable or a comma list)")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd->callback([a, exit_code] { *exit_code = run_export(*a); });
}

}  // namespace gprof::report
