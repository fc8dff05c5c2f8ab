// `gprof-report ranks INPUTS...`: the ranks of a distributed job side by side and the straggler named. INPUTS are
// run directories (or their parent), trace files, or JSON files this command wrote with --format json: so each
// node can reduce its own ranks' traces where they live, and one merge reads only those small files
// (docs/distributed.md).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyze/rank_inputs.h"
#include "analyze/ranks.h"
#include "cli/subcommands.h"
#include "output/output_file.h"

namespace gprof::report {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RanksArgs {
    std::vector<std::string> inputs;
    std::string format = "table";
    std::string output;
    bool force = false;  // replace an existing -o file
    std::string step_range;
    std::vector<std::string> clock_offsets;
    size_t rows = 20;
    bool all_ranks = false;
    bool nested_driver_calls = false;
};

int run_ranks(const RanksArgs& args) {
    const char* who = "gprof-report: error: ranks: ";
    OutputFormat format;
    try {
        format = parse_format(args.format);
        if (format == OutputFormat::Csv) throw std::invalid_argument("ranks has no csv form; use table, markdown or json");
    } catch (const std::exception& e) {
        std::cerr << who << e.what() << "\n";
        return 2;
    }
    std::vector<RankFigures> figures;
    try {
        LoadOptions lo;
        lo.filter.nested_driver_calls = args.nested_driver_calls;
        for (const auto& c : args.clock_offsets) parse_clock_offset(c, lo.filter);
        lo.keep_backtraces = false;
        // Figures where a run directory has them, its traces one run directory at a time where not
        // (analyze/rank_inputs.h): never every record of the job at once.
        JobFigures job = job_figures(std::vector<fs::path>(args.inputs.begin(), args.inputs.end()), args.step_range, lo);
        for (const auto& w : job.warnings) std::cerr << "gprof-report: warning: " << w << '\n';
        if (job.from_figures == 0 && job.processes == 0) {
            std::cerr << who << "no readable trace among the inputs\n";
            return 2;
        }
        figures = std::move(job.ranks);
    } catch (const std::exception& e) {
        std::cerr << who << e.what() << "\n";
        return 2;
    }
    RankView view = compare_ranks(std::move(figures));
    try {  // -o as every gprof-report output (report/output/output_file.h)
        std::optional<OutputFile> file;
        if (!args.output.empty()) file.emplace(args.output, args.force);
        std::ostream& out = file ? file->stream() : std::cout;
        if (format == OutputFormat::Json)
            write_rank_view_json(view, out), out << "\n";  // one rank at a time, never the whole document
        else render_rank_view(view, format, out, {args.rows, args.all_ranks});
        if (file) file->commit();
    } catch (const std::exception& e) {
        std::cerr << who << e.what() << "\n";
        return 2;
    }
    return 0;
}

}  // namespace

void register_ranks_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand(
        "ranks", "Ranks of a distributed job side by side: per-step time per rank, NCCL wait against compute, the "
                 "straggler named; merges the JSON files of earlier `ranks --format json` runs");
    auto args = std::make_shared<RanksArgs>();
    cmd->add_option("inputs", args->inputs,
                    "Run directories (or one directory holding them), trace files, or rank figures (*.json)")
        ->required();
    cmd->add_option("--format", args->format, "table, markdown or json (the rank figures that merge)")
        ->capture_default_str();
    cmd->add_option("-o,--output", args->output, "Write to this file instead of stdout");
    cmd->add_flag("--force,--force-overwrite", args->force, "Replace the -o file if it exists");
    cmd->add_option("--step-range", args->step_range,
                    "NVTX range name or regex (whole name, case-insensitive) marking one step; default as analyze");
    cmd->add_option(kClockOffsetFlag, args->clock_offsets, kClockOffsetHelp);
    cmd->add_option("--rows", args->rows, "Steps listed in the table (0: all)")->capture_default_str();
    cmd->add_flag("--all-ranks", args->all_ranks,
                  "One row per rank, however many (by default above 32 ranks: the distribution across ranks and the "
                  "ranks that stand out)");
    cmd->add_flag(kNestedDriverCallsFlag, args->nested_driver_calls, kNestedDriverCallsHelp);
    cmd->callback([args, exit_code] { *exit_code = run_ranks(*args); });
}

}  // namespace gprof::report
