// The threads of aggregate_run: one walks the file chunk by chunk and folds, workers decode batches.
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "model/aggregator.h"
#include "model/ingest.h"

namespace gprof::report::aggregation {

unsigned default_threads() {
    if (const char* env = std::getenv("GPROF_REPORT_THREADS")) {
        long n = std::strtol(env, nullptr, 10);
        if (n >= 1 && n <= 64) return static_cast<unsigned>(n);
    }
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

// At most 4 batches per thread ahead of the fold, so memory stays bounded. With one thread, the same batches on
// this thread alone: the result is the same either way.
void read_trace(TraceReader& reader, Aggregator& agg, const StreamContext& ctx, const AggregateOptions& options,
                unsigned threads, const std::function<void(uint64_t bytes, uint64_t records)>& progress) {
    BatchSettings settings;
    settings.nvtx_detail = options.nvtx_detail;
    settings.hide_runtime_driver_calls = RecordGate::hides_runtime_driver_calls(options.filter, reader.header());
    auto make_filter = [&]() -> std::unique_ptr<RecordFilter> {
        if (options.filter.empty()) return nullptr;
        const TraceStrings& strings = agg.strings();
        return std::make_unique<RecordFilter>(options.filter, [&strings](StringId id) { return strings.get(id); },
                                              ctx.clock_offset_ns, ctx.run_base_realtime_ns);
    };
    auto fill = [&reader](BatchPart& b) {
        ChunkSpan span;
        while (b.chunks.size() < kChunksPerBatch && reader.next_chunk_span(span)) {
            b.chunks.push_back(span);
            b.end_offset = span.end_offset;
        }
        return !b.chunks.empty();
    };
    uint64_t records = 0;
    auto folded = [&](const BatchPart& b) {
        records += b.tally.records;
        if (progress) progress(b.end_offset, records);
    };
    // Names are needed while decoding only by the kernel regex: then one thread, defining strings as they come.
    // A small trace is not worth the threads (unless asked for: the tests).
    if (!options.filter.kernel_regex.empty() || (!options.threads && reader.stats().file_bytes < (size_t(4) << 20)))
        threads = 1;
    agg.set_sweep_threads(threads);
    if (threads <= 1) {
        auto filter = make_filter();
        for (uint64_t sequence = 0;; ++sequence) {
            BatchPart b;
            b.sequence = sequence;
            b.large = agg.large_keys();
            if (!fill(b)) break;
            aggregate_batch(b, settings, filter.get(), &agg.strings());
            agg.fold(b);
            folded(b);
        }
        return;
    }

    std::mutex m;
    std::condition_variable cv;
    uint64_t handed_out = 0, next_fold = 0;
    bool exhausted = false, stop = false;
    std::map<uint64_t, std::unique_ptr<BatchPart>> done;
    const uint64_t window = 4 * uint64_t(threads);
    auto worker = [&] {
        std::unique_ptr<RecordFilter> filter;
        try {
            filter = make_filter();
        } catch (...) {
        }
        for (;;) {
            auto b = std::make_unique<BatchPart>();
            b->large = agg.large_keys();
            {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return exhausted || stop || handed_out < next_fold + window; });
                if (exhausted || stop) return;
                try {
                    if (!fill(*b)) {  // the walk over the file is serial: under the lock
                        exhausted = true;
                        cv.notify_all();
                        return;
                    }
                } catch (...) {
                    b->error = std::current_exception();
                    exhausted = true;
                }
                b->sequence = handed_out++;
            }
            if (!b->error) {
                try {
                    aggregate_batch(*b, settings, filter.get(), nullptr);
                } catch (...) {
                    b->error = std::current_exception();
                }
            }
            {
                std::lock_guard lock(m);
                uint64_t seq = b->sequence;
                done.emplace(seq, std::move(b));
            }
            cv.notify_all();
        }
    };
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < threads; ++i) pool.emplace_back(worker);
    std::exception_ptr failure;
    for (;;) {
        std::unique_ptr<BatchPart> b;
        {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return done.count(next_fold) || (exhausted && next_fold == handed_out); });
            auto it = done.find(next_fold);
            if (it == done.end()) break;  // every batch is folded
            b = std::move(it->second);
            done.erase(it);
            ++next_fold;
        }
        cv.notify_all();  // the window moved
        try {
            agg.fold(*b);
            folded(*b);
        } catch (...) {
            failure = std::current_exception();
            std::lock_guard lock(m);
            stop = true;
            break;
        }
    }
    cv.notify_all();
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace gprof::report::aggregation
