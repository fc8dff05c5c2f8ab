#include "session/exec_records.h"

#include <atomic>
#include <cstring>
#include <string>

#include "base/clock.h"
#include "pipeline/pipeline.h"

namespace gprof::collector {

namespace tr = gprof::trace;

namespace {

constexpr size_t kCommandBytes = 4096;  // the Exec record's command is cut here

struct Note {
    std::atomic<uint32_t> state{0};  // 0 free, 1 being filled, 2 ready, 3 being written
    int64_t pid = 0;
    tr::Timestamp timestamp = 0;
    tr::ExecImage image = tr::ExecImage::Traced;
    char path[1024] = {};
    char command[1024] = {};
};

Note g_notes[16];

}  // namespace

void write_exec_record(tr::TraceWriter& writer, int64_t pid, std::string_view path, std::string_view command,
                       tr::ExecImage image, bool spawned) noexcept {
    tr::Exec r;
    r.timestamp = clock::now();
    r.pid = static_cast<uint64_t>(pid);
    r.path = writer.intern(path.data(), path.size());
    r.command = writer.intern(command.data(), command.size());
    r.image = image;
    r.spawned = spawned ? 1 : 0;
    writer.add(r);
}

void post_exec_record(Pipeline& pipeline, int64_t pid, const ProgramImage& image, char* const argv[],
                      bool spawned) noexcept {
    try {
        char command[kCommandBytes];
        join_argv(argv, command, sizeof command);
        pipeline.post([pid, path = std::string(image.path), command = std::string(command), kind = image.image,
                       spawned](tr::TraceWriter& w) { write_exec_record(w, pid, path, command, kind, spawned); });
    } catch (...) {
    }
}

int leave_note(int64_t pid, const ProgramImage& image, char* const argv[]) noexcept {
    for (int i = 0; i < static_cast<int>(std::size(g_notes)); ++i) {
        Note& n = g_notes[i];
        uint32_t expected = 0;
        if (!n.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
        n.pid = pid;
        n.timestamp = clock::now();
        n.image = image.image;
        std::memcpy(n.path, image.path, sizeof n.path);
        n.path[sizeof n.path - 1] = '\0';
        join_argv(argv, n.command, sizeof n.command);
        n.state.store(2, std::memory_order_release);
        return i;
    }
    return -1;
}

void withdraw_note(int slot) noexcept {
    if (slot < 0 || slot >= static_cast<int>(std::size(g_notes))) return;
    uint32_t ready = 2;
    g_notes[slot].state.compare_exchange_strong(ready, 0, std::memory_order_acq_rel);
}

void write_notes(tr::TraceWriter& writer) noexcept {
    for (Note& n : g_notes) {
        uint32_t ready = 2;
        if (!n.state.compare_exchange_strong(ready, 3, std::memory_order_acq_rel)) continue;
        tr::Exec r;
        r.timestamp = n.timestamp;
        r.pid = static_cast<uint64_t>(n.pid);
        r.path = writer.intern(n.path);
        r.command = writer.intern(n.command);
        r.image = n.image;
        r.spawned = 1;
        writer.add(r);
        n.state.store(0, std::memory_order_release);
    }
}

void forget_notes() noexcept {
    for (Note& n : g_notes) n.state.store(0, std::memory_order_relaxed);
}

}  // namespace gprof::collector
