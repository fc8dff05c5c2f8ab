// `gprof-report export --format sqlite RUN -o run.sqlite`: the run in nsys's SQLite export schema;
// `--format folded`: its CPU samples as folded stacks (flamegraph.pl, speedscope).
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "export/folded.h"
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

// The run as the exporters read it: checked inputs and processes, warnings said; empty (the error said, its exit
// status in `status`) when nothing is readable.
std::optional<Run> load_for_export(const ExportArgs& a, bool keep_backtraces, int& status) {
    namespace fs = std::filesystem;
    std::vector<fs::path> in(a.inputs.begin(), a.inputs.end());
    auto traces = expand_inputs(in);
    if (auto e = check_processes(traces, a.pids); !e.empty()) {
        status = cli_error(e);
        return std::nullopt;
    }
    LoadOptions lo;
    lo.filter.pids = a.pids;
    lo.keep_backtraces = keep_backtraces;
    Run run = load_run(traces, lo);
    for (const auto& w : run.all_warnings()) cli_warning(w);
    if (run.processes.empty()) {
        status = cli_error("no readable trace among the inputs");
        return std::nullopt;
    }
    return run;
}

int export_folded(const ExportArgs& a) {
    namespace fs = std::filesystem;
    const bool to_stdout = a.output == "-";
    fs::path out = a.output.empty() ? fs::path("stacks.folded") : fs::path(a.output);
    if (!to_stdout)
        if (auto e = OutputFile::check(out, OutputPolicy{a.force}); !e.empty()) return cli_error(e);
    int status = 0;
    std::optional<Run> run = load_for_export(a, true, status);
    if (!run) return status;
    FoldedStats st;
    if (to_stdout) {
        st = write_folded(*run, std::cout);
    } else {
        OutputFile f(out, OutputPolicy{a.force});
        st = write_folded(*run, f.stream());
        f.commit();
    }
    std::cerr << "gprof-report: wrote " << (to_stdout ? std::string("folded stacks") : out.string()) << " ("
              << st.lines << " stacks, " << st.samples << " samples)\n";
    if (st.samples == 0) cli_warning("the traces hold no CPU samples");
    return 0;
}

int run_export(const ExportArgs& a) {
    namespace fs = std::filesystem;
    if (a.format != "sqlite" && a.format != "folded")
        return cli_error("export: format '" + a.format +
                         "' is not exported (sqlite, folded; for JSON use gprof-report --format json, for the events "
                         "gprof-report timeline)");
    try {
        if (a.format == "folded") return export_folded(a);
        fs::path out = a.output.empty() ? fs::path("report.sqlite") : fs::path(a.output);
        // Checked before the run is read (output/output_file.h: the one policy for every output).
        if (auto e = OutputFile::check(out, OutputPolicy{a.force}); !e.empty()) return cli_error(e);
        int status = 0;
        std::optional<Run> run = load_for_export(a, false, status);
        if (!run) return status;
        SqliteExportStats st = export_sqlite(*run, out, OutputPolicy{a.force});
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
                                             "(docs/sqlite-export.md), or its CPU samples as folded stacks");
    auto a = std::make_shared<ExportArgs>();
    cmd->add_option("inputs", a->inputs, "Run directories or trace files")->required();
    cmd->add_option("-f,--format,-t,--type", a->format,
                    "sqlite (nsys export's --type), or folded: the CPU samples as folded stacks for flamegraph.pl and "
                    "speedscope")
        ->capture_default_str();
    cmd->add_option("-o,--output", a->output, "File to write (default: report.sqlite, stacks.folded; '-' for folded "
                                              "stacks on standard output)");
    add_force_flag(cmd, a->force, "Replace the file");
    cmd->add_option("--process", a->pids, "Only these processes (PID; repeatable or a comma list)")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd->callback([a, exit_code] { *exit_code = run_export(*a); });
}

}  // namespace gprof::report
