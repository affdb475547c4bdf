/* log.h - the server log: "pid:role dd Mon yyyy hh:mm:ss.mmm <level> message", as Redis.
 * Thread-safe (each line is one write). */
#ifndef CTE_COMMON_LOG_H
#define CTE_COMMON_LOG_H

enum { LOG_DEBUG_LEVEL = 0, LOG_VERBOSE_LEVEL = 1, LOG_NOTICE_LEVEL = 2, LOG_WARNING_LEVEL = 3 };

/* path NULL or "" logs to stderr. Returns 0 or -errno. */
int log_open(const char *path, int level);
void log_set_level(int level);
void log_close(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG_LEVEL, __VA_ARGS__)
#define log_verbose(...) log_msg(LOG_VERBOSE_LEVEL, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE_LEVEL, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING_LEVEL, __VA_ARGS__)

#endif
