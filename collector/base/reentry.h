// Re-entry guard for the collector's entry points and callbacks.
//
// Our code calls into CUPTI, the driver and libc, and those can reach one of our entry points again on the same
// thread (a CUPTI callback for a driver call we make from inside a callback, InitializeInjection from a driver
// call made while the session starts). The inner entry must see that the thread is already inside the collector
// and do nothing. One thread-local flag per layer; the guard sets it for its scope and puts it back on every way
// out, so an early return can never leave a thread marked busy for good.
#pragma once

namespace gprof::collector {

class ReentryGuard {
public:
    // `busy` is a thread_local flag of the layer; the guard enters only when it is clear.
    explicit ReentryGuard(bool& busy) noexcept : busy_(busy), entered_(!busy) {
        if (entered_) busy_ = true;
    }
    ~ReentryGuard() {
        if (entered_) busy_ = false;
    }
    ReentryGuard(const ReentryGuard&) = delete;
    ReentryGuard& operator=(const ReentryGuard&) = delete;

    // False: the thread was already inside; the caller must return without doing anything.
    bool entered() const noexcept { return entered_; }

private:
    bool& busy_;
    bool entered_;
};

}  // namespace gprof::collector

namespace gprof::collector {

// The calling thread is doing the collector's own work: one of its threads (the writer, the finisher, the exit
// watchdogs, threads CUPTI starts while the collector sets it up), or the session's start and end on a thread of
// the program. The OS-runtime trace leaves the calls made meanwhile out (they are not the program's), and a thread
// created meanwhile is the collector's: it is neither sampled nor traced. Static TLS (initial-exec), so a signal
// handler or an interposed call may read it.
__attribute__((tls_model("initial-exec"))) inline thread_local bool t_own_work = false;

// Marks the calling thread's own work for a scope (nests).
class OwnWork {
public:
    OwnWork() noexcept : previous_(t_own_work) { t_own_work = true; }
    ~OwnWork() { t_own_work = previous_; }
    OwnWork(const OwnWork&) = delete;
    OwnWork& operator=(const OwnWork&) = delete;

private:
    bool previous_;
};

}  // namespace gprof::collector
