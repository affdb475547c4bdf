/* flock.h - whole-file advisory locks between processes (flock(2)), and who holds them.
 *
 * A lock belongs to an open file description: it lasts while the descriptor (or a copy made
 * by fork or dup) stays open, and the kernel drops it when the process dies, so a crash never
 * leaves a stale lock behind. Two opens of one file conflict even inside one process. */
#ifndef CTE_COMMON_FLOCK_H
#define CTE_COMMON_FLOCK_H

/* Takes an exclusive lock on fd's file, waiting at most wait_ms for another holder to let go
 * (FLOCK_WAIT_MS: long enough for the forked rewrite child of a server that just crashed to
 * die, which holds its descriptors a moment longer). Returns 0, -EWOULDBLOCK when another open
 * file description still holds a lock on it, or another -errno. */
#define FLOCK_WAIT_MS 200
int flock_try(int fd, int wait_ms);
/* The pid of a process that holds a flock on fd's file, from /proc/locks; 0 when unknown
 * (no /proc, or the holder is outside our pid namespace). Never fails. */
long flock_holder(int fd);
/* The lock file of a directory in use: opens (creating, mode 0644) path, locks it and writes
 * our pid into it. Returns 0 with *fd set (keep it open for as long as the lock must hold;
 * close-on-exec), -EWOULDBLOCK with *holder the pid of the process that holds it (read from
 * the file, else /proc/locks; 0 when unknown), or another -errno. */
int flock_pidfile_open(const char *path, int *fd, long *holder); /* waits FLOCK_WAIT_MS */
/* Writes our pid into the lock file fd again (after a fork: the child keeps the lock when the
 * parent exits). Returns 0 or -errno. */
int flock_pidfile_write(int fd);

#endif
