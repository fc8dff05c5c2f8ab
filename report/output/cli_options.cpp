#include "output/cli_options.h"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>
#include <regex>
#include <set>

#include "gprof/trace/reader.h"

namespace gprof::report {

int cli_error(std::string_view what) {
    std::cerr << "gprof-report: error: " << what << '\n';
    return 2;
}

void cli_warning(std::string_view what) { std::cerr << "gprof-report: warning: " << what << '\n'; }

void FilterArgs::add_to(CLI::App* app) {
    app->add_option(kClockOffsetFlag, clock_offsets, kClockOffsetHelp);
    app->add_flag(kNestedDriverCallsFlag, nested_driver_calls, kNestedDriverCallsHelp);
    // One value per occurrence (repeatable, or a comma list): `--process 417 RUN` must leave RUN alone.
    app->add_option("--process", pids, "Only these processes (PID; repeatable or a comma list)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app->add_option("--device", devices, "Only GPU work of these devices (repeatable or a comma list)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app->add_option("--time-range", time_range,
                    "Only records overlapping A:B, times from the program's start (+0, as the summary prints them); "
                    "units ns/us/ms/s, a bare number is ns; either side may be empty: 2s:, :500ms");
    app->add_option("--kernel-filter", kernel_filter,
                    "Only kernels whose name (demangled as shown, or mangled) matches this ECMAScript regex");
}

Filter FilterArgs::build() const {
    Filter f;
    f.pids = pids;
    f.devices = devices;
    f.nested_driver_calls = nested_driver_calls;
    for (const auto& c : clock_offsets) parse_clock_offset(c, f);
    if (!time_range.empty()) parse_time_range(time_range, f);
    if (!kernel_filter.empty()) {
        try {
            std::regex re(kernel_filter, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw std::invalid_argument("--kernel-filter '" + kernel_filter + "' is not a valid regex: " + e.what());
        }
        f.kernel_regex = kernel_filter;
    }
    return f;
}

std::string check_processes(const std::vector<std::filesystem::path>& traces, const std::vector<int64_t>& pids) {
    if (pids.empty()) return {};
    std::set<int64_t> there;
    for (const auto& t : traces) {
        try {
            there.insert(trace::TraceReader(t.string()).header().pid);
        } catch (const std::exception&) {
            // unreadable: the report says so itself
        }
    }
    std::string missing;
    for (int64_t p : pids)
        if (!there.count(p)) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
    if (missing.empty()) return {};
    std::string list;
    size_t shown = 0;
    for (int64_t p : there) {
        if (shown++ == 20) {
            list += ", ...";
            break;
        }
        list += (list.empty() ? "" : ", ") + std::to_string(p);
    }
    return "--process " + missing + ": no such process in the run" +
           (list.empty() ? std::string() : " (its processes: " + list + ")");
}

std::string time_range_hint(const Filter& f) {
    if (!f.time_begin && !f.time_end) return {};
    return std::string("--time-range selected no record") +
           (f.time_range_bare_ns ? ": a number without a unit is nanoseconds; write the unit, e.g. 1s:2s (times count "
                                   "from the program's start, as the summary prints them)"
                                 : "");
}

void add_force_flag(CLI::App* app, bool& force, const std::string& what) {
    app->add_flag("--force,--force-overwrite", force,
                  what + " if it exists (never through a symbolic link); nsys's --force-overwrite=true|false works too");
}

std::vector<std::string> fold_switch_values(std::vector<std::string> args) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
            break;
        }
        if ((a == "--force" || a == "--force-overwrite") && i + 1 < args.size() &&
            (args[i + 1] == "true" || args[i + 1] == "false")) {
            out.push_back(a + "=" + args[++i]);
            continue;
        }
        out.push_back(a);
    }
    return out;
}

std::string parse_error_text(const CLI::ParseError& e, const CLI::App& app) {
    // The deepest subcommand parsed: where the error is, for "see ... --help".
    std::string where = "gprof-report";
    const CLI::App* cur = &app;
    for (bool deeper = true; deeper;) {
        deeper = false;
        for (const CLI::App* sub : cur->get_subcommands()) {
            where += " " + sub->get_name();
            cur = sub;
            deeper = true;
            break;
        }
    }
    std::string what = e.what();
    static const std::regex required(R"(^(\S+) is required$)");
    std::smatch m;
    if (std::regex_match(what, m, required)) {
        std::string name = m[1];
        if (name.rfind("--", 0) != 0) std::transform(name.begin(), name.end(), name.begin(), ::toupper);
        what = "missing " + name;
    }
    return what + " (see '" + where + " --help')";
}

}  // namespace gprof::report
