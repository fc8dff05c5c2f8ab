#include "nvtx/stream.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <new>

#include "base/block_pool.h"
#include "nvtx/session_hooks.h"

namespace gprof::collector::nvtx {

namespace detail {
std::atomic<void (*)() noexcept> g_on_new_stream{nullptr};
std::atomic<void (*)() noexcept> g_nudge_writer{nullptr};
std::atomic<void (*)(uint64_t, std::string_view) noexcept> g_post_thread_name{nullptr};
}  // namespace detail

namespace {

std::atomic<ThreadStream*> g_streams{nullptr};
std::atomic<uint32_t> g_next_index{1};
pthread_key_t g_exit_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

// initial-exec: one TLS slot reached without __tls_get_addr. The library is loaded at start (LD_PRELOAD) or
// by dlopen from the NVTX loader; a pointer fits glibc's static TLS surplus either way.
__attribute__((tls_model("initial-exec"))) thread_local ThreadStream* t_stream = nullptr;

void on_thread_exit(void* p) {
    // Runs when a thread that used NVTX ends, on that thread: its name is still its own (one prctl, no allocation).
    // The writer frees its blocks, and then the stream, once it has read them. An NVTX call later in this thread's
    // end (another key's destructor) starts a stream of its own.
    t_stream = nullptr;
    auto* s = static_cast<ThreadStream*>(p);
    ::prctl(PR_GET_NAME, s->exit_name, 0, 0, 0);
    s->exit_name[sizeof s->exit_name - 1] = '\0';
    s->exited.store(true, std::memory_order_release);
}

void make_key() { pthread_key_create(&g_exit_key, on_thread_exit); }

// Read blocks kept for reuse: 64 (16 MiB); the cap bounds everything in flight (base/block_pool.h).
constinit BlockPool g_blocks{sizeof(Block), 64, kMaxBytesInFlight};

Block* new_block() noexcept {
    void* mem = g_blocks.take();
    // Default-initialised: `Block()` would zero all 256 KiB on the application thread (a memset, measured with perf
    // in bench/nvtx_real_process); the bytes are written before they are published, so they need no clearing.
    return mem ? new (mem) Block : nullptr;
}

}  // namespace

void free_block(Block* b) noexcept {
    if (!b) return;
    b->~Block();
    g_blocks.give(b);
}

ThreadStream* current_stream() noexcept {
    ThreadStream* s = t_stream;
    return s ? s : attach_thread();
}

ThreadStream* existing_stream() noexcept { return t_stream; }

ThreadStream* attach_thread() noexcept {
    if (t_stream) return t_stream;
    on_new_stream();  // a forked child starts its own trace on first use
    pthread_once(&g_key_once, make_key);
    void* mem = std::malloc(sizeof(ThreadStream));
    if (!mem) return nullptr;
    auto* s = new (mem) ThreadStream();
    s->tid = static_cast<uint64_t>(::syscall(SYS_gettid));
    s->index = g_next_index.fetch_add(1, std::memory_order_relaxed);
    s->next_range = (static_cast<uint64_t>(s->index) << 40) | 1;
    Block* b = new_block();
    if (!b) {
        std::free(mem);
        return nullptr;
    }
    s->tail = b;
    s->head = b;
    pthread_setspecific(g_exit_key, s);
    // Publish: the writer sees a stream whose first block is in place.
    ThreadStream* old = g_streams.load(std::memory_order_relaxed);
    do {
        s->next_stream = old;
    } while (!g_streams.compare_exchange_weak(old, s, std::memory_order_release, std::memory_order_relaxed));
    t_stream = s;
    return s;
}

uint8_t* reserve_slow(ThreadStream* s, size_t bytes) noexcept {
    if (bytes > kBlockBytes) {
        s->dropped.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    Block* b = new_block();
    if (!b) {
        s->dropped.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    Block* old = s->tail;
    s->tail = b;
    s->pos = 0;
    // `committed` of the old block is already final (commit() stores it after every event).
    old->next.store(b, std::memory_order_release);
    // Blocks pile up faster than the writer's period reads them: ask it to read now, so it frees them for reuse
    // before this thread needs fresh memory (a fresh block is an mmap whose pages the kernel zeroes; a reused one
    // is neither).
    if (g_blocks.in_flight() >= kNudgeBytes) nudge_writer();
    return b->data;
}

void free_stream(ThreadStream* s) noexcept {
    s->~ThreadStream();
    std::free(s);
}

void set_bytes_in_flight_cap(size_t bytes) noexcept { g_blocks.set_cap(bytes); }

BlockPool::Figures stream_memory() noexcept { return g_blocks.figures(); }

ThreadStream* streams() noexcept { return g_streams.load(std::memory_order_acquire); }

void reset_after_fork() noexcept {
    // Only the forking thread exists in the child. Its stream, and every other, belong to the parent's
    // writer: leak them and start again. The depth of the forking thread restarts at 0.
    g_streams.store(nullptr, std::memory_order_relaxed);
    g_blocks.reset_after_fork();
    if (t_stream) pthread_setspecific(g_exit_key, nullptr);  // the key exists once a stream was made
    t_stream = nullptr;
}

}  // namespace gprof::collector::nvtx
