// The in-memory run model: every record of one or more traces, per process, with names resolved and
// correlation lookups. Reports, the timeline, `diff` and `analyze` all build on this.
//
// Stability: fields are only ever appended. Records are kept as the plain structs of gprof/trace/records.h (so a
// new record field shows up here with no change); strings stay interned per process and are resolved with
// ProcessTrace::str(). Timestamps stay on the process's own trace clock; ProcessTrace::to_run_ns() puts them on
// the run's common axis (ns since the earliest session start of all processes), which is what reports print.
//
// Loading never throws for damaged data: a trace that cannot be read at all becomes a Run::warnings line, and
// damage inside a trace becomes ProcessTrace::warnings lines (from TraceReader, plus the model's own notes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/gpu_metrics.h"
#include "model/saturate.h"

#include "gprof/trace/header.h"
#include "gprof/trace/reader.h"
#include "gprof/trace/records.h"

namespace gprof::report {

// Whether a Dropped record counts records that were lost. DropSource::NvtxOverflow counts NVTX bookkeeping: ranges
// still open when a thread or the process ended (written all the same, with end 0: "never ended") and pops or ends
// with no push or start. Neither is lost data, so neither is called dropped.
inline bool drop_loses_records(trace::DropSource source) { return source != trace::DropSource::NvtxOverflow; }

// ----- filters -------------------------------------------------------------------------------------------

// What --process / --device / --time-range / --kernel-filter select. An empty optional selects everything.
// Time bounds are ns on the run axis (see ProcessTrace::to_run_ns); a record is kept when its interval overlaps
// [time_begin, time_end). Device filters apply to GPU records (kernel, memcpy, memset, memory, memory pool, graph
// launch); the kernel regex applies to kernel names (searched, ECMAScript) and removes only kernels.
//
// Independently of the selection, the driver calls the CUDA runtime makes itself (cuKernelGetName before every
// launch, ...: gprof/trace/runtime_driver_calls.h) are left out, and counted, unless nested_driver_calls
// (--cuda-nested-driver-calls) or the trace says they were kept on request (kFeatureNestedDriverCalls): reports
// show what the program called. Traces of 1.1 collectors hold none by default; 1.0 traces hold them all.
struct Filter {
    std::vector<int64_t> pids;
    std::vector<uint32_t> devices;
    std::optional<uint64_t> time_begin, time_end;
    std::string kernel_regex;
    bool nested_driver_calls = false;
    // Not a selection: --clock-offset HOST=NS, ns added to every timestamp of the traces recorded on HOST (its
    // header's host name) to correct a host whose clock is off (docs/distributed.md). Applied before time ranges.
    std::map<std::string, int64_t> clock_offsets;
    // The time range was written in bare numbers (ns): when it selects nothing, the user is told (issue 30).
    bool time_range_bare_ns = false;

    bool empty() const {
        return pids.empty() && devices.empty() && !time_begin && !time_end && kernel_regex.empty();
    }
};

// gprof-report's switch for Filter::nested_driver_calls, spelled like gprof-run's (every subcommand that reads API
// calls offers it).
inline constexpr const char* kNestedDriverCallsFlag = "--cuda-nested-driver-calls";
inline constexpr const char* kNestedDriverCallsHelp =
    "Show the driver calls the CUDA runtime makes itself (cuKernelGetName before every launch, ...); left out of "
    "API tables by default, like gprof-run leaves them out of new traces";

// Applies a Filter to the records of one trace (stream_run, and aggregate_run's decoders: one per thread, as
// keep() caches kernel-name matches per string id). `names` gives a string id's text, for the kernel regex.
class RecordFilter {
public:
    RecordFilter(const Filter& f, std::function<std::string_view(trace::StringId)> names, int64_t clock_offset_ns,
                 int64_t run_base_realtime_ns);
    ~RecordFilter();
    bool keep(const trace::Record& r);

private:
    static bool device_of(const trace::Record& r, uint32_t& dev);
    bool kernel_matches(trace::StringId id);

    const Filter& f_;
    std::function<std::string_view(trace::StringId)> names_;
    int64_t offset_, base_;
    std::unique_ptr<std::regex> re_;
    std::vector<int8_t> cache_;                           // string id -> -1 unknown, 0 no, 1 matches
    std::unordered_map<trace::StringId, int8_t> sparse_cache_;  // ids from 2^16 (bounded by what the file defines)
};

// Parses "A:B" into time_begin/time_end: either side may be empty; each is a number with an optional unit
// (ns, us, ms, s; a bare number is ns, like the JSON output), on the run axis. Throws std::invalid_argument with
// a message for the user.
void parse_time_range(std::string_view text, Filter& filter);

// Parses "HOST=NS" (NS signed, with an optional unit ns/us/ms/s) into filter.clock_offsets. Throws
// std::invalid_argument with a message for the user.
void parse_clock_offset(std::string_view text, Filter& filter);
inline constexpr const char* kClockOffsetFlag = "--clock-offset";
inline constexpr const char* kClockOffsetHelp =
    "HOST=NS: add NS (signed; units ns/us/ms/s) to the clock of the traces recorded on HOST, to correct a host whose "
    "clock is off (repeatable; hosts are assumed in sync by NTP/PTP otherwise: docs/distributed.md)";

// ----- one process -----------------------------------------------------------------------------------------

enum class GpuOpKind : uint8_t { Kernel = 0, Memcpy = 1, Memset = 2, Sync = 3, GraphLaunch = 4 };

// A GPU operation named by kind and index into the matching vector of its ProcessTrace.
struct GpuOpRef {
    GpuOpKind kind;
    uint32_t index;
};

// The stacks of one API call: a CallSite record (1.4), or a Backtrace (format <= 1.3) whose frames the loader
// interned as a stack of its own (ids from kLegacyStackIdBase down), so every consumer reads stacks by id and
// symbolises each distinct stack once (model/resolved_call_sites.h).
struct BacktraceFrames {
    uint64_t tid = 0;
    uint32_t correlation = 0;
    uint32_t stack = 0;     // a key of ProcessTrace::stacks; 0 none (or a stack the trace never defined)
    uint32_t py_stack = 0;  // CallSite.py_stack: a key of ProcessTrace::py_stacks; 0 none
};
inline constexpr uint32_t kLegacyStackIdBase = 0xFFFFFFFFu;

// A Python call stack (PyStack record): PyFrame ids, innermost first.
using PyStackFrames = std::vector<uint32_t>;

// The model's storage of the record kinds (GPROF_TRACE_RECORD_KINDS, gprof/trace/records.h) that it keeps as they
// come, in file order: X(Kind, member), a std::vector<trace::Kind> member of ProcessTrace each. The loader files a
// record of these kinds by this list; the other kinds (call stacks, End, Role, GPU metrics) have storage of their
// own below. A kind in neither does not compile (the loader's trace::visit), so a new kind is one line here or one
// handler there.
//   execs: its own exec (spawned = 0, last), children it could not trace (spawned = 1)
#define GPROF_MODEL_RECORD_VECTORS(X)                                                                          \
    X(Thread, threads)                                                                                         \
    X(Device, devices)                                                                                         \
    X(CudaInfo, cuda_info)                                                                                     \
    X(ApiCall, api_calls)                                                                                      \
    X(Kernel, kernels)                                                                                         \
    X(Memcpy, memcpys)                                                                                         \
    X(Memset, memsets)                                                                                         \
    X(Sync, syncs)                                                                                             \
    X(Nvtx, nvtx)                                                                                              \
    X(Memory, memory)                                                                                          \
    X(MemoryPool, memory_pools)                                                                                \
    X(Overhead, overheads)                                                                                     \
    X(GraphLaunch, graph_launches)                                                                             \
    X(ExternalCorrelation, external_correlations)                                                              \
    X(Dropped, dropped)                                                                                        \
    X(Capture, captures)                                                                                       \
    X(Status, statuses)                                                                                        \
    X(Module, modules)                                                                                         \
    X(Exec, execs)                                                                                             \
    X(CpuSample, cpu_samples)                                                                                  \
    X(OsRuntimeCall, osrt_calls)

struct ProcessTrace {
    std::filesystem::path path;
    trace::TraceHeader header;
    std::vector<std::string> strings;  // index = StringId; [0] = ""

#define GPROF_MODEL_RECORD_VECTOR(Kind, member) std::vector<trace::Kind> member;
    GPROF_MODEL_RECORD_VECTORS(GPROF_MODEL_RECORD_VECTOR)
#undef GPROF_MODEL_RECORD_VECTOR
    // Call sites (Backtrace before 1.4, CallSite since), and the stacks they name.
    std::vector<BacktraceFrames> backtraces;
    std::unordered_map<uint32_t, std::vector<uint64_t>> stacks;  // Stack records by id (1.4)
    std::unordered_map<uint32_t, trace::PyFrame> py_frames;      // PyFrame records by id (1.4)
    std::unordered_map<uint32_t, PyStackFrames> py_stacks;       // PyStack records by id (1.4)
    GpuMetrics gpu_metrics;          // GpuMetricSet and GpuMetricSample records (1.7), per device and columnar
    std::optional<trace::Role> role; // its rank in a distributed job, when its launcher said
    std::optional<trace::End> end;  // absent: the process did not finish normally

    trace::ReadStats read_stats;
    std::vector<std::string> warnings;  // damage found while reading, one line each
    uint64_t filtered_out = 0;          // records removed by the Filter
    uint64_t hidden_driver_calls = 0;   // of those: the CUDA runtime's own driver calls (see Filter)

    // The text of an interned string ("<string #N>" for an unknown id).
    std::string_view str(trace::StringId id) const;
    std::string_view thread_name(uint64_t tid) const;  // "" when unnamed
    int64_t pid() const { return header.pid; }

    // Run axis: ns since Run::base_realtime_ns. Processes are aligned through their ClockReference.
    int64_t clock_offset_ns = 0;  // add to a trace timestamp to get CLOCK_REALTIME ns
    int64_t run_base_realtime_ns = 0;
    int64_t to_run_ns(trace::Timestamp ts) const {
        return run_axis_ns(ts, clock_offset_ns, run_base_realtime_ns);
    }

    // Earliest start / latest end of any timed record on the trace clock (0/0 when none).
    trace::Timestamp first_ns = 0, last_ns = 0;
    // NVTX records the loader left out (LoadOptions::keep_nvtx_named): how many, and the span they covered (earliest
    // start, latest end; 0/0 when none), which first_ns/last_ns still include.
    uint64_t nvtx_left_out = 0;
    trace::Timestamp nvtx_left_out_first = 0, nvtx_left_out_last = 0;

    // Records the collector could not record or write (Dropped.count of every source that loses data). NVTX ranges
    // still open at the end are not among them: they are in the trace with end 0 ("never ended").
    uint64_t dropped_total() const;

    // A graph launch stands for GPU work when the trace holds no node of it (graph-level tracing,
    // --cuda-graph-trace=graph, and every trace of a collector that enabled CUPTI's GRAPH_TRACE): reports then
    // count it like a kernel. With its nodes in the trace (kernels, copies, memsets sharing its correlation id
    // and carrying a graph id) the nodes are the work and the launch only groups them.
    bool graph_launch_is_gpu_work(size_t index) const {
        return index < graph_launch_is_work_.size() && graph_launch_is_work_[index];
    }

    // Correlation lookups (correlation ids are per process). nullptr / empty when there is no match.
    const trace::ApiCall* api_for_correlation(uint32_t correlation) const;
    std::vector<GpuOpRef> gpu_ops_for_correlation(uint32_t correlation) const;
    const BacktraceFrames* backtrace_for_correlation(uint32_t correlation) const;
    // A stack's return addresses, innermost first (empty for 0 or an id the trace never defined).
    const std::vector<uint64_t>& stack_frames(uint32_t stack) const;

    // Built by the loader; call after changing the record vectors yourself.
    void build_indexes();

private:
    std::vector<std::pair<uint32_t, uint32_t>> api_by_corr_;    // (correlation, index), sorted
    std::vector<std::pair<uint32_t, GpuOpRef>> ops_by_corr_;    // (correlation, op), sorted
    std::vector<std::pair<uint32_t, uint32_t>> bt_by_corr_;     // (correlation, index), sorted
    std::vector<bool> graph_launch_is_work_;                     // by graph_launches index
};

// ----- a run -----------------------------------------------------------------------------------------------

struct Run {
    std::vector<ProcessTrace> processes;     // sorted by (host, boot id, pid): model/identity.h
    std::vector<std::filesystem::path> traces;  // every trace file found, readable or not
    std::vector<std::string> warnings;       // files that could not be read at all, one line each
    int64_t base_realtime_ns = 0;            // run axis zero: earliest session start (header clock)

    // Every warning of the run, each prefixed with its trace file name.
    std::vector<std::string> all_warnings() const;
};

// The helpers of a loaded run, by Run::processes index: the same rule as the summary's (model/aggregate.h
// helper_processes), on the whole model, so that the timeline folds what the summary folds (issue 30).
std::vector<bool> helper_processes(const Run& run);
// A process's short name for the helpers line: argv[0]'s (else the executable's) last path component.
std::string process_short_name(const trace::TraceHeader& header);
// "35 helper processes with no GPU or NVTX activity: ptxas ×20, nvlink ×10, sh ×5" (most frequent first).
std::string helpers_line(const std::map<std::string, size_t>& folded);

// The *.gprof files of a run directory, sorted by name. Empty when there are none.
std::vector<std::filesystem::path> find_traces(const std::filesystem::path& dir);

// Expands inputs (run directories and/or trace files) to trace paths. A directory without traces of its own
// stands for the directories below it that hold traces, up to three levels down (the parent of one run directory
// per rank, or of one directory per node holding them).
// Throws std::runtime_error for a path that does not exist or a directory without traces.
std::vector<std::filesystem::path> expand_inputs(const std::vector<std::filesystem::path>& inputs);

// How many records of the kinds a run holds most of each trace will surface, when a read of the same traces with the
// same filter counted them already (sized_from below): the model's vectors get their room at once instead of
// doubling (each doubling copied the records so far and held both copies: an NVTX-heavy run's 9.6 M ranges peaked at
// 1.24 GB instead of 0.69; docs/performance.md, issue 33).
struct ExpectedRecords {
    std::filesystem::path trace;
    uint64_t api_calls = 0;
    uint64_t nvtx = 0;  // ranges and marks
};

struct LoadOptions {
    Filter filter;
    bool keep_backtraces = true;
    std::vector<ExpectedRecords> expected;  // a room hint only: a count too small or too large changes nothing else
    // When set, an NVTX record is kept only when this says yes to its name (asked once per name of a trace; a name
    // the trace has not defined when the record is read is kept): a reader that needs a few ranges of an NVTX-heavy
    // run (the summary's Analysis: analyze/analysis.h) need not hold them all. Left out, a record still counts in
    // the process's span (ProcessTrace::nvtx_left_out).
    std::function<bool(std::string_view name)> keep_nvtx_named;
};

// Loads every input. Never throws for damaged or unreadable traces (they become warnings); throws
// std::runtime_error only when an input path does not exist.
Run load_run(const std::vector<std::filesystem::path>& inputs, const LoadOptions& options = {});

// ----- streaming access, for reports that must not hold the whole run (the 10 M-record summary) --------------

// The readable traces of a run (those the pid filter selects), opened, each with its offset to the run's realtime
// axis (its own clock anchor plus --clock-offset for its host), and the axis's zero: what stream_run and
// aggregate_run read. Unreadable files go to `unreadable` (path, message).
struct OpenedTrace {
    std::unique_ptr<trace::TraceReader> reader;
    int64_t clock_offset_ns = 0;
};
struct OpenedRun {
    std::vector<OpenedTrace> traces;
    int64_t run_base_realtime_ns = 0;
};
OpenedRun open_traces(const std::vector<std::filesystem::path>& traces, const Filter& filter,
                      const std::function<void(const std::filesystem::path&, const std::string&)>& unreadable);

// What a streaming visitor knows about the trace being read.
struct StreamContext {
    const trace::TraceReader* reader = nullptr;  // header(), string(), stats(), warnings()
    int64_t clock_offset_ns = 0;
    int64_t run_base_realtime_ns = 0;
    uint64_t hidden_driver_calls = 0;  // the runtime's own driver calls left out (see Filter); final at `end`
    int64_t to_run_ns(trace::Timestamp ts) const {
        return run_axis_ns(ts, clock_offset_ns, run_base_realtime_ns);
    }
};

// Streams the records of every trace that pass the filter (String records never surface). `begin` is called once
// per readable trace before its records, `end` after them (the reader's warnings are then complete).
// Unreadable traces are reported through `unreadable` (path, message). Throws only for missing input paths.
struct StreamCallbacks {
    std::function<void(const StreamContext&)> begin;
    std::function<void(const StreamContext&, const trace::Record&)> record;
    std::function<void(const StreamContext&)> end;
    std::function<void(const std::filesystem::path&, const std::string&)> unreadable;
};
void stream_run(const std::vector<std::filesystem::path>& traces, const Filter& filter,
                const StreamCallbacks& callbacks);

// Progress of long reads, for a terminal (output/progress.h shows rate and time left). A read (stream_run,
// load_run, aggregate_run) reports at least every 2^20 records and about every 4 MB, then once with finished = true
// when every trace is read. Process-wide; empty by default (library users and finish_run print nothing).
struct Progress {
    std::filesystem::path trace;                // the trace being read
    uint64_t bytes_done = 0, bytes_total = 0;  // of every trace of this read (file sizes)
    uint64_t records = 0;                      // records read so far, every trace
    bool finished = false;
};
using ProgressHook = std::function<void(const Progress&)>;
const ProgressHook& progress_hook();
void set_progress_hook(ProgressHook hook);

// The record's [start, end) on its trace clock (end == start for instants); false for untimed records.
bool record_interval(const trace::Record& r, trace::Timestamp& start, trace::Timestamp& end);

// Short warning prefix: the file name of a trace.
std::string trace_label(const std::filesystem::path& path);

}  // namespace gprof::report
