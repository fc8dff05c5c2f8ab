// `gprof-report analyze RUN`: bottleneck verdict, idle gaps, findings and the step view.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/rank_inputs.h"
#include "analyze/ranks.h"
#include "cli/subcommands.h"
#include "output/output_file.h"
#include "output/table.h"
#include "output/text.h"

namespace gprof::report {

namespace {

struct AnalyzeArgs {
    std::vector<std::string> inputs;
    std::string format = "table";
    std::string output;
    bool force = false;  // replace an existing -o file (report/output/output_file.h)
    std::string step_range;
    double batch_size = 0;
    size_t gaps = 5;
    bool nested_driver_calls = false;
    std::vector<std::string> clock_offsets;
    bool all_ranks = false;
};

// analyze of a large job (more than kRanksListedWhole run directories): the ranks view, from each run directory's
// figures or its traces reduced one run directory at a time (analyze/rank_inputs.h); what needs every record in one
// process is named in one line, with where to get it.
int analyze_job(const AnalyzeArgs& args, OutputFormat format, const RankInputs& where) {
    try {
        LoadOptions lo;
        lo.filter.nested_driver_calls = args.nested_driver_calls;
        for (const auto& c : args.clock_offsets) parse_clock_offset(c, lo.filter);
        lo.keep_backtraces = false;
        JobFigures job = job_figures(where, args.step_range, lo);
        if (job.from_figures == 0 && job.processes == 0) {
            std::cerr << "gprof-report: error: analyze: no readable trace in the input";
            for (const auto& w : job.warnings) std::cerr << "\n  " << w;
            std::cerr << "\n";
            return 2;
        }
        RankView view = compare_ranks(std::move(job.ranks));
        std::optional<OutputFile> file;
        if (!args.output.empty()) file.emplace(args.output, args.force);
        std::ostream& out = file ? file->stream() : std::cout;
        const std::string note = "a job of " + std::to_string(view.ranks.size()) + " ranks, from " + job_sources(job) +
                                 ": the ranks compared; the bottleneck verdict, findings and kernel tables are per "
                                 "rank, not pooled over the job (gprof-report analyze RUN_DIR of one rank)";
        if (format == OutputFormat::Json) {
            // {"job", "ranks", "warnings"} as nlohmann would dump it, the view written one rank at a time.
            out << "{\n  \"job\": ";
            write_json_at_depth(note, out, 1);
            out << ",\n  \"ranks\": ";
            write_rank_view_json(view, out, 1);
            out << ",\n  \"warnings\": ";
            write_json_at_depth(job.warnings, out, 1);
            out << "\n}\n";
        } else {
            std::ostringstream text;
            text << (format == OutputFormat::Markdown ? "# Analysis\n\n" : "Analysis: ") << note << "\n";
            for (const auto& w : job.warnings) text << "warning: " << w << "\n";
            text << "\n";
            render_rank_view(view, format, text, {20, args.all_ranks});
            out << printable_text(text.str());
        }
        if (file) file->commit();
    } catch (const std::exception& e) {
        std::cerr << "gprof-report: error: analyze: " << e.what() << "\n";
        return 2;
    }
    return 0;
}

int run_analyze(const AnalyzeArgs& args) {
    OutputFormat format;
    try {
        format = parse_format(args.format);
        if (format == OutputFormat::Csv) throw std::invalid_argument("analyze has no csv form; use table, markdown or json");
    } catch (const std::exception& e) {
        std::cerr << "gprof-report: error: analyze: " << e.what() << "\n";
        return 2;
    }
    std::vector<std::filesystem::path> inputs(args.inputs.begin(), args.inputs.end());
    // A large job: the ranks view, one run directory at a time.
    if (auto where = large_job(inputs, args.step_range)) return analyze_job(args, format, *where);
    Run run;
    try {
        LoadOptions lo;
        lo.filter.nested_driver_calls = args.nested_driver_calls;
        for (const auto& c : args.clock_offsets) parse_clock_offset(c, lo.filter);
        run = load_run(inputs, lo);
    } catch (const std::exception& e) {
        std::cerr << "gprof-report: error: analyze: " << e.what() << "\n";
        return 2;
    }
    if (run.processes.empty()) {
        std::cerr << "gprof-report: error: analyze: no readable trace in the input";
        for (const auto& w : run.warnings) std::cerr << "\n  " << w;
        std::cerr << "\n";
        return 2;
    }
    AnalysisOptions opt;
    opt.step_pattern = args.step_range;
    if (args.batch_size > 0) opt.batch_size = args.batch_size;
    opt.max_gaps = args.gaps;
    AnalysisResult a;
    try {
        a = analyze_run(run, opt);
    } catch (const std::exception& e) {
        std::cerr << "gprof-report: error: analyze: " << e.what() << "\n";
        return 2;
    }
    // A distributed job: the ranks side by side, with the straggler named (analyze/ranks.h).
    std::optional<RankView> ranks;
    if (run.processes.size() >= 2)
        if (auto figures = rank_figures(run, args.step_range); figures.size() >= 2) ranks = compare_ranks(std::move(figures));
    std::optional<OutputFile> file;
    try {
        if (!args.output.empty()) file.emplace(args.output, args.force);
        std::ostream& out = file ? file->stream() : std::cout;
        switch (format) {
            case OutputFormat::Json: {
                nlohmann::json j = analysis_to_json(a);
                if (ranks) j["ranks"] = rank_view_to_json(*ranks);
                out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
                break;
            }
            default: {
                // Rendered whole, then made printable: findings quote range and kernel names the program chose.
                std::ostringstream text;
                if (format == OutputFormat::Markdown) render_analysis_markdown(a, text);
                else render_analysis_table(a, text);
                if (ranks) text << "\n", render_rank_view(*ranks, format, text, {20, args.all_ranks});
                out << printable_text(text.str());
                break;
            }
        }
        if (file) file->commit();
    } catch (const std::exception& e) {
        std::cerr << "gprof-report: error: analyze: " << e.what() << "\n";
        return 2;
    }
    return 0;
}

}  // namespace

void register_analyze_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand("analyze", "Bottleneck verdict, GPU idle gaps, findings and per-step view");
    auto args = std::make_shared<AnalyzeArgs>();
    cmd->add_option("run", args->inputs, "Run directory or trace files")->required();
    cmd->add_option("--format", args->format, "table, markdown or json")->capture_default_str();
    cmd->add_option("-o,--output", args->output, "Write to this file instead of stdout");
    cmd->add_flag("--force,--force-overwrite", args->force, "Replace the -o file if it exists");
    cmd->add_option("--step-range", args->step_range,
                    "NVTX range name or regex (whole name, case-insensitive) marking one step; default: step, "
                    "iteration, ProfileStep, ProfilerStep, train_step");
    cmd->add_option("--batch-size", args->batch_size, "Items per step: report throughput (IPS)");
    cmd->add_option("--gaps", args->gaps, "How many of the largest GPU idle gaps to list")->capture_default_str();
    cmd->add_flag(kNestedDriverCallsFlag, args->nested_driver_calls, kNestedDriverCallsHelp);
    cmd->add_option(kClockOffsetFlag, args->clock_offsets, kClockOffsetHelp);
    cmd->add_flag("--all-ranks", args->all_ranks, "In the ranks view, one row per rank however many");
    cmd->callback([args, exit_code] { *exit_code = run_analyze(*args); });
}

}  // namespace gprof::report
