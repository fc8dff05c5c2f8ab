// Symbolises native backtrace frames outside the target, from the Module records of a trace (path, load base,
// build id), with libdw from elfutils: function (demangled by model/names.h), source file and line from the DWARF
// line table, and the frames of functions inlined at that address (DWARF inlined-subroutine scopes), innermost
// first. Debug information is found the way gdb and eu-addr2line find it: in the module itself, in a separate debug
// file named by its build id (<debug dir>/.build-id/xx/rest.debug) or by its .gnu_debuglink (next to the module, in
// its .debug/ folder, under the debug dirs). The debug dirs are /usr/lib/debug unless set_debug_file_directories
// says otherwise (gprof-report --debug-file-directory).
//
// Bounded and fast: the cache is process-wide, so each module file (keyed by path and recorded build id) is opened
// once and each distinct (module, address) is resolved once however many processes, stacks and outputs ask. Only
// regular files are opened (never a FIFO or a device named by a hostile trace), at most kMaxSymbolModules of them.
//
// A module that cannot help gives exactly one warning line, taken with take_symbol_warnings(): "no debug info for
// libX.so (build id ab12...): its frames show function+offset", a missing file, or a file on disk that is not the
// build that ran (its build id differs from the Module record's). Its frames then print as function+0xOFF (module)
// from the ELF symbol table, or module+0xOFF, and an address outside every module as 0xADDR.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace gprof::report {

// One frame as shown: a native frame (maybe inlined into the next one) or a Python frame.
struct SourceFrame {
    std::string function;  // demangled; "" when unknown
    std::string file;      // source file; "" when the module has no line information for the address
    uint32_t line = 0;
    std::string module;    // module file name ("app", "libtorch_cuda.so"); "" outside every module / Python
    uint64_t offset = 0;   // function+offset when there is no line; module+offset when there is no function
    bool inlined = false;  // a function inlined into the frame that follows it
    bool python = false;   // a Python frame (PyFrame record): file, line, function (qualified name)

    // "file:line" when known, else "function+0xOFF (module)", "module+0xOFF" or "0xADDR": what sites are keyed by.
    std::string location() const;
    // One line: "function at file:line", "function+0xOFF (module)", "module+0xOFF", "0xADDR"; inlined frames end in
    // " [inlined]", Python frames read "function at file:line [python]".
    std::string text() const;
};

inline constexpr size_t kMaxSymbolModules = 4096;

// Where separate debug files are looked for (replaces /usr/lib/debug). Clears the cache.
void set_debug_file_directories(std::vector<std::string> dirs);
// The warnings found since the last call (one per module), in the order they were found.
std::vector<std::string> take_symbol_warnings();
// Counters for tests and benchmarks: modules opened, distinct addresses resolved since the last clear.
struct SymbolCacheStats {
    uint64_t modules_opened = 0;
    uint64_t addresses_resolved = 0;
};
SymbolCacheStats symbol_cache_stats();
void clear_symbol_cache();

// The frames of one process's addresses. Cheap to make: the work is cached process-wide.
class Symbolizer {
public:
    explicit Symbolizer(const ProcessTrace& process);
    ~Symbolizer();
    // The source frames at a return address, innermost (inlined) first, the containing function last; never empty.
    std::vector<SourceFrame> frames(uint64_t address);
    // The frames joined on one line (" <- " between inlined frames).
    std::string frame(uint64_t address);

private:
    struct Range {
        uint64_t begin, end;
        size_t module;  // index into process_.modules
    };
    const ProcessTrace& process_;
    std::vector<Range> ranges_;  // sorted by begin
};

}  // namespace gprof::report
