// Damaged traces: cut at every byte, single bit flips, garbage, a writer that never finished.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "record_samples.h"
#include "trace_fixture.h"

using namespace gprof::trace;
using namespace gprof::testing;

namespace {

std::vector<uint8_t> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A small trace of several chunks: every kind, then flushes between groups of kernels.
std::vector<uint8_t> small_trace(const TempDir& dir) {
    auto path = dir.file("small.gprof");
    write_trace(path, [](TraceWriter& w) {
        add_every_kind(w);
        w.flush();
        for (int chunk = 0; chunk < 4; ++chunk) {
            for (int i = 0; i < 5; ++i) {
                Kernel k;
                k.start = 5'000'000 + chunk * 1000 + i * 100;
                k.end = k.start + 50;
                k.correlation = chunk * 5 + i;
                k.name = w.intern(chunk % 2 ? "odd" : "even");
                w.add(k);
            }
            w.flush();
        }
    });
    return slurp(path);
}

// Records read without resolving strings (a lost chunk may hold a string definition).
std::vector<std::string> records_of(TraceReader& reader) {
    std::vector<std::string> out;
    Record r;
    while (reader.next(r)) out.push_back(describe_record(r));
    return out;
}

bool is_subsequence(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
    size_t j = 0;
    for (const auto& p : part) {
        while (j < whole.size() && whole[j] != p) ++j;
        if (j == whole.size()) return false;
        ++j;
    }
    return true;
}

}  // namespace

TEST_CASE("a trace cut at any byte reads back to its last complete chunk") {
    TempDir dir;
    auto full = small_trace(dir);
    TraceReader whole("full", full);
    auto all = records_of(whole);
    REQUIRE(whole.warnings().empty());
    REQUIRE(all.size() == kEveryKindCount + 20 + 1);

    size_t readable_cuts = 0;
    for (size_t cut = 0; cut < full.size(); ++cut) {
        std::vector<uint8_t> part(full.begin(), full.begin() + static_cast<long>(cut));
        try {
            TraceReader reader("cut", part);
            auto got = records_of(reader);
            ++readable_cuts;
            INFO("cut at " << cut << " of " << full.size());
            // A prefix of the records, never anything invented, and a warning saying what happened.
            REQUIRE(got.size() < all.size());
            CHECK(std::equal(got.begin(), got.end(), all.begin()));
            REQUIRE_FALSE(reader.warnings().empty());
            CHECK_FALSE(reader.stats().has_end);
            bool says_no_end = std::any_of(reader.warnings().begin(), reader.warnings().end(),
                                           [](const std::string& w) { return w.find("no end record") != std::string::npos; });
            CHECK(says_no_end);
        } catch (const TraceError& e) {
            // Only before the header chunk is complete; the message names the problem.
            INFO("cut at " << cut << ": " << e.what());
            CHECK(cut < 200);
            CHECK(std::string(e.what()).size() > 10);
        }
    }
    CHECK(readable_cuts > full.size() - 200);
}

TEST_CASE("a cut inside a chunk reports how many bytes were discarded") {
    TempDir dir;
    auto full = small_trace(dir);
    std::vector<uint8_t> part(full.begin(), full.end() - 10);  // inside the last chunk (the End record's)
    TraceReader reader("cut", part);
    records_of(reader);
    CHECK(reader.stats().truncated_bytes > 0);
    bool says_cut = std::any_of(reader.warnings().begin(), reader.warnings().end(),
                                [](const std::string& w) { return w.find("incomplete chunk") != std::string::npos; });
    CHECK(says_cut);
}

TEST_CASE("a single flipped bit is detected and costs at most its chunk") {
    TempDir dir;
    auto full = small_trace(dir);
    TraceReader whole("full", full);
    auto all = records_of(whole);

    for (size_t pos = 0; pos < full.size(); ++pos) {
        for (int bit : {0, 5}) {
            auto damaged = full;
            damaged[pos] ^= static_cast<uint8_t>(1u << bit);
            INFO("bit " << bit << " of byte " << pos);
            try {
                TraceReader reader("flipped", damaged);
                auto got = records_of(reader);
                CHECK(is_subsequence(got, all));
                if (got.size() != all.size()) CHECK_FALSE(reader.warnings().empty());
            } catch (const TraceError& e) {
                CHECK(pos < 200);  // preamble or header chunk
            }
        }
    }
}

TEST_CASE("garbage between chunks is skipped and reading resumes") {
    TempDir dir;
    auto full = small_trace(dir);
    TraceReader whole("full", full);
    auto all = records_of(whole);
    // Find the second chunk start after the header chunk and put junk in front of it.
    std::vector<uint8_t> damaged(full.begin(), full.begin() + 16);
    size_t header_chunk = 16 + 16 + (full[20] | full[21] << 8 | full[22] << 16 | size_t(full[23]) << 24);
    damaged.insert(damaged.end(), full.begin() + 16, full.begin() + static_cast<long>(header_chunk));
    for (int i = 0; i < 333; ++i) damaged.push_back(static_cast<uint8_t>(i * 7));
    damaged.insert(damaged.end(), full.begin() + static_cast<long>(header_chunk), full.end());
    TraceReader reader("junk", damaged);
    auto got = records_of(reader);
    CHECK(got == all);
    CHECK(reader.stats().corrupt_bytes == 333);
    REQUIRE(reader.warnings().size() == 1);
    CHECK(reader.warnings()[0].find("333 damaged bytes") != std::string::npos);
}

TEST_CASE("a writer that never finished leaves a readable trace without an end") {
    TempDir dir;
    auto path = dir.file("unfinished.gprof");
    write_trace(path, [](TraceWriter& w) { add_every_kind(w); }, /*finish=*/false);
    TraceReader reader(path);
    auto got = records_of(reader);
    CHECK(got.size() == kEveryKindCount);
    CHECK_FALSE(reader.stats().has_end);
    REQUIRE(reader.warnings().size() == 1);
    CHECK(reader.warnings()[0].find("no end record") != std::string::npos);
}

TEST_CASE("flush_from_signal_handler writes the committed records of the open chunk") {
    TempDir dir;
    auto path = dir.file("signal.gprof");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0600);
    REQUIRE(fd >= 0);
    TraceWriter w;
    REQUIRE(w.open(fd, test_header()));
    add_every_kind(w);
    w.flush_from_signal_handler();
    // What a dying process leaves: no End record, nothing after the emergency write. (Leak the writer's state
    // the way a dying process would: read the file before the writer is destroyed.)
    {
        TraceReader reader(path);
        auto got = records_of(reader);
        CHECK(got.size() == kEveryKindCount);
        CHECK_FALSE(reader.stats().has_end);
    }
    // The chunk was claimed: a later normal flush must not write it twice.
    w.flush();
    TraceReader again(path);
    CHECK(records_of(again).size() == kEveryKindCount);
}

TEST_CASE("a failing descriptor counts lost records instead of crashing") {
    TempDir dir;
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    TraceWriter w;
    REQUIRE(w.open(fds[1], test_header()));
    ::close(fds[0]);  // the reader goes away: every later write fails with EPIPE
    ::signal(SIGPIPE, SIG_IGN);
    add_every_kind(w);
    CHECK_FALSE(w.flush());
    CHECK(w.failed());
    CHECK(w.records_lost() >= kEveryKindCount);
}

TEST_CASE("a chunk lost to a write error: what follows keeps its names, the loss is in the trace") {
    // The descriptor fails for one chunk (as a full disk would) and works again: the strings the lost chunk defined
    // are defined again under the same ids (callers cache ids), and a Dropped record of WriteError counts the gap.
    TempDir dir;
    auto path = dir.file("gap.gprof");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    REQUIRE(fd >= 0);
    TraceWriter w;
    REQUIRE(w.open(fd, test_header()));
    StringId name = w.intern("cached-kernel-name");
    auto kernels = [&](int n, uint64_t base) {
        for (int i = 0; i < n; ++i) {
            Kernel k;
            k.start = base + i * 100;
            k.end = k.start + 50;
            k.name = name;  // the id the caller cached before the loss
            w.add(k);
        }
    };
    kernels(10, 1'000'000);
    int saved = ::dup(fd);
    int readonly = ::open(path.c_str(), O_RDONLY);
    REQUIRE(::dup2(readonly, fd) == fd);  // writes fail with EBADF
    CHECK_FALSE(w.flush());
    CHECK(w.records_lost() == 10);
    CHECK(w.bytes_lost() > 10 * 4);  // the whole chunk: header and ten encoded kernels
    CHECK(w.bytes_lost() < 10 * 64);
    REQUIRE(::dup2(saved, fd) == fd);  // the disk takes writes again
    kernels(7, 2'000'000);
    REQUIRE(w.finish(3'000'000) == false);  // finished, and says an error happened
    ::close(saved);
    ::close(readonly);

    TraceReader reader(path);
    size_t kernels_read = 0, named = 0;
    uint64_t gap = 0;
    std::string said;
    Record r;
    while (reader.next(r)) {
        if (r.kind == RecordKind::Kernel) {
            ++kernels_read;
            named += reader.string(r.kernel.name) == "cached-kernel-name";
        }
        if (r.kind == RecordKind::Dropped && r.dropped.source == DropSource::WriteError) gap += r.dropped.count;
        if (r.kind == RecordKind::Status) said = std::string(reader.string(r.status.message));
    }
    CHECK(said == "write error: 10 records could not be written to this trace (" + std::to_string(w.bytes_lost()) +
                  " bytes; Bad file descriptor)");
    CHECK(reader.warnings().empty());
    CHECK(kernels_read == 7);
    CHECK(named == 7);
    CHECK(gap == 10);
    CHECK(reader.stats().has_end);
}
