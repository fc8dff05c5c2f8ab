// The timeline of a run, independent of any file format. The Chrome JSON encoder (timeline/json.cpp), the
// Perfetto protobuf encoder (timeline/perfetto.cpp) and any later reader (the HTML report's charts) read this
// model; none of them looks at the Run's records to decide what goes where.
//
//   groups    a profiled process, one GPU device of a process, or the analysis results. Chrome: one pid each;
//             Perfetto: a process track, a "GPU N" track under its process, a top-level "analysis" track.
//   tracks    rows of a group: a CPU thread, a CUDA stream, the graph launches of a stream, context-wide syncs,
//             CUPTI overhead, one analysis row, a counter. Slices that would overlap on a row go to its overflow
//             lanes: further tracks with the same identity and lane 1, 2, ...
//   slices    [start, start + dur) on one track, with an interned name, a category and the record it came from
//             (SliceSource + index), whose args timeline/args.h lists. Slices of one track nest properly (CPU
//             threads) or do not overlap at all (everything else): the lanes guarantee it.
//   flows     launching API call -> the first GPU operation of its correlation; a cudaGraphLaunch -> each node of
//             its graph (every op with a graph id), or -> the graph launch's slice when that stands for the work
//   instants  NVTX marks and CPU samples (on their thread: a sample's name is its innermost frame, its stack the
//             frames above), capture start/stop (on the process)
//   counters  samples of counter tracks (memory in use per device and kind, async pools' reservation, GPU metrics
//             per device and metric: one track each, its values reals)
// Times are ns on the run axis (ns since Run::base_realtime_ns). The model points into the Run (args are read
// from the records when an encoder asks), so the Run must outlive it.
//
// Where later additions go:
//   - a new kind of slice or instant: a SliceSource value, built in model.cpp, its args in visit_args (args.h);
//   - a new arg of an existing record (graph node args, backtraces): an ArgKey at the end of kArgKeyNames and
//     a line in visit_args (args.h); both encoders pick it up (a new value type: a method on every ArgSink);
//   - a new counter (memory per kind, utilisation): a Track of kind Counter in the right group, its samples in
//     `counters`, its unit in CounterUnit;
//   - hosts / ranks of a multi-host run: fields on Group (filled in model.cpp), used by the encoders' naming
//     (json.cpp group_pid/labels, perfetto.cpp process descriptors);
//   - a new output (HTML charts): read this model and visit_args, like json.cpp does.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model.h"

namespace gprof::report {

struct AnalysisSlice;  // analyze/analysis.h

namespace timeline {

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// Track pids of processes in a run of several hosts (Group::track_pid): above the JSON encoder's GPU pids
// (1e9 + ...), one stride of 2^22 (Linux's largest pid_max) per host; within uint32 for up to 543 hosts.
inline constexpr int64_t kHostPidBase = 2'000'000'000;
inline constexpr int64_t kHostPidStride = int64_t(1) << 22;

enum class GroupKind : uint8_t { Process, GpuDevice, Analysis };

struct Group {
    GroupKind kind = GroupKind::Process;
    uint32_t process = kNone;  // index into Run::processes (kNone for Analysis)
    int64_t pid = 0;           // the OS pid of that process (0 for Analysis)
    // Process: the pid the encoders give its process track. The OS pid on a single host; in a run of several hosts,
    // where pids repeat, kHostPidBase + host index * kHostPidStride + pid (host index: by host key, in Run order).
    int64_t track_pid = 0;
    std::string label;         // Process: "rank 3 @ node07 (pid 7)" (model/identity.h); "" on one host without ranks
    uint32_t device = 0;       // GpuDevice: the device id
    uint32_t device_rank = 0;  // GpuDevice: position among the process's devices (by id)
    uint32_t sm_count = 0;     // GpuDevice: from the Device record; 0 = unknown
    std::string name;          // "app (pid 4242)", "GPU 0: NVIDIA H100", "analysis"
    std::string process_name;  // Process: the executable's base name ("app")
    // Contiguous ranges of this group's events in TimelineModel::slices / instants / counters.
    uint32_t slices_begin = 0, slices_end = 0;
    uint32_t instants_begin = 0, instants_end = 0;
    uint32_t counters_begin = 0, counters_end = 0;
};

enum class TrackKind : uint8_t { CpuThread, Overhead, GpuStream, GraphLaunches, ContextSync, Analysis, Counter };

// Bytes and None: whole numbers (CounterSample::value). The GPU metrics' units (model/gpu_metric_summary.h): reals
// (CounterSample::real()), a share of peak in percent or a rate a second.
enum class CounterUnit : uint8_t { None, Bytes, Percent, BytesPerSecond, PerSecond };
inline bool counter_is_real(CounterUnit u) { return u >= CounterUnit::Percent; }

struct Track {
    TrackKind kind = TrackKind::CpuThread;
    uint32_t group = 0;
    uint32_t lane = 0;         // 0 = the row itself; N = its Nth overflow row
    uint64_t tid = 0;          // CpuThread: the OS thread id
    uint32_t stream = 0;       // GpuStream / GraphLaunches: the CUDA stream id
    uint32_t row = 0;          // Analysis: the row's position among the analysis rows (by name)
    std::string name;          // display name: "main" (a thread: its own name, exactly), "thread 101" (unnamed), "stream 7 (overlap 1)", "Device memory in use"
    std::string thread_name;   // CpuThread: the OS thread's own name ("" when unnamed)
    CounterUnit unit = CounterUnit::None;  // Counter
};

// What a slice or instant was made from; `record` indexes the matching vector of its process (Analysis: into
// TimelineModel::analysis_args; Capture and Mark: ProcessTrace::captures / nvtx).
enum class SliceSource : uint8_t {
    Api, Nvtx, Kernel, Memcpy, Memset, Sync, GraphLaunch, Overhead, Analysis, Mark, Capture,
    OsRuntime,  // a blocking C library call (ProcessTrace::osrt_calls), a slice on its thread
    CpuSample,  // a CPU sample (ProcessTrace::cpu_samples), an instant on its thread
};

// Categories, one name each (kCategoryNames): Chrome "cat", Perfetto event category.
enum class Category : uint8_t {
    CudaRuntime, CudaDriver, CudaSync, UserAnnotation, Overhead, Kernel, GpuMemcpy, GpuMemset, CudaGraph, Analysis,
    Capture, OsRuntime, CpuSample, Count
};
inline constexpr std::string_view kCategoryNames[] = {
    "cuda_runtime", "cuda_driver", "cuda_sync", "user_annotation", "overhead", "kernel", "gpu_memcpy", "gpu_memset",
    "cuda_graph", "analysis", "capture", "os_runtime", "cpu_sample"};
static_assert(std::size(kCategoryNames) == static_cast<size_t>(Category::Count));
inline std::string_view category_name(Category c) { return kCategoryNames[static_cast<size_t>(c)]; }

struct Slice {
    int64_t start = 0, dur = 0;  // run axis, ns; dur >= 0
    uint32_t track = 0;
    uint32_t name = 0;           // index into TimelineModel::names
    uint32_t record = 0;
    uint32_t flow = kNone;       // index into TimelineModel::flows: this slice starts or ends that flow (a
                                 // slice that starts several: the first, the others follow Flow::next_from)
    SliceSource source = SliceSource::Api;
    Category category = Category::CudaRuntime;
    uint32_t stack = kNone;      // index into TimelineModel::stacks: the call site of its API call
};

// A call site as the timeline shows it (model/resolved_call_sites.h), interned: one per distinct stack of a process.
struct StackText {
    std::string site;  // the user's frame: "train.py:12", "/src/app.cu:42"
    std::string text;  // at most kTimelineStackFrames frames, innermost first, one per line
};
inline constexpr size_t kTimelineStackFrames = 12;

struct Flow {
    uint64_t id = 0;             // unique in the file: process index << 32 | correlation for a correlation's first
                                 // flow, kExtraFlowIds + n for its further ones (graph nodes)
    uint32_t from = 0, to = 0;   // slice indexes: the API call, the GPU operation
    uint32_t next_from = kNone;  // the next flow leaving the same `from` slice
};
inline constexpr uint64_t kExtraFlowIds = 1ull << 48;  // above every process << 32 | correlation; below 2^53

// Visits the flows a slice takes part in: those it starts (f.from == slice) or the one it ends.
template <class F> void for_each_flow(const std::vector<Flow>& flows, uint32_t first, uint32_t slice, F&& f) {
    for (uint32_t i = first; i != kNone; i = flows[i].from == slice ? flows[i].next_from : kNone) f(flows[i]);
}

enum class InstantScope : uint8_t { Thread, Process };

struct Instant {
    int64_t ts = 0;
    uint32_t track = kNone;      // Thread scope: the track; Process scope: kNone (the group itself)
    uint32_t group = 0;
    uint32_t name = 0;
    uint32_t record = 0;
    SliceSource source = SliceSource::Mark;
    Category category = Category::UserAnnotation;
    InstantScope scope = InstantScope::Thread;
    uint32_t stack = kNone;      // index into TimelineModel::stacks: a CPU sample's frames
};

struct CounterSample {
    int64_t ts = 0;
    int64_t value = 0;  // a real counter's (counter_is_real) value holds the double's bits: real() reads it
    uint32_t track = 0;

    static CounterSample of_real(int64_t ts, double v, uint32_t track) {
        CounterSample c{ts, 0, track};
        std::memcpy(&c.value, &v, sizeof v);
        return c;
    }
    double real() const {
        double v;
        std::memcpy(&v, &value, sizeof v);
        return v;
    }
};

// A device's properties as the trace recorded them (Chrome's deviceProperties).
struct DeviceInfo {
    int64_t pid = 0;
    const trace::Device* device = nullptr;
    std::string name;
};

// What building the model found: each is a warning line when non-zero (timeline.cpp).
struct ModelCounts {
    uint64_t overflow_slices = 0;    // slices moved to an overflow lane because they overlapped on their row
    uint64_t unmatched_gpu_ops = 0;  // GPU ops with no launching API call in the trace: drawn without a flow
    uint64_t zero_timestamps = 0;    // records with an unknown (0) timestamp: cannot be placed
};

struct TimelineModel {
    const Run* run = nullptr;
    int64_t base_realtime_ns = 0;    // the run axis' zero, CLOCK_REALTIME ns
    std::vector<DeviceInfo> devices;
    std::vector<Group> groups;       // processes in Run order, each followed by its GPU devices; analysis last
    std::vector<Track> tracks;       // by group; within a group in creation order
    std::vector<std::string> names;  // interned slice, instant and counter names
    std::vector<Slice> slices;       // by group; within a group in the order encoders should write them
    std::vector<Flow> flows;
    std::vector<Instant> instants;   // by group
    std::vector<CounterSample> counters;  // by group, in time order per track
    std::vector<nlohmann::json> analysis_args;  // Analysis slices' args (objects), by Slice::record
    std::vector<StackText> stacks;   // by Slice::stack and Instant::stack
    ModelCounts counts;
    std::vector<std::string> warnings;  // e.g. "analysis track left out: ..."

    const std::string& name(uint32_t id) const { return names[id]; }
    const ProcessTrace& process_of(const Group& g) const { return run->processes[g.process]; }
    const Group& group_of(const Slice& s) const { return groups[tracks[s.track].group]; }
};

struct ModelOptions {
    bool analysis_track = true;  // an "analysis" group with the verdict, idle gaps and findings
    // The analysis slices when the caller has analysed the run already; null = analyse here (default options).
    const std::vector<AnalysisSlice>* analysis_slices = nullptr;
    // Draw every helper process (model/model.h helper_processes) as a process of its own; otherwise they are
    // folded into one empty group named like the summary's line ("35 helper processes ...: ptxas ×20, ...").
    bool all_processes = false;
    bool cpu_samples = true;     // CPU samples as instants on their threads (gprof-report timeline --no-samples)
};

TimelineModel build_timeline_model(const Run& run, const ModelOptions& options = {});

}  // namespace timeline
}  // namespace gprof::report
