// exec and posix_spawn, interposed when the collector is LD_PRELOADed: a process that replaces its image finishes
// its trace first (or hands it over to the new image), and a child running a program the collector cannot enter
// (statically linked, another architecture, set-user-ID, an environment without the collector) is still named in
// the trace. See session/process_session.h (session_before_exec) and process/program_image.h.
//
// The real functions: execve, execveat and fexecve are the system calls (as in glibc); the searching variants and
// posix_spawn are glibc's own, found with dlsym(RTLD_NEXT) when the library loads, since a vfork child may call
// them and may not run the dynamic linker. Nothing here allocates or locks before the exec: a vfork child shares
// its parent's memory.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>

#include "process/program_image.h"
#include "session/process_session.h"

extern char** environ;

namespace {

namespace c = gprof::collector;

using ExecvpeFn = int (*)(const char*, char* const[], char* const[]);
using SpawnFn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*, char* const[],
                        char* const[]);

ExecvpeFn g_execvpe = nullptr;
SpawnFn g_posix_spawn = nullptr;
SpawnFn g_posix_spawnp = nullptr;

template <class F> void resolve(F& slot, const char* name) {
    if (!slot) slot = reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

__attribute__((constructor(101))) void resolve_real_functions() {
    resolve(g_execvpe, "execvpe");
    resolve(g_posix_spawn, "posix_spawn");
    resolve(g_posix_spawnp, "posix_spawnp");
}

// Runs `exec` (which returns only on failure) between the session's before and after steps.
template <class Exec> int run_exec(const c::ProgramImage& image, char* const argv[], Exec exec) {
    c::ExecTicket ticket = c::session_before_exec(image, argv);
    int rc = exec();
    int error = errno;
    c::session_exec_failed(ticket, image, error);
    errno = error;
    return rc;
}

int exec_syscall(const char* path, char* const argv[], char* const envp[]) {
    return static_cast<int>(::syscall(SYS_execve, path, argv, envp));
}

// Collects execl's variable arguments into a stack array (no allocation: a vfork child may call it). Explicit
// arguments are a handful in practice; past kMaxListArgs the call fails with E2BIG, as glibc's does past INT_MAX.
// Like glibc, the list is read up to its terminating NULL whatever `arg` is.
constexpr size_t kMaxListArgs = 4096;
#define GPROF_COLLECT_ARGS(first, last_arg, out)                                  \
    char* out[kMaxListArgs + 1];                                                  \
    size_t count_ = 1;                                                            \
    out[0] = const_cast<char*>(first);                                            \
    {                                                                             \
        va_list ap_;                                                              \
        va_start(ap_, last_arg);                                                  \
        while (count_ <= kMaxListArgs && (out[count_] = va_arg(ap_, char*))) ++count_; \
        va_end(ap_);                                                              \
    }                                                                             \
    if (count_ > kMaxListArgs) {                                                  \
        errno = E2BIG;                                                            \
        return -1;                                                                \
    }                                                                             \
    out[count_] = nullptr;

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[], char* const envp[]) {
    c::ProgramImage image = c::inspect_exec(path, envp);
    return run_exec(image, argv, [&] { return exec_syscall(path, argv, envp); });
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
    return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[], char* const envp[]) {
    resolve(g_execvpe, "execvpe");
    c::ProgramImage image = c::inspect_exec_search(file, ::getenv("PATH"), envp);
    return run_exec(image, argv, [&] {
        if (g_execvpe) return g_execvpe(file, argv, envp);
        errno = ENOSYS;
        return -1;
    });
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
    return execvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int execveat(int dirfd, const char* path, char* const argv[],
                                                     char* const envp[], int flags) {
    c::ProgramImage image = c::inspect_exec_at(dirfd, path, flags, envp);
    return run_exec(image, argv,
                    [&] { return static_cast<int>(::syscall(SYS_execveat, dirfd, path, argv, envp, flags)); });
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
    c::ProgramImage image = c::inspect_exec_at(fd, "", AT_EMPTY_PATH, envp);
    return run_exec(image, argv, [&] {
        int rc = static_cast<int>(::syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
        if (rc < 0 && errno == ENOSYS) rc = exec_syscall(image.path, argv, envp);  // kernels before 3.19
        return rc;
    });
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
    GPROF_COLLECT_ARGS(arg, arg, argv)
    return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
    GPROF_COLLECT_ARGS(arg, arg, argv)
    return execvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
    GPROF_COLLECT_ARGS(arg, arg, argv)
    char* const* envp;
    {
        va_list ap;
        va_start(ap, arg);
        // Past the arguments after `arg` and their terminating NULL (glibc reads them the same way).
        for (size_t i = 1; i <= count_; ++i) va_arg(ap, char*);
        envp = va_arg(ap, char* const*);
        va_end(ap);
    }
    return execve(path, argv, envp);
}

__attribute__((visibility("default"))) int posix_spawn(pid_t* pid, const char* path,
                                                       const posix_spawn_file_actions_t* actions,
                                                       const posix_spawnattr_t* attr, char* const argv[],
                                                       char* const envp[]) {
    resolve(g_posix_spawn, "posix_spawn");
    if (!g_posix_spawn) return ENOSYS;
    c::ProgramImage image = c::inspect_exec(path, envp);
    pid_t child = 0;
    int rc = g_posix_spawn(&child, path, actions, attr, argv, envp);
    if (pid) *pid = child;
    if (rc == 0) c::session_spawned(child, image, argv);
    return rc;
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t* pid, const char* file,
                                                        const posix_spawn_file_actions_t* actions,
                                                        const posix_spawnattr_t* attr, char* const argv[],
                                                        char* const envp[]) {
    resolve(g_posix_spawnp, "posix_spawnp");
    if (!g_posix_spawnp) return ENOSYS;
    c::ProgramImage image = c::inspect_exec_search(file, ::getenv("PATH"), envp);
    pid_t child = 0;
    int rc = g_posix_spawnp(&child, file, actions, attr, argv, envp);
    if (pid) *pid = child;
    if (rc == 0) c::session_spawned(child, image, argv);
    return rc;
}

}  // extern "C"
