#include "model/symbolize.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cstdio>

#include "model/names.h"

namespace gprof::report {

// A module's function symbols, sorted by address (file virtual addresses), and its lowest PT_LOAD vaddr.
struct Symbolizer::Elf {
    bool ok = false;
    uint64_t min_vaddr = 0;
    struct Sym {
        uint64_t addr, size;
        std::string name;
    };
    std::vector<Sym> syms;

    explicit Elf(const std::string& path) {
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;
        struct stat st {};
        if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
            ::close(fd);
            return;
        }
        size_t size = static_cast<size_t>(st.st_size);
        void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        ::close(fd);
        if (m == MAP_FAILED) return;
        parse(static_cast<const uint8_t*>(m), size);
        ::munmap(m, size);
    }

    // Only 64-bit little-endian ELF (what CUDA runs on); anything else stays unresolved, never crashes.
    void parse(const uint8_t* d, size_t size) {
        Elf64_Ehdr eh;
        std::memcpy(&eh, d, sizeof eh);
        if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
            eh.e_ident[EI_DATA] != ELFDATA2LSB)
            return;
        auto in = [&](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
        bool have_load = false;
        if (eh.e_phoff && in(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr))) {
            for (unsigned i = 0; i < eh.e_phnum; ++i) {
                Elf64_Phdr ph;
                std::memcpy(&ph, d + eh.e_phoff + i * sizeof ph, sizeof ph);
                if (ph.p_type == PT_LOAD && (!have_load || ph.p_vaddr < min_vaddr)) {
                    min_vaddr = ph.p_vaddr & ~uint64_t(0xfff);
                    have_load = true;
                }
            }
        }
        if (!eh.e_shoff || !in(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr))) return;
        std::vector<Elf64_Shdr> sh(eh.e_shnum);
        std::memcpy(sh.data(), d + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
        for (uint32_t want : {uint32_t(SHT_SYMTAB), uint32_t(SHT_DYNSYM)}) {
            for (const auto& s : sh) {
                if (s.sh_type != want || s.sh_link >= sh.size() || !in(s.sh_offset, s.sh_size)) continue;
                const auto& strs = sh[s.sh_link];
                if (!in(strs.sh_offset, strs.sh_size)) continue;
                size_t n = s.sh_size / sizeof(Elf64_Sym);
                for (size_t i = 0; i < n; ++i) {
                    Elf64_Sym sym;
                    std::memcpy(&sym, d + s.sh_offset + i * sizeof sym, sizeof sym);
                    if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_name >= strs.sh_size)
                        continue;
                    const char* name = reinterpret_cast<const char*>(d + strs.sh_offset + sym.st_name);
                    size_t maxlen = strs.sh_size - sym.st_name;
                    syms.push_back({sym.st_value, sym.st_size, std::string(name, strnlen(name, maxlen))});
                }
            }
            if (!syms.empty()) break;  // .symtab found: .dynsym adds nothing
        }
        std::sort(syms.begin(), syms.end(), [](const Sym& a, const Sym& b) { return a.addr < b.addr; });
        ok = true;
    }

    const Sym* lookup(uint64_t vaddr) const {
        auto it = std::upper_bound(syms.begin(), syms.end(), vaddr, [](uint64_t v, const Sym& s) { return v < s.addr; });
        if (it == syms.begin()) return nullptr;
        --it;
        if (it->size && vaddr >= it->addr + it->size) return nullptr;
        return &*it;
    }
};

Symbolizer::Symbolizer(const ProcessTrace& process) : process_(process) {}
Symbolizer::~Symbolizer() = default;

static std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string Symbolizer::frame(uint64_t address) {
    for (const auto& m : process_.modules) {
        if (address < m.base || address >= m.base + m.size) continue;
        std::string path(process_.str(m.path));
        std::string base_name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
        uint64_t offset = address - m.base;
        auto& elf = cache_[path];
        if (!elf) elf = std::make_unique<Elf>(path);
        if (elf->ok) {
            // Module.base = load bias + lowest PT_LOAD vaddr, so the file's vaddr is base-relative + min_vaddr.
            // A return address points after the call: look up address-1 so a call at a function's end resolves.
            uint64_t vaddr = offset + elf->min_vaddr;
            if (const auto* s = elf->lookup(vaddr ? vaddr - 1 : 0))
                return demangle(s->name) + "+" + hex(vaddr - s->addr) + " (" + base_name + ")";
        }
        return base_name + "+" + hex(offset);
    }
    return hex(address);
}

}  // namespace gprof::report
