/* flock.c - whole-file advisory locks and their holders (see flock.h).
 *
 * The holder comes from /proc/locks, whose lines read
 *
 *   1: FLOCK  ADVISORY  WRITE 4711 fd:01:1234567 0 EOF
 *
 * (id, kind, mode, access, pid, major:minor:inode in hex:hex:decimal, range). A blocked
 * waiter's line starts "1: -> FLOCK ..."; those are skipped. Any thread. */
#include "common/flock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int flock_try(int fd, int wait_ms)
{
    for (int waited = 0;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) return -errno;
        if (waited >= wait_ms) return -EWOULDBLOCK;
        usleep(10 * 1000);
        waited += 10;
    }
}

/* The pid on one /proc/locks line if it is a granted FLOCK on (dev, ino), else 0. */
static long holder_on_line(const char *line, dev_t dev, ino_t ino)
{
    char kind[16], access[16];
    unsigned maj, min;
    unsigned long long inode;
    long pid;
    const char *p = strchr(line, ':');
    if (!p || strstr(line, "->")) return 0;
    if (sscanf(p + 1, "%15s %*s %15s %ld %x:%x:%llu", kind, access, &pid, &maj, &min, &inode) != 6)
        return 0;
    if (strcmp(kind, "FLOCK") || maj != major(dev) || min != minor(dev) || inode != ino) return 0;
    return pid > 0 ? pid : 0;
}

long flock_holder(int fd)
{
    struct stat st;
    char line[256];
    long pid = 0;
    FILE *f;
    if (fstat(fd, &st) < 0 || !(f = fopen("/proc/locks", "re"))) return 0;
    while (!pid && fgets(line, sizeof line, f)) pid = holder_on_line(line, st.st_dev, st.st_ino);
    fclose(f);
    return pid;
}

/* The pid written in the lock file, 0 if it holds none. */
static long pid_in_file(int fd)
{
    char text[32];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0) return 0;
    text[n] = '\0';
    long pid = strtol(text, NULL, 10);
    return pid > 0 ? pid : 0;
}

int flock_pidfile_write(int fd)
{
    char text[32];
    int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n) return -errno;
    return 0;
}

int flock_pidfile_open(const char *path, int *fd, long *holder)
{
    int rc;
    *holder = 0;
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0) return -errno;
    rc = flock_try(*fd, FLOCK_WAIT_MS);
    if (rc == -EWOULDBLOCK) {
        *holder = pid_in_file(*fd);
        if (!*holder) *holder = flock_holder(*fd);
    }
    if (rc == 0) rc = flock_pidfile_write(*fd);
    if (rc < 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}
