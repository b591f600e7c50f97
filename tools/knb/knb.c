/*
 * knb.c - the knb benchmark's entry point: parse the command line, run the
 * chosen stack (kernel, lunar or raw) as server or client (see knb.h and
 * docs/KNB.md).
 */
#include "knb.h"

#include <signal.h>
#include <stdio.h>

#include "loop/env.h"

bool knb_stop_requested(void)
{
	return lunar_stop_requested();
}

void knb_handle_signals(void)
{
	lunar_handle_signals();
}

int main(int argc, char **argv)
{
	struct knb_config c;
	int rc = knb_parse_args(argc, argv, &c);

	if (rc)
		return rc > 0 ? 0 : 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN); /* a peer that closed is an error to report, not a death */
	switch (c.stack) {
	case KNB_STACK_LUNAR:
		return knb_lunar_run(&c, argv[0]);
	case KNB_STACK_RAW:
		return knb_raw_run(&c, argv[0]);
	default:
		return knb_kernel_run(&c);
	}
}
