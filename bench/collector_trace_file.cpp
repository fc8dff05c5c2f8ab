// What the trace file's guard costs per chunk written (issue 29): the check that the descriptor still holds the trace
// (one fstat, process/trace_file.h) and the table's use count, against the same chunks written to a plain
// descriptor. Chunks of 256 KiB (the collector's) and of 4 KiB (the fixed cost alone: a quiet program flushes small
// chunks every period). Run: build/bench/collector_trace_file
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "process/trace_file.h"
#include "trace_fixture.h"

using namespace gprof::trace;

namespace {

// One chunk's worth of NVTX records, then a flush: one write(2) of about `chunk` bytes.
void write_chunks(benchmark::State& state, bool guarded) {
    const size_t chunk = static_cast<size_t>(state.range(0));
    gprof::testing::TempDir dir;
    std::string path = dir.file("bench.gprof");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    auto* file = new gprof::collector::TraceFile();  // leaked: the writer closes through it
    TraceWriter writer;
    TraceWriter::Options o;
    o.chunk_bytes = chunk;
    if (guarded) {
        file->adopt(fd, path);
        o.guard = file;
        fd = file->descriptor();
    }
    if (!writer.open(fd, gprof::testing::test_header(), o)) {
        state.SkipWithError("cannot open the trace");
        return;
    }
    Nvtx r;
    r.type = NvtxType::PushPop;
    r.name = writer.intern("step");
    r.tid = 4711;
    r.end_tid = 4711;
    const size_t per_chunk = chunk / 16;  // about 14 bytes a record
    uint64_t t = 1'000'000'000;
    for (auto _ : state) {
        for (size_t i = 0; i < per_chunk; ++i) {
            r.start = t;
            r.end = t + 500;
            t += 1000;
            writer.add(r);
        }
        writer.flush();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * chunk));
    writer.finish(t);
}

void BM_ChunkPlain(benchmark::State& state) { write_chunks(state, false); }
void BM_ChunkGuarded(benchmark::State& state) { write_chunks(state, true); }

// Fixed iteration counts keep the file at about 100 MB.
BENCHMARK(BM_ChunkPlain)->Arg(4096)->Iterations(25000);
BENCHMARK(BM_ChunkGuarded)->Arg(4096)->Iterations(25000);
BENCHMARK(BM_ChunkPlain)->Arg(256 * 1024)->Iterations(400);
BENCHMARK(BM_ChunkGuarded)->Arg(256 * 1024)->Iterations(400);

}  // namespace

BENCHMARK_MAIN();
