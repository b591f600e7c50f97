/* log.c - the logging facility: level-filtered lines on stderr. */
#include "base/log.h"

#include <stdio.h>

static enum lunar_log_level log_level = LUNAR_LOG_INFO;

void lunar_log_set_level(enum lunar_log_level level)
{
	log_level = level;
}

void lunar_log(enum lunar_log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", "debug: "};
	va_list ap;

	if (level > log_level)
		return;
	fputs("lunar: ", stderr);
	fputs(prefix[level], stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void lunar_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
