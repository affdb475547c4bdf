/* Tests for common/flock.c: locks between processes, their holder, the pid lock file. */
#include "common/flock.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char path[64];

static void setup(void)
{
    strcpy(path, "/tmp/cte-flock-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(flock, .init = setup, .fini = teardown, .timeout = 10);

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A child that locks path, tells the parent through a pipe, holds the lock for hold_ms, then
 * exits. Returns its pid once it holds the lock. */
static pid_t hold_in_child(int hold_ms)
{
    int p[2];
    char c;
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        if (fd < 0 || flock(fd, LOCK_EX) < 0) _exit(1);
        if (write(p[1], "x", 1) != 1) _exit(1);
        usleep((useconds_t)hold_ms * 1000);
        _exit(0);
    }
    close(p[1]);
    cr_assert_eq(read(p[0], &c, 1), 1);
    close(p[0]);
    return pid;
}

Test(flock, refuses_a_lock_another_process_keeps_and_names_it)
{
    pid_t pid = hold_in_child(3000);
    int fd = open(path, O_RDWR);
    long long t0 = now_ms();
    cr_assert_eq(flock_try(fd, 50), -EWOULDBLOCK);
    cr_assert_geq(now_ms() - t0, 50, "it gave up before wait_ms");
    cr_assert_eq(flock_holder(fd), (long)pid);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_assert_eq(flock_try(fd, 0), 0, "the kernel drops the lock of a dead process");
    cr_assert_eq(flock_holder(fd), (long)getpid());
    close(fd);
}

Test(flock, waits_for_a_holder_that_lets_go_within_wait_ms)
{
    pid_t pid = hold_in_child(60);
    int fd = open(path, O_RDWR);
    cr_assert_eq(flock_try(fd, FLOCK_WAIT_MS), 0);
    waitpid(pid, NULL, 0);
    close(fd);
}

Test(flock, the_pid_file_names_its_holder)
{
    int fd, fd2;
    long holder = -1;
    char text[32] = "";
    cr_assert_eq(flock_pidfile_open(path, &fd, &holder), 0);
    cr_assert_eq(pread(fd, text, sizeof text - 1, 0) > 0, 1);
    cr_assert_eq(strtol(text, NULL, 10), (long)getpid());
    /* a second open conflicts even in one process */
    cr_assert_eq(flock_pidfile_open(path, &fd2, &holder), -EWOULDBLOCK);
    cr_assert_eq(holder, (long)getpid());
    cr_assert_eq(fd2, -1);
    close(fd);
}
