// `gprof-report export --format sqlite RUN -o run.sqlite`: the run in nsys's SQLite export schema.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "export/sqlite.h"
#include "model/model.h"
#include "output/cli_options.h"
#include "output/output_file.h"
#include "output/table.h"

namespace gprof::report {

namespace {

struct ExportArgs {
    std::vector<std::string> inputs;
    std::string format = "sqlite";
    std::string output;
    bool force = false;
    std::vector<int64_t> pids;
};

int run_export(const ExportArgs& a) {
    namespace fs = std::filesystem;
    if (a.format != "sqlite")
        return cli_error("export: format '" + a.format +
                         "' is not exported (sqlite; for JSON use gprof-report --format json, for the events "
                         "gprof-report timeline)");
    fs::path out = a.output.empty() ? fs::path("report.sqlite") : fs::path(a.output);
    try {
        // Checked before the run is read (output/output_file.h: the one policy for every output).
        if (auto e = OutputFile::check(out, OutputPolicy{a.force}); !e.empty()) return cli_error(e);
        std::vector<fs::path> in(a.inputs.begin(), a.inputs.end());
        auto traces = expand_inputs(in);
        if (auto e = check_processes(traces, a.pids); !e.empty()) return cli_error(e);
        LoadOptions lo;
        lo.filter.pids = a.pids;
        lo.keep_backtraces = false;
        Run run = load_run(traces, lo);
        for (const auto& w : run.all_warnings()) cli_warning(w);
        if (run.processes.empty()) return cli_error("no readable trace among the inputs");
        SqliteExportStats st = export_sqlite(run, out, OutputPolicy{a.force});
        std::cerr << "gprof-report: wrote " << out.string() << " (" << st.rows << " rows in " << st.tables.size()
                  << " tables)\n";
        return 0;
    } catch (const std::exception& e) {
        return cli_error(e.what());
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
    add_force_flag(cmd, a->force, "Replace the database");
    cmd->add_option("--process", a->pids, "Only these processes (PID; repeatable or a comma list)")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd->callback([a, exit_code] { *exit_code = run_export(*a); });
}

}  // namespace gprof::report
