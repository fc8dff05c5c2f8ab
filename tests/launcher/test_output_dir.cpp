// Where a run goes: -o patterns, the default name, refusing to overwrite, never following a planted link.
#include <catch2/catch.hpp>

#include <regex>

#include "gprof/version.h"
#include "launcher_harness.h"
#include "safe_fs.h"

using namespace launcher_test;

namespace {
// The app's `info` output run under gprof-run with `args`.
std::map<std::string, std::string> info_of(const Result& r) { return parse_lines(r.out); }
std::string hostname() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
}
}  // namespace

TEST_CASE("the output option expands %p %h %q{VAR} and %%", "[launcher][output]") {
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.env["LAUNCHER_TEST_RANK"] = "3";
    auto r = gprof_run({"-o", "run.%p.%h.%q{LAUNCHER_TEST_RANK}.100%%", kApp, "info", "GPROF_OUTPUT_DIR"},
                       tmp.path(), spec);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto info = info_of(r);
    // The app is gprof-run's child: its ppid is the %p.
    std::string expected = "run." + info["ppid"] + "." + hostname() + ".3.100%";
    CHECK(entries(tmp.path()) == std::vector<std::string>{expected});
    CHECK(info["GPROF_OUTPUT_DIR"] == (tmp.path() / expected).string());  // absolute, though -o was relative
}

TEST_CASE("log file and timeline paths take the same patterns", "[launcher][output]") {
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.env["LAUNCHER_TEST_RANK"] = "5";
    auto r = gprof_run({"-o", "run", "--log-file", "log.%q{LAUNCHER_TEST_RANK}", "--timeline", "%h.json", kApp,
                        "exit", "0"},
                       tmp.path(), spec);
    REQUIRE(r.exit_code == 0);
    CHECK(fs::exists(tmp.path() / "log.5"));
    std::string log = read_file(tmp.path() / "log.5");
    CHECK(log.find("run directory: " + (tmp.path() / "run").string()) != std::string::npos);
    fs::path timeline = tmp.path() / (hostname() + ".json");
    CHECK(fs::exists(timeline));
    CHECK_FALSE(fs::exists(tmp.path() / "run/timeline.json"));
    CHECK(log.find("timeline:      " + timeline.string()) != std::string::npos);
}

TEST_CASE("the run directory holds the traces, timeline.json and summary.txt unless --no-timeline",
          "[launcher][output]") {
    gprof::testing::TempDir tmp;
    auto r = gprof_run({"-o", "run", kApp, "exit", "0"}, tmp.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(entries_like(tmp.path() / "run", "launcher_test_app.", ".gprof").size() == 1);
    CHECK(fs::exists(tmp.path() / "run/timeline.json"));
    CHECK(fs::exists(tmp.path() / "run/summary.txt"));
    CHECK(r.err.find("run directory: " + (tmp.path() / "run").string() + " (1 trace)") != std::string::npos);
    CHECK(r.err.find("timeline:      " + (tmp.path() / "run/timeline.json").string()) != std::string::npos);
    CHECK(r.err.find("summary:       " + (tmp.path() / "run/summary.txt").string()) != std::string::npos);

    r = gprof_run({"-o", "quiet", "--no-timeline", "--summary", "none", kApp, "exit", "0"}, tmp.path());
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(fs::exists(tmp.path() / "quiet/timeline.json"));
    CHECK(fs::exists(tmp.path() / "quiet/summary.txt"));
    CHECK(r.err.find("timeline:") == std::string::npos);
}

TEST_CASE("the run directory holds report.html (0600) unless --no-html", "[launcher][output][html]") {
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.umask_zero = true;
    auto r = gprof_run({"-o", "run", kApp, "exit", "0"}, tmp.path(), spec);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    fs::path page = tmp.path() / "run/report.html";
    REQUIRE(fs::exists(page));
    CHECK(mode_of(page) == 0600);
    CHECK(read_file(page).find("<section id=\"processes\">") != std::string::npos);
    CHECK(r.err.find("report:        " + page.string() + " (open in a browser)") != std::string::npos);

    r = gprof_run({"-o", "plain", "--no-html", kApp, "exit", "0"}, tmp.path());
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(fs::exists(tmp.path() / "plain/report.html"));
    CHECK(fs::exists(tmp.path() / "plain/summary.txt"));
    CHECK(r.err.find("report:") == std::string::npos);
}

TEST_CASE("a log file and timeline inside the run directory", "[launcher][output]") {
    gprof::testing::TempDir tmp;
    auto r = gprof_run({"-o", "run", "--log-file", "run/log.txt", "--timeline", "run/sub/t.json", kApp, "exit", "3"},
                       tmp.path());
    CHECK(r.exit_code == 3);
    CHECK(r.err.empty());
    CHECK(read_file(tmp.path() / "run/log.txt").find("run directory:") != std::string::npos);
    CHECK(fs::exists(tmp.path() / "run/sub/t.json"));
    CHECK(fs::exists(tmp.path() / "run/gprof-run.info"));
}

TEST_CASE("the default run directory is gprof-<app>-<date>-<time> in the cwd, never reused",
          "[launcher][output]") {
    gprof::testing::TempDir tmp;
    auto a = gprof_run({kApp, "exit", "0"}, tmp.path());
    auto b = gprof_run({kApp, "exit", "0"}, tmp.path());
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    auto dirs = entries(tmp.path());
    REQUIRE(dirs.size() == 2);
    const std::regex name(R"(gprof-launcher_test_app-\d{8}-\d{6}(-\d+)?)");
    for (const auto& d : dirs) {
        INFO(d);
        CHECK(std::regex_match(d, name));
        CHECK(fs::exists(tmp.path() / d / gprof::launcher::kRunMarker));
    }
}

TEST_CASE("the run directory is 0700 and carries gprof-run.info", "[launcher][output]") {
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.umask_zero = true;
    auto r = gprof_run({"-o", "run", kApp, "exit", "0"}, tmp.path(), spec);
    REQUIRE(r.exit_code == 0);
    CHECK(mode_of(tmp.path() / "run") == 0700);
    CHECK(mode_of(tmp.path() / "run" / gprof::launcher::kRunMarker) == 0600);
    auto info = parse_lines(read_file(tmp.path() / "run" / gprof::launcher::kRunMarker));
    CHECK(info["producer"] == "gprof-run " GPROF_VERSION);
    CHECK(info["run_id"].size() == 32);
    CHECK(info["command"] == kApp + " exit 0");
}

TEST_CASE("an existing run directory is refused and --force replaces only a gprof-run one", "[launcher][output]") {
    gprof::testing::TempDir tmp;
    const std::string marker = (tmp.path() / "app-ran").string();
    fs::create_directory(tmp.path() / "mine");
    write_file(tmp.path() / "mine/thesis.tex", "years of work");

    auto r = gprof_run({"-o", "mine", kApp, "touch", marker}, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("already exists") != std::string::npos);
    r = gprof_run({"-o", "mine", "--force", kApp, "touch", marker}, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("not a gprof-run run directory") != std::string::npos);
    CHECK(read_file(tmp.path() / "mine/thesis.tex") == "years of work");
    CHECK_FALSE(fs::exists(marker));

    REQUIRE(gprof_run({"-o", "run", kApp, "exit", "0"}, tmp.path()).exit_code == 0);
    write_file(tmp.path() / "run/old-result", "stale");
    r = gprof_run({"-o", "run", kApp, "exit", "0"}, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK(fs::exists(tmp.path() / "run/old-result"));
    r = gprof_run({"-o", "run", "--force", kApp, "touch", marker}, tmp.path());
    CHECK(r.exit_code == 0);
    CHECK_FALSE(fs::exists(tmp.path() / "run/old-result"));
    CHECK(fs::exists(marker));
}

TEST_CASE("an existing log file or timeline is refused without --force", "[launcher][output]") {
    gprof::testing::TempDir tmp;
    write_file(tmp.path() / "log", "old log");
    write_file(tmp.path() / "t.json", "old timeline");
    auto r = gprof_run({"-o", "r1", "--log-file", "log", kApp, "exit", "0"}, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK(read_file(tmp.path() / "log") == "old log");
    r = gprof_run({"-o", "r2", "--timeline", "t.json", kApp, "exit", "0"}, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK(read_file(tmp.path() / "t.json") == "old timeline");
    CHECK(entries(tmp.path()) == std::vector<std::string>{"log", "t.json"});
    r = gprof_run({"-o", "r3", "--force", "--log-file", "log", kApp, "exit", "0"}, tmp.path());
    CHECK(r.exit_code == 0);
    CHECK(read_file(tmp.path() / "log").find("run directory:") != std::string::npos);
}

TEST_CASE("a planted symbolic link is refused, even with --force, and its target is untouched",
          "[launcher][output]") {
    gprof::testing::TempDir tmp;
    const std::string marker = (tmp.path() / "app-ran").string();
    fs::create_directory(tmp.path() / "victim-dir");
    write_file(tmp.path() / "victim-file", "precious");
    fs::create_directory_symlink(tmp.path() / "victim-dir", tmp.path() / "run");
    fs::create_symlink(tmp.path() / "victim-file", tmp.path() / "log");
    fs::create_symlink(tmp.path() / "victim-file", tmp.path() / "t.json");

    const std::vector<std::vector<std::string>> cases = {
        {"-o", "run"},
        {"-o", "run", "--force"},
        {"-o", "ok1", "--log-file", "log"},
        {"-o", "ok2", "--log-file", "log", "--force"},
        {"-o", "ok3", "--timeline", "t.json"},
        {"-o", "ok4", "--timeline", "t.json", "--force"},
    };
    for (auto args : cases) {
        INFO(args[1] << " " << args.back());
        args.insert(args.end(), {kApp, "touch", marker});
        auto r = gprof_run(args, tmp.path());
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("symbolic link") != std::string::npos);
        CHECK_FALSE(fs::exists(marker));
    }
    CHECK(entries(tmp.path() / "victim-dir").empty());
    CHECK(read_file(tmp.path() / "victim-file") == "precious");
    CHECK(entries(tmp.path()) == std::vector<std::string>{"log", "run", "t.json", "victim-dir", "victim-file"});
}
