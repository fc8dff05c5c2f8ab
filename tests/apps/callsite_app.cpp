// The call-site test program (issue 18): a host-only program built with -g -O2 whose "CUDA calls" are made through
// a statically linked runtime stand-in (a cudart:: function under an extern "C" cudaLaunchKernel, as libcudart_static
// puts them inside the program's image). Each call records its real return addresses with backtrace(3), and the
// program prints what a trace needs and what the report must then show:
//   module <path> <base> <size> <build id hex>     (base = load bias + lowest PT_LOAD vaddr, like the collector)
//   stack <name> <addr> <addr> ...                 (innermost first)
//   expect <name> <file>:<line> <function>         (the user's frame the report must show first; __FILE__ as the
//                                                   compiler saw it, relative to the build folder under ninja)
//   expect_inlined <name> <file>:<line> <function> (the frame that function was inlined into)
// A test double: never installed.
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {
struct Capture {
    void* frames[64];
    int count = 0;
};
Capture g_launch, g_copy, g_sync;
int g_line_launch, g_line_inlined_call, g_line_copy, g_line_sync;
}  // namespace

namespace cudart {
__attribute__((noinline)) void submit(Capture* c) {
    c->count = backtrace(c->frames, 64);
    asm volatile("" ::: "memory");
}
}  // namespace cudart

extern "C" __attribute__((noinline)) int cudaLaunchKernel(Capture* c) {
    cudart::submit(c);
    asm volatile("" ::: "memory");
    return 0;
}
extern "C" __attribute__((noinline)) int cudaMemcpy(Capture* c) {
    cudart::submit(c);
    asm volatile("" ::: "memory");
    return 0;
}
extern "C" __attribute__((noinline)) int cudaDeviceSynchronize(Capture* c) {
    cudart::submit(c);
    asm volatile("" ::: "memory");
    return 0;
}

// Inlined into train_step: its call into the runtime is the user's frame, shown as inlined (by its DWARF name: a
// static function inlined everywhere has no linkage name to demangle).
static inline __attribute__((always_inline)) int launch_step(Capture* c) {
    int rc = cudaLaunchKernel(c); g_line_launch = __LINE__;
    return rc;
}

__attribute__((noinline)) int train_step() {
    int rc = launch_step(&g_launch); g_line_inlined_call = __LINE__;
    rc += cudaMemcpy(&g_copy); g_line_copy = __LINE__;
    rc += cudaDeviceSynchronize(&g_sync); g_line_sync = __LINE__;
    return rc;
}

namespace {
int print_module(dl_phdr_info* info, size_t, void*) {
    if (info->dlpi_name && info->dlpi_name[0]) return 0;  // the program is the entry with an empty name
    uint64_t lo = ~0ull, hi = 0;
    const char* id = nullptr;
    size_t id_size = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD) {
            if (ph.p_vaddr < lo) lo = ph.p_vaddr;
            if (ph.p_vaddr + ph.p_memsz > hi) hi = ph.p_vaddr + ph.p_memsz;
        }
        if (ph.p_type == PT_NOTE) {
            const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
            const char* end = p + ph.p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
                auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
                const char* name = p + sizeof *n;
                const char* desc = name + ((n->n_namesz + 3) & ~3u);
                if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                    id = desc;
                    id_size = n->n_descsz;
                }
                p = desc + ((n->n_descsz + 3) & ~3u);
            }
        }
    }
    char path[4096] = {};
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n < 0) return 0;
    std::printf("module %s %llu %llu ", path, static_cast<unsigned long long>(info->dlpi_addr + lo),
                static_cast<unsigned long long>(hi - lo));
    for (size_t i = 0; i < id_size; ++i) std::printf("%02x", static_cast<unsigned char>(id[i]));
    std::printf("\n");
    return 1;
}

void print_stack(const char* name, const Capture& c) {
    std::printf("stack %s", name);
    for (int i = 0; i < c.count; ++i) std::printf(" %llu", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(c.frames[i])));
    std::printf("\n");
}
}  // namespace

int main() {
    if (train_step() != 0) return 1;
    dl_iterate_phdr(print_module, nullptr);
    print_stack("launch", g_launch);
    print_stack("copy", g_copy);
    print_stack("sync", g_sync);
    std::printf("expect launch %s:%d launch_step\n", __FILE__, g_line_launch);
    std::printf("expect_inlined launch %s:%d train_step()\n", __FILE__, g_line_inlined_call);
    std::printf("expect copy %s:%d train_step()\n", __FILE__, g_line_copy);
    std::printf("expect sync %s:%d train_step()\n", __FILE__, g_line_sync);
    return 0;
}
