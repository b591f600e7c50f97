/*
 * eal_exit.h - the EAL's cleanup at process exit, without its race.
 *
 * DPDK 22.11's rte_eal_cleanup() frees interrupt handles and unmaps the
 * EAL's memory while its interrupt thread ("eal-intr-thread") may still be
 * rebuilding its epoll set after the ports' last callbacks went (closing a
 * memif port does that): the thread then faults in rte_intr_fd_get() and
 * the process dies at exit (SIGSEGV, or status 255 under meson; about 2% of
 * runs of ctl/flow_rules_dpdk).
 */
#ifndef LUNAR_BASE_EAL_EXIT_H
#define LUNAR_BASE_EAL_EXIT_H

/**
 * Wait until the interrupt thread has taken in every callback change made
 * so far and sleeps (at most 1 s), then rte_eal_cleanup(). Call once, after
 * the ports are closed, before the process exits.
 */
void lunar_eal_cleanup(void);

#endif
