/* Stands in for libgprof-collector.so in the relocated prefix tests/launcher builds: proves the launcher's
 * environment brings it into every process (constructor, and an atfork handler for fork-only children) and into
 * the NVTX loader (InitializeInjectionNvtx2). Each event leaves <GPROF_OUTPUT_DIR>/double.<pid>.<event> holding
 * the variables the real collector reads, and each process an empty but complete <exe>.<pid>.gprof trace. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void mark(const char* event) {
    static const char* names[] = {"GPROF_OUTPUT_DIR", "GPROF_RUN_ID", "GPROF_TRACE", "GPROF_NO_CHILDREN",
                                  "GPROF_ROOT_PID", "LD_PRELOAD", NULL};
    const char* dir = getenv("GPROF_OUTPUT_DIR");
    if (!dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/double.%ld.%s", dir, (long)getpid(), event);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return;
    char line[8192];
    for (int i = 0; names[i]; ++i) {
        const char* v = getenv(names[i]);
        int n = snprintf(line, sizeof line, "%s=%s\n", names[i], v ? v : "(unset)");
        if (n > 0 && write(fd, line, (size_t)n) < 0) break;
    }
    close(fd);
}

void launcher_test_double_write_trace(const char* dir);

static void in_process(void) {
    mark("loaded");
    const char* dir = getenv("GPROF_OUTPUT_DIR");
    if (dir) launcher_test_double_write_trace(dir);
}

__attribute__((constructor)) static void loaded(void) {
    in_process();
    pthread_atfork(NULL, NULL, in_process);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
    (void)get_export_table;
    mark("nvtx");
    return 1;
}
