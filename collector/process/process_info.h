// Facts about the process, gathered inside the target without exceptions: the header's identity fields, the
// trace file, loaded modules (with GNU build-ids) and thread names.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gprof/trace/writer.h"
#include "pipeline/pipeline.h"

namespace gprof::collector {

// Identity strings for the trace header, kept alive as long as the HeaderInfo that points into them.
struct ProcessIdentity {
    int64_t pid = 0;
    int64_t ppid = 0;
    std::string hostname;
    std::string boot_id;     // /proc/sys/kernel/random/boot_id, else "machine:" + /etc/machine-id (trace::HeaderInfo)
    uint64_t pid_ns = 0;     // the inode of /proc/self/ns/pid: the pid namespace `pid` is numbered in (0: unknown)
    std::string executable;  // /proc/self/exe
    std::vector<std::string> args;  // /proc/self/cmdline
    std::vector<const char*> argv;

    void gather();
    std::string exe_basename() const;
};

// The process's rank in a distributed job, from its launcher's environment variables (the Role record; see
// trace::Role for the variables). Nothing else of the environment is read: it carries secrets.
struct ProcessRole {
    int64_t rank = -1;
    int64_t local_rank = -1;
    int64_t world_size = -1;
    std::string variables;  // "RANK=1 LOCAL_RANK=1 WORLD_SIZE=2", as found
    std::string job;        // SLURM_JOB_ID ("" when unset)

    bool known() const { return !variables.empty(); }
    static ProcessRole from_environment();
};

// Creates <dir>/<base>.<pid>.gprof with O_WRONLY|O_CREAT|O_EXCL|O_APPEND|O_NOFOLLOW|O_CLOEXEC, mode 0600, its
// descriptor placed out of the program's way (base/descriptors.h). If the name is taken: <base>.<pid>.1.gprof, .2,
// ... (the .gprof extension stays last: reports look for it). Returns the fd (the absolute path in `path`) or -1 with
// errno set.
int create_trace_file(const std::string& dir, const std::string& base, int64_t pid, std::string& path);

// A small file read whole (at most `limit` bytes; "" when unreadable), its descriptor in the table of ours while open.
std::string read_small_file(const char* path, size_t limit = 1 << 20);

// Removes this pid's traces in `dir` that hold only their header: left by this very process before it exec'ed
// (a forked child starts its trace at once, and an exec ends that image before its first flush). Anything
// with records is kept. Called when a new process image starts its session.
void remove_header_only_traces(const std::string& dir, int64_t pid);

// Writes Module records for the objects loaded now that were not written before (writer thread).
class ModuleScanner {
public:
    void scan(trace::TraceWriter& writer);
    static std::vector<ModuleInfo> loaded_modules();

private:
    std::unordered_map<uint64_t, std::string> seen_;  // base -> path
};

// Writes Thread records (writer thread). NVTX names (nvtxNameOsThread) win over the thread's own name (its comm).
// A thread's comm is read when it first uses NVTX (from_comm), at the process's end (scan_all), and, for a thread
// that used NVTX, on the thread as it ends (from_exit, no descriptor): a worker that names itself and ends before the
// process keeps its name (issue 30). The writer does not scan /proc while the program runs: every open() there takes
// the program's lowest free number for a moment, and a program dup2()ing over its numbers got EBUSY (catalogue
// dup2-over, 2 runs in 10 with a scan every period).
class ThreadNamer {
public:
    void scan_all(trace::TraceWriter& writer);           // every thread in /proc/self/task
    void from_comm(trace::TraceWriter& writer, uint64_t tid);
    void from_nvtx(trace::TraceWriter& writer, uint64_t tid, const std::string& name);
    void from_exit(trace::TraceWriter& writer, uint64_t tid, const std::string& name);

private:
    void write(trace::TraceWriter& writer, uint64_t tid, const std::string& name);
    std::unordered_map<uint64_t, std::string> written_;
    std::unordered_map<uint64_t, bool> nvtx_named_;
};

// Heuristic for "this process meant to use CUDA": libcudart/libcuda loaded, or the executable carries device
// code (an .nv_fatbin section, as every nvcc-built binary with kernels has).
bool looks_like_cuda_program();

// Why a process that looks like a CUDA program recorded no CUDA activity although the driver never called
// InitializeInjection, judged at its end. `warn` only when the process evidently tried CUDA:
//   libcuda loaded and initialised (cuCtxGetCurrent answers): without our injection (CUDA_INJECTION64_PATH gone);
//   libcuda loaded, in an error state: cuInit failed, named;
//   libcuda not loaded and no NVIDIA driver on the machine: no CUDA program can run here.
// A process that loaded libcuda but never initialised it, or loaded only libcudart on a machine that has a
// driver, made no CUDA call: an Info line at most.
struct MissingCuda {
    bool warn = false;
    std::string text;  // empty: nothing to say
};
MissingCuda explain_missing_cuda();
// The NVIDIA kernel driver is present (/proc/driver/nvidia/version, /dev/nvidiactl, or WSL's /dev/dxg).
bool nvidia_driver_on_machine();
// The libcuda.so.1 already in the process (dlopen RTLD_NOLOAD: never loads it), or null when there is none. The
// collector never brings the driver in itself; the handle is kept open (the driver outlives us anyway).
void* cuda_driver_handle();
// Whether libcuda.so.1 is loaded in the process right now.
inline bool cuda_driver_loaded() { return cuda_driver_handle() != nullptr; }

}  // namespace gprof::collector
