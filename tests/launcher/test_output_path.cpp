// %-patterns and the default run directory name.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <regex>

#include "output_path.h"

using namespace gprof::launcher;

namespace {
PatternContext fixed_context() {
    PatternContext ctx;
    ctx.pid = 4242;
    ctx.host = "node07";
    ctx.getenv = [](const char* name) -> const char* {
        static const std::map<std::string, std::string> env = {{"SLURM_PROCID", "3"}, {"EMPTY", ""}};
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    return ctx;
}
std::string expand_ok(const std::string& pattern) {
    std::string error;
    auto v = expand_pattern(pattern, fixed_context(), error);
    INFO(pattern << ": " << error);
    REQUIRE(v);
    return *v;
}
std::string expand_error(const std::string& pattern) {
    std::string error;
    auto v = expand_pattern(pattern, fixed_context(), error);
    INFO(pattern);
    REQUIRE_FALSE(v);
    return error;
}
}  // namespace

TEST_CASE("every pattern expands", "[launcher][output]") {
    CHECK(expand_ok("run") == "run");
    CHECK(expand_ok("run.%p") == "run.4242");
    CHECK(expand_ok("%h") == "node07");
    CHECK(expand_ok("run.%q{SLURM_PROCID}") == "run.3");
    CHECK(expand_ok("100%%") == "100%");
    CHECK(expand_ok("%%p") == "%p");
    CHECK(expand_ok("a%q{EMPTY}b") == "ab");
    CHECK(expand_ok("/x/%h/%p/r%q{SLURM_PROCID}/%%%p") == "/x/node07/4242/r3/%4242");
}

TEST_CASE("pattern errors name the problem", "[launcher][output]") {
    CHECK(expand_error("run.%q{OMPI_COMM_WORLD_RANK}").find("OMPI_COMM_WORLD_RANK is not set") != std::string::npos);
    CHECK(expand_error("run.%z").find("%z") != std::string::npos);
    CHECK(expand_error("run%").find("lone %") != std::string::npos);
    CHECK(expand_error("%q").find("%q{VARIABLE}") != std::string::npos);
    CHECK(expand_error("%qSLURM").find("%q{VARIABLE}") != std::string::npos);
    CHECK(expand_error("%q{SLURM").find("%q{VARIABLE}") != std::string::npos);
    CHECK(expand_error("%q{}").find("%q{VARIABLE}") != std::string::npos);
}

TEST_CASE("the default run directory is named after the app and the time", "[launcher][output]") {
    std::tm tm{};
    tm.tm_year = 2025 - 1900;
    tm.tm_mon = 2;
    tm.tm_mday = 4;
    tm.tm_hour = 5;
    tm.tm_min = 6;
    tm.tm_sec = 7;
    tm.tm_isdst = -1;
    std::time_t t = std::mktime(&tm);
    CHECK(default_run_dir_name("./bin/train", t) == "gprof-train-20250304-050607");
    CHECK(default_run_dir_name("python3", t) == "gprof-python3-20250304-050607");
    CHECK(default_run_dir_name("my app$", t) == "gprof-my_app_-20250304-050607");
    CHECK(default_run_dir_name("dir/", t) == "gprof-dir-20250304-050607");
    CHECK(default_run_dir_name("/", t) == "gprof-app-20250304-050607");
}

TEST_CASE("the current context is this process", "[launcher][output]") {
    PatternContext ctx = current_pattern_context();
    CHECK(ctx.pid == static_cast<long>(::getpid()));
    CHECK_FALSE(ctx.host.empty());
    ::setenv("LAUNCHER_TEST_PATTERN", "v", 1);
    CHECK(std::strcmp(ctx.getenv("LAUNCHER_TEST_PATTERN"), "v") == 0);
}
