/*
 * pty_ceiling.c - the fastest a reader can take bytes out of a Linux PTY:
 * forkpty a command at 200x50 and read() its output into a 64 KiB buffer,
 * doing nothing with it.  The benchmarks print this beside corral and tmux
 * so that a target above it is seen to be above what the kernel delivers.
 * Prints the seconds taken.
 */
#include "config.h"

#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pty_ceiling CMD [ARG...]\n");
        return 2;
    }
    struct winsize ws = {.ws_row = 50, .ws_col = 200};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    if (pid < 0) {
        perror("forkpty");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    static char buf[1 << 16];
    while (read(master, buf, sizeof buf) > 0)
        ;
    waitpid(pid, NULL, 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
