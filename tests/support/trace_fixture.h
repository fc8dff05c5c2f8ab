// Test helpers shared by every test folder: a scratch directory, and traces built with the project's own writer.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gprof/trace/reader.h"
#include "gprof/trace/writer.h"

namespace gprof::testing {

// A fresh directory under $TMPDIR, removed with everything in it when the object dies.
class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "gprof-test-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

// A header with fixed, recognisable values.
inline trace::HeaderInfo test_header(int64_t pid = 4242) {
    static const char* argv[] = {"./app", "--steps", "3"};
    trace::HeaderInfo h;
    h.producer = "gprof-run test";
    h.pid = pid;
    h.ppid = 1;
    h.hostname = "testhost";
    h.executable = "/opt/app/bin/app";
    h.argv = argv;
    h.argc = 3;
    h.clock.trace_ns = 1'000'000'000;
    h.clock.realtime_ns = 1'700'000'000'000'000'000;
    h.clock.monotonic_ns = 5'000'000'000;
    h.run_id = "test-run";
    h.pid_ns = 4026531836;
    return h;
}

// Writes a trace at `path` through TraceWriter; `fill` adds the records. finish() unless `finish` is false.
inline void write_trace(const std::string& path, const std::function<void(trace::TraceWriter&)>& fill,
                        bool finish = true, trace::HeaderInfo header = test_header(),
                        size_t chunk_bytes = 256 * 1024) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error("cannot create " + path);
    trace::TraceWriter w;
    trace::TraceWriter::Options opt;
    opt.chunk_bytes = chunk_bytes;
    if (!w.open(fd, header, opt)) throw std::runtime_error("TraceWriter::open failed");
    fill(w);
    if (finish) {
        w.finish(header.clock.trace_ns + 1'000'000'000);
    } else {
        w.close();
    }
}

// Every record of a trace, in file order.
inline std::vector<trace::Record> read_all_records(trace::TraceReader& reader) {
    std::vector<trace::Record> out;
    trace::Record r;
    while (reader.next(r)) out.push_back(r);
    return out;
}

}  // namespace gprof::testing
