// Symbolises backtrace frames outside the target, from the Module records of a trace: each module's ELF symbol
// table (.symtab, else .dynsym) is read with a small reader of our own (no libbfd/libdw dependency). A frame
// prints as "function+0xOFF (module)"; a frame whose module or symbol cannot be found prints as "module+0xOFF",
// and one outside every module as "0xADDR". File:line would need DWARF line tables; not read (see docs/reports.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace gprof::report {

class Symbolizer {
public:
    explicit Symbolizer(const ProcessTrace& process);
    ~Symbolizer();
    std::string frame(uint64_t address);

private:
    struct Elf;
    const ProcessTrace& process_;
    std::map<std::string, std::unique_ptr<Elf>> cache_;
};

}  // namespace gprof::report
