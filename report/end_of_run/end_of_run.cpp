// finish_run(): what gprof-run does once the app has ended. Shares every piece with gprof-report, so the summary
// printed at the end of a run and `gprof-report summary RUN` never disagree.
#include "end_of_run/end_of_run.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "analyze/analysis.h"
#include "html/html.h"
#include "model/aggregate.h"
#include "model/model.h"
#include "reports/reports.h"
#include "timeline/timeline.h"


namespace gprof::report {

namespace fs = std::filesystem;

namespace {

// O_EXCL|O_NOFOLLOW, mode 0600: false (errno set) if the file exists, is a symlink, or cannot be written whole. A
// file it created but could not fill (a full disk) is removed: a cut summary must not look like a result.
bool write_new_file(const fs::path& path, const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int e = errno ? errno : EIO;
            ::close(fd);
            ::unlink(path.c_str());
            errno = e;
            return false;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    if (::close(fd) == 0) return true;
    int e = errno;
    ::unlink(path.c_str());
    errno = e;
    return false;
}

constexpr size_t kBriefRows = 10;  // per section in the brief summary; summary.txt always has them all

}  // namespace

EndOfRunResult finish_run(const EndOfRunOptions& options) {
    EndOfRunResult result;
    try {
        result.traces = find_traces(options.run_dir);
        if (result.traces.empty()) {
            std::string w = "no trace was written in " + options.run_dir.string() +
                            " (the collector did not load, or the program exited before it started)";
            result.warnings.push_back(w);
            if (options.summary != SummaryMode::None && options.summary_out)
                *options.summary_out << "gprof-run: " << w << '\n';
            return result;
        }
        Filter filter;
        filter.kernel_regex = options.kernel_filter;
        AggregateOptions ao;
        ao.filter = filter;
        Aggregate agg = aggregate_run(result.traces, ao);
        // The collector's warning and error Status lines are not repeated here: the collector said the ones a user
        // must hear on stderr when they happened (a refused CUPTI, a CUDA it could not record: one line each), and
        // the summary's process block and summary.txt list them all. Repeated, the same line stood twice on stderr
        // (H200 2026-11-27: GPROF_CUPTI_LIB refused beside PyTorch's CUPTI).
        result.warnings = agg.warnings;

        // The full model serves the timeline and the analysis section.
        std::optional<Run> run;
        {
            LoadOptions lo;
            lo.filter = filter;
            run = load_run({options.run_dir}, lo);
        }

        std::string analysis_text;
        // The timeline's analysis track reuses the summary's analysis (one analyze_run per run, not two). When the
        // analysis failed, the timeline is left to try again itself, so it reports the failure the same way.
        TimelineOptions timeline_options;
        std::optional<AnalysisResult> analysis;
        std::vector<AnalysisSlice> analysis_slices;
        try {
            std::ostringstream a;
            try {
                analysis = analyze_run(*run, {});  // print_analysis_section(const Run&)'s options
            } catch (const std::exception& e) {
                a << "Analysis: not available (" << e.what() << ")\n";
            }
            if (analysis) print_analysis_section(*analysis, a);
            analysis_text = a.str();
        } catch (const std::exception& e) {
            result.warnings.push_back(std::string("analysis section left out: ") + e.what());
        }
        if (analysis && options.timeline_path) {
            try {
                analysis_slices = analysis_timeline_slices(*analysis);
                timeline_options.analysis_slices = &analysis_slices;
            } catch (const std::exception&) {
                // left to write_timeline, which reports it as "analysis track left out"
            }
        }
        if (options.summary != SummaryMode::None && options.summary_out) {
            bool full = options.summary == SummaryMode::Full;
            print_summary_text(agg, full, full, full ? 0 : kBriefRows, *options.summary_out);
            *options.summary_out << analysis_text;
            options.summary_out->flush();
        }
        if (options.write_summary_file) {
            // Inside the run directory gprof-run made (0700): created exclusively, 0600, never through a symlink.
            fs::path file = options.run_dir / "summary.txt";
            std::ostringstream text;
            print_summary_text(agg, true, options.summary == SummaryMode::Full, 0, text);
            text << analysis_text;
            if (write_new_file(file, text.str())) result.summary_file = file;
            else {
                result.warnings.push_back("cannot write " + file.string() + ": " + std::strerror(errno));
                result.ok = false;
            }
        }
        if (options.html_path) {
            // The same aggregate, model and analysis as the summary above: the page and the text never disagree.
            // Written like summary.txt: created exclusively, 0600, never through a symlink, removed if cut short.
            try {
                html::RunPageInputs in;
                in.run = &*run;
                in.aggregate = &agg;
                in.analysis = analysis ? &*analysis : nullptr;
                in.analysis_error = analysis ? "" : "the analysis failed (see the summary)";
                in.source = options.run_dir.string();
                if (write_new_file(*options.html_path, html::render_run_page(in))) result.html_file = options.html_path;
                else {
                    result.warnings.push_back("cannot write " + options.html_path->string() + ": " + std::strerror(errno));
                    result.ok = false;
                }
            } catch (const std::exception& e) {
                result.warnings.push_back(std::string("report.html not written: ") + e.what());
                result.ok = false;
            }
        }
        if (options.timeline_path) {
            std::error_code ec;
            bool existed = fs::exists(fs::symlink_status(*options.timeline_path, ec));
            try {
                timeline_options.create_exclusive = true;
                // The format follows the file name (x.pftrace: Perfetto's protobuf); a JSON timeline too big for
                // Perfetto UI becomes the protobuf instead (kJsonTimelineEventLimit), with a line saying so.
                timeline_options.format = timeline_format_for(*options.timeline_path);
                timeline_options.json_event_limit = options.json_event_limit;
                TimelineStats st = write_timeline(*run, *options.timeline_path, timeline_options);
                result.timeline = st.path;
                for (auto& w : st.warnings) result.warnings.push_back("timeline: " + w);
            } catch (const std::exception& e) {
                // Created here and cut short (a full disk): not left behind as if it were a timeline.
                if (!existed) fs::remove(*options.timeline_path, ec);
                result.warnings.push_back(std::string("timeline not written: ") + e.what());
                result.ok = false;
            }
        }
    } catch (const std::exception& e) {
        result.warnings.push_back(std::string("end-of-run report failed: ") + e.what());
        result.ok = false;
    } catch (...) {
        result.warnings.push_back("end-of-run report failed (unknown error)");
        result.ok = false;
    }
    return result;
}

}  // namespace gprof::report
