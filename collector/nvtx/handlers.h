// The NVTX tool side: handlers installed into the NVTX loader's function tables of every module that calls
// InitializeInjectionNvtx2. They append events to the calling thread's stream (nvtx/stream.h), and open and close the NVTX capture range (nvtx/capture.h).
#pragma once

#include <atomic>

namespace gprof::collector::nvtx {

using GetExportTable = const void* (*)(uint32_t exportTableId);

// Installs the handlers for one module's NVTX state. Returns false if the export table is unusable.
// Safe to call from several threads and once per module; all modules share one state. events = false: NVTX is not
// traced, only the NVTX capture range is followed (push/pop depths, start/end, domains, registered strings).
bool attach(GetExportTable get_export_table, bool events = true) noexcept;

// Hot-path gate: false in an inactive process (e.g. a forked child with GPROF_NO_CHILDREN) so handlers that
// are already installed record nothing.
extern std::atomic<bool> g_recording;

// Why recording stopped for good in this process: it began to end. Events that come after are counted per thread
// (ThreadStream::after_end) and said at the end of the trace, as not recorded rather than dropped.
enum class Ending : uint8_t { None, Exit, Exec, Signal };
// Stops the handlers at once: the process began to end by `why`. The last drain then reads only what was there.
void stop_recording(Ending why) noexcept;
// The process goes on after all (an exec that failed): recording may start again with its new session.
void clear_ending() noexcept;
Ending ending() noexcept;

}  // namespace gprof::collector::nvtx
