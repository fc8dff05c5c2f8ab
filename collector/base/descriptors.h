// The descriptors the collector holds inside the program, kept out of the program's way.
//
// A program owns its descriptor table. Daemons, servers, sandboxes and supervisors close what they did not open (a
// loop of close(), close_range(3, ~0U, 0), closefrom(3)) and then open their own files, dup2() over numbers, run
// with stdin or stdout closed and expect their first open() to get 0 or 1, and count on EMFILE at their limit. The
// collector never takes a number the program expects, never writes to a number it no longer owns, and never
// changes what the program's own calls return.
//
//   Where. The descriptor the collector keeps (the trace file) goes to the number of the soft RLIMIT_NOFILE itself,
//   the soft limit raised by one for the moment of the dup when the hard limit allows: beyond every number the
//   program can be given, so it takes none of them and a close loop up to the limit never meets it. Without room
//   above (soft == hard), or past kHighestPlace, it goes as high as it can below kHighestPlace. Always
//   close-on-exec, so it never reaches an exec'ed program.
//
//   The table. Every descriptor the collector holds (the trace file; a /proc file while it is read) is in a small
//   fixed table of atomics, which the program's close, close_range, closefrom, dup, dup2 and dup3 consult
//   (inject/src/descriptor_interpose.cpp). For a number of ours, the program gets what it gets without the
//   collector, where that number is not open:
//     close(ours)                  -1, EBADF; the descriptor stays ours
//     close_range / closefrom      the ranges around ours are closed, 0
//     dup2 / dup3 onto ours        ours steps to another number first (after a write in progress on it), then
//                                  the program's call goes through
//     dup / dup2 / dup3 of ours    -1, EBADF
//   A number in the table whose file is not ours any more (the program closed it by a raw system call and got
//   the number again for a file of its own) is the program's: the collector lets go of it and the call goes
//   through. Only a number of ours costs more than the table's scan (one fstat): every other call is passed on.
//
//   Raw system calls cannot be interposed, and neither can anything when the collector was not LD_PRELOADed: the
//   trace writer checks the file's identity (st_dev, st_ino) before every chunk it writes and, when the number is
//   gone or holds another file, opens the same trace again by its absolute name, appending (trace_file.h).
//
// Everything here is async-signal-safe (atomics and system calls), and no call allocates.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace gprof::collector::descriptors {

// Never placed above this number: the kernel's descriptor table grows to the highest number in use, and every fork
// copies it (8 bytes a number).
inline constexpr int kHighestPlace = 4096;
inline constexpr int kSlots = 16;

// Moves `fd` out of the program's way (see above), close-on-exec; returns its new number (the old one closed), or
// `fd` itself when no better number was free.
int place_high(int fd) noexcept;
// open(2), its descriptor placed high; works also when the program has used every number below its soft limit
// (when the hard limit leaves room above it).
int open_high(const char* path, int flags, mode_t mode = 0) noexcept;

// Runs make(ctx), which creates descriptors a library keeps for good and numbers itself (libunwind's
// memory-validation pipe, made on its first unwind: it writes to those numbers for as long as the process lives), so
// that they land out of the program's way as place_high() would put them: meanwhile every free number below that
// place is held by a placeholder (and the soft limit raised by three when the hard limit allows: the numbers just
// above the trace's). For the start of a process (one thread): a descriptor another thread opens meanwhile lands high
// too. Costs one dup and one close per free number below the place (at most kHighestPlace).
void create_high(void (*make)(void*), void* ctx) noexcept;

// ---- the table ----

// Enters `fd` (a descriptor of ours) in the table; returns its slot, or -1 when the table is full (the descriptor is
// then used unguarded).
int adopt(int fd) noexcept;
// The descriptor of `slot` for one read or write: the number to use now, -1 when the program took it (the holder
// stops, or opens its file again). Every use() is followed by done(): a dup2 onto it waits for the use to end.
int use(int slot) noexcept;
void done(int slot) noexcept;
// The holder replaces its descriptor (opened again): `fd` takes the slot; false when it changed meanwhile.
bool replace(int slot, int expected, int fd) noexcept;
// Takes `slot` out of the table and closes its descriptor (if it still holds one).
void release(int slot) noexcept;
// The file identity of `slot`, for the holder's own check.
bool same_file(int slot, int fd) noexcept;

// close(2) for the collector's own descriptors: never the interposer (which would refuse it).
int close_own(int fd) noexcept;

// In a forked child: the table's descriptors are copies the child does not use. Closed, the table emptied.
void reset_after_fork() noexcept;

// A slot value: the program took the number (closed by a raw system call, or dup2()ed over with nowhere to go).
inline constexpr int kTaken = -2;

// ---- the program's calls (the interposers' bodies) ----
int program_close(int fd) noexcept;
int program_close_range(unsigned first, unsigned last, int flags) noexcept;
void program_closefrom(int lowest) noexcept;
int program_dup(int fd) noexcept;
int program_dup2(int fd, int onto) noexcept;
int program_dup3(int fd, int onto, int flags) noexcept;

// Resolves glibc's close and closefrom (RTLD_NEXT) once, at load: a vfork child may call the interposers.
void resolve_real_functions() noexcept;

// What the table did, for the end-of-trace line: program calls refused on our numbers, our descriptor moved from
// under a dup2, numbers given up to the program.
struct Figures {
    uint64_t refused = 0;
    uint64_t moved = 0;
    uint64_t taken = 0;
};
Figures figures() noexcept;

}  // namespace gprof::collector::descriptors
