// The process session at exec and spawn: a traced image hands its trace over or ends it with an Exec record, a
// failed exec goes on recording in a new file, an untraceable child is written as an Exec record (spawned = 1).
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>

#include "base/log.h"
#include "base/reentry.h"
#include "capture/capture_window.h"
#include "nvtx/capture.h"
#include "nvtx/handlers.h"
#include "nvtx/stream.h"
#include "pipeline/pipeline.h"
#include "session/exec_records.h"
#include "session/process_session.h"
#include "session/session_state.h"

namespace gprof::collector {

namespace tr = gprof::trace;
using namespace session_detail;

ExecTicket session_before_exec(const ProgramImage& image, char* const argv[]) noexcept {
    ExecTicket ticket;
    if (image.will_fail()) return ticket;  // the exec cannot work: the process goes on as it is
    int64_t self = static_cast<int64_t>(::syscall(SYS_getpid));
    int64_t owner = g_session_pid.load(std::memory_order_acquire);
    if (owner == 0) return ticket;
    if (owner != self) {
        // A vfork child (its parent's memory, its parent's session): no lock, no allocation. Only an untraceable
        // program leaves a note; a traced one records itself.
        if (image.image != tr::ExecImage::Traced) ticket.note = leave_note(self, image, argv);
        return ticket;
    }
    ReentryGuard guard(t_busy);
    if (!guard.entered()) return ticket;
    try {
        std::string path;
        {
            std::lock_guard lock(g_mutex);
            if (!state().active || g_shutdown_done.load()) return ticket;
            path = state().path;
        }
        bool recorded_something = g_cuda_attempted.load() || nvtx::streams() != nullptr;
        if (image.image == tr::ExecImage::Traced && !recorded_something) {
            // Nothing here that the new image's own trace (same pid, from its start) will not say: one trace per
            // process. Its writer may go on into the unlinked file until the exec replaces us.
            ::unlink(path.c_str());
            ticket.action = ExecTicket::Action::HandedOver;
            log::debug("exec of {}: the trace is handed over to the new image", image.path);
            return ticket;
        }
        struct Exec {
            int64_t pid;
            const ProgramImage& image;
            char* const* argv;
        } exec{self, image, argv};
        finish_session(EndCause::Exec, 0, [](void* ctx, Pipeline& pipeline) {
            auto* e = static_cast<Exec*>(ctx);
            post_exec_record(pipeline, e->pid, e->image, e->argv, false);
        }, &exec);
        ticket.action = ExecTicket::Action::Ended;
    } catch (...) {
    }
    return ticket;
}

void session_exec_failed(const ExecTicket& ticket, const ProgramImage& image, int error) noexcept {
    withdraw_note(ticket.note);
    if (ticket.action == ExecTicket::Action::None) return;
    ReentryGuard guard(t_busy);
    if (!guard.entered()) return;
    try {
        // The process goes on: so does its recording, in a new trace file (the old one is finished or removed).
        Pipeline* old = nullptr;
        {
            std::lock_guard lock(g_mutex);
            State& s = state();
            old = s.pipeline;
            s.pipeline = nullptr;  // leaked: a late CUPTI buffer may still name it
            s.recorder = nullptr;
            s.process = nullptr;
            s.file = nullptr;
            s.path.clear();
            s.active = false;
            g_pipeline.store(nullptr, std::memory_order_release);
        }
        if (ticket.action == ExecTicket::Action::HandedOver && old) old->finish();  // its file is already gone
        capture_window().reset_after_fork();
        nvtx::reset_capture_after_fork();
        nvtx::clear_ending();
        g_shutdown_done.store(false);
        g_shutdown_finished.store(false);
        g_end_began_ns.store(0);
        Pipeline* pipeline = nullptr;
        {
            std::lock_guard lock(g_mutex);
            ensure_started_locked();
            if (state().active) pipeline = state().pipeline;
        }
        if (!pipeline) return;
        pipeline->post_status(tr::Component::Collector, tr::StatusLevel::Info, error,
                              std::string("the exec of ") + image.path + " failed (" + std::strerror(error) +
                                  "): this process went on, and its trace continues here");
        if (g_cuda_ok.load()) attach_cuda(*pipeline);
    } catch (...) {
    }
}

void session_spawned(int64_t pid, const ProgramImage& image, char* const argv[]) noexcept {
    if (image.will_fail() || image.image == tr::ExecImage::Traced || pid <= 0) return;
    if (Pipeline* p = g_pipeline.load(std::memory_order_acquire)) post_exec_record(*p, pid, image, argv, true);
}

}  // namespace gprof::collector
