/* A test double of a filesystem running full, for a whole process tree, without root: LD_PRELOADed, it gives the
   files under GPROF_TEST_DISK_DIR a shared budget of new bytes (an 8-byte count in the file GPROF_TEST_DISK_BUDGET,
   mapped shared, so every process of the tree draws on one disk). Like a full disk:
     write      takes what fits (a short write), then fails with ENOSPC;
     fallocate  allocates only when the whole range fits, else ENOSPC, and what it allocated is not charged again;
     ftruncate  that shrinks a file gives its blocks back.
   Bytes are charged only past what the file already holds (its size, or its allocated blocks). Files named in
   GPROF_TEST_DISK_FULL_NAMES (comma-separated base names; and the temporary ".NAME.XXXXXX" a whole-file writer
   renames to NAME) find the disk full whatever the budget: the state the disk is in when gprof-run writes its report
   after a program filled it. Never installed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile int64_t* budget(void) {
    static volatile int64_t* mapped = NULL;
    static int tried = 0;
    if (!tried) {
        tried = 1;
        const char* path = getenv("GPROF_TEST_DISK_BUDGET");
        int fd = path ? open(path, O_RDWR | O_CLOEXEC) : -1;
        if (fd >= 0) {
            void* p = mmap(NULL, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p != MAP_FAILED) mapped = p;
            close(fd);
        }
    }
    return mapped;
}

/* 0: not on the disk; 1: on it; 2: on it, and always full. */
static int on_disk(int fd) {
    const char* dir = getenv("GPROF_TEST_DISK_DIR");
    if (!dir || !*dir || !budget()) return 0;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';
    size_t len = strlen(dir);
    if (strncmp(target, dir, len) != 0 || (target[len] != '/' && target[len] != '\0')) return 0;
    const char* base = strrchr(target, '/');
    base = base ? base + 1 : target;
    const char* full = getenv("GPROF_TEST_DISK_FULL_NAMES");
    size_t base_len = strlen(base);
    /* A whole-file writer (report/output/output_file.h) fills ".NAME.XXXXXX" beside NAME and renames it into place:
       the same file, for the disk. */
    if (base[0] == '.' && base_len > 8 && base[base_len - 7] == '.') {
        base += 1;
        base_len -= 8;
    }
    for (const char* p = full; p && *p;) {
        const char* end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == base_len && strncmp(p, base, n) == 0) return 2;
        p = end ? end + 1 : p + n;
    }
    return 1;
}

/* Bytes the file holds room for already: its size or its allocated blocks, whichever is more. */
static int64_t held(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return 0;
    int64_t blocks = (int64_t)st.st_blocks * 512;
    return blocks > st.st_size ? blocks : (int64_t)st.st_size;
}

/* Takes up to `want` bytes from the budget; returns what it could take. */
static int64_t take(int64_t want, int all_or_nothing) {
    volatile int64_t* b = budget();
    for (;;) {
        int64_t have = __atomic_load_n(b, __ATOMIC_ACQUIRE);
        int64_t got = want <= have ? want : (all_or_nothing ? 0 : have);
        if (got <= 0) return 0;
        if (__atomic_compare_exchange_n(b, &have, have - got, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return got;
    }
}

ssize_t write(int fd, const void* buf, size_t count) {
    static ssize_t (*real)(int, const void*, size_t) = NULL;
    if (!real) real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
    int where = count == 0 ? 0 : on_disk(fd);
    if (where == 0) return real(fd, buf, count);
    if (where == 2) {
        errno = ENOSPC;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) return real(fd, buf, count);
    int flags = fcntl(fd, F_GETFL);
    int64_t offset = (flags & O_APPEND) ? (int64_t)st.st_size : (int64_t)lseek(fd, 0, SEEK_CUR);
    int64_t end = offset + (int64_t)count;
    int64_t room = held(fd);
    int64_t need = end > room ? end - room : 0;
    int64_t got = need ? take(need, 0) : 0;
    int64_t allowed = (int64_t)count - (need - got);
    if (allowed <= 0) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, (size_t)allowed);
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
    static int (*real)(int, int, off_t, off_t) = NULL;
    if (!real) real = (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate");
    if (!on_disk(fd) || (mode & FALLOC_FL_PUNCH_HOLE)) return real(fd, mode, offset, len);
    int64_t room = held(fd);
    int64_t need = (int64_t)(offset + len) > room ? (int64_t)(offset + len) - room : 0;
    if (need > 0 && take(need, 1) == 0) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, mode, offset, len);
}

int ftruncate(int fd, off_t length) {
    static int (*real)(int, off_t) = NULL;
    if (!real) real = (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
    if (!on_disk(fd)) return real(fd, length);
    int64_t before = held(fd);
    int rc = real(fd, length);
    int64_t after = held(fd);
    if (rc == 0 && after < before) __atomic_add_fetch(budget(), before - after, __ATOMIC_ACQ_REL);
    return rc;
}

/* The same under their 64-bit names (what _FILE_OFFSET_BITS=64 builds call). */
int fallocate64(int fd, int mode, off_t offset, off_t len) { return fallocate(fd, mode, offset, len); }
int ftruncate64(int fd, off_t length) { return ftruncate(fd, length); }
