// The writer thread's side of CPU sampling and the OS-runtime trace: a pipeline hook that, every flush period, reads
// every thread's rings, interns the stacks (the native ones in stacks/stack_table.h, the Python ones in the same
// tables as call sites') and writes CpuSample and OsRuntimeCall records; frees the slots of threads that ended; and
// at the end of the trace says what was recorded and what was lost. It opens no file (see drain.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gprof/trace/writer.h"

namespace gprof::collector {
class Pipeline;
}

namespace gprof::collector::sampling {

class Drain {
public:
    explicit Drain(Pipeline& pipeline) noexcept;
    ~Drain();
    Drain(const Drain&) = delete;
    Drain& operator=(const Drain&) = delete;

    // Pipeline::PeriodicHook.
    static void hook(void* ctx, trace::TraceWriter& writer, bool final);

    struct Totals {
        uint64_t samples = 0, osrt_calls = 0;
        uint64_t ring_dropped_samples = 0, ring_dropped_calls = 0;  // refused by a full ring
        uint64_t native_stacks_lost = 0;  // samples and calls written without their native stack (table full)
        uint64_t python_stacks_lost = 0;
    };
    Totals totals() const { return totals_; }

private:
    struct Impl;
    void run(bool final);
    void say_end();

    Pipeline& pipeline_;
    std::unique_ptr<Impl> impl_;
    Totals totals_;
    uint64_t ticks_ = 0;
};

}  // namespace gprof::collector::sampling
