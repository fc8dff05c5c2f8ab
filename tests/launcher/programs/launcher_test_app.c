/* The application gprof-run runs in tests/launcher: one binary, one behaviour per first argument. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_all(int fd, const void* data, size_t n) {
    const char* p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) exit(90);
        p += w;
        n -= (size_t)w;
    }
}

static void drain_stdin(int out_fd) {
    char buf[4096];
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        if (out_fd >= 0) write_all(out_fd, buf, (size_t)n);
    }
}

static volatile sig_atomic_t got_signal = 0;
static void on_signal(int sig) { got_signal = sig; }

/* Process `index` of a tree of `total`: its children are 2i+1 (fork + exec of this program) and 2i+2 (fork only,
 * the same image goes on, unless `exec_all`), so the tree mixes the two ways a process tree grows. */
static int tree_node(const char* self, int index, int total, int exec_all) {
    pid_t kids[2];
    int n = 0;
    for (int k = 1; k <= 2; ++k) {
        int child = 2 * index + k;
        if (child >= total) break;
        pid_t pid = fork();
        if (pid < 0) return 91;
        if (pid == 0) {
            if (k == 1 || exec_all) {
                char idx[16], tot[16];
                snprintf(idx, sizeof idx, "%d", child);
                snprintf(tot, sizeof tot, "%d", total);
                execl(self, self, "tree-node", idx, tot, exec_all ? "exec-all" : (char*)NULL, (char*)NULL);
                _exit(92);
            }
            _exit(tree_node(self, child, total, 0));
        }
        kids[n++] = pid;
    }
    int rc = 0;
    for (int i = 0; i < n; ++i) {
        int st;
        if (waitpid(kids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) rc = 93;
    }
    return rc;
}

int main(int argc, char** argv) {
    if (argc < 2) return 64;
    const char* mode = argv[1];
    if (!strcmp(mode, "exit") && argc == 3) return atoi(argv[2]);
    if (!strcmp(mode, "signal") && argc == 3) {
        int sig = atoi(argv[2]);
        signal(sig, SIG_DFL);
        raise(sig);
        return 65;
    }
    if (!strcmp(mode, "echo")) {  /* stdin to stdout byte for byte, then fixed bytes on stderr */
        drain_stdin(1);
        static const char err[] = "app stderr line\n\001\377\000binary tail";
        write_all(2, err, sizeof err);
        return 0;
    }
    if (!strcmp(mode, "args")) {
        for (int i = 2; i < argc; ++i) printf("[%s]\n", argv[i]);
        return 0;
    }
    if (!strcmp(mode, "info")) {  /* pid, ppid and the named variables */
        printf("pid=%ld\nppid=%ld\n", (long)getpid(), (long)getppid());
        for (int i = 2; i < argc; ++i) {
            const char* v = getenv(argv[i]);
            if (v) printf("%s=%s\n", argv[i], v);
            else printf("%s unset\n", argv[i]);
        }
        return 0;
    }
    if (!strcmp(mode, "touch") && argc == 3) {
        int fd = open(argv[2], O_WRONLY | O_CREAT, 0600);
        return fd < 0 ? 66 : 0;
    }
    if (!strcmp(mode, "wait-signal")) {  /* catches the forwarded signals; exits 100+N */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        sigaction(SIGQUIT, &sa, NULL);
        write_all(1, "ready\n", 6);
        while (!got_signal) pause();
        char line[32];
        int n = snprintf(line, sizeof line, "got %d\n", (int)got_signal);
        write_all(1, line, (size_t)n);
        return 100 + got_signal;
    }
    if (!strcmp(mode, "wait-die")) {  /* default dispositions: the forwarded signal kills it */
        write_all(1, "ready\n", 6);
        for (;;) pause();
    }
    /* tree N [exec-all] */
    if (!strcmp(mode, "tree") && (argc == 3 || argc == 4))
        return tree_node(argv[0], 0, atoi(argv[2]), argc == 4 && !strcmp(argv[3], "exec-all"));
    if (!strcmp(mode, "tree-node") && (argc == 4 || argc == 5))
        return tree_node(argv[0], atoi(argv[2]), atoi(argv[3]), argc == 5 && !strcmp(argv[4], "exec-all"));
    if (!strcmp(mode, "orphan") && argc == 3) {
        /* Exits at once, leaving a child that finishes (writes FILE) only after its parent is gone. */
        int p[2];
        if (pipe(p) != 0) return 67;
        pid_t pid = fork();
        if (pid == 0) {
            close(p[1]);
            char c;
            for (;;) {
                ssize_t n = read(p[0], &c, 1);
                if (n == 0 || (n < 0 && errno != EINTR)) break;
            }
            usleep(300 * 1000); /* widens the window in which a launcher that does not wait would have left */
            int fd = open(argv[2], O_WRONLY | O_CREAT, 0600);
            _exit(fd < 0 ? 1 : 0);
        }
        return pid < 0 ? 68 : 0;
    }
    if (!strcmp(mode, "daemon")) {
        /* Leaves a child that never exits; prints its pid so the test can end it. */
        int p[2];
        if (pipe(p) != 0) return 69;
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            setsid();
            close(p[1]);
            for (;;) pause();
        }
        close(p[1]);
        char c;
        while (read(p[0], &c, 1) > 0) {} /* the child has called setsid */
        printf("daemon=%ld\n", (long)pid);
        return 0;
    }
    if (!strcmp(mode, "close-stdout")) {
        /* Closes stdout early, then lives on until stdin reaches EOF. */
        write_all(1, "early\n", 6);
        close(1);
        drain_stdin(-1);
        write_all(2, "done\n", 5);
        return 0;
    }
    if (!strcmp(mode, "preload-check")) {
        void* sym = dlsym(RTLD_DEFAULT, "launcher_test_preload_marker");
        printf("preload: %s\n", sym ? "yes" : "no");
        return 0;
    }
    return 64;
}
