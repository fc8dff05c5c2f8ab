// `gprof-report html RUN... [-o FILE] [--force]`: the run report as one self-contained HTML file.
#include <iostream>
#include <memory>

#include "analyze/rank_inputs.h"
#include "html/html.h"
#include "output/cli_options.h"
#include "output/output_file.h"
#include "output/table.h"

namespace gprof::report {

namespace {

struct HtmlArgs {
    std::vector<std::string> inputs;
    std::string output = "report.html";
    std::string step_range;
    double batch_size = 0;
    bool nested_driver_calls = false;
    bool force = false;
};

int run_html(const HtmlArgs& args) {
    try {
        std::vector<std::filesystem::path> inputs(args.inputs.begin(), args.inputs.end());
        // Checked before the run is read: a refusal costs nothing (output/output_file.h, like every output).
        if (auto e = OutputFile::check(args.output, OutputPolicy{args.force}); !e.empty()) return cli_error(e);
        std::string page;
        if (auto where = large_job(inputs, args.step_range)) {
            // A large job: the page from each run directory's figures, or its traces one run directory at a time.
            LoadOptions lo;
            lo.filter.nested_driver_calls = args.nested_driver_calls;
            lo.keep_backtraces = false;
            JobFigures job = job_figures(*where, args.step_range, lo);
            if (job.from_figures == 0 && job.processes == 0) {
                std::string why = "no readable trace in the input";
                for (const auto& w : job.warnings) why += "\n  " + w;
                return cli_error(why);
            }
            const RankView view = compare_ranks(std::move(job.ranks));
            html::JobPageInputs in;
            in.view = &view;
            in.source = inputs.size() == 1 ? inputs.front().string() : std::string();
            in.figures_files = job.figures_files;
            in.trace_dirs = job.trace_dirs;
            in.warnings = std::move(job.warnings);
            page = html::render_job_page(in);
        } else {
            Filter filter;
            filter.nested_driver_calls = args.nested_driver_calls;
            AnalysisOptions ao;
            ao.step_pattern = args.step_range;
            if (args.batch_size > 0) ao.batch_size = args.batch_size;
            page = html::render_run_page(inputs, filter, ao);
        }
        OutputFile f(args.output, OutputPolicy{args.force});
        f.stream() << page;
        f.commit();
        std::cerr << "gprof-report: wrote " << args.output << " ("
                  << format_fixed(static_cast<double>(page.size()) / 1e3, 1) << " kB; open it in a browser)\n";
        return 0;
    } catch (const std::exception& e) {
        return cli_error(e.what());
    }
}

}  // namespace

void register_html_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand("html", "The run at a glance as one self-contained HTML file (charts and "
                                           "sortable tables; works offline)");
    auto args = std::make_shared<HtmlArgs>();
    cmd->add_option("runs", args->inputs, "Run directories or trace files")->required();
    cmd->add_option("-o,--output", args->output, "Output file")->capture_default_str();
    add_force_flag(cmd, args->force, "Replace the output file");
    cmd->add_option("--step-range", args->step_range,
                    "NVTX range name or regex (whole name, case-insensitive) marking one step; default: step, "
                    "iteration, ProfileStep, ProfilerStep, train_step");
    cmd->add_option("--batch-size", args->batch_size, "Items per step: show throughput (IPS)");
    cmd->add_flag(kNestedDriverCallsFlag, args->nested_driver_calls, kNestedDriverCallsHelp);
    cmd->callback([args, exit_code] { *exit_code = run_html(*args); });
}

}  // namespace gprof::report
