// What a thread writes into its channels' rings (sampling/threads.h), and the writer thread reads back
// (sampling/drain.cpp). Plain structs, the variable parts after them; every entry is 8-byte aligned by the ring.
#pragma once

#include <cstdint>

namespace gprof::collector::sampling {

enum EntryType : uint32_t {
    kPyLocation = 1,  // a Python code location the channel names by its own id from now on
    kPyReset = 2,     // the channel's location ids start again (its cache was full)
    kSample = 3,      // a CPU sample
    kOsrtCall = 4,    // an OS-runtime call
};

struct PyLocationEntry {
    uint32_t id;
    uint32_t line;
    uint64_t code, file, name;  // the identity of the location in the process's tables (never dereferenced)
    int32_t offset;
    uint16_t file_bytes, name_bytes;  // then the texts, file first (UTF-8)
};

// The stacks after either head: native[n_native] (uint64_t), then py[n_py] (uint32_t channel location ids, innermost
// first). For a sample native[0] is the interrupted instruction; for a call every native frame is a return address.
struct StackCounts {
    uint16_t n_native;
    uint16_t n_py;
    uint8_t py_cut;  // Python frames beyond those written
    uint8_t pad[3];
};

struct SampleEntry {
    uint64_t time;
    uint32_t periods;    // 1 + the timer's overruns
    uint32_t period_ns;
    StackCounts stacks;
};

struct OsrtEntry {
    uint64_t start, end;
    uint32_t call;  // osrt::Call
    uint32_t pad;
    StackCounts stacks;
};

}  // namespace gprof::collector::sampling
