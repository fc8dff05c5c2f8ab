// Progress on a terminal (output/progress.h): rate and time left, nothing for short reads, erased when done.
#include <catch2/catch.hpp>

#include <sstream>
#include <thread>

#include "output/progress.h"

using namespace gprof::report;

TEST_CASE("progress: the line says how far, how fast and how long is left", "[progress]") {
    Progress p;
    p.trace = "/runs/a/python3.12.948.gprof";
    p.bytes_total = 175'000'000;
    p.bytes_done = 70'000'000;
    p.records = 4'000'000;
    CHECK(progress_line(p, 2.0) ==
          "reading python3.12.948.gprof: 40% of 175 MB, 35 MB/s (2.0 M records/s), 3 s left");
    p.bytes_done = 1'000'000;
    CHECK(progress_line(p, 10.0) ==
          "reading python3.12.948.gprof: 0% of 175 MB, 0 MB/s (0.4 M records/s), 29 min 0 s left");
    p.bytes_done = 0;
    CHECK(progress_line(p, 0.0) == "reading python3.12.948.gprof: 0% of 175 MB");
}

TEST_CASE("progress: nothing for a short read, a long one drawn then erased", "[progress]") {
    Progress p;
    p.trace = "t.gprof";
    p.bytes_total = 1000;
    {
        std::ostringstream out;
        TerminalProgress t(out);
        t(p);
        p.bytes_done = 500;
        t(p);
        p.finished = true;
        t(p);
        CHECK(out.str().empty());
    }
    std::ostringstream out;
    TerminalProgress t(out);
    p.finished = false;
    p.bytes_done = 0;
    t(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    p.bytes_done = 500;
    t(p);
    std::string drawn = out.str();
    CHECK(drawn.find("gprof-report: reading t.gprof: 50% of 0.0 MB") != std::string::npos);
    CHECK(drawn.find(" left") != std::string::npos);
    p.finished = true;
    t(p);
    CHECK(out.str() == drawn + "\r\033[K");
}
