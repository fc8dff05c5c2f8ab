// `gprof-report diff BASE NEW`: compares two sets of runs and gates CI on regressions.
// Exit codes: 0 no regression, 1 regression beyond the thresholds, 2 usage or input error.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "diff/diff.h"
#include "html/html.h"
#include "cli/subcommands.h"
#include "output/output_file.h"
#include "output/table.h"

namespace gprof::report {

namespace {

namespace fs = std::filesystem;

struct DiffArgs {
    std::string base, cand;
    double fail_above = 10.0;
    std::string min_delta = "10us";
    std::string metric = "total";
    double alpha = 0.05;
    std::string thresholds_file;
    bool by_launch_config = false;
    std::string step_range;
    std::string format = "table";
    std::string output, write_markdown, write_json, write_html;
    bool force = false;  // replace existing output files (report/output/output_file.h)
    std::string colour = "auto";
    bool all = false;
    size_t name_width = kDefaultNameWidth;
    bool nested_driver_calls = false;
    CLI::Option *fail_above_opt = nullptr, *min_delta_opt = nullptr, *metric_opt = nullptr, *alpha_opt = nullptr;
};

struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

// One side's runs: each path is a trace file (one run), a run directory (one run), or a directory whose
// sub-directories are run directories (one run each: repeated measurements).
std::vector<std::vector<fs::path>> side_runs(const std::string& spec, const char* side) {
    std::vector<std::vector<fs::path>> runs;
    for (const std::string& item : split_commas(spec)) {
        fs::path p(item);
        std::error_code ec;
        if (!fs::exists(p, ec)) throw InputError(std::string(side) + ": " + item + " does not exist");
        if (!fs::is_directory(p, ec)) {
            runs.push_back({p});
            continue;
        }
        if (!find_traces(p).empty()) {
            runs.push_back({p});
            continue;
        }
        std::vector<fs::path> subdirs;
        for (const auto& e : fs::directory_iterator(p, ec))
            if (e.is_directory() && !find_traces(e.path()).empty()) subdirs.push_back(e.path());
        std::sort(subdirs.begin(), subdirs.end());
        if (subdirs.empty())
            throw InputError(std::string(side) + ": " + item +
                             " holds no *.gprof trace and no run directories with traces");
        for (auto& d : subdirs) runs.push_back({d});
    }
    if (runs.empty()) throw InputError(std::string(side) + ": no input given");
    return runs;
}

std::vector<RunFigures> load_side(const std::string& spec, const char* side, const FigureOptions& fo,
                                  const LoadOptions& lo) {
    std::vector<RunFigures> out;
    for (const auto& inputs : side_runs(spec, side)) {
        std::string label = inputs.front().string();
        Run run;
        try {
            run = load_run(inputs, lo);
        } catch (const std::exception& e) {
            throw InputError(std::string(side) + ": " + e.what());
        }
        // A trace that cannot be read at all would silently lower every number of its run: refuse it.
        if (!run.warnings.empty() || run.processes.empty()) {
            std::string msg = std::string(side) + ": " + label + " is not a usable run";
            for (const auto& w : run.warnings) msg += "\n  " + w;
            if (run.warnings.empty()) msg += "\n  no readable trace";
            throw InputError(msg);
        }
        RunFigures f = extract_figures(run, fo);
        f.label = label;
        out.push_back(std::move(f));
    }
    return out;
}

int run_diff(const DiffArgs& a) {
    Thresholds th;
    FigureOptions fo;
    OutputFormat format;
    try {
        // html (report/html/) is the CI view to attach to a pull request; the other forms are output/'s.
        format = a.format == "html" ? OutputFormat::Table : parse_format(a.format);
        if (format == OutputFormat::Csv) throw std::invalid_argument("diff has no csv form; use table, markdown, json or html");
        th.fail_above_pct = a.fail_above;
        if (a.fail_above < 0) throw std::invalid_argument("--fail-above must be >= 0");
        th.min_delta_ns = parse_duration_ns(a.min_delta);
        th.metric = parse_diff_metric(a.metric);
        if (!(a.alpha > 0 && a.alpha < 1)) throw std::invalid_argument("--alpha must be between 0 and 1");
        th.alpha = a.alpha;
        if (!a.thresholds_file.empty()) {
            CliOverrides cli{a.fail_above_opt->count() > 0, a.min_delta_opt->count() > 0, a.metric_opt->count() > 0,
                             a.alpha_opt->count() > 0};
            load_thresholds_file(a.thresholds_file, th, cli);
        }
        fo.by_launch_config = a.by_launch_config;
        fo.step_pattern = a.step_range;
        if (!fo.step_pattern.empty()) std::regex check(fo.step_pattern);
    } catch (const std::exception& e) {
        std::cerr << "gprof-report: error: diff: " << e.what() << "\n";
        return 2;
    }
    DiffResult r;
    try {
        LoadOptions lo;
        lo.filter.nested_driver_calls = a.nested_driver_calls;
        std::vector<RunFigures> base = load_side(a.base, "BASE", fo, lo);
        std::vector<RunFigures> cand = load_side(a.cand, "NEW", fo, lo);
        r = compare_runs(base, cand, th);
    } catch (const std::exception& e) {
        std::cerr << "gprof-report: error: diff: " << e.what() << "\n";
        return 2;
    }
    DiffRenderOptions ro;
    ro.show_unchanged = a.all;
    ro.name_width = a.name_width;
    bool to_stdout = a.output.empty();
    ro.colour = a.colour == "always" || (a.colour == "auto" && to_stdout && ::isatty(STDOUT_FILENO));

    auto write_file = [&a](const std::string& path, const std::string& text) {
        OutputFile f(path, a.force);
        f.stream() << text;
        f.commit();
    };
    try {
        std::ostringstream main;
        if (a.format == "html") main << html::render_diff_page(r, a.all);
        else if (format == OutputFormat::Json) main << diff_to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        else if (format == OutputFormat::Markdown) render_diff_markdown(r, ro, main);
        else render_diff_table(r, ro, main);
        if (to_stdout) std::cout << main.str();
        else write_file(a.output, main.str());
        if (!a.write_markdown.empty()) {
            std::ostringstream md;
            render_diff_markdown(r, {false, a.all, 50}, md);
            write_file(a.write_markdown, md.str());
        }
        if (!a.write_json.empty()) write_file(a.write_json, diff_to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        if (!a.write_html.empty()) write_file(a.write_html, html::render_diff_page(r, a.all));
    } catch (const std::exception& e) {
        std::cerr << "gprof-report: error: diff: " << e.what() << "\n";
        return 2;
    }
    return r.exit_code();
}

}  // namespace

void register_diff_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand(
        "diff",
        "Compare BASE runs with NEW runs per kernel, memcpy, API call, NVTX range and whole-run figure; exit 1 on "
        "a regression beyond the thresholds, 2 on a usage or input error");
    auto a = std::make_shared<DiffArgs>();
    cmd->add_option("base", a->base,
                    "Baseline: a run directory, a trace, a directory of run directories (repeated runs), or a "
                    "comma-separated list of these")
        ->required();
    cmd->add_option("new", a->cand, "New runs, same forms as BASE")->required();
    a->fail_above_opt = cmd->add_option("--fail-above", a->fail_above, "Fail when a key is slower by more than PCT %")
                            ->capture_default_str();
    a->min_delta_opt = cmd->add_option("--min-delta", a->min_delta,
                                       "...and by at least this much absolute time (ns, us, ms, s)")
                           ->capture_default_str();
    a->metric_opt = cmd->add_option("--metric", a->metric, "Compare total, mean or median time per key")
                        ->capture_default_str();
    a->alpha_opt = cmd->add_option("--alpha", a->alpha, "Significance level of the test with several runs per side")
                       ->capture_default_str();
    cmd->add_option("--thresholds", a->thresholds_file, "JSON file with defaults and per-key rules (docs/ci.md)");
    cmd->add_flag("--by-launch-config", a->by_launch_config, "Key kernels by name + grid + block");
    cmd->add_option("--step-range", a->step_range, "NVTX range name or regex marking one step (run:step_time)");
    cmd->add_option("--format", a->format, "table, markdown, json or html (one self-contained page)")
        ->capture_default_str();
    cmd->add_option("-o,--output", a->output, "Write the report to this file instead of stdout");
    cmd->add_option("--write-markdown", a->write_markdown, "Also write the markdown report (PR comment) here");
    cmd->add_option("--write-json", a->write_json, "Also write the JSON report here");
    cmd->add_flag("--force,--force-overwrite", a->force, "Replace the files -o, --write-markdown, --write-json and --write-html name if they exist");
    cmd->add_option("--write-html", a->write_html, "Also write the HTML page here");
    cmd->add_option("--color", a->colour, "auto, always or never (table only)")->capture_default_str();
    cmd->add_flag("--all", a->all, "List unchanged keys too");
    cmd->add_option("--name-width", a->name_width,
                    "table/markdown: shorten keys to N characters, keeping head and tail (0 = full; json keeps them)")
        ->capture_default_str();
    cmd->add_flag(kNestedDriverCallsFlag, a->nested_driver_calls, kNestedDriverCallsHelp);
    cmd->callback([a, exit_code] { *exit_code = run_diff(*a); });
}

}  // namespace gprof::report
