/* A known answer for the OS-runtime trace (issue 35): a thread blocks in read() on a pipe for about SECONDS (the
 * main thread writes after sleeping that long) from a function of its own, blocked_reader(). Also: a contended
 * mutex, a poll that times out, and many short reads that stay under the threshold. A test double, never installed. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void blocked_reader(void) {
    char c;
    if (read(fds[0], &c, 1) != 1) abort();
}

static void* reader(void* arg) {
    (void)arg;
    blocked_reader();
    pthread_mutex_lock(&lock);  /* held by main for a while: a wait */
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char** argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    if (pipe(fds) != 0) return 1;
    pthread_mutex_lock(&lock);
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    if (write(fds[1], "x", 1) != 1) return 1;
    struct timespec hold = {0, 50000000};
    nanosleep(&hold, NULL);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    struct pollfd p = {fds[0], POLLIN, 0};
    poll(&p, 1, 20);
    printf("done\n");
    return 0;
}
