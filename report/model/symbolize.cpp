#include "model/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <unordered_map>
#include <string_view>
#include <utility>

#include "model/names.h"

namespace gprof::report {

namespace {

std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string hex_bytes(const uint8_t* p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

std::string base_name(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Opens a regular file read-only without blocking (a FIFO named by a trace must not hang us); -1 otherwise.
int open_regular(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return -1;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// One module file, opened with libdw for offline use at its own link-time addresses (plus `bias`).
struct DwModule {
    std::string label;      // file name, for frames and warnings
    Dwfl* dwfl = nullptr;
    Dwfl_Module* mod = nullptr;
    Dwarf_Addr bias = 0;    // libdw address = file vaddr + bias
    uint64_t lowest_vaddr = 0;  // lowest PT_LOAD p_vaddr: Module.base corresponds to it
    bool has_dwarf = false;

    DwModule() = default;
    DwModule(const DwModule&) = delete;
    DwModule& operator=(const DwModule&) = delete;
    ~DwModule() {
        if (dwfl) dwfl_end(dwfl);
    }
};

// The objects the kernel maps into every process (linux-vdso.so.1, linux-gate.so.1 on 32-bit): no file on disk.
bool is_kernel_module(const std::string& path) {
    return path == "linux-vdso.so.1" || path == "linux-vdso64.so.1" || path == "linux-gate.so.1" || path == "[vdso]";
}

struct Cache {
    std::mutex mu;
    std::vector<std::string> debug_dirs{"/usr/lib/debug"};
    std::string debuginfo_path;  // libdw's form: ":.debug:/usr/lib/debug"
    char* debuginfo_path_ptr = nullptr;
    Dwfl_Callbacks callbacks{};
    std::map<std::string, std::unique_ptr<DwModule>> modules;  // path '\0' build id -> module (never null)
    std::unordered_map<const DwModule*, std::unordered_map<uint64_t, std::vector<SourceFrame>>> frames;
    size_t cached_addresses = 0;
    std::vector<std::string> warnings;
    bool warned_module_cap = false;
    SymbolCacheStats stats;

    Cache() { set_dirs(debug_dirs); }

    void set_dirs(std::vector<std::string> dirs) {
        debug_dirs = std::move(dirs);
        // Empty element: the module's own folder; ".debug": its .debug/ subfolder; absolute: build-id and
        // debuglink roots (libdwfl's debuginfo_path).
        debuginfo_path = ":.debug";
        for (const auto& d : debug_dirs) debuginfo_path += ":" + d;
        debuginfo_path_ptr = debuginfo_path.data();
        callbacks = {};
        callbacks.find_elf = dwfl_build_id_find_elf;
        callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
        callbacks.section_address = dwfl_offline_section_address;
        callbacks.debuginfo_path = &debuginfo_path_ptr;
    }

    void clear() {
        frames.clear();
        modules.clear();
        cached_addresses = 0;
        warned_module_cap = false;
        stats = {};
    }

    // Reports `path` to a fresh Dwfl; false when it is not a readable ELF file.
    bool report(DwModule& m, const std::string& path) {
        int fd = open_regular(path);
        if (fd < 0) return false;
        m.dwfl = dwfl_begin(&callbacks);
        if (!m.dwfl) {
            ::close(fd);
            return false;
        }
        dwfl_report_begin(m.dwfl);
        m.mod = dwfl_report_elf(m.dwfl, m.label.c_str(), path.c_str(), fd, 0, true);  // consumes fd on success
        dwfl_report_end(m.dwfl, nullptr, nullptr);
        if (!m.mod) {
            ::close(fd);
            dwfl_end(m.dwfl);
            m.dwfl = nullptr;
            return false;
        }
        return true;
    }

    std::string build_id_on_disk(const DwModule& m) {
        const unsigned char* bits = nullptr;
        GElf_Addr vaddr = 0;
        int n = dwfl_module_build_id(m.mod, &bits, &vaddr);
        return n > 0 ? hex_bytes(bits, static_cast<size_t>(n)) : std::string();
    }

    void drop(DwModule& m) {
        if (m.dwfl) dwfl_end(m.dwfl);
        m.dwfl = nullptr;
        m.mod = nullptr;
    }

    void open(DwModule& m, const std::string& path, const std::string& build_id) {
        ++stats.modules_opened;
        std::string why;  // why the module's file itself did not serve
        std::string id_note = build_id.empty() ? std::string() : " (build id " + build_id + ")";
        if (report(m, path)) {
            std::string on_disk = build_id_on_disk(m);
            if (!build_id.empty() && !on_disk.empty() && on_disk != build_id) {
                why = path + " on disk is build " + on_disk + ", not the build that ran";
                drop(m);
            }
        } else {
            why = "cannot read " + path;
        }
        if (!m.mod && !build_id.empty() && build_id.size() > 2) {
            // The debug file of the build that ran, by its build id: it holds the symbols and lines itself.
            for (const auto& dir : debug_dirs) {
                std::string candidate = dir + "/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug";
                if (report(m, candidate)) {
                    if (build_id_on_disk(m) == build_id) break;
                    drop(m);
                }
            }
        }
        if (!m.mod) {
            warnings.push_back("no debug info for " + m.label + id_note + ": " + why +
                               (build_id.empty() ? "" : " and no debug file by its build id") +
                               "; its frames show as " + m.label + "+offset");
            return;
        }
        size_t phnum = 0;
        Elf* elf = dwfl_module_getelf(m.mod, &m.bias);
        bool have_load = false;
        if (elf && elf_getphdrnum(elf, &phnum) == 0) {
            for (size_t i = 0; i < phnum; ++i) {
                GElf_Phdr ph;
                if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD &&
                    (!have_load || ph.p_vaddr < m.lowest_vaddr)) {
                    m.lowest_vaddr = ph.p_vaddr;
                    have_load = true;
                }
            }
        }
        Dwarf_Addr dwbias = 0;
        m.has_dwarf = dwfl_module_getdwarf(m.mod, &dwbias) != nullptr;
        if (!m.has_dwarf)
            warnings.push_back("no debug info for " + m.label + id_note + " (" + path +
                               "): its frames show function+offset; install its debug symbols or rebuild it with -g");
    }

    DwModule* module(const std::string& path, const std::string& build_id) {
        std::string key = path + '\0' + build_id;
        auto it = modules.find(key);
        if (it != modules.end()) return it->second.get();
        auto m = std::make_unique<DwModule>();
        m->label = base_name(path);
        if (is_kernel_module(path)) {
            // The kernel's vDSO (clock_gettime, gettimeofday: CPU samples land there): no file to read, nothing to
            // warn about; its frames show as linux-vdso.so.1+offset.
        } else if (modules.size() < kMaxSymbolModules) {
            open(*m, path, build_id);
        } else if (!warned_module_cap) {
            warned_module_cap = true;
            warnings.push_back("more than " + std::to_string(kMaxSymbolModules) +
                               " distinct modules in the stacks: the others are not symbolised");
        }
        return modules.emplace(std::move(key), std::move(m)).first->second.get();
    }
};

Cache& cache() {
    static Cache c;  // NOLINT
    return c;
}

// A source path as the user knows it: relative names (a build run from its build folder, ninja's "../src/a.cpp")
// joined to the compilation directory and made lexically normal.
std::string source_path(const char* file, const char* comp_dir) {
    if (!file || !*file) return {};
    std::filesystem::path p(file);
    if (p.is_relative() && comp_dir && *comp_dir) p = std::filesystem::path(comp_dir) / p;
    return p.lexically_normal().string();
}

std::string die_function_name(Dwarf_Die* die) {
    Dwarf_Attribute attr;
    for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
        if (dwarf_attr_integrate(die, at, &attr)) {
            if (const char* s = dwarf_formstring(&attr)) return demangle(s);
        }
    }
    if (dwarf_attr_integrate(die, DW_AT_name, &attr)) {
        if (const char* s = dwarf_formstring(&attr)) return s;
    }
    return {};
}

std::vector<SourceFrame> resolve(DwModule& m, uint64_t vaddr) {
    std::vector<SourceFrame> out;
    GElf_Addr a = vaddr + m.bias;
    GElf_Off sym_off = 0;
    GElf_Sym sym{};
    const char* sym_name = dwfl_module_addrinfo(m.mod, a, &sym_off, &sym, nullptr, nullptr, nullptr);
    // A versioned symbol of a symbol table ("__libc_start_main@@GLIBC_2.34"): the function's name is before the '@'.
    std::string function = sym_name ? demangle(std::string(sym_name).substr(0, std::string_view(sym_name).find('@')))
                                    : std::string();
    if (m.has_dwarf) {
        const char* file = nullptr;
        int line = 0;
        Dwarf_Addr cu_bias = 0;
        Dwarf_Die* cu = dwfl_module_addrdie(m.mod, a, &cu_bias);
        Dwarf_Attribute comp_attr;
        const char* comp_dir = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &comp_attr)) : nullptr;
        if (Dwfl_Line* l = dwfl_module_getsrc(m.mod, a)) file = dwfl_lineinfo(l, nullptr, &line, nullptr, nullptr, nullptr);
        std::string cur_file = source_path(file, comp_dir);
        uint32_t cur_line = line > 0 ? static_cast<uint32_t>(line) : 0;
        if (cu) {
            Dwarf_Die* scopes = nullptr;
            int n = dwarf_getscopes(cu, a - cu_bias, &scopes);
            // Past the innermost inlined instance, dwarf_getscopes goes on with the scopes around its abstract
            // definition, not the functions it was inlined into: two nested inlines (nvcc's template launch wrapper
            // inside ka_scale<float> inside mode_kernels, H200 2026-11-27) lost the middle one and read the
            // container at the inner call's line. The concrete chain is the DIE tree above the innermost scope.
            if (n > 0) {
                Dwarf_Die* chain = nullptr;
                int chain_len = dwarf_getscopes_die(&scopes[0], &chain);
                if (chain_len > 0) {
                    free(scopes);  // NOLINT: allocated by libdw with malloc
                    scopes = chain;
                    n = chain_len;
                } else {
                    free(chain);  // NOLINT
                }
            }
            Dwarf_Files* files = nullptr;
            size_t nfiles = 0;
            bool have_files = dwarf_getsrcfiles(cu, &files, &nfiles) == 0;
            for (int i = 0; i < n && out.size() < trace::kMaxBacktraceFrames; ++i) {
                int tag = dwarf_tag(&scopes[i]);
                if (tag == DW_TAG_inlined_subroutine) {
                    out.push_back({die_function_name(&scopes[i]), cur_file, cur_line, m.label, 0, true, false});
                    // The next frame out is where this function was inlined.
                    Dwarf_Attribute attr;
                    Dwarf_Word w = 0;
                    cur_file.clear();
                    cur_line = 0;
                    if (have_files && dwarf_attr(&scopes[i], DW_AT_call_file, &attr) && dwarf_formudata(&attr, &w) == 0 &&
                        w < nfiles) {
                        cur_file = source_path(dwarf_filesrc(files, w, nullptr, nullptr), comp_dir);
                    }
                    if (dwarf_attr(&scopes[i], DW_AT_call_line, &attr) && dwarf_formudata(&attr, &w) == 0)
                        cur_line = static_cast<uint32_t>(std::min<Dwarf_Word>(w, UINT32_MAX));
                } else if (tag == DW_TAG_subprogram) {
                    std::string name = !function.empty() ? function : die_function_name(&scopes[i]);
                    out.push_back({name, cur_file, cur_line, m.label, sym_off, false, false});
                    break;
                }
            }
            free(scopes);  // NOLINT: allocated by libdw with malloc
            if (!out.empty() && !out.back().inlined) return out;
            if (!out.empty()) {  // inlined frames without their subprogram scope: the symbol is the container
                out.push_back({function, cur_file, cur_line, m.label, sym_off, false, false});
                return out;
            }
        }
        if (!cur_file.empty()) {
            out.push_back({function, cur_file, cur_line, m.label, sym_off, false, false});
            return out;
        }
    }
    if (sym_name) out.push_back({function, "", 0, m.label, sym_off, false, false});
    return out;
}

}  // namespace

std::string SourceFrame::location() const {
    if (!file.empty()) return line ? file + ":" + std::to_string(line) : file;
    if (!function.empty()) return function + "+" + hex(offset) + (module.empty() ? "" : " (" + module + ")");
    if (!module.empty()) return module + "+" + hex(offset);
    return hex(offset);
}

std::string SourceFrame::text() const {
    std::string s;
    if (!file.empty()) s = (function.empty() ? std::string("??") : function) + " at " + location();
    else s = location();
    if (inlined) s += " [inlined]";
    if (python) s += " [python]";
    return s;
}

void set_debug_file_directories(std::vector<std::string> dirs) {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    c.clear();
    c.set_dirs(std::move(dirs));
}

std::vector<std::string> take_symbol_warnings() {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    return std::exchange(c.warnings, {});
}

SymbolCacheStats symbol_cache_stats() {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    return c.stats;
}

void clear_symbol_cache() {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    c.clear();
}

Symbolizer::Symbolizer(const ProcessTrace& process) : process_(process) {
    for (size_t i = 0; i < process.modules.size(); ++i) {
        const auto& m = process.modules[i];
        if (!m.size) continue;
        uint64_t end = m.base + m.size < m.base ? UINT64_MAX : m.base + m.size;
        ranges_.push_back({m.base, end, i});
    }
    std::stable_sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
}

Symbolizer::~Symbolizer() = default;

std::vector<SourceFrame> Symbolizer::frames(uint64_t address) {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                               [](uint64_t a, const Range& r) { return a < r.begin; });
    if (it == ranges_.begin() || address >= std::prev(it)->end) {
        SourceFrame f;
        f.offset = address;
        return {f};
    }
    const auto& rec = process_.modules[std::prev(it)->module];
    uint64_t offset = address - rec.base;
    std::string path(process_.str(rec.path));
    std::string build_id =
        hex_bytes(rec.build_id, std::min<size_t>(rec.build_id_size, sizeof rec.build_id));

    Cache& c = cache();
    std::lock_guard lock(c.mu);
    DwModule* m = c.module(path, build_id);
    SourceFrame fallback;
    fallback.module = m->label;
    fallback.offset = offset;
    if (!m->mod) return {fallback};
    // A return address points after the call: look up address-1 so a call at a function's end resolves to it.
    uint64_t vaddr = offset + m->lowest_vaddr;
    if (vaddr) --vaddr;
    auto& per_module = c.frames[m];
    if (auto hit = per_module.find(vaddr); hit != per_module.end()) return hit->second;
    std::vector<SourceFrame> out = resolve(*m, vaddr);
    if (out.empty()) out.push_back(fallback);
    ++c.stats.addresses_resolved;
    // Bounded: a hostile trace with millions of distinct addresses is resolved without being remembered.
    if (c.cached_addresses < (1u << 20)) {
        ++c.cached_addresses;
        per_module.emplace(vaddr, out);
    }
    return out;
}

std::string Symbolizer::frame(uint64_t address) {
    std::string s;
    for (const auto& f : frames(address)) s += (s.empty() ? "" : " <- ") + f.text();
    return s;
}

}  // namespace gprof::report
