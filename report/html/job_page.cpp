// report.html of a large job made from its ranks' figures (analyze/rank_inputs.h, large_job: each run directory's
// rank-figures.json, or its traces reduced one run directory at a time): a header and the Ranks section. What only
// records can show (kernels, copies, memory, API calls, NVTX) is one rank's own page: the page says so rather than
// load every rank's records into one process.
#include <algorithm>
#include <set>

#include "gprof/version.h"
#include "html/ranks_section.h"
#include "html/run_page_parts.h"

namespace gprof::report::html {

std::string render_job_page(const JobPageInputs& in) {
    const RankView& view = *in.view;
    std::set<std::string> jobs;
    int64_t first_ns = 0;
    for (const auto& r : view.ranks) {
        if (!r.job.empty()) jobs.insert(r.job);
        if (r.first_ns > 0 && (first_ns == 0 || r.first_ns < first_ns)) first_ns = r.first_ns;
    }
    std::string what = "a job of " + run_page::count(view.ranks.size()) + " ranks";
    if (jobs.size() == 1) what = "job " + escape(*jobs.begin()) + ": " + run_page::count(view.ranks.size()) + " ranks";
    std::string body = "<header class=\"top\"><div class=\"meta\">gprof-run report</div><h1>" + what + "</h1>" +
                       "<div class=\"meta\">";
    std::vector<std::string> parts;
    if (std::string date = run_page::utc_date(first_ns); !date.empty()) parts.push_back("recorded " + date);
    parts.push_back("on " + run_page::plural(view.hosts, "host", "hosts"));
    const std::string figures_dirs = run_page::plural(in.figures_files, "run directory", "run directories");
    const std::string trace_dirs = run_page::plural(in.trace_dirs, "run directory", "run directories");
    if (in.trace_dirs == 0) parts.push_back("from the rank figures of " + figures_dirs);
    else if (in.figures_files == 0) parts.push_back("from the traces of " + trace_dirs + ", read one at a time");
    else parts.push_back("from the rank figures of " + figures_dirs + " and the traces of " + trace_dirs);
    for (size_t i = 0; i < parts.size(); ++i) body += (i ? " \xC2\xB7 " : "") + parts[i];
    if (!in.source.empty()) body += "<br><span class=\"mono\">" + escape(in.source) + "</span>";
    body += "</div></header>\n";
    const char* made_from = in.trace_dirs == 0
                                ? "Made from each rank's <code>rank-figures.json</code> (its steps, NCCL and compute "
                                  "time), not its records."
                                : "Made from each rank's figures (its steps, NCCL and compute time): its "
                                  "<code>rank-figures.json</code>, or its traces reduced to them one run directory at a "
                                  "time, never every rank's records at once.";
    body += std::string("<p class=\"note\">") + made_from +
            " The verdict, kernels, copies, memory and API calls of one rank: <code>gprof-report html RUN_DIR</code> of "
            "its run directory.</p>\n";
    if (!in.warnings.empty()) {
        body += "<div class=\"alert\" id=\"warnings\" role=\"alert\"><h2>" +
                run_page::plural(in.warnings.size(), "warning", "warnings") + " about the traces read</h2><ul>";
        for (const auto& w : in.warnings) body += "<li>" + escape(w) + "</li>";
        body += "</ul></div>\n";
    }
    body += ranks_section(view);
    body += in.trace_dirs == 0
                ? "<footer>Made by gprof-report " GPROF_VERSION " from the ranks' figures, written by gprof-run at the "
                  "end of each rank's run. Times are each host's own clock (<code>gprof-report ranks "
                  "--clock-offset</code> corrects one).</footer>\n"
                : "<footer>Made by gprof-report " GPROF_VERSION " from the ranks' figures and traces. Times are each "
                  "host's own clock (<code>gprof-report ranks --clock-offset</code> corrects one).</footer>\n";
    return document("gprof-run: " + what, body);
}

}  // namespace gprof::report::html
