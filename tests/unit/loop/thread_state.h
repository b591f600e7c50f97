/*
 * thread_state.h - for the loop tests that interrupt a thread asleep in a
 * system call: whether a thread of this process is blocked in the kernel,
 * read from /proc (its state S), so a signal is sent only once it sleeps.
 */
#ifndef LUNAR_TEST_LOOP_THREAD_STATE_H
#define LUNAR_TEST_LOOP_THREAD_STATE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Is thread @tid of this process blocked in the kernel (state S)? */
static inline bool thread_blocked(int tid)
{
	char path[64], buf[512];
	const char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the name in parentheses may hold anything */
	return p && p[1] == ' ' && p[2] == 'S';
}

#endif
