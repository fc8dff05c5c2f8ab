#include "process/process_info.h"

#include "base/descriptors.h"
#include "gprof/env/variables.h"
#include "gprof/trace/writer.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cuda.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace gprof::collector {

namespace {

}  // namespace

std::string read_small_file(const char* path, size_t limit) {
    std::string out;
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    // In the table while it is read (base/descriptors.h): the program's close() or dup2() of this number, on another
    // thread, gets what it would without us, and our read never reads a file of the program's.
    int slot = descriptors::adopt(fd);
    char buf[4096];
    for (;;) {
        int now = slot >= 0 ? descriptors::use(slot) : fd;
        ssize_t n = now >= 0 ? ::read(now, buf, sizeof buf) : -1;
        int err = errno;
        if (slot >= 0) descriptors::done(slot);
        if (n < 0 && err == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
        if (out.size() >= limit) break;
    }
    if (slot >= 0) descriptors::release(slot);
    else descriptors::close_own(fd);
    return out;
}

namespace {

std::string read_link(const char* path) {
    char buf[4096];
    ssize_t n = ::readlink(path, buf, sizeof buf - 1);
    if (n <= 0) return {};
    return std::string(buf, static_cast<size_t>(n));
}

// The first line of a small system file, without its newline ("" when unreadable).
std::string first_line(const char* path) {
    std::string s = read_small_file(path, 256);
    size_t nl = s.find('\n');
    if (nl != std::string::npos) s.resize(nl);
    return s;
}

}  // namespace

void ProcessIdentity::gather() {
    pid = ::getpid();
    ppid = ::getppid();
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) hostname = host;
    // The boot id changes at every boot, so (host, boot id, pid) names one process even across reboots and
    // clusters whose host names repeat; containers without /proc/sys fall back to the machine id.
    boot_id = first_line("/proc/sys/kernel/random/boot_id");
    if (boot_id.empty()) {
        std::string machine = first_line("/etc/machine-id");
        if (!machine.empty()) boot_id = "machine:" + machine;
    }
    if (const char* test = std::getenv(env::kTestHost); test && *test) {  // tests only (environment.h)
        std::string_view v = test;
        size_t slash = v.find('/');
        hostname = std::string(v.substr(0, slash));
        boot_id = slash == std::string_view::npos ? "test:" + hostname : std::string(v.substr(slash + 1));
    }
    // "pid:[4026531836]": containers on one host share its name and boot id, and each numbers its processes from 1.
    std::string ns = read_link("/proc/self/ns/pid");
    size_t open = ns.find('[');
    pid_ns = open == std::string::npos ? 0 : std::strtoull(ns.c_str() + open + 1, nullptr, 10);
    executable = read_link("/proc/self/exe");
    // argv from /proc/self/cmdline (NUL-separated). Never the environment: it carries secrets.
    std::string cmdline = read_small_file("/proc/self/cmdline");
    args.clear();
    size_t start = 0;
    for (size_t i = 0; i < cmdline.size(); ++i) {
        if (cmdline[i] == '\0') {
            args.emplace_back(cmdline, start, i - start);
            start = i + 1;
        }
    }
    if (start < cmdline.size()) args.emplace_back(cmdline, start);
    argv.clear();
    for (auto& a : args) argv.push_back(a.c_str());
}

ProcessRole ProcessRole::from_environment() {
    ProcessRole role;
    // In order of preference: the first variable found of each list fills its field.
    static const char* const kRank[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    static const char* const kLocal[] = {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"};
    static const char* const kSize[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    auto take = [&role](const char* const* names, size_t count, int64_t& field) {
        for (size_t i = 0; i < count; ++i) {
            const char* v = std::getenv(names[i]);
            if (!v || !*v) continue;
            char* end = nullptr;
            long long n = std::strtoll(v, &end, 10);
            if (*end != '\0' || n < 0) continue;  // not a rank: ignore it
            if (!role.variables.empty()) role.variables += ' ';
            role.variables += std::string(names[i]) + "=" + v;
            field = n;
            return;
        }
    };
    take(kRank, std::size(kRank), role.rank);
    take(kLocal, std::size(kLocal), role.local_rank);
    take(kSize, std::size(kSize), role.world_size);
    // The job id names the job, not a place in it: kept beside the rank, only where a rank was found.
    if (const char* job = std::getenv("SLURM_JOB_ID"); job && *job && role.known()) {
        role.job.assign(job, ::strnlen(job, 64));
        role.variables += " SLURM_JOB_ID=" + role.job;
    }
    return role;
}

std::string ProcessIdentity::exe_basename() const {
    std::string base = executable;
    // A deleted executable reads as "/path/app (deleted)".
    const std::string deleted = " (deleted)";
    if (base.size() > deleted.size() && base.compare(base.size() - deleted.size(), deleted.size(), deleted) == 0)
        base.resize(base.size() - deleted.size());
    size_t slash = base.rfind('/');
    if (slash != std::string::npos) base = base.substr(slash + 1);
    if (base.empty() && !args.empty()) {
        base = args[0];
        slash = base.rfind('/');
        if (slash != std::string::npos) base = base.substr(slash + 1);
    }
    if (base.empty()) base = "process";
    return base;
}

int create_trace_file(const std::string& dir, const std::string& base, int64_t pid, std::string& path) {
    // Absolute: the trace is opened again by this name if the program takes its descriptor, maybe after a chdir.
    std::string where = dir.empty() ? std::string(".") : dir;
    if (where[0] != '/') {
        char cwd[4096];
        if (::getcwd(cwd, sizeof cwd)) where = std::string(cwd) + "/" + where;
    }
    std::string prefix = where + "/" + base + "." + std::to_string(pid);
    for (int n = 0; n < 1000; ++n) {
        path = n == 0 ? prefix + ".gprof" : prefix + "." + std::to_string(n) + ".gprof";
        int fd = descriptors::open_high(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW, 0600);
        if (fd >= 0) return fd;
        if (errno != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

void remove_header_only_traces(const std::string& dir, int64_t pid) {
    DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
    if (!d) return;
    const std::string id = "." + std::to_string(pid) + ".";
    while (dirent* e = ::readdir(d)) {
        // <base>.<pid>.gprof or <base>.<pid>.<n>.gprof; the header's pid decides (names can be ambiguous).
        std::string_view name = e->d_name;
        if (name.find(id) == std::string_view::npos || name.size() < 6 || name.substr(name.size() - 6) != ".gprof")
            continue;
        int fd = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        bool stale = trace::TraceWriter::holds_only_header(fd, pid);
        ::close(fd);
        if (stale) ::unlinkat(::dirfd(d), e->d_name, 0);
    }
    ::closedir(d);
}

// ---- modules ----

namespace {

void read_build_id(const dl_phdr_info* info, ModuleInfo& m) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) continue;
        auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
        const uint8_t* end = p + ph.p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            auto* nh = reinterpret_cast<const ElfW(Nhdr)*>(p);
            size_t name_size = (nh->n_namesz + 3) & ~size_t(3);
            size_t desc_size = (nh->n_descsz + 3) & ~size_t(3);
            const uint8_t* name = p + sizeof(ElfW(Nhdr));
            const uint8_t* desc = name + name_size;
            if (desc + desc_size > end) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                m.build_id_size = nh->n_descsz > trace::kMaxBuildIdBytes ? trace::kMaxBuildIdBytes : nh->n_descsz;
                std::memcpy(m.build_id, desc, m.build_id_size);
                return;
            }
            p = desc + desc_size;
        }
    }
}

int collect_module(dl_phdr_info* info, size_t, void* data) {
    auto* out = static_cast<std::vector<ModuleInfo>*>(data);
    uint64_t lo = ~0ull, hi = 0, offset = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        if (ph.p_vaddr < lo) {
            lo = ph.p_vaddr;
            offset = ph.p_offset;
        }
        if (ph.p_vaddr + ph.p_memsz > hi) hi = ph.p_vaddr + ph.p_memsz;
    }
    if (lo == ~0ull) return 0;
    try {
        ModuleInfo m;
        m.base = info->dlpi_addr + lo;
        m.size = hi - lo;
        m.file_offset = offset;
        m.path = info->dlpi_name ? info->dlpi_name : "";
        if (m.path.empty() && out->empty()) m.path = read_link("/proc/self/exe");  // the main program
        read_build_id(info, m);
        out->push_back(std::move(m));
    } catch (...) {
    }
    return 0;
}

}  // namespace

std::vector<ModuleInfo> ModuleScanner::loaded_modules() {
    std::vector<ModuleInfo> out;
    dl_iterate_phdr(collect_module, &out);
    return out;
}

void ModuleScanner::scan(trace::TraceWriter& writer) {
    for (const ModuleInfo& m : loaded_modules()) {
        auto it = seen_.find(m.base);
        if (it != seen_.end() && it->second == m.path) continue;
        seen_[m.base] = m.path;
        trace::Module r;
        r.base = m.base;
        r.size = m.size;
        r.file_offset = m.file_offset;
        r.path = writer.intern(m.path.data(), m.path.size());
        r.build_id_size = m.build_id_size;
        std::memcpy(r.build_id, m.build_id, sizeof r.build_id);
        writer.add(r);
    }
}

// ---- threads ----

void ThreadNamer::write(trace::TraceWriter& writer, uint64_t tid, const std::string& name) {
    auto it = written_.find(tid);
    if (it != written_.end() && it->second == name) return;
    written_[tid] = name;
    trace::Thread r;
    r.tid = tid;
    r.name = writer.intern(name.data(), name.size());
    writer.add(r);
}

void ThreadNamer::from_comm(trace::TraceWriter& writer, uint64_t tid) {
    if (nvtx_named_.count(tid)) return;
    std::string path = "/proc/self/task/" + std::to_string(tid) + "/comm";
    std::string name = read_small_file(path.c_str(), 64);
    while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) name.pop_back();
    if (!name.empty()) write(writer, tid, name);
}

void ThreadNamer::from_nvtx(trace::TraceWriter& writer, uint64_t tid, const std::string& name) {
    nvtx_named_[tid] = true;
    write(writer, tid, name);
}

void ThreadNamer::from_exit(trace::TraceWriter& writer, uint64_t tid, const std::string& name) {
    if (nvtx_named_.count(tid) || name.empty()) return;
    write(writer, tid, name);
}

void ThreadNamer::scan_all(trace::TraceWriter& writer) {
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return;
    std::vector<uint64_t> tids;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        tids.push_back(std::strtoull(e->d_name, nullptr, 10));
    }
    ::closedir(d);
    for (uint64_t tid : tids) from_comm(writer, tid);
}

// ---- CUDA detection ----

namespace {

int find_cuda_lib(dl_phdr_info* info, size_t, void* data) {
    const char* name = info->dlpi_name;
    if (name && (std::strstr(name, "libcudart") || std::strstr(name, "libcuda.so"))) {
        *static_cast<bool*>(data) = true;
        return 1;
    }
    return 0;
}

bool exe_has_fatbin() {
    int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool found = false;
    ElfW(Ehdr) eh;
    if (::pread(fd, &eh, sizeof eh, 0) == static_cast<ssize_t>(sizeof eh) && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_shentsize == sizeof(ElfW(Shdr)) && eh.e_shnum > 0 && eh.e_shnum < 4096 && eh.e_shstrndx < eh.e_shnum) {
        std::vector<ElfW(Shdr)> sh(eh.e_shnum);
        size_t bytes = sh.size() * sizeof(ElfW(Shdr));
        if (::pread(fd, sh.data(), bytes, static_cast<off_t>(eh.e_shoff)) == static_cast<ssize_t>(bytes)) {
            const ElfW(Shdr)& strtab = sh[eh.e_shstrndx];
            if (strtab.sh_size > 0 && strtab.sh_size < (1u << 20)) {
                std::string names(strtab.sh_size, '\0');
                if (::pread(fd, names.data(), names.size(), static_cast<off_t>(strtab.sh_offset)) ==
                    static_cast<ssize_t>(names.size())) {
                    for (const auto& s : sh) {
                        if (s.sh_name < names.size() && std::strcmp(names.c_str() + s.sh_name, ".nv_fatbin") == 0) {
                            found = true;
                            break;
                        }
                    }
                }
            }
        }
    }
    ::close(fd);
    return found;
}

}  // namespace

bool looks_like_cuda_program() {
    bool found = false;
    dl_iterate_phdr(find_cuda_lib, &found);
    if (found) return true;
    // The executable does not change within one process image: read its sections once.
    static std::atomic<int> fatbin{-1};
    int known = fatbin.load(std::memory_order_acquire);
    if (known < 0) {
        known = exe_has_fatbin() ? 1 : 0;
        fatbin.store(known, std::memory_order_release);
    }
    return known == 1;
}

bool nvidia_driver_on_machine() {
    return ::access("/proc/driver/nvidia/version", F_OK) == 0 || ::access("/dev/nvidiactl", F_OK) == 0 ||
           ::access("/dev/dxg", F_OK) == 0;
}

MissingCuda explain_missing_cuda() {
    MissingCuda m;
    if (void* h = cuda_driver_handle()) {
        auto get_current = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(h, "cuCtxGetCurrent"));
        auto error_name = reinterpret_cast<CUresult (*)(CUresult, const char**)>(dlsym(h, "cuGetErrorName"));
        if (!get_current) return m;
        CUcontext ctx = nullptr;
        CUresult rc = get_current(&ctx);
        if (rc == CUDA_ERROR_NOT_INITIALIZED) {
            m.text = "the CUDA driver is loaded, but this process never initialised CUDA (no CUDA call reached the "
                     "driver): no CUDA activity to record";
            return m;
        }
        const char* name = nullptr;
        std::string code = error_name && error_name(rc, &name) == CUDA_SUCCESS && name ? name
                                                                                         : "CUresult " + std::to_string(rc);
        m.warn = true;
        if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_DEINITIALIZED)
            m.text = "CUDA was initialised in this process without gprof-run's injection (CUDA_INJECTION64_PATH was "
                     "removed from its environment, or the driver did not honour it)";
        else
            m.text = "the CUDA driver could not be initialised in this process (" + code + ")";
        return m;
    }
    if (nvidia_driver_on_machine()) {
        m.text = "no CUDA call reached the driver in this process (libcuda.so.1 was never loaded)";
        return m;
    }
    m.warn = true;
    m.text = "no NVIDIA driver on this machine (no /proc/driver/nvidia, /dev/nvidiactl or /dev/dxg; libcuda.so.1 was "
             "not loaded): CUDA programs cannot run here";
    return m;
}

void* cuda_driver_handle() {
    static std::atomic<void*> handle{nullptr};
    if (void* h = handle.load(std::memory_order_acquire)) return h;
    void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return nullptr;  // not loaded (yet): ask again next time
    void* expected = nullptr;
    if (!handle.compare_exchange_strong(expected, h, std::memory_order_acq_rel)) ::dlclose(h);  // one reference kept
    return handle.load(std::memory_order_acquire);
}

}  // namespace gprof::collector
