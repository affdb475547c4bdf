/* log.c - line-oriented server log (see log.h). */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_fd = 2;
static int log_level = LOG_NOTICE_LEVEL;

int log_open(const char *path, int level)
{
    log_level = level;
    if (!path || !*path) return 0;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    if (log_fd > 2) close(log_fd);
    log_fd = fd;
    return 0;
}

void log_set_level(int level)
{
    log_level = level;
}

void log_close(void)
{
    if (log_fd > 2) close(log_fd);
    log_fd = 2;
}

void log_msg(int level, const char *fmt, ...)
{
    static const char marks[] = ".-*#";
    if (level < log_level) return;
    char line[1024];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "%d:M ", (int)getpid());
    n += (int)strftime(line + n, sizeof(line) - (size_t)n, "%d %b %Y %H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03d %c ", (int)(tv.tv_usec / 1000),
                  marks[level & 3]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) m = 0;
    n += m;
    if (n > (int)sizeof(line) - 2) n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(log_fd, line, (size_t)n);
    (void)w;
}
