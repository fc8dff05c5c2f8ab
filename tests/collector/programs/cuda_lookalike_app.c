/* Looks like a CUDA program to the collector's check (it carries an .nv_fatbin section, as every nvcc-built
   program with kernels does) but never calls CUDA. Forks a child that does CPU work only.
     cuda_lookalike_app fork     parent and child exit 0; prints the child's status */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((section(".nv_fatbin"), used)) static const unsigned char fake_fatbin[16] = {0x50, 0xed, 0x55, 0xba};

int main(int argc, char** argv) {
    if (argc != 2 || strcmp(argv[1], "fork") != 0) return 2;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        volatile double x = 0;
        for (int i = 0; i < 100000; ++i) x = x + 1.0;
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
