// `gprof-report html RUN... [-o FILE]`: the run report as one self-contained HTML file.
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/subcommands.h"
#include "html/html.h"
#include "output/table.h"

namespace gprof::report {

namespace {

struct HtmlArgs {
    std::vector<std::string> inputs;
    std::string output = "report.html";
    std::string step_range;
    double batch_size = 0;
    bool nested_driver_calls = false;
};

int run_html(const HtmlArgs& args) {
    std::string page;
    try {
        std::vector<std::filesystem::path> inputs(args.inputs.begin(), args.inputs.end());
        Filter filter;
        filter.nested_driver_calls = args.nested_driver_calls;
        AnalysisOptions ao;
        ao.step_pattern = args.step_range;
        if (args.batch_size > 0) ao.batch_size = args.batch_size;
        page = html::render_run_page(inputs, filter, ao);
    } catch (const std::exception& e) {
        std::cerr << "gprof-report html: " << e.what() << "\n";
        return 2;
    }
    std::ofstream f(args.output, std::ios::binary | std::ios::trunc);
    f << page;
    f.close();
    if (!f) {
        std::cerr << "gprof-report html: cannot write " << args.output << "\n";
        return 2;
    }
    std::cerr << "gprof-report: wrote " << args.output << " ("
              << format_fixed(static_cast<double>(page.size()) / 1e3, 1) << " kB; open it in a browser)\n";
    return 0;
}

}  // namespace

void register_html_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand("html", "The run at a glance as one self-contained HTML file (charts and "
                                           "sortable tables; works offline)");
    auto args = std::make_shared<HtmlArgs>();
    cmd->add_option("runs", args->inputs, "Run directories or trace files")->required();
    cmd->add_option("-o,--output", args->output, "Output file")->capture_default_str();
    cmd->add_option("--step-range", args->step_range,
                    "NVTX range name or regex (whole name, case-insensitive) marking one step; default: step, "
                    "iteration, ProfileStep, ProfilerStep, train_step");
    cmd->add_option("--batch-size", args->batch_size, "Items per step: show throughput (IPS)");
    cmd->add_flag(kNestedDriverCallsFlag, args->nested_driver_calls, kNestedDriverCallsHelp);
    cmd->callback([args, exit_code] { *exit_code = run_html(*args); });
}

}  // namespace gprof::report
