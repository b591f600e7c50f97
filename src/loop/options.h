/*
 * options.h - the command-line options every lunar program shares:
 *   --port KIND:ARGS   af_xdp:<ifname> | memif:<path>[:server|client] | tap:<name>
 *   --ip ADDR/LEN      our address (af_xdp: defaults to the interface's)
 *   --gw ADDR          default gateway (af_xdp: defaults to the kernel's)
 *   --mtu N            IP MTU (memif and tap: up to 9000)
 *   --fault SPEC       fault injection on the port (repeatable)
 *   --pcap FILE        capture the port's traffic
 *   --reserved LO-HI   TCP ports steered to lunar (default 61440-65535)
 *   --core N[,N...]    CPU to run on (default 0); a list: one worker per CPU
 *   --pool N           packet buffers per worker, 2048..262144 (default: 128 MiB of
 *                      them, split between the workers)
 *   --trust-link       memif to another lunar process: no checksums
 *   --cc NAME          congestion control: newreno (default), cubic, dctcp
 *   --ecn on|off|accept  ECN (RFC 3168): ask and accept, neither, accept only
 *   --hystart on|off|MIN_US,MAX_US  HyStart++ (RFC 9406) and its RTT threshold
 *   --probes rfc|N     loss probes before an RTO: RFC 8985's one, or N (also in recovery)
 *   --tcp-limits SPEC  conns=N,half-open=N,time-wait=N,mem=SIZE per worker
 *                      (tcp/tcp_limits.h, docs/LIMITS.md)
 *   --keepalive IDLE,INTVL,PROBES | off  TCP keep-alive (RFC 1122 4.2.3.6)
 *   --sock-buf SIZE    TCP send and receive buffer per connection (default 1M)
 *   --pmtu-blackhole RTOS[,HOLD_S] | off  black-hole detection (RFC 2923 2.1)
 *   --pmtu-probe SECONDS | off  path MTU search with probes (RFC 4821), its interval
 *   --xdp-syncookies on|off  af_xdp: the XDP program answers a SYN flood (default on)
 *   --gso on|off       TCP cuts segments of several MSSs in software where the port
 *                      has no TSO (default on)
 *   --gro on|off       a receive burst's in-order segments of one connection go to
 *                      TCP together (software GRO; default on)
 *   --idle-yield N     after N idle polls in a row, sched_yield() on each further one
 *   --verbose          more log lines (DPDK's too)
 * Tools add their own options and hand unknown ones to lunar_options_apply().
 */
#ifndef LUNAR_LOOP_OPTIONS_H
#define LUNAR_LOOP_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "port/port_spec.h"
#include "tcp/tcp_limits.h"

/** Workers (queues) one lunar process runs at most. */
#define LUNAR_MAX_WORKERS 8

struct lunar_options {
	struct port_spec port;
	bool has_port;
	uint32_t ip; /* host order; 0: not given */
	uint8_t prefix_len;
	uint32_t gw;
	struct fault_spec fault;
	char pcap[256];
	uint16_t reserved_lo, reserved_hi;
	unsigned core;				/* cores[0] */
	unsigned cores[LUNAR_MAX_WORKERS];	/* one per worker */
	unsigned n_workers;			/* 1 unless --core lists more */
	unsigned pool_mbufs;			/* 0: the default size (loop/env.c) */
	int cc;					/* enum tcp_cc_algo; -1: tcp_config's default */
	int ecn;				/* TCP_ECN_*; -1: tcp_config's default */
	int64_t hystart_min_ns, hystart_max_ns; /* --hystart; -1: tcp_config's; min 0: off */
	int probes; /* --probes: -1 tcp_config's; 0 rfc; N probes, in recovery too */
	struct tcp_limits_spec tcp_limits; /* --tcp-limits: what was given */
	int keepalive;			   /* -1: tcp_config's default (off); 0 off; 1 on with: */
	double keepalive_idle_s, keepalive_intvl_s;
	unsigned keepalive_probes;
	int blackhole_rtos;	 /* --pmtu-blackhole: -1 tcp_config's (3); 0 off */
	double blackhole_hold_s; /* 0: tcp_config's (60 s); else 1..600 */
	double probe_interval_s; /* --pmtu-probe: -1 tcp_config's (600 s); 0 off; else 1..86400 */
	bool xdp_syncookies;	 /* af_xdp: arm the XDP SYN-cookie responder under a flood */
	bool no_gso;		 /* --gso off: MSS-sized segments from TCP on ports without TSO */
	bool no_gro;		 /* --gro off: every segment to TCP on its own */
	uint32_t sock_buf;	 /* --sock-buf: TCP send and receive buffer; 0: tcp_config's */
	unsigned idle_yield;	 /* --idle-yield: idle polls before sched_yield(); 0: never */
	bool verbose;
};

struct tcp_config;

/** Largest --idle-yield. */
#define LUNAR_IDLE_YIELD_MAX 1000000u
/** --pmtu-blackhole: timeouts in a row before a black hole is taken, at most. */
#define LUNAR_BLACKHOLE_RTOS_MAX 16u
/** --probes: loss probes before an RTO at most. */
#define LUNAR_PROBES_MAX 8u

/** Bounds of --pool (packet buffers). */
#define LUNAR_POOL_MIN 2048u
#define LUNAR_POOL_MAX 262144u

enum {
	LUNAR_OPT_PORT = 0x1000,
	LUNAR_OPT_IP,
	LUNAR_OPT_GW,
	LUNAR_OPT_MTU,
	LUNAR_OPT_FAULT,
	LUNAR_OPT_PCAP,
	LUNAR_OPT_RESERVED,
	LUNAR_OPT_CORE,
	LUNAR_OPT_VERBOSE,
	LUNAR_OPT_POOL,
	LUNAR_OPT_TRUST_LINK,
	LUNAR_OPT_CC,
	LUNAR_OPT_ECN,
	LUNAR_OPT_TCP_LIMITS,
	LUNAR_OPT_KEEPALIVE,
	LUNAR_OPT_XDP_SYNCOOKIES,
	LUNAR_OPT_SOCK_BUF,
	LUNAR_OPT_IDLE_YIELD,
	LUNAR_OPT_HYSTART,
	LUNAR_OPT_PROBES,
	LUNAR_OPT_PMTU_BLACKHOLE,
	LUNAR_OPT_PMTU_PROBE,
	LUNAR_OPT_GSO,
	LUNAR_OPT_GRO,
};

/** struct option entries for getopt_long; put them in every tool's table. */
#define LUNAR_COMMON_LONGOPTS                                                                      \
	{"port", required_argument, NULL, LUNAR_OPT_PORT},                                         \
	    {"ip", required_argument, NULL, LUNAR_OPT_IP},                                         \
	    {"gw", required_argument, NULL, LUNAR_OPT_GW},                                         \
	    {"mtu", required_argument, NULL, LUNAR_OPT_MTU},                                       \
	    {"fault", required_argument, NULL, LUNAR_OPT_FAULT},                                   \
	    {"pcap", required_argument, NULL, LUNAR_OPT_PCAP},                                     \
	    {"reserved", required_argument, NULL, LUNAR_OPT_RESERVED},                             \
	    {"core", required_argument, NULL, LUNAR_OPT_CORE},                                     \
	    {"verbose", no_argument, NULL, LUNAR_OPT_VERBOSE},                                     \
	    {"pool", required_argument, NULL, LUNAR_OPT_POOL},                                     \
	    {"trust-link", no_argument, NULL, LUNAR_OPT_TRUST_LINK},                               \
	    {"cc", required_argument, NULL, LUNAR_OPT_CC},                                         \
	    {"ecn", required_argument, NULL, LUNAR_OPT_ECN},                                       \
	    {"tcp-limits", required_argument, NULL, LUNAR_OPT_TCP_LIMITS},                         \
	    {"keepalive", required_argument, NULL, LUNAR_OPT_KEEPALIVE},                           \
	    {"xdp-syncookies", required_argument, NULL, LUNAR_OPT_XDP_SYNCOOKIES},                 \
	    {"sock-buf", required_argument, NULL, LUNAR_OPT_SOCK_BUF},                             \
	    {"idle-yield", required_argument, NULL, LUNAR_OPT_IDLE_YIELD},                         \
	    {"hystart", required_argument, NULL, LUNAR_OPT_HYSTART},                               \
	    {"probes", required_argument, NULL, LUNAR_OPT_PROBES},                                 \
	    {"pmtu-blackhole", required_argument, NULL, LUNAR_OPT_PMTU_BLACKHOLE},                 \
	    {"pmtu-probe", required_argument, NULL, LUNAR_OPT_PMTU_PROBE},                         \
	    {"gso", required_argument, NULL, LUNAR_OPT_GSO},                                       \
	{                                                                                          \
		"gro", required_argument, NULL, LUNAR_OPT_GRO                                      \
	}

/** Fill defaults. */
void lunar_options_init(struct lunar_options *o);
/**
 * Apply one parsed option.
 * @return 1 if it was a common option, 0 if not ours, negative errno with
 *         a message in @err when its value is wrong.
 */
int lunar_options_apply(struct lunar_options *o, int code, const char *arg, char *err,
			size_t errlen);
/** Check the options that depend on each other (e.g. memif/tap need --ip). */
int lunar_options_check(const struct lunar_options *o, char *err, size_t errlen);
/**
 * For a tool that runs one worker (polls one queue): -EINVAL, with the
 * fix in @err, when --core lists several CPUs, whose queues nothing would
 * poll.
 */
int lunar_options_one_worker(const struct lunar_options *o, char *err, size_t errlen);
/** Print the common options' help. */
void lunar_options_usage(FILE *f);

/**
 * Parse a tool's numeric option: a decimal in [@min, @max].
 * @return 0, or -EINVAL with "--@name VALUE: expected MIN..MAX" in @err.
 */
int parse_uint_opt(const char *name, const char *s, unsigned long min, unsigned long max,
		   unsigned long *out, char *err, size_t errlen);
/**
 * A byte count: decimal digits with an optional K, M or G suffix (powers of
 * 1024), e.g. 4096, 64K, 1G. @return 0, or -EINVAL (not a size, or above
 * 2^62).
 */
int parse_size(const char *s, uint64_t *out);
/** Same for a non-negative decimal number of seconds (fractions allowed) up to @max. */
int parse_seconds_opt(const char *name, const char *s, double max, double *out, char *err,
		      size_t errlen);

/** Parse "a.b.c.d" (host order out). @return 0 or -EINVAL. */
int parse_ipv4(const char *s, uint32_t *out);

#endif
