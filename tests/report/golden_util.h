// Golden-file comparison for report tests. GPROF_UPDATE_GOLDEN=1 rewrites the files instead of comparing
// (then review `git diff tests/report/golden`).
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace gprof::testing {

inline std::string golden_path(const std::string& name) {
    return std::string(GPROF_SOURCE_DIR) + "/tests/report/golden/" + name;
}

// What varies between builds: the version in "generator".
inline std::string normalise(std::string text) {
    text = std::regex_replace(text, std::regex("gprof-report [0-9]+\\.[0-9]+\\.[0-9]+[^\"\\s]*"), "gprof-report X.Y.Z");
    return text;
}

inline void check_golden(const std::string& name, const std::string& actual_raw) {
    std::string actual = normalise(actual_raw);
    std::string path = golden_path(name);
    if (const char* u = std::getenv("GPROF_UPDATE_GOLDEN"); u && *u && std::string(u) != "0") {
        std::ofstream(path, std::ios::binary) << actual;
        return;
    }
    std::ifstream in(path, std::ios::binary);
    INFO("golden " << path << " (GPROF_UPDATE_GOLDEN=1 regenerates)");
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK(ss.str() == actual);
}

}  // namespace gprof::testing
