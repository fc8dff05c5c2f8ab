// Test support: caps how far this process's address space may grow, so that a table or buffer sized to gigabytes
// (by a crafted value, or by room reserved per thread) throws bad_alloc in the test instead of passing unnoticed.
// Each Catch2 case runs in a process of its own under ctest, so the cap lasts for the case.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>

namespace gprof::testing {

inline void cap_address_space(uint64_t extra_bytes) {
    std::ifstream statm("/proc/self/statm");
    uint64_t pages = 0;
    statm >> pages;
    rlimit lim{};
    REQUIRE(::getrlimit(RLIMIT_AS, &lim) == 0);
    rlim_t cap = pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) + extra_bytes;
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY || cap < lim.rlim_max ? cap : lim.rlim_max;  // the soft limit only:
    REQUIRE(::setrlimit(RLIMIT_AS, &lim) == 0);  // a later case in the same process may set its own
}

}  // namespace gprof::testing
