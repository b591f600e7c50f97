/*
 * nsutil.h - helpers for root-only ctl tests: run shell commands, create,
 * enter and delete throw-away network namespaces. Every namespace a test
 * creates carries the test's pid in its name, so parallel runs never clash,
 * and is deleted by the group teardown even when an assertion failed.
 */
#ifndef LUNAR_TESTS_CTL_NSUTIL_H
#define LUNAR_TESTS_CTL_NSUTIL_H

#include <stddef.h>

/** Exit code meson treats as "skipped". */
#define NS_SKIP 77

/** Exit with NS_SKIP (and a note on stderr) unless running as root. */
void ns_require_root(const char *test);

/** Run a shell command built from @fmt; return its exit status (or -1). */
int ns_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Write "<prefix>-<pid>" into @buf (namespace names are <= 15 chars + pid). */
void ns_name(char *buf, size_t len, const char *prefix);

/** Move the calling thread into namespace @name; returns 0 or -errno. */
int ns_enter(const char *name);

/** Return to the namespace the process started in (no-op if never left). */
void ns_leave(void);

/** Delete namespace @name if it exists (ignores errors: used in teardown). */
void ns_delete(const char *name);

#endif
