// Streaming aggregation for the summary reports (summary, *_sum): one pass over the traces, keeping per key only
// a Distribution of the durations (exact while small, a relative-error histogram once large: model/distribution.h)
// and, for the NVTX block, a compact copy of API calls and GPU ops of the trace being read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/identity.h"
#include "model/distribution.h"
#include "model/gpu_metric_summary.h"
#include "model/memory.h"
#include "model/model.h"

namespace gprof::report {

// Graph: a graph launch that stands for its GPU work (ProcessTrace::graph_launch_is_gpu_work), one key per graph.
enum class KeyCategory { Api, Kernel, Memcpy, Memset, Nvtx, Graph };

// One row of a summary: a name in a category, with the statistics of every duration seen and (memory ops) of
// every size. The values themselves are kept only while aggregate_run reads (compactly, outside this struct).
struct KeyData {
    std::string name;          // kernel (mangled) name, API name, "[CUDA memcpy HtoD]", "[CUDA memset]", range,
                               // "[CUDA graph 5]"
    KeyCategory category = KeyCategory::Api;
    std::string memop;         // memory ops: nsys operation name ("[CUDA memcpy Host-to-Device]"); graphs: the name
    std::string nvtx_style;    // NVTX: "PushPop" / "StartEnd"
    Stats time_stats, size_stats;  // filled by aggregate_run once every trace is read
    Stats time() const { return time_stats; }
    Stats size() const { return size_stats; }
};

struct DeviceInfo {
    int64_t pid = 0;
    HostKey host;  // the host of that process (pids and device ids repeat across hosts)
    trace::Device device;
    std::string name;
    std::string uuid;
};

// GPU work of one process on one device: operations (kernels, memcpys, memsets, graph launches that stand for their
// work) and their summed duration.
struct DeviceWork {
    uint64_t ops = 0;
    uint64_t busy_ns = 0;
};

struct ProcessInfo {
    std::filesystem::path path;
    trace::TraceHeader header;
    int64_t first_ns = 0, last_ns = 0;  // run axis; 0/0 when no timed record
    uint64_t records = 0;               // records surfaced (after filters)
    uint64_t dropped = 0;
    bool complete = false;              // End record present
    uint32_t ended_by_signal = 0;       // End.signal: the trace was finished as this signal ended the process
    std::string ended_by_exec;          // "exec'd into /sbin/ldconfig.real, a statically linked program that ..."
    std::vector<std::string> untraced_children;  // "pid 1234: /sbin/ldconfig.real -p (statically linked, ...)"
    // Every program this process ran or started that could not be traced: {path, why} (for the helpers line).
    std::vector<std::pair<std::string, std::string>> untraced_programs;
    std::string role;                   // Role.variables: "RANK=1 LOCAL_RANK=1 WORLD_SIZE=2" ("" when not in a job)
    int64_t rank = -1;                  // Role.rank; -1 when not known
    uint64_t api_calls = 0;             // CUDA API calls recorded
    uint64_t nvtx_events = 0;           // NVTX ranges and marks recorded
    std::map<uint32_t, DeviceWork> gpu_work;  // device id -> its GPU work
    trace::ReadStats read_stats;        // damage counters (truncated / corrupt bytes)
    std::vector<std::string> status_lines;  // "Cupti warning: CUPTI unavailable: ..." (level >= Warning first)
    std::vector<std::string> thread_names;  // "tid name"
    uint64_t hidden_driver_calls = 0;       // the CUDA runtime's own driver calls left out (model.h, Filter)
    // Memory (model/memory.h); its times are on the trace clock: add run_offset_ns for the run axis.
    std::vector<BudgetUsage> memory;
    std::vector<DeviceMemoryPeak> device_memory;
    int64_t run_offset_ns = 0;

    // No CUDA call, no GPU work and no NVTX event: a compiler, a shell, a worker that only did CPU work.
    bool quiet() const { return api_calls == 0 && nvtx_events == 0 && gpu_work.empty(); }
};

// A helper of the run: a quiet process (ProcessInfo::quiet) that another traced process started, whose trace
// ended normally and holds nothing to warn about. The brief summary folds helpers into one line ("35 helper
// processes with no GPU or NVTX activity: ptxas x20, ..."); --summary full and JSON list them one by one. The
// program gprof-run started is never a helper, even when it did nothing on the GPU.
std::vector<bool> helper_processes(const std::vector<ProcessInfo>& processes);
// Whether a process has something to say: its trace cut short, ended by a signal, records dropped or damaged, or a
// warning from the collector. It is then never folded into a line with others.
bool process_has_news(const ProcessInfo& p);
// What a process is called in that line: the base name of argv[0] (of the executable when argv is empty).
std::string process_short_name(const ProcessInfo& p);

// NVTX block of the nvprof summary: a range with what happened inside it (on its thread).
struct NvtxRangeSummary {
    int64_t pid = 0;
    ProcessKey process;  // which process (pids repeat across hosts and pid namespaces)
    uint64_t tid = 0;
    std::string thread_name;
    std::string domain;  // "" = default domain
    std::string name;
    Distribution durations;                         // the range's own instances
    std::map<std::string, Distribution> gpu;        // GPU op key -> durations inside the range
    std::map<std::string, Distribution> api;        // API name -> durations inside the range
};

struct Aggregate {
    std::vector<ProcessInfo> processes;
    std::vector<DeviceInfo> devices;
    std::vector<KeyData> keys;  // every key of every category, unsorted
    std::vector<NvtxRangeSummary> nvtx_ranges;
    std::vector<GpuMetricsSummary> gpu_metrics;  // per process and device sampled (GpuMetricSet), in process order
    std::vector<std::string> warnings;  // unreadable files, damage, dropped records: what the recording lost
    std::vector<std::string> notes;     // facts about the program worth a line (NVTX ranges that never ended)
    int64_t first_ns = 0, last_ns = 0;  // run axis
    uint64_t records = 0, dropped = 0;
    uint64_t hidden_driver_calls = 0;   // sum of ProcessInfo::hidden_driver_calls
    uint64_t unmatched_gpu_ops = 0;     // GPU ops without a launching API call in the trace
    size_t unreadable_traces = 0;       // files refused outright (not a trace, newer major version, ...)
    // Traces that were damaged (cut or corrupt bytes) or could not be read: reports still show what is intact.
    size_t damaged_traces() const;

    std::vector<const KeyData*> of(KeyCategory c) const;  // sorted by total time, descending; ties by name
};

struct AggregateOptions {
    Filter filter;
    bool nvtx_detail = true;  // keep what the NVTX block needs (API calls and GPU ops per range)
    // Threads that decode and aggregate chunks (the result is the same for any number). 0: GPROF_REPORT_THREADS,
    // else the machine's cores, at most 4. Traces under 4 MB and --kernel-filter read on one thread.
    unsigned threads = 0;
};

// One pass over the traces, chunks decoded on several threads. Never throws for damaged traces (they become
// warnings).
Aggregate aggregate_run(const std::vector<std::filesystem::path>& traces, const AggregateOptions& options);
// What `agg` counted per trace, as the room of a model loaded from the same traces with the same filter (LoadOptions).
std::vector<ExpectedRecords> expected_records(const Aggregate& agg);

// nvprof's name of a memory op row: "[CUDA memcpy HtoD]", "[CUDA memset]".
std::string memop_row_name(trace::MemcpyKind kind);
// nsys's operation name: "[CUDA memcpy Host-to-Device]", "[CUDA memset]".
std::string memop_nsys_name(trace::MemcpyKind kind);
// A graph launch's row: "[CUDA graph 5]".
std::string graph_row_name(uint32_t graph_id);

}  // namespace gprof::report
