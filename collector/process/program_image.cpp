#include "process/program_image.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace gprof::collector {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kNativeMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kNativeMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr uint16_t kNativeMachine = EM_PPC64;
#else
#error "unknown machine: add its ELF e_machine here"
#endif

constexpr int kMaxInterpreterDepth = 4;  // the kernel's limit for #! chains (BINPRM_MAX_RECURSION)

char g_collector_name[256] = "libgprof-collector.so";

void copy_cut(char* out, size_t size, const char* in) {
    size_t n = std::strlen(in);
    if (n >= size) n = size - 1;
    std::memcpy(out, in, n);
    out[n] = '\0';
}

const char* base_name(const char* path, size_t len, size_t& base_len) {
    const char* start = path;
    for (size_t i = 0; i < len; ++i)
        if (path[i] == '/') start = path + i + 1;
    base_len = static_cast<size_t>(path + len - start);
    return start;
}

// Whether the list of paths `value` (separated by ':' or ' ') names a file called g_collector_name.
bool names_collector(const char* value) {
    size_t want = std::strlen(g_collector_name);
    const char* p = value;
    while (*p) {
        const char* end = p;
        while (*end && *end != ':' && *end != ' ') ++end;
        size_t base_len = 0;
        const char* base = base_name(p, static_cast<size_t>(end - p), base_len);
        if (base_len == want && std::memcmp(base, g_collector_name, want) == 0) return true;
        p = *end ? end + 1 : end;
    }
    return false;
}

// The #! line's interpreter into `out`; false when the line holds none.
bool shebang_interpreter(const char* head, size_t n, char* out, size_t size) {
    size_t i = 2;
    while (i < n && (head[i] == ' ' || head[i] == '\t')) ++i;
    size_t start = i;
    while (i < n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && head[i] != '\0') ++i;
    if (i == start || i - start >= size) return false;
    std::memcpy(out, head + start, i - start);
    out[i - start] = '\0';
    return true;
}

// ELF of this machine: Static when no program header is PT_INTERP, Traced when one is; Foreign otherwise.
trace::ExecImage elf_image(int fd, const uint8_t* head, size_t n) {
    if (n < sizeof(Elf64_Ehdr) || head[EI_CLASS] != ELFCLASS64) return trace::ExecImage::Foreign;
    Elf64_Ehdr eh;
    std::memcpy(&eh, head, sizeof eh);
    if (eh.e_machine != kNativeMachine) return trace::ExecImage::Foreign;
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0) return trace::ExecImage::Traced;  // cannot tell
    Elf64_Phdr batch[16];
    for (uint32_t done = 0; done < eh.e_phnum;) {
        uint32_t count = eh.e_phnum - done < 16 ? eh.e_phnum - done : 16;
        ssize_t got = ::pread(fd, batch, count * sizeof(Elf64_Phdr),
                              static_cast<off_t>(eh.e_phoff + uint64_t{done} * sizeof(Elf64_Phdr)));
        if (got != static_cast<ssize_t>(count * sizeof(Elf64_Phdr))) return trace::ExecImage::Traced;
        for (uint32_t i = 0; i < count; ++i)
            if (batch[i].p_type == PT_INTERP) return trace::ExecImage::Traced;
        done += count;
    }
    return trace::ExecImage::Static;
}

bool privileged(int fd, const struct stat& st) {
    if ((st.st_mode & S_ISUID) && st.st_uid != ::geteuid()) return true;
    if ((st.st_mode & S_ISGID) && st.st_gid != ::getegid()) return true;
    return ::fgetxattr(fd, "security.capability", nullptr, 0) > 0;
}

// Judges the file `path` (relative to dirfd, execveat's flags) into out.image / out.error.
void inspect_file(int dirfd, const char* path, int flags, char* const envp[], int depth, bool shell_fallback,
                  ProgramImage& out) {
    int saved_errno = errno;
    struct stat st {};
    int stat_flags = flags & (AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    if (::fstatat(dirfd, path, &st, stat_flags) != 0) {
        out.error = errno;
        errno = saved_errno;
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        out.error = EACCES;  // what execve says for a directory or a device
        return;
    }
    if (::faccessat(dirfd, path, X_OK, AT_EACCESS | (flags & AT_EMPTY_PATH)) != 0) {
        out.error = errno;
        errno = saved_errno;
        return;
    }
    int fd = (flags & AT_EMPTY_PATH) && path[0] == '\0' ? ::dup(dirfd) : ::openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {  // execute-only: it runs, but what it is cannot be read
        out.image = environment_loads_collector(envp) ? trace::ExecImage::Traced : trace::ExecImage::NoCollector;
        errno = saved_errno;
        return;
    }
    uint8_t head[256];
    ssize_t n = ::pread(fd, head, sizeof head, 0);
    if (n < 0) n = 0;
    char interpreter[256];
    if (n >= 2 && head[0] == '#' && head[1] == '!') {
        ::close(fd);
        if (depth >= kMaxInterpreterDepth ||
            !shebang_interpreter(reinterpret_cast<const char*>(head), static_cast<size_t>(n), interpreter,
                                 sizeof interpreter)) {
            out.image = trace::ExecImage::Traced;  // the kernel decides; expect it to work
        } else {
            inspect_file(AT_FDCWD, interpreter, 0, envp, depth + 1, false, out);
        }
        errno = saved_errno;
        return;
    }
    if (n >= SELFMAG && std::memcmp(head, ELFMAG, SELFMAG) == 0) {
        out.image = elf_image(fd, head, static_cast<size_t>(n));
        if (out.image == trace::ExecImage::Traced && privileged(fd, st)) out.image = trace::ExecImage::Privileged;
        if (out.image == trace::ExecImage::Traced && !environment_loads_collector(envp))
            out.image = trace::ExecImage::NoCollector;
        ::close(fd);
        errno = saved_errno;
        return;
    }
    ::close(fd);
    errno = saved_errno;
    if (shell_fallback && depth == 0) {
        // execvp runs a file the kernel refuses (ENOEXEC) through /bin/sh.
        inspect_file(AT_FDCWD, "/bin/sh", 0, envp, depth + 1, false, out);
        return;
    }
    // Not ELF, no #!: binfmt_misc may run it; if the exec fails after all, the collector resumes the trace.
    out.image = environment_loads_collector(envp) ? trace::ExecImage::Traced : trace::ExecImage::NoCollector;
}

}  // namespace

void remember_collector_name() noexcept {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&remember_collector_name), &info) && info.dli_fname && *info.dli_fname) {
        size_t len = 0;
        const char* base = base_name(info.dli_fname, std::strlen(info.dli_fname), len);
        // Inside a test program linking the collector's core statically, this is the program: keep the default.
        if (len > 3 && std::strncmp(base, "lib", 3) == 0) copy_cut(g_collector_name, sizeof g_collector_name, base);
    }
}

bool environment_loads_collector(char* const envp[]) noexcept {
    char* const* env = envp ? envp : environ;
    if (!env) return false;
    static const char* const kVariables[] = {"LD_PRELOAD=", "CUDA_INJECTION64_PATH=", "NVTX_INJECTION64_PATH="};
    for (char* const* e = env; *e; ++e) {
        for (const char* v : kVariables) {
            size_t len = std::strlen(v);
            if (std::strncmp(*e, v, len) == 0 && names_collector(*e + len)) return true;
        }
    }
    return false;
}

ProgramImage inspect_exec(const char* path, char* const envp[]) noexcept {
    ProgramImage out;
    if (!path || !*path) {
        out.error = ENOENT;
        return out;
    }
    copy_cut(out.path, sizeof out.path, path);
    inspect_file(AT_FDCWD, path, 0, envp, 0, false, out);
    return out;
}

ProgramImage inspect_exec_at(int dirfd, const char* path, int flags, char* const envp[]) noexcept {
    ProgramImage out;
    if (!path) {
        out.error = EFAULT;
        return out;
    }
    if (path[0] == '\0' && (flags & AT_EMPTY_PATH)) {
        char link[64];
        char text[24];
        int n = 0;
        unsigned v = dirfd < 0 ? 0u : static_cast<unsigned>(dirfd);
        do {  // async-signal-safe decimal
            text[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v > 0 && n < 11);
        std::memcpy(link, "/proc/self/fd/", 14);
        for (int i = 0; i < n; ++i) link[14 + i] = text[n - 1 - i];
        link[14 + n] = '\0';
        ssize_t got = ::readlink(link, out.path, sizeof out.path - 1);
        out.path[got > 0 ? got : 0] = '\0';
    } else {
        copy_cut(out.path, sizeof out.path, path);
    }
    inspect_file(dirfd, path, flags, envp, 0, false, out);
    return out;
}

ProgramImage inspect_exec_search(const char* file, const char* path_env, char* const envp[]) noexcept {
    ProgramImage out;
    if (!file || !*file) {
        out.error = ENOENT;
        return out;
    }
    if (std::strchr(file, '/')) {
        copy_cut(out.path, sizeof out.path, file);
        inspect_file(AT_FDCWD, file, 0, envp, 0, true, out);
        return out;
    }
    const char* dirs = path_env ? path_env : "/bin:/usr/bin";
    size_t file_len = std::strlen(file);
    bool denied = false;
    for (const char* p = dirs;;) {
        const char* end = std::strchr(p, ':');
        size_t dir_len = end ? static_cast<size_t>(end - p) : std::strlen(p);
        char candidate[1024];
        if (dir_len + 1 + file_len < sizeof candidate) {
            size_t at = 0;
            if (dir_len == 0) candidate[at++] = '.';  // an empty entry is the current directory
            std::memcpy(candidate + at, p, dir_len);
            at += dir_len;
            candidate[at++] = '/';
            std::memcpy(candidate + at, file, file_len + 1);
            ProgramImage probe;
            inspect_file(AT_FDCWD, candidate, 0, envp, 0, true, probe);
            if (!probe.will_fail()) {
                probe.error = 0;
                copy_cut(probe.path, sizeof probe.path, candidate);
                return probe;
            }
            if (probe.error == EACCES) denied = true;
        }
        if (!end) break;
        p = end + 1;
    }
    out.error = denied ? EACCES : ENOENT;
    return out;
}

void join_argv(char* const argv[], char* out, size_t size) noexcept {
    if (size == 0) return;
    size_t at = 0;
    for (size_t i = 0; argv && argv[i] && at + 1 < size; ++i) {
        if (i > 0) out[at++] = ' ';
        for (const char* c = argv[i]; *c && at + 1 < size; ++c) out[at++] = *c;
    }
    out[at] = '\0';
}

}  // namespace gprof::collector
