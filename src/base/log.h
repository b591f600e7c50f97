/*
 * log.h - one logging facility. Errors meant for users say what is wrong
 * and how to fix it; lunar_die() is only for tools, never for the library.
 */
#ifndef LUNAR_BASE_LOG_H
#define LUNAR_BASE_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum lunar_log_level { LUNAR_LOG_ERR, LUNAR_LOG_WARN, LUNAR_LOG_INFO, LUNAR_LOG_DEBUG };

void lunar_log_set_level(enum lunar_log_level level);
void lunar_log(enum lunar_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Write a user-facing error message into @err (which may be NULL or of size
 * 0). The one convention for errors: functions return a negative errno and
 * say in @err what is wrong and how to fix it.
 */
void lunar_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define LOG_ERR(...)   lunar_log(LUNAR_LOG_ERR, __VA_ARGS__)
#define LOG_WARN(...)  lunar_log(LUNAR_LOG_WARN, __VA_ARGS__)
#define LOG_INFO(...)  lunar_log(LUNAR_LOG_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) lunar_log(LUNAR_LOG_DEBUG, __VA_ARGS__)

#endif
