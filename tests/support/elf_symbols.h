// Test support: the extent of a function from an ELF file's symbol table (.symtab), so a test can check that an
// address lies inside the function that made a call, by the function's real bounds rather than a guessed size.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace gprof::testing {

struct SymbolExtent {
    uint64_t value = 0;  // st_value: the link-time address (add the load bias for a run-time address)
    uint64_t size = 0;   // st_size
};

// The FUNC symbol `name` of the 64-bit ELF file at `path` (.symtab), or nullopt.
inline std::optional<SymbolExtent> elf_function(const std::string& path, const std::string& name) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() < sizeof(Elf64_Ehdr)) return std::nullopt;
    Elf64_Ehdr eh;
    std::memcpy(&eh, data.data(), sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return std::nullopt;
    if (eh.e_shoff + static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > data.size()) return std::nullopt;
    auto section = [&](size_t i) {
        Elf64_Shdr sh;
        std::memcpy(&sh, data.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
        return sh;
    };
    for (size_t i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sh = section(i);
        if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum) continue;
        Elf64_Shdr strtab = section(sh.sh_link);
        if (sh.sh_offset + sh.sh_size > data.size() || strtab.sh_offset + strtab.sh_size > data.size()) continue;
        for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
            Elf64_Sym sym;
            std::memcpy(&sym, data.data() + sh.sh_offset + off, sizeof sym);
            if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_name >= strtab.sh_size) continue;
            const char* n = data.data() + strtab.sh_offset + sym.st_name;
            if (name == std::string(n, ::strnlen(n, strtab.sh_size - sym.st_name)))
                return SymbolExtent{sym.st_value, sym.st_size};
        }
    }
    return std::nullopt;
}

}  // namespace gprof::testing
