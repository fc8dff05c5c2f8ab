// report.html of a large job made from its ranks' figures alone (analyze/rank_inputs.h, job_of_figures): a header and
// the Ranks section. What only records can show (kernels, copies, memory, API calls, NVTX) is one rank's own page:
// the page says so rather than load every rank's records into one process.
#include <algorithm>
#include <set>

#include "gprof/version.h"
#include "html/ranks_section.h"
#include "html/run_page_parts.h"

namespace gprof::report::html {

std::string render_job_page(const RankView& view, const std::string& source, size_t run_dirs) {
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
    parts.push_back("from the rank figures of " + run_page::plural(run_dirs, "run directory", "run directories"));
    for (size_t i = 0; i < parts.size(); ++i) body += (i ? " \xC2\xB7 " : "") + parts[i];
    if (!source.empty()) body += "<br><span class=\"mono\">" + escape(source) + "</span>";
    body += "</div></header>\n";
    body += "<p class=\"note\">Made from each rank's <code>rank-figures.json</code> (its steps, NCCL and compute time), "
            "not its records. The verdict, kernels, copies, memory and API calls of one rank: <code>gprof-report html "
            "RUN_DIR</code> of its run directory.</p>\n";
    body += ranks_section(view);
    body += "<footer>Made by gprof-report " GPROF_VERSION " from the ranks' figures, written by gprof-run at the end "
            "of each rank's run. Times are each host's own clock (<code>gprof-report ranks --clock-offset</code> "
            "corrects one).</footer>\n";
    return document("gprof-run: " + what, body);
}

}  // namespace gprof::report::html
