/* Logging: PX_LOG_LEVEL selects verbosity, PX_LOG_SUBSYS filters subsystems. */
#ifndef PX_LOG_H
#define PX_LOG_H

typedef enum {
    PX_LOG_ERROR = 0,
    PX_LOG_WARN = 1,
    PX_LOG_INFO = 2,
    PX_LOG_DEBUG = 3,
    PX_LOG_TRACE = 4
} px_log_level_t;

extern int px_log_level_cur;

void px_log_init(void);
/* Prefix for every line, e.g. "rank 3"; set once the rank is known. */
void px_log_set_prefix(const char *prefix);
int px_log_subsys_enabled(const char *subsys);
void px_log(px_log_level_t level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define PX_LOG_ON(level) ((int)(level) <= px_log_level_cur)

#define px_error(subsys, ...) px_log(PX_LOG_ERROR, subsys, __VA_ARGS__)
#define px_warn(subsys, ...)                                                                       \
    do {                                                                                           \
        if (PX_LOG_ON(PX_LOG_WARN))                                                                \
            px_log(PX_LOG_WARN, subsys, __VA_ARGS__);                                              \
    } while (0)
#define px_info(subsys, ...)                                                                       \
    do {                                                                                           \
        if (PX_LOG_ON(PX_LOG_INFO))                                                                \
            px_log(PX_LOG_INFO, subsys, __VA_ARGS__);                                              \
    } while (0)
#define px_debug(subsys, ...)                                                                      \
    do {                                                                                           \
        if (PX_LOG_ON(PX_LOG_DEBUG))                                                               \
            px_log(PX_LOG_DEBUG, subsys, __VA_ARGS__);                                             \
    } while (0)
#define px_trace(subsys, ...)                                                                      \
    do {                                                                                           \
        if (PX_LOG_ON(PX_LOG_TRACE))                                                               \
            px_log(PX_LOG_TRACE, subsys, __VA_ARGS__);                                             \
    } while (0)

#endif
