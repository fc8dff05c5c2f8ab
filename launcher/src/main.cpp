// gprof-run [options] [--] app [args...]: profile an unmodified CUDA program and every process it starts.
//
// Order matters: everything that can fail because of gprof-run (options, the collector, output paths) is checked
// before the app starts, and fails with status 2 leaving nothing behind; from the moment the app starts, the exit
// status is the app's, whatever happens to the report.
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "check.h"
#include "child_env.h"
#include "collector_path.h"
#include "console.h"
#include "end_of_run/end_of_run.h"
#include "options.h"
#include "output/output_file.h"
#include "output_path.h"
#include "python_env.h"
#include "reports/reports.h"
#include "safe_fs.h"
#include "supervise.h"
#include "gprof/env/variables.h"
#include "gprof/version.h"

extern char** environ;

namespace fs = std::filesystem;
using namespace gprof::launcher;
namespace rep = gprof::report;

namespace {

constexpr int kOwnFailure = 2;
bool g_sigpipe_was_ignored = false;

std::string shell_quote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                          std::string::npos)
        return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string run_info(const std::string& run_id, const PatternContext& ctx, const std::vector<std::string>& command) {
    std::ostringstream os;
    std::time_t now = std::time(nullptr);
    char stamp[64];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
    os << "producer=" << GPROF_PRODUCER << "\nrun_id=" << run_id << "\nhost=" << ctx.host
       << "\nlauncher_pid=" << ctx.pid << "\nstarted=" << stamp << "\ncommand=";
    for (size_t i = 0; i < command.size(); ++i) os << (i ? " " : "") << shell_quote(command[i]);
    os << "\n";
    return os.str();
}

int run(int argc, char** argv) {
    ParseResult parsed = parse_command_line(argc, argv);
    if (!parsed.options) {
        std::cout << parsed.to_stdout << std::flush;
        std::cerr << parsed.to_stderr << std::flush;
        return parsed.exit_code;
    }
    const LaunchOptions& o = *parsed.options;
    Console console;
    console.set_level(o.console_level);
    for (const auto& note : parsed.notes) console.warn("note: " + note);
    auto fail = [&](const std::string& why) {
        console.error(why);
        return kOwnFailure;
    };
    rep::TimeUnit stats_unit = rep::TimeUnit::Ns;
    if (!o.timeunit.empty()) {
        try {
            stats_unit = rep::parse_time_unit(o.timeunit);
        } catch (const std::invalid_argument& e) {
            return fail(std::string("--timeunit: ") + e.what());
        }
    }

    std::string error;
    auto collector = find_collector(error);
    if (o.check) return check_machine(o, collector ? collector->string() : "", error, std::cout).ready ? 0 : 1;
    if (!collector) return fail(error);

    // Like a shell, 127/126 before anything is created.
    ResolvedApp app = resolve_app(o.command.front(), ::getenv("PATH"));
    if (app.exit_code != 0) {
        std::cerr << app.error << std::endl;
        return app.exit_code;
    }

    PatternContext ctx = current_pattern_context();
    auto expand = [&](const std::string& pattern, const char* what) -> std::optional<fs::path> {
        auto v = expand_pattern(pattern, ctx, error);
        if (!v) error = std::string(what) + ": " + error;
        else if (v->empty()) {
            error = std::string(what) + ": '" + pattern + "' expands to an empty path";
            return std::nullopt;
        }
        return v ? std::optional<fs::path>(fs::absolute(*v)) : std::nullopt;
    };

    std::optional<fs::path> log_path, timeline_path;
    if (o.log_file && !(log_path = expand(*o.log_file, "--log-file"))) return fail(error);
    if (o.timeline && !(timeline_path = expand(*o.timeline, "--timeline"))) return fail(error);

    std::optional<fs::path> run_dir;
    if (o.output) {
        auto dir = expand(*o.output, "--output");
        if (!dir) return fail(error);
        run_dir = create_run_dir(*dir, o.force, false, error);
    } else {
        run_dir = create_run_dir(fs::current_path() / default_run_dir_name(o.command.front(), std::time(nullptr)),
                                 false, true, error);
    }
    if (!run_dir) return fail(error);
    auto abandon_run_dir = [&] {  // created by us a moment ago and still holding only our marker
        std::error_code ec;
        fs::remove_all(*run_dir, ec);
    };
    const std::string run_id = new_run_id();
    // Every file of a run is written the one way (report/output/output_file.h): never through a link, never over a
    // file without --force, 0600.
    auto write_file = [](const fs::path& path, const std::string& text, const rep::OutputPolicy& policy,
                         std::string& why) {
        try {
            rep::OutputFile f(path, policy);
            f.stream() << text;
            f.commit();
            return true;
        } catch (const std::exception& e) {
            why = e.what();
            return false;
        }
    };
    const rep::OutputPolicy private_new{false, rep::FileMode::Private};
    if (!write_file(*run_dir / kRunMarker, run_info(run_id, ctx, o.command), private_new, error)) {
        abandon_run_dir();
        return fail(error);
    }
    // After the run directory exists, so that a timeline or log file inside it does not create it first.
    if (timeline_path) {
        rep::OutputPolicy policy{o.force, rep::FileMode::Private};
        error = rep::create_parent_directories(*timeline_path);
        if (error.empty()) error = rep::OutputFile::check(*timeline_path, policy);
        if (!error.empty()) {
            abandon_run_dir();
            return fail("--timeline: " + error);
        }
    }
    if (log_path) {
        // Written while the run goes on (tail -f): published at once, not when complete.
        rep::OutputPolicy policy{o.force, rep::FileMode::Private, rep::Publish::Live};
        try {
            if (auto e = rep::create_parent_directories(*log_path); !e.empty()) throw std::runtime_error(e);
            rep::OutputFile log(*log_path, policy);
            console.redirect_to(log.release(), log_path->string());
        } catch (const std::exception& e) {
            abandon_run_dir();
            return fail(std::string("--log-file: ") + e.what());
        }
    }

    auto changes = collector_environment(o, *collector, *run_dir, run_id, ::getenv("LD_PRELOAD"));
    // Where pip put CUPTI for this program's Python, for the collector's search; a value the user set is kept.
    if (!::getenv(gprof::env::kPythonSitePackages))
        if (auto dirs = site_packages_value(python_site_packages(python_env_inputs(app.path))))
            changes.push_back({gprof::env::kPythonSitePackages, *dirs});
    SuperviseConfig config;
    config.file = app.path;
    config.argv = o.command;
    config.env = apply_changes(environ, changes);
    config.export_root_pid = o.no_children;
    config.wait_children_sec = o.wait_children_sec;
    config.sigpipe_ignored = g_sigpipe_was_ignored;
    for (const auto& c : changes) console.debug("env " + c.name + (c.value ? "=" + *c.value : " (removed)"));
    console.info("profiling " + app.path + " into " + run_dir->string());

    AppOutcome outcome = supervise(config, console);
    if (!outcome.started) {
        // The exec failed (already said why, like a shell): nothing ran, so nothing of ours stays behind. Only our
        // marker and the directory, if that is all it holds (-o may name a directory that was there before).
        std::error_code ec;
        fs::remove(*run_dir / kRunMarker, ec);
        fs::remove(*run_dir, ec);
        return outcome.exit_code;
    }
    if (outcome.signal != 0) {
        console.warn(o.command.front() + " was killed by signal " + std::to_string(outcome.signal) + " (" +
                     ::sigdescr_np(outcome.signal) + (outcome.core_dumped ? ", core dumped" : "") + ")");
    }
    if (outcome.children_left != 0) {
        std::string n = outcome.children_left < 0 ? "some" : std::to_string(outcome.children_left);
        console.warn(n + " process(es) started by the app are still running" +
                     (outcome.wait_interrupted ? std::string(" (wait interrupted)")
                                               : " after --wait-children " + std::to_string(o.wait_children_sec) + " s") +
                     "; not waiting for them: their traces may be incomplete");
    }

    // The end-of-run step (report/end_of_run/): the summary, then every output the list says a run gets.
    rep::EndOfRunChoice choice;
    choice.left_out = o.left_out;
    choice.exports = o.exports;
    choice.force = o.force;
    if (timeline_path) choice.paths["timeline"] = *timeline_path;
    rep::EndOfRunOptions request;
    request.run_dir = *run_dir;
    request.summary = o.summary == SummaryChoice::None   ? rep::SummaryMode::None
                      : o.summary == SummaryChoice::Full ? rep::SummaryMode::Full
                                                         : rep::SummaryMode::Brief;
    request.kernel_filter = o.kernel_filter;
    request.summary_out = &console.stream();
    request.outputs = rep::end_of_run_outputs(*run_dir, choice);
    request.stats = o.stats;
    request.stats_time_unit = stats_unit;
    rep::EndOfRunResult result = rep::finish_run(request);
    console.stream().flush();
    for (const auto& line : rep::where_lines(request, result)) console.warn(line);
    return outcome.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    // A closed stderr pipe must not kill gprof-run before it hands back the app's status; the app gets the
    // SIGPIPE disposition gprof-run was started with (supervise.cpp restores it in the child).
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    struct sigaction original {};
    ::sigaction(SIGPIPE, &ignore, &original);
    g_sigpipe_was_ignored = original.sa_handler == SIG_IGN;
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "gprof-run: internal error: " << e.what() << std::endl;
        return kOwnFailure;
    }
}
