// What a process is about to run when it execs a file: will the exec work at all, and can the collector be in the
// new image? Judged from the file before the exec, with plain system calls on stack buffers: no allocation, no
// lock, so it also runs in a vfork child (which shares its parent's memory) and in posix_spawn's caller.
//
//   the exec cannot work      no such file, not executable, a directory: the exec will fail with that errno (the
//                             PATH search of execvp tries the next directory); nothing of the trace is touched
//   Traced                    an ELF program with a program interpreter (dynamically linked) of this machine's
//                             class, whose environment still preloads the collector: it will record itself
//   Static                    an ELF program without PT_INTERP (static, static-pie: /sbin/ldconfig on Ubuntu)
//   Foreign                   another ELF class or machine (a 32-bit program)
//   Privileged                set-user-ID or set-group-ID to someone else, or file capabilities: secure-execution
//                             mode, in which the loader ignores LD_PRELOAD
//   NoCollector               the new environment names the collector in none of LD_PRELOAD,
//                             CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH
// A #! script is judged by its interpreter (up to 4 levels, as the kernel does). Anything else (a file the
// kernel may still run through binfmt_misc) counts as Traced: the exec is expected to work.
#pragma once

#include <cstddef>

#include "gprof/trace/records.h"

namespace gprof::collector {

struct ProgramImage {
    int error = 0;  // != 0: the exec will fail with this errno; image and path say nothing then
    trace::ExecImage image = trace::ExecImage::Traced;
    char path[1024] = {};  // the file the exec runs (resolved along PATH for the searching variants); cut if longer

    bool will_fail() const { return error != 0; }
};

// execve(path, argv, envp) and posix_spawn.
ProgramImage inspect_exec(const char* path, char* const envp[]) noexcept;
// execvp / execvpe / execlp / posix_spawnp: `file` is searched along `path_env` (unset: "/bin:/usr/bin") unless it
// contains a '/', as glibc does; a file that is neither ELF nor #! is run by glibc through /bin/sh.
ProgramImage inspect_exec_search(const char* file, const char* path_env, char* const envp[]) noexcept;
// fexecve(fd, ...) and execveat(dirfd, path, ..., flags).
ProgramImage inspect_exec_at(int dirfd, const char* path, int flags, char* const envp[]) noexcept;

// Whether `envp` still brings the collector in: LD_PRELOAD, CUDA_INJECTION64_PATH or NVTX_INJECTION64_PATH names a
// file called like this library (libgprof-collector.so).
bool environment_loads_collector(char* const envp[]) noexcept;

// The collector's own file name ("libgprof-collector.so"), found once (dladdr) by remember_collector_name(); call
// that at load time, outside any signal handler or vfork child.
void remember_collector_name() noexcept;

// "prog arg1 arg2", cut to fit `size` (always terminated). For the Exec record's command.
void join_argv(char* const argv[], char* out, size_t size) noexcept;

}  // namespace gprof::collector
