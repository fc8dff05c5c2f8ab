// The capture window: whether this process records CUDA activity right now. It has one owner, this class.
//
// Every reason that opens or closes recording asks the window: the session start, the delay and the duration
// (GPROF_DELAY_SEC / GPROF_DURATION_SEC, from the writer thread's periodic tick), a capture range
// (cudaProfilerStart/Stop from a CUPTI callback, or the NVTX range named by GPROF_CAPTURE_RANGE from the NVTX
// handler on the application thread), process exit, and fork (the child starts a window of its own). The window
// keeps the state, switches CUPTI's activity kinds through the CUPTI session once that has started, and writes
// the Capture records: one at each edge of the window, with the reason that moved it. It knows no CUPTI: the
// session hands it the lever (ActivitySwitch) once CUPTI has started.
//
// The window is open when both gates are open:
//   time gate   open from the delay's end (or the start) until the duration's end; once closed, closed for good
//   range gate  always open without a capture range; with one, open inside a range. Ranges are looked for only
//               while the time gate is open; what ends them is GPROF_CAPTURE_RANGE_END (stop: the first range
//               only, repeat[:N]: every later range (N in all), none: the first range opens it for good)
//
// Threads: any. One mutex, held while CUPTI's kinds are switched (the CUPTI session's lock order: never taken
// by a buffer callback); never held while flushing. Nothing here throws.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "base/config.h"
#include "gprof/trace/records.h"

namespace gprof::collector {

class Pipeline;

// The lever the window moves: CUPTI's activity kinds (the session wires the CUPTI session in; tests wire their own).
class ActivitySwitch {
public:
    virtual bool recording() const = 0;
    virtual bool set_recording(bool on) = 0;

protected:
    ~ActivitySwitch() = default;
};

class CaptureWindow {
public:
    struct Options {
        CaptureMode mode = CaptureMode::None;  // which range reason the range gate listens to
        CaptureRangeEnd range_end = CaptureRangeEnd::Stop;
        uint32_t max_ranges = 0;               // Repeat: at most this many ranges; 0 = no limit
        trace::Timestamp open_at = 0;          // the delay's end; 0 = open from the start
        trace::Timestamp close_at = 0;         // the duration's end; 0 = never
    };
    // The window of a session that started at `started_at` with `config`.
    static Options options_for(const Config& config, trace::Timestamp started_at);

    // A session starts: the window takes its options, writes into `pipeline`, and opens at once (Capture Start
    // SessionStart) when neither a delay nor a capture range holds it closed.
    void begin(Pipeline* pipeline, const Options& options, trace::Timestamp started_at) noexcept;

    // CUPTI has started: from now on the window switches its activity kinds. Brings them in line with the window
    // as it is now (it may have moved while CUPTI was starting).
    void attach_activity(ActivitySwitch* activity) noexcept;

    bool is_open() const noexcept { return open_.load(std::memory_order_acquire); }

    // Range reasons (CaptureReason::ProfilerApi, CaptureReason::NvtxRange). open_range returns true when this call
    // opened the range gate: the caller holds the range and closes it with close_range. False when the mode does
    // not use this reason, a range is already open, the time gate is closed or no further range may open.
    bool open_range(trace::CaptureReason reason, trace::Timestamp at) noexcept;
    void close_range(trace::CaptureReason reason, trace::Timestamp at) noexcept;
    // Whether a range may still open later (false once GPROF_CAPTURE_RANGE_END is used up): lets the NVTX
    // handlers stop looking at names.
    bool accepts_ranges() const noexcept { return accepts_ranges_.load(std::memory_order_acquire); }

    // The writer thread's periodic tick: the delay's and the duration's edges.
    void tick(trace::Timestamp now) noexcept;
    // Process exit: the window closes (Capture Stop ProcessExit) if it is open. CUPTI's kinds stay as they are
    // (the final forced flush follows).
    void close_at_exit(trace::Timestamp at) noexcept;
    // In a forked child: the parent's pipeline and CUPTI session are gone; the child's session calls begin().
    void reset_after_fork() noexcept;

    // The time gate, for records filtered by their own timestamps (NVTX ranges): [open_at, close_at), 0 = unbounded.
    trace::Timestamp time_open_at() const noexcept { return options_.open_at; }
    trace::Timestamp time_close_at() const noexcept { return options_.close_at; }

private:
    bool uses(trace::CaptureReason reason) const;
    // Recomputes the window from the gates; on a change switches CUPTI and writes the Capture record. mutex_ held.
    void update(trace::CaptureReason reason, trace::Timestamp at);

    mutable std::mutex mutex_;
    Pipeline* pipeline_ = nullptr;
    ActivitySwitch* activity_ = nullptr;
    Options options_;
    bool time_open_ = false;
    bool time_over_ = false;  // the duration has ended: the time gate never reopens
    bool range_open_ = false;
    bool ranges_done_ = false;
    uint32_t ranges_opened_ = 0;
    bool exited_ = false;
    std::atomic<bool> open_{false};
    std::atomic<bool> accepts_ranges_{false};
};

// The process-wide window (never destroyed: used from atexit handlers and late callbacks).
CaptureWindow& capture_window() noexcept;

}  // namespace gprof::collector
