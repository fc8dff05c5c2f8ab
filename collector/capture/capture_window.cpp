#include "capture/capture_window.h"

#include <new>

#include "base/clock.h"
#include "pipeline/pipeline.h"

namespace gprof::collector {

namespace tr = gprof::trace;

CaptureWindow::Options CaptureWindow::options_for(const Config& config, tr::Timestamp started_at) {
    Options o;
    o.mode = config.capture;
    o.range_end = config.capture_end;
    o.max_ranges = config.capture_end_count;
    if (config.delay_sec > 0) o.open_at = started_at + static_cast<uint64_t>(config.delay_sec * 1e9);
    if (config.duration_sec > 0)
        o.close_at = (o.open_at ? o.open_at : started_at) + static_cast<uint64_t>(config.duration_sec * 1e9);
    return o;
}

void CaptureWindow::begin(Pipeline* pipeline, const Options& options, tr::Timestamp started_at) noexcept {
    std::lock_guard lock(mutex_);
    pipeline_ = pipeline;
    activity_ = nullptr;
    options_ = options;
    time_open_ = options.open_at == 0;
    time_over_ = false;
    range_open_ = options.mode == CaptureMode::None;
    ranges_done_ = false;
    ranges_opened_ = 0;
    exited_ = false;
    open_.store(false, std::memory_order_release);
    accepts_ranges_.store(options.mode != CaptureMode::None, std::memory_order_release);
    update(tr::CaptureReason::SessionStart, started_at);
}

void CaptureWindow::attach_activity(ActivitySwitch* activity) noexcept {
    std::lock_guard lock(mutex_);
    activity_ = activity;
    // The Capture record for the current state was written when the window moved; only CUPTI follows now.
    if (activity_ && activity_->recording() != open_.load(std::memory_order_relaxed))
        activity_->set_recording(open_.load(std::memory_order_relaxed));
}

bool CaptureWindow::uses(tr::CaptureReason reason) const {
    return (options_.mode == CaptureMode::CudaProfilerApi && reason == tr::CaptureReason::ProfilerApi) ||
           (options_.mode == CaptureMode::NvtxRange && reason == tr::CaptureReason::NvtxRange);
}

bool CaptureWindow::open_range(tr::CaptureReason reason, tr::Timestamp at) noexcept {
    std::lock_guard lock(mutex_);
    if (!uses(reason) || range_open_ || ranges_done_ || !time_open_ || exited_) return false;
    range_open_ = true;
    ++ranges_opened_;
    if (options_.range_end == CaptureRangeEnd::None) ranges_done_ = true;  // nothing will close it
    accepts_ranges_.store(!ranges_done_, std::memory_order_release);
    update(reason, at);
    return true;
}

void CaptureWindow::close_range(tr::CaptureReason reason, tr::Timestamp at) noexcept {
    std::lock_guard lock(mutex_);
    if (!uses(reason) || !range_open_ || options_.range_end == CaptureRangeEnd::None) return;
    range_open_ = false;
    if (options_.range_end == CaptureRangeEnd::Stop ||
        (options_.max_ranges != 0 && ranges_opened_ >= options_.max_ranges))
        ranges_done_ = true;
    accepts_ranges_.store(!ranges_done_ && !time_over_, std::memory_order_release);
    update(reason, at);
}

void CaptureWindow::tick(tr::Timestamp now) noexcept {
    std::lock_guard lock(mutex_);
    if (exited_ || !pipeline_) return;
    if (!time_open_ && !time_over_ && options_.open_at && now >= options_.open_at) {
        time_open_ = true;
        update(tr::CaptureReason::Delay, options_.open_at);
    }
    if (time_open_ && options_.close_at && now >= options_.close_at) {
        time_open_ = false;
        time_over_ = true;
        accepts_ranges_.store(false, std::memory_order_release);
        update(tr::CaptureReason::Duration, options_.close_at);
    }
}

void CaptureWindow::close_at_exit(tr::Timestamp at) noexcept {
    std::lock_guard lock(mutex_);
    if (exited_) return;
    exited_ = true;
    accepts_ranges_.store(false, std::memory_order_release);
    activity_ = nullptr;  // the kinds stay on: the forced flush at exit still collects what is in flight
    update(tr::CaptureReason::ProcessExit, at);
}

void CaptureWindow::reset_after_fork() noexcept {
    // Only the forking thread exists in the child; the mutex may have been held by another thread of the parent.
    new (&mutex_) std::mutex();
    pipeline_ = nullptr;
    activity_ = nullptr;
    open_.store(false, std::memory_order_relaxed);
    accepts_ranges_.store(false, std::memory_order_relaxed);
}

void CaptureWindow::update(tr::CaptureReason reason, tr::Timestamp at) {
    bool open = time_open_ && range_open_ && !exited_;
    if (open == open_.load(std::memory_order_relaxed)) return;
    open_.store(open, std::memory_order_release);
    tr::Timestamp stamp = at;
    if (activity_) {
        // GPU records exist from the moment the kinds are on until they are off: stamp the edge then.
        if (!open) stamp = clock::now();
        activity_->set_recording(open);
        if (open) stamp = clock::now();
    }
    if (pipeline_) pipeline_->post_capture(open ? tr::CaptureAction::Start : tr::CaptureAction::Stop, reason, stamp);
}

CaptureWindow& capture_window() noexcept {
    static auto* w = new CaptureWindow();  // leaked: used from atexit handlers and CUPTI callbacks at teardown
    return *w;
}

}  // namespace gprof::collector
