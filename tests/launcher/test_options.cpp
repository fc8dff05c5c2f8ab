// The command line: what belongs to gprof-run, what belongs to the app, and every option's validation.
#include <catch2/catch.hpp>

#include <algorithm>

#include "options.h"

using namespace gprof::launcher;

namespace {
ParseResult parse(std::vector<std::string> args) {
    args.insert(args.begin(), "gprof-run");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    return parse_command_line(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST_CASE("options after the app name belong to the app", "[launcher][options]") {
    auto r = parse({"-o", "d", "./app", "-o", "x", "--force", "--", "--help"});
    REQUIRE(r.options);
    CHECK(r.options->output == std::optional<std::string>("d"));
    CHECK_FALSE(r.options->force);
    CHECK(r.options->command == std::vector<std::string>{"./app", "-o", "x", "--force", "--", "--help"});
}

TEST_CASE("a double dash ends gprof-run's options even before an app named like an option", "[launcher][options]") {
    auto r = parse({"--force", "--", "-weird", "a"});
    REQUIRE(r.options);
    CHECK(r.options->force);
    CHECK(r.options->command == std::vector<std::string>{"-weird", "a"});
}

TEST_CASE("defaults", "[launcher][options]") {
    auto r = parse({"app"});
    REQUIRE(r.options);
    const auto& o = *r.options;
    CHECK_FALSE(o.output);
    CHECK(o.trace == "cuda,nvtx,osrt");
    CHECK_FALSE(o.backtrace);
    CHECK_FALSE(o.capture_range);
    CHECK_FALSE(o.capture_range_end);
    CHECK_FALSE(o.cuda_graph_trace);
    CHECK_FALSE(o.cuda_nested_driver_calls);
    CHECK(r.notes.empty());
    CHECK(o.summary == SummaryChoice::Brief);
    CHECK(o.left_out.empty());
    CHECK_FALSE(o.no_children);
    CHECK(o.wait_children_sec == 10.0);
}

TEST_CASE("every option reaches LaunchOptions", "[launcher][options]") {
    auto r = parse({"-t", "nvtx", "--backtrace=12", "-c", "nvtx:step@train", "-y", "1.5", "-d", "2",
                    "--kernel-filter", "^gemm", "--no-children", "--summary", "full", "--log-file", "l.txt",
                    "--timeline", "t.json", "--wait-children", "0.25", "--log-level", "debug", "-f", "app"});
    REQUIRE(r.options);
    const auto& o = *r.options;
    CHECK(o.trace == "nvtx");
    CHECK(o.backtrace == std::optional<std::string>("12"));
    CHECK(o.capture_range == std::optional<std::string>("nvtx:step@train"));
    CHECK(o.delay_sec == std::optional<std::string>("1.5"));
    CHECK(o.duration_sec == std::optional<std::string>("2"));
    CHECK(o.kernel_filter == "^gemm");
    CHECK(o.no_children);
    CHECK(o.summary == SummaryChoice::Full);
    CHECK(o.log_file == std::optional<std::string>("l.txt"));
    CHECK(o.timeline == std::optional<std::string>("t.json"));
    CHECK(o.wait_children_sec == 0.25);
    CHECK(o.log_level == std::optional<std::string>("debug"));
    CHECK(o.console_level == LogLevel::Debug);
    CHECK(o.force);
    CHECK(o.command == std::vector<std::string>{"app"});
}

TEST_CASE("capture ranges, graphs and nested driver calls in nsys's spelling", "[launcher][options]") {
    auto r = parse({"-c", "nvtx", "-p", "step@train", "--capture-range-end", "repeat:5", "--cuda-graph-trace", "graph",
                    "--cuda-nested-driver-calls", "app"});
    REQUIRE(r.options);
    CHECK(r.options->capture_range == std::optional<std::string>("nvtx:step@train"));
    CHECK(r.options->capture_range_end == std::optional<std::string>("repeat:5"));
    CHECK(r.options->cuda_graph_trace == std::optional<std::string>("graph"));
    CHECK(r.options->cuda_nested_driver_calls);
    CHECK(r.notes.empty());

    auto any = parse({"--capture-range=nvtx", "--nvtx-capture=step@*", "app"});
    REQUIRE(any.options);
    CHECK(any.options->capture_range == std::optional<std::string>("nvtx:step@*"));

    auto shutdown = parse({"-c", "cudaProfilerApi", "--capture-range-end", "stop-shutdown", "app"});
    REQUIRE(shutdown.options);
    CHECK(shutdown.options->capture_range_end == std::optional<std::string>("stop"));
    REQUIRE(shutdown.notes.size() == 1);
    CHECK(shutdown.notes[0].find("taken as stop") != std::string::npos);

    auto none = parse({"-c", "none", "app"});
    REQUIRE(none.options);
    CHECK_FALSE(none.options->capture_range);
}

TEST_CASE("a bare --backtrace asks for the default depth and never eats the app name", "[launcher][options]") {
    auto r = parse({"--backtrace", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->backtrace == std::optional<std::string>("1"));
    CHECK(r.options->command == std::vector<std::string>{"./app"});
}

TEST_CASE("gprof-run --cudabacktrace takes nsys's form and passes it on as given", "[launcher][options][call-sites]") {
    for (const char* ok : {"all", "kernel", "kernel:0", "memory:500,sync", "kernel,memory,sync,other:1000", "none",
                           "all:80000"}) {
        auto r = parse({std::string("--cudabacktrace=") + ok, "app"});
        INFO(ok);
        REQUIRE(r.options);
        CHECK(r.options->cudabacktrace == std::optional<std::string>(ok));
        CHECK_FALSE(r.options->backtrace);
    }
}

TEST_CASE("bad --cudabacktrace values name the bad part", "[launcher][options][call-sites]") {
    auto r = parse({"--cudabacktrace=kernel,syncs", "app"});
    CHECK_FALSE(r.options);
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("'syncs' is not a call category") != std::string::npos);
    auto t = parse({"--cudabacktrace=memory:12ms", "app"});
    CHECK(t.exit_code == 2);
    CHECK(t.to_stderr.find("the threshold must be a number of nanoseconds") != std::string::npos);
}

TEST_CASE("bad command lines fail with status 2 and say why on stderr", "[launcher][options]") {
    const std::vector<std::vector<std::string>> bad = {
        {"--bogus", "app"},
        {},
        {"-o"},
        {"--", ""},
        {"--trace", "cuda,none", "app"},
        {"--trace", "cuda,,nvtx", "app"},
        {"--backtrace=0", "app"},
        {"--backtrace=65", "app"},
        {"--backtrace=x", "app"},
        {"--cudabacktrace=", "app"},
        {"--cudabacktrace=kernels", "app"},
        {"--cudabacktrace=kernel:", "app"},
        {"--cudabacktrace=kernel:-5", "app"},
        {"--cudabacktrace=kernel:1e3", "app"},
        {"--cudabacktrace=memory:99999999999999", "app"},
        {"--cudabacktrace=none:10", "app"},
        {"--cudabacktrace=none,kernel", "app"},
        {"--cudabacktrace=kernel,,sync", "app"},
        {"--capture-range", "nvtx", "app"},
        {"--capture-range", "nvtx:@dom", "app"},
        {"--capture-range", "nvtx:name@", "app"},
        {"--capture-range", "cudaprofilerapi", "app"},
        {"-p", "step", "app"},
        {"-c", "cudaProfilerApi", "-p", "step", "app"},
        {"-c", "nvtx:step", "-p", "step", "app"},
        {"-c", "nvtx", "-p", "", "app"},
        {"--capture-range-end", "repeat", "app"},
        {"-c", "cudaProfilerApi", "--capture-range-end", "repeat:0", "app"},
        {"-c", "cudaProfilerApi", "--capture-range-end", "sometimes", "app"},
        {"-c", "cudaProfilerApi", "--capture-range-end", "repeat-shutdown", "app"},
        {"--cuda-graph-trace", "nodes", "app"},
        {"--delay", "-1", "app"},
        {"--delay", "1e3", "app"},
        {"--duration", "0", "app"},
        {"--duration", "abc", "app"},
        {"--kernel-filter", "(", "app"},
        {"--summary", "short", "app"},
        {"--log-level", "verbose", "app"},
        {"--timeline", "t.json", "--no-timeline", "app"},
        {"--wait-children", "soon", "app"},
        {"-o", "", "app"},
    };
    for (const auto& args : bad) {
        std::string joined;
        for (const auto& a : args) joined += "'" + a + "' ";
        INFO("gprof-run " << joined);
        auto r = parse(args);
        CHECK_FALSE(r.options);
        CHECK(r.exit_code == 2);
        CHECK(r.to_stdout.empty());
        CHECK(r.to_stderr.rfind("gprof-run: error: ", 0) == 0);
    }
}

TEST_CASE("help and version print on stdout and succeed", "[launcher][options]") {
    auto h = parse({"--help"});
    CHECK_FALSE(h.options);
    CHECK(h.exit_code == 0);
    CHECK(h.to_stdout.find("Usage: gprof-run [options] [--] app [args...]") != std::string::npos);
    CHECK(h.to_stdout.find("Examples:") != std::string::npos);
    CHECK(h.to_stdout.find("%q{SLURM_PROCID}") != std::string::npos);
    auto v = parse({"--version"});
    CHECK(v.exit_code == 0);
    CHECK(v.to_stdout.rfind("gprof-run ", 0) == 0);
}

TEST_CASE("the checks on their own", "[launcher][options]") {
    std::string norm, note;
    CHECK(check_trace("nvtx, cuda,nvtx", norm, note).empty());
    CHECK(norm == "cuda,nvtx");
    CHECK(note.empty());
    CHECK(check_trace("none", norm, note).empty());
    CHECK(norm == "none");
    CHECK_FALSE(check_trace("", norm, note).empty());
    CHECK(check_capture_range("none").empty());
    CHECK(check_capture_range("cudaProfilerApi").empty());
    CHECK(check_capture_range("nvtx:step").empty());
    CHECK(check_capture_range("nvtx:step@train").empty());
    CHECK_FALSE(check_capture_range("nvtx:").empty());
    CHECK(check_capture_range_end("repeat:12", norm, note).empty());
    CHECK(norm == "repeat:12");
    CHECK(note.empty());
    CHECK(check_capture_range_end("repeat-shutdown:2", norm, note).empty());
    CHECK(norm == "repeat:2");
    CHECK_FALSE(note.empty());
    CHECK(check_capture_range_end("none", norm, note).empty());
    CHECK(norm == "none");
    CHECK_FALSE(check_capture_range_end("repeat:", norm, note).empty());
    CHECK(check_seconds("0", true).empty());
    CHECK_FALSE(check_seconds("0", false).empty());
    CHECK_FALSE(check_seconds("0.0", false).empty());
    CHECK(check_seconds("0.5", false).empty());
    CHECK_FALSE(check_seconds(".5", true).empty());
    CHECK_FALSE(check_seconds("5.", true).empty());
    CHECK(check_regex("^(gemm|conv)_.*").empty());
    CHECK_FALSE(check_regex("[").empty());
}

TEST_CASE("nsys habits: -f/--force-overwrite and --stats take true|false, never the app", "[launcher][options]") {
    auto r = parse({"-f", "true", "-o", "out", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->force);
    CHECK(r.options->command == std::vector<std::string>{"./app"});
    r = parse({"-f", "false", "./app", "-f", "true"});
    REQUIRE(r.options);
    CHECK_FALSE(r.options->force);
    CHECK(r.options->command == std::vector<std::string>{"./app", "-f", "true"});  // the app's own -f untouched
    r = parse({"--force-overwrite=true", "--stats=true", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->force);
    CHECK(r.options->stats);
    r = parse({"--force-overwrite", "false", "--stats", "true", "true"});  // the app is /usr/bin/true
    REQUIRE(r.options);
    CHECK_FALSE(r.options->force);
    CHECK(r.options->stats);
    CHECK(r.options->command == std::vector<std::string>{"true"});
    r = parse({"-f", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->force);
    CHECK(r.options->command == std::vector<std::string>{"./app"});
    r = parse({"-o", "true", "-f", "./app"});  // an option's value is never a switch value
    REQUIRE(r.options);
    CHECK(r.options->output == std::optional<std::string>("true"));
    CHECK(r.options->command == std::vector<std::string>{"./app"});
    r = parse({"--force-overwrite=maybe", "./app"});
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("'maybe' is not true or false") != std::string::npos);
    CHECK(parse({"--help"}).to_stdout.find("--force-overwrite") != std::string::npos);
}

TEST_CASE("nsys habits: -s, --sampling-frequency and the OS-runtime thresholds (issue 35)", "[launcher][options]") {
    auto r = parse({"./app"});
    REQUIRE(r.options);
    CHECK_FALSE(r.options->sample);  // the collector's default: process-tree
    CHECK_FALSE(r.options->sampling_frequency);
    r = parse({"-s", "none", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->sample == std::optional<std::string>("none"));
    CHECK(r.notes.empty());
    r = parse({"--sample=process-tree", "--sampling-frequency", "2000", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->sample == std::optional<std::string>("process-tree"));
    CHECK(r.options->sampling_frequency == std::optional<std::string>("2000"));
    r = parse({"-s", "cpu", "./app"});  // nsys's older spelling
    REQUIRE(r.options);
    CHECK(r.options->sample == std::optional<std::string>("process-tree"));
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0] == "--sample: cpu taken as process-tree");
    r = parse({"-s", "system-wide", "./app"});
    REQUIRE(r.options);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("not the whole system") != std::string::npos);
    r = parse({"-s", "always", "./app"});
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("--sample: 'always' is not process-tree or none") != std::string::npos);
    for (const char* bad : {"50", "9000", "1k", ""}) {
        INFO(bad);
        r = parse({"--sampling-frequency", bad, "./app"});
        CHECK(r.exit_code == 2);
        CHECK(r.to_stderr.find("100 to 8000 Hz") != std::string::npos);
    }
    r = parse({"-s", "none", "--sampling-frequency", "500", "./app"});
    REQUIRE(r.options);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("nothing is sampled") != std::string::npos);
    r = parse({"--osrt-threshold", "5000", "--osrt-backtrace-threshold=0", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->osrt_threshold == std::optional<std::string>("5000"));
    CHECK(r.options->osrt_backtrace_threshold == std::optional<std::string>("0"));
    CHECK(r.notes.empty());
    r = parse({"--osrt-threshold", "-1", "./app"});
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("--osrt-threshold: '-1' is not a number of nanoseconds") != std::string::npos);
    r = parse({"-t", "cuda", "--osrt-threshold", "10", "./app"});
    REQUIRE(r.options);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("no OS-runtime calls are recorded") != std::string::npos);
}

TEST_CASE("nsys habits: -t with nsys's names records what it can and says what it does not", "[launcher][options]") {
    auto r = parse({"-t", "cuda,nvtx,osrt,opengl,cublas,cudnn", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->trace == "cuda,nvtx,osrt");
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0] == "--trace: opengl not recorded (gprof-run records cuda, nvtx and osrt); recording cuda,nvtx,osrt");
    r = parse({"--trace=mpi,opengl", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->trace == "none");
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("mpi, opengl not recorded") != std::string::npos);
    r = parse({"-t", "osrt", "./app"});  // OS-runtime calls alone (issue 35)
    REQUIRE(r.options);
    CHECK(r.options->trace == "osrt");
    CHECK(r.notes.empty());
    r = parse({"-t", "cublas", "./app"});  // the cuXXX libraries imply cuda, as in nsys
    REQUIRE(r.options);
    CHECK(r.options->trace == "cuda");
    CHECK(r.notes.empty());
}

TEST_CASE("-t with a typo is an error that names the nearest item, never an empty recording (issue 30)",
          "[launcher][options]") {
    auto r = parse({"-t", "cuad", "./app"});
    CHECK_FALSE(r.options);
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("gprof-run: error: --trace: unknown item 'cuad'; did you mean 'cuda'?") == 0);
    r = parse({"-t", "nvtx,cudaa", "./app"});
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("did you mean 'cuda'?") != std::string::npos);
    r = parse({"--trace=nvtxx", "./app"});
    CHECK(r.to_stderr.find("did you mean 'nvtx'?") != std::string::npos);
    r = parse({"-t", "zzzzzz", "./app"});  // nothing near: no guess
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("unknown item 'zzzzzz' (") != std::string::npos);
}

TEST_CASE("nsys habits: --export and --timeunit", "[launcher][options]") {
    auto r = parse({"--export=sqlite,json", "--export", "sqlite", "--stats=true", "--timeunit", "usec", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->exports == std::vector<std::string>{"sqlite", "json"});
    CHECK(r.options->timeunit == "usec");
    CHECK(r.options->command == std::vector<std::string>{"./app"});
    r = parse({"--export", "arrow", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->exports.empty());
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0] == "--export: arrow is not written (gprof-run exports sqlite and json)");
}

TEST_CASE("nsys habits: sampling, -w, --cuda-memory-usage, --trace-fork-before-exec are taken (issues 30, 35)",
          "[launcher][options]") {
    // What nsys users type, none of it refused any more (exit 2 before).
    auto r = parse({"-s", "none", "--sample=none", "-w", "true", "--cuda-memory-usage=true",
                    "--trace-fork-before-exec=true", "-t", "cuda,nvtx,osrt", "-f", "true", "./app", "-w"});
    REQUIRE(r.options);
    CHECK(r.options->sample == std::optional<std::string>("none"));
    CHECK(r.options->force);
    CHECK(r.options->command == std::vector<std::string>{"./app", "-w"});
    CHECK(r.notes.empty());  // osrt is recorded (issue 35); the others are what gprof-run does anyway
    // Values that ask for what gprof-run does not do: taken, with one note each.
    r = parse({"-s", "process-tree", "--sampling-frequency", "2000", "-w", "false", "--cuda-memory-usage", "false",
               "--trace-fork-before-exec=false", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->sample == std::optional<std::string>("process-tree"));
    CHECK(r.options->sampling_frequency == std::optional<std::string>("2000"));
    CHECK(r.notes.size() == 3);  // -s process-tree and 2000 Hz are what gprof-run does (issue 35): nothing to say
    // Bad values are errors with the nearest name.
    r = parse({"--sample", "proces-tree", "./app"});
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("did you mean 'process-tree'?") != std::string::npos);
    CHECK(parse({"--sampling-frequency", "50", "./app"}).exit_code == 2);
    CHECK(parse({"--show-output=maybe", "./app"}).exit_code == 2);
}

TEST_CASE("nsys habits: --cpuctxsw and --backtrace=dwarf|fp|lbr|none are taken, call sites stay off (issue 35)",
          "[launcher][options]") {
    // What gprof-run does anyway: nothing to say, no call sites, the value never taken for the app.
    auto r = parse({"--cpuctxsw", "none", "--backtrace=dwarf", "./app", "--cpuctxsw"});
    REQUIRE(r.options);
    CHECK(r.notes.empty());
    CHECK_FALSE(r.options->backtrace);
    CHECK(r.options->command == std::vector<std::string>{"./app", "--cpuctxsw"});
    // The others: one note each, still no call sites.
    r = parse({"--cpuctxsw=process-tree", "--backtrace=lbr", "./app"});
    REQUIRE(r.options);
    CHECK_FALSE(r.options->backtrace);
    REQUIRE(r.notes.size() == 2);
    CHECK(r.notes[0] == "--cpuctxsw process-tree: context switches are not recorded (CPU samples are: --sample)");
    CHECK(r.notes[1].rfind("--backtrace=lbr: CPU samples are always unwound with DWARF", 0) == 0);
    // A depth is still a depth, and a typo an error with the nearest name.
    r = parse({"--backtrace=8", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->backtrace == std::optional<std::string>("8"));
    r = parse({"--cpuctxsw", "proces-tree", "./app"});
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("did you mean 'process-tree'?") != std::string::npos);
    CHECK(parse({"--backtrace=dwarff", "./app"}).exit_code == 2);
}

TEST_CASE("nsys habits: --export takes its names from the outputs list, a typo is an error, other nsys formats a note",
          "[launcher][options]") {
    auto r = parse({"--export", "sqlite,json", "--no-html", "--no-timeline", "./app"});
    REQUIRE(r.options);
    CHECK(r.options->exports == std::vector<std::string>{"sqlite", "json"});
    CHECK(r.options->left_out == std::set<std::string>{"html", "timeline"});
    r = parse({"--export", "sqlit", "./app"});
    CHECK(r.exit_code == 2);
    CHECK(r.to_stderr.find("did you mean 'sqlite'?") != std::string::npos);
    r = parse({"--export", "hdf", "./app"});
    REQUIRE(r.options);
    CHECK(r.notes.size() == 1);
}

TEST_CASE("GPU metrics options: nsys's spellings, checked, a set list on help (issue 37)", "[launcher][options]") {
    auto r = parse({"--gpu-metrics-devices=all", "--gpu-metrics-frequency", "20000", "--gpu-metrics-set", "gh100",
                    "app"});
    REQUIRE(r.options);
    CHECK(r.options->gpu_metrics_devices == std::optional<std::string>("all"));
    CHECK(r.options->gpu_metrics_frequency == std::optional<std::string>("20000"));
    CHECK(r.options->gpu_metrics_set == std::optional<std::string>("gh100"));
    CHECK(r.notes.empty());
    r = parse({"--gpu-metrics-devices", "0,1", "app"});
    REQUIRE(r.options);
    CHECK(r.options->gpu_metrics_devices == std::optional<std::string>("0,1"));
    CHECK_FALSE(r.options->gpu_metrics_frequency);
    // none, the default, sets nothing.
    r = parse({"--gpu-metrics-devices=none", "app"});
    REQUIRE(r.options);
    CHECK_FALSE(r.options->gpu_metrics_devices);
    CHECK_FALSE(parse({"app"}).options->gpu_metrics_devices);
    // A rate or a set without devices: taken, and a note says it changes nothing.
    r = parse({"--gpu-metrics-frequency=100", "app"});
    REQUIRE(r.options);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0] == "--gpu-metrics-frequency changes nothing without --gpu-metrics-devices all or N[,N]: no GPU "
                        "is sampled");
    r = parse({"--gpu-metrics-set=gb100", "--gpu-metrics-devices=none", "app"});
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("--gpu-metrics-set changes nothing") == 0);
    // Errors: status 2, one line naming the option and what it takes.
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"--gpu-metrics-devices=0,0", "app"}, "--gpu-metrics-devices: '0,0' is not none, all or a comma list of "
                                               "CUDA device numbers 0-63 (each once)"},
        {{"--gpu-metrics-devices=64", "app"}, "--gpu-metrics-devices: '64' is not"},
        {{"--gpu-metrics-devices=cuda-visible", "app"}, "--gpu-metrics-devices: 'cuda-visible' is not"},
        {{"--gpu-metrics-frequency=5", "app"}, "--gpu-metrics-frequency: '5' is not a rate from 10 to 200000 Hz"},
        {{"--gpu-metrics-frequency=10kHz", "app"}, "--gpu-metrics-frequency: '10kHz' is not"},
        {{"--gpu-metrics-set=gh10", "app"}, "--gpu-metrics-set: 'gh10' is no metric set (gh100, ga100, ga10x, ad10x, "
                                            "gb100, gb20x; --gpu-metrics-set help lists them); did you mean 'gh100'?"},
        {{"--gpu-metrics-set=GH100", "app"}, "--gpu-metrics-set: 'GH100' is no metric set"},
    };
    for (const auto& [args, line] : bad) {
        auto b = parse(args);
        INFO(args[0] << ": " << b.to_stderr);
        CHECK_FALSE(b.options);
        CHECK(b.exit_code == 2);
        // One error line, then the usual pointer to --help.
        CHECK(b.to_stderr.rfind("gprof-run: error: " + line, 0) == 0);
        CHECK(std::count(b.to_stderr.begin(), b.to_stderr.end(), '\n') == 2);
    }
    // help: every set of the list on stdout, exit 0, no app needed.
    auto help = parse({"--gpu-metrics-set", "help"});
    CHECK(help.exit_code == 0);
    CHECK_FALSE(help.options);
    CHECK(help.to_stdout.find("gh100  Hopper") != std::string::npos);
    CHECK(help.to_stdout.find("  chips: GH100\n") != std::string::npos);
    CHECK(help.to_stdout.find("gb20x") != std::string::npos);
    CHECK(help.to_stdout.find("  sm__cycles_active.avg.pct_of_peak_sustained_elapsed\n") != std::string::npos);
}
