// Exec records: the program this process exec'ed into, and the children it started that cannot be traced.
//
// A child started by vfork + exec shares this process's memory until its exec, so it may not lock or allocate:
// its exec interposer only leaves a note in a fixed slot here (leave_note), and takes it back if the exec fails
// (withdraw_note). The writer thread turns the notes into Exec records (spawned = 1) at its next period. A child
// that posix_spawn started is written at once, from the caller's thread (post_spawned).
#pragma once

#include <cstdint>
#include <string_view>

#include "process/program_image.h"
#include "gprof/trace/writer.h"

namespace gprof::collector {

class Pipeline;

// One Exec record.
void write_exec_record(trace::TraceWriter& writer, int64_t pid, std::string_view path, std::string_view command,
                       trace::ExecImage image, bool spawned) noexcept;

// Through the pipeline (any thread, ordinary context).
void post_exec_record(Pipeline& pipeline, int64_t pid, const ProgramImage& image, char* const argv[],
                      bool spawned) noexcept;

// In a vfork child: a note for the parent's writer. Returns the slot, or -1 when every slot is taken.
int leave_note(int64_t pid, const ProgramImage& image, char* const argv[]) noexcept;
// The exec failed: the child runs on (or exits); there is nothing to record.
void withdraw_note(int slot) noexcept;
// Writer thread: the notes left since the last call, as Exec records.
void write_notes(trace::TraceWriter& writer) noexcept;
// In a forked child: the notes belong to the parent's writer.
void forget_notes() noexcept;

}  // namespace gprof::collector
