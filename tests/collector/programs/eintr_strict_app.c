/* A program that treats an interrupted call as fatal (issue 35: the program never notices CPU sampling). It burns
 * CPU between blocking calls that SA_RESTART does not restart (poll, select, nanosleep, epoll_wait) and a read of a
 * pipe another thread fills, and aborts on EINTR; it also checks that its SIGPROF disposition and signal mask are
 * what it set. A third thread burns CPU (so it is sampled), then blocks every signal and sigwaits for any: it must
 * get the SIGUSR2 main sends at the end and nothing else. Prints "ok N" after N rounds. With "wall" as second argument it arms a wall-clock timer of its own
 * that signals the main thread (a handler without SA_RESTART): the control that shows the EINTR checks fire.
 * A test double, never installed. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static int pipe_fds[2];
static volatile double sink;

static void fatal(const char* what) {
    fprintf(stderr, "%s: %s\n", what, errno == EINTR ? "EINTR" : "error");
    abort();
}

static void burn(long n) {
    double x = 0;
    for (long i = 0; i < n; ++i) x += (double)i * 0.5;
    sink = x;
}

static void on_alarm(int sig) { (void)sig; }

static void* waiter(void* arg) {
    (void)arg;
    for (int i = 0; i < 20; ++i) {
        burn(300000);
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);  /* while a CPU-time timer may be firing */
        burn(100000);
        sigset_t none;
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &none, NULL);
    }
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    burn(300000);
    int sig = 0;
    if (sigwait(&all, &sig) != 0 || sig != SIGUSR2) {
        fprintf(stderr, "sigwait got signal %d, not SIGUSR2\n", sig);
        abort();
    }
    return NULL;
}

static void arm_wall_timer(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;  /* no SA_RESTART */
    sigaction(SIGUSR1, &sa, NULL);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGUSR1;
    ev._sigev_un._tid = gettid();
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) fatal("timer_create");
    struct itimerspec spec = {{0, 100000}, {0, 100000}};
    timer_settime(timer, 0, &spec, NULL);
}

static void* writer(void* arg) {
    (void)arg;
    for (int i = 0; i < 200; ++i) {
        struct timespec ts = {0, 2000000};
        if (nanosleep(&ts, NULL) != 0) fatal("writer nanosleep");
        char c = 'x';
        if (write(pipe_fds[1], &c, 1) != 1) fatal("write");
        burn(200000);
    }
    return NULL;
}

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    struct sigaction before;
    sigaction(SIGPROF, NULL, &before);
    if (before.sa_handler != SIG_DFL) fatal("SIGPROF disposition changed");
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, NULL, &mask);
    if (sigismember(&mask, SIGPROF)) fatal("SIGPROF blocked");
    if (pipe(pipe_fds) != 0) fatal("pipe");
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    ev.data.fd = pipe_fds[0];
    int other[2];
    if (pipe(other) != 0) fatal("pipe");
    epoll_ctl(ep, EPOLL_CTL_ADD, other[0], &ev);
    pthread_t t, w;
    pthread_create(&t, NULL, writer, NULL);
    pthread_create(&w, NULL, waiter, NULL);
    if (argc > 2 && argv[2][0] == 'w') arm_wall_timer();
    for (int i = 0; i < rounds; ++i) {
        burn(300000);
        struct pollfd p = {other[0], POLLIN, 0};
        if (poll(&p, 1, 1) < 0) fatal("poll");
        fd_set r;
        FD_ZERO(&r);
        FD_SET(other[0], &r);
        struct timeval tv = {0, 500};
        if (select(other[0] + 1, &r, NULL, NULL, &tv) < 0) fatal("select");
        struct timespec ts = {0, 200000};
        if (nanosleep(&ts, NULL) != 0) fatal("nanosleep");
        struct epoll_event out;
        if (epoll_wait(ep, &out, 1, 1) < 0) fatal("epoll_wait");
        char c;
        if (i < 200 && read(pipe_fds[0], &c, 1) != 1) fatal("read");
    }
    pthread_join(t, NULL);
    struct timespec settle = {0, 50000000};
    nanosleep(&settle, NULL);  /* the waiter is in sigwait by now (or soon: SIGUSR2 stays pending for it) */
    pthread_kill(w, SIGUSR2);
    pthread_join(w, NULL);
    struct sigaction after;
    sigaction(SIGPROF, NULL, &after);
    if (after.sa_handler != SIG_DFL) fatal("SIGPROF disposition changed");
    pthread_sigmask(SIG_BLOCK, NULL, &mask);
    if (sigismember(&mask, SIGPROF)) fatal("SIGPROF blocked");
    printf("ok %d\n", rounds);
    return 0;
}
