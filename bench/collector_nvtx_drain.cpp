// The writer thread's side of NVTX, per push+pop range: Recorder::drain reading a thread's event stream (events laid
// out exactly as the handlers write them), pairing push with pop, looking the name up and encoding one Nvtx record
// into a TraceWriter on /dev/null. The application threads' side is bench/collector_nvtx; the two together in a real
// process are bench/nvtx_real_process.
#include <benchmark/benchmark.h>

#include <fcntl.h>

#include <cstring>

#include "base/clock.h"
#include "nvtx/recorder.h"
#include "nvtx/stream.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::collector;

namespace {

// One push of `name` and its pop, as push_ascii and pop_domain write them.
void write_pair(nvtx::ThreadStream* s, const char* name, size_t len, uint64_t ts) {
    size_t size = sizeof(nvtx::EventHeader) + nvtx::pad8(len);
    uint8_t* p = nvtx::reserve(s, size);
    auto* h = reinterpret_cast<nvtx::EventHeader*>(p);
    h->type = nvtx::EventType::Push;
    h->flags = 0;
    h->name_len = static_cast<uint16_t>(len);
    h->domain = 0;
    h->timestamp = ts;
    std::memcpy(p + sizeof(nvtx::EventHeader), name, len);
    nvtx::commit(s, size);
    const uint64_t pop = nvtx::short_pop(ts + 50);  // a default-domain pop: one 8-byte word
    p = nvtx::reserve(s, 8);
    std::memcpy(p, &pop, 8);
    nvtx::commit(s, 8);
}

// Batches of 2000 pairs written, then drained (the drain alone is timed): the writer reading blocks shortly after
// they were written, as it does when nudged. Arg: 0 = one name ("step"), 1 = 64 names of 20-40 bytes.
void BM_DrainPushPop(benchmark::State& state) {
    clock::init();
    trace::TraceWriter writer;
    writer.open(::open("/dev/null", O_WRONLY | O_CLOEXEC), gprof::testing::test_header());
    nvtx::Recorder recorder(nvtx::Recorder::Options{});
    nvtx::ThreadStream* s = nvtx::attach_thread();
    std::vector<std::string> names;
    for (int i = 0; i < 64; ++i) names.push_back("forward/layer" + std::to_string(i) + "/attention.block");
    uint64_t ts = 1'000'000;
    size_t ranges = 0;
    for (auto _ : state) {
        state.PauseTiming();
        for (int i = 0; i < 2000; ++i, ts += 100) {
            if (state.range(0) == 0) write_pair(s, "step", 4, ts);
            else write_pair(s, names[i % 64].data(), names[i % 64].size(), ts);
        }
        state.ResumeTiming();
        recorder.drain(writer, false);
        ranges += 2000;
    }
    if (recorder.ranges_written() != ranges) state.SkipWithError("ranges lost");
    state.counters["ns_per_range"] =
        benchmark::Counter(static_cast<double>(ranges), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    writer.finish(1);
}
BENCHMARK(BM_DrainPushPop)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
