/*
 * knb.h - the knb benchmark's shared pieces: its configuration, the wire
 * protocol every connection starts with, the stack-independent flow engine
 * (what a connection sends and when a response completes), and the meters
 * and results both stacks fill in.
 *
 * knb runs long-lived TCP connections between client threads and server
 * threads. Each connection carries one flow: an RPC flow (the client keeps
 * --iodepth requests of --msg-size bytes in flight, the server answers each
 * with as many bytes), or a bulk flow one way (up: client to server, down:
 * server to client). A pattern is a set of flows (knb_plan). The stacks
 * (knb_kernel.c: Linux sockets and epoll; knb_lunar.c: lunar; knb_raw.c:
 * no stack, the frames of an RPC ping-ponged over memif, the floor) only
 * move bytes and tell the flow engine what moved.
 */
#ifndef LUNAR_TOOLS_KNB_H
#define LUNAR_TOOLS_KNB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "knb_hist.h"
#include "loop/options.h"

#define KNB_VERSION	1	    /* the wire protocol and the JSON schema */
#define KNB_MAGIC	0x4b4e4231u /* "KNB1" */
#define KNB_HELLO_LEN	32
#define KNB_ACK_LEN	16
#define KNB_MAX_MSG	(1u << 20) /* --msg-size at most 1 MiB */
#define KNB_MAX_IODEPTH 1024
#define KNB_MAX_THREADS 64
#define KNB_MAX_FLOWS	1024  /* connections per client thread */
#define KNB_BULK_CHUNK	65536 /* bytes handed to the stack at a time by bulk senders */

enum knb_stack { KNB_STACK_KERNEL, KNB_STACK_LUNAR, KNB_STACK_RAW };
enum knb_kernel_mode { KNB_KERNEL_BUSY_POLL, KNB_KERNEL_BLOCKING };
enum knb_pattern {
	KNB_PATTERN_RPC,	/* RPC flows between every client and server thread */
	KNB_PATTERN_STREAM,	/* one-way bulk, client to server, --flows per pair */
	KNB_PATTERN_INCAST,	/* every client thread's flows into server thread 0 */
	KNB_PATTERN_OUTCAST,	/* server thread 0 sends to every client thread's flows */
	KNB_PATTERN_ALL_TO_ALL, /* bulk both ways between every client and server thread */
	KNB_PATTERN_MIXED,	/* bulk flows plus one RPC flow on the same client thread */
	KNB_PATTERN_COUNT
};
enum knb_flow_kind { KNB_FLOW_RPC, KNB_FLOW_UP, KNB_FLOW_DOWN };

/* ack status */
enum { KNB_ACK_OK = 0, KNB_ACK_BAD_VERSION = 1, KNB_ACK_BAD_HELLO = 2 };

/*
 * lunar's application interfaces (LUNA §5.1, Fig. 5): inline-r2c zero-copy
 * callbacks run per segment; batch-r2c zero-copy events after the burst
 * (the default); the socket-like copying calls with epoll-like readiness
 * (api/lsock.h), no callbacks; dispatch mode (LUNA §5.2, server only): an
 * application thread apart from the stack core, over channels
 * (api/dispatch_tcp.h).
 */
enum knb_api { KNB_API_BATCH, KNB_API_INLINE, KNB_API_COPY, KNB_API_DISPATCH };

struct knb_config {
	bool server;
	enum knb_stack stack;
	struct lunar_options lo;  /* --port, --ip, --core, ... (--core also pins kernel threads) */
	bool lunar_opts_given;	  /* a lunar-only option was given */
	uint32_t lunar_opts_seen; /* 1 << (LUNAR_OPT_x - LUNAR_OPT_PORT) for each one given */
	char port_text[160];	  /* --port as given */
	bool core_given;
	uint32_t addr; /* host order: --listen or --connect address */
	uint16_t port; /* server thread i listens on port + i */
	unsigned threads, server_threads, flows;
	bool threads_given; /* --threads was on the command line */
	enum knb_pattern pattern;
	uint32_t msg_size, iodepth;
	double duration_s, warmup_s, connect_timeout_s;
	enum knb_kernel_mode kernel_mode;
	bool cpu_breakdown;
	enum knb_api api; /* lunar: how the application talks to the stack */
	bool api_given;
	unsigned app_stall_us;	   /* lunar server: spin this long in each data callback (tests) */
	unsigned app_core;	   /* lunar server, dispatch: the application thread's CPU... */
	bool app_core_given;	   /* ...if given (else it inherits the stack's) */
	unsigned kernel_echo_port; /* lunar server: also a kernel TCP echo on 127.0.0.1:PORT, same
				      loop */
	unsigned proto_version;	   /* KNB_VERSION; another only to test the version check */
	const char *json_path;
	char command[1024]; /* the command line, for the JSON */
};

/** Parse argv into @c (argv[1] is "server" or "client"). @return 0, 1 (help shown), or -1 (error
 * printed). */
int knb_parse_args(int argc, char **argv, struct knb_config *c);
const char *knb_pattern_name(enum knb_pattern p);
/** "kernel", "lunar" or "raw". */
const char *knb_stack_name(enum knb_stack s);

/* ---- the plan: which flows each client thread opens ---- */

struct knb_flow_spec {
	enum knb_flow_kind kind;
	unsigned server_thread;
	uint32_t msg_size, iodepth;
};

/** The flows client thread @thread opens for @c's pattern. @return how many (<= max). */
unsigned knb_plan(const struct knb_config *c, unsigned thread, struct knb_flow_spec *out,
		  unsigned max);

/* ---- measurement ---- */

/** What one thread counts; only while @on (the measured window), except the totals. */
struct knb_meter {
	bool on;
	uint64_t responses, tx_bytes, rx_bytes;	  /* in the window */
	uint64_t requests_total, responses_total; /* whole run, RPC flows */
	uint64_t tx_total, rx_total;
	struct knb_hist hist; /* RPC latency, ns, in the window */
};

/* ---- the flow engine (one per connection, both ends) ---- */

struct knb_flow {
	bool client;
	enum knb_flow_kind kind;
	uint32_t msg_size, iodepth;
	unsigned client_thread, server_thread, server_threads, version;
	struct knb_meter *meter;
	/* handshake: the client sends a hello and waits for the ack; the server the reverse */
	uint8_t hs_out[KNB_HELLO_LEN];
	uint32_t hs_out_len, hs_out_sent;
	uint8_t hs_in[KNB_HELLO_LEN];
	uint32_t hs_in_len, hs_in_got;
	bool ready;	     /* handshake done: payload flows */
	bool stopping;	     /* client: no new requests (drain) */
	bool close_after_hs; /* server: refused the hello; close once the ack is out */
	char error[200];
	/* payload */
	uint64_t tx_bytes, rx_bytes;
	uint64_t requests;		    /* client RPC: requests started */
	uint64_t responses;		    /* client RPC: responses complete */
	uint64_t issue_ns[KNB_MAX_IODEPTH]; /* client RPC: start of request i % iodepth */
};

/** A client flow from @spec: its hello is ready to send. */
void knb_flow_client(struct knb_flow *f, const struct knb_flow_spec *spec, unsigned thread,
		     unsigned version, struct knb_meter *m);
/** A server flow: waits for a hello; @threads goes into the ack. */
void knb_flow_server(struct knb_flow *f, unsigned thread, unsigned threads, unsigned version,
		     struct knb_meter *m);
/** Handshake bytes still to send (pointer and length; 0 when none). */
uint32_t knb_flow_hs_pending(const struct knb_flow *f, const uint8_t **p);
void knb_flow_hs_sent(struct knb_flow *f, uint32_t n);
/**
 * Handshake bytes received. @return how many of @n were handshake (the
 * rest is payload), or -1 with f->error set (refused, another version,
 * not a knb peer).
 */
int knb_flow_hs_received(struct knb_flow *f, const uint8_t *p, uint32_t n);
/** Payload bytes this end may send now (UINT64_MAX: unbounded). */
uint64_t knb_flow_tx_budget(const struct knb_flow *f);
/*
 * Whether knb_flow_on_tx() (@tx) or knb_flow_on_rx() of @n bytes would
 * use its time: a client's request starting or response completing. A
 * stack whose clock costs something per read (rdtsc is ~10 ns in a VM)
 * reads it only then; the other calls may pass 0.
 */
bool knb_flow_needs_time(const struct knb_flow *f, uint64_t n, bool tx);
void knb_flow_on_tx(struct knb_flow *f, uint64_t n, uint64_t now_ns);
/*
 * @n payload bytes received. A client's RPC flow refuses bytes beyond what
 * it has sent (the server echoes each request, no more): -EPROTO, the
 * reason in f->error, nothing counted; the caller ends the run.
 */
int knb_flow_on_rx(struct knb_flow *f, uint64_t n, uint64_t now_ns);
/** Client RPC: every request started has its response (nothing in flight). */
bool knb_flow_drained(const struct knb_flow *f);

/* ---- the client's timeline: warmup, the measured window, draining ---- */

#define KNB_DRAIN_NS 2000000000ull /* at most this long for the last responses */

struct knb_timeline {
	uint64_t measure_at, stop_at, drain_until; /* ns; drain_until 0 until the window closed */
	uint64_t win_start, win_end;		   /* the window, ns */
	uint64_t cpu_start, cpu_end;		   /* this thread's CPU time then, ns */
};
enum knb_tick {
	KNB_TICK_RUN,
	KNB_TICK_OPENED, /* the window opened: the meter counts */
	KNB_TICK_CLOSED, /* the window closed: set every flow stopping */
	KNB_TICK_DONE,	 /* drained (or the drain timed out): finish */
};

void knb_timeline_start(struct knb_timeline *t, const struct knb_config *c, uint64_t now_ns);
/** Advance to @now_ns; @drained: every flow drained (looked at only while draining). */
enum knb_tick knb_timeline_tick(struct knb_timeline *t, struct knb_meter *m, uint64_t now_ns,
				bool drained);
/** Percent of one CPU the thread used in the window. */
double knb_timeline_cpu_pct(const struct knb_timeline *t);

/* ---- results ---- */

struct knb_thread_result {
	unsigned index;
	int core;	/* -1: not pinned */
	double cpu_pct; /* of the measured window, from getrusage(RUSAGE_THREAD) */
	struct knb_meter meter;
};

/* The categories of the lunar CPU breakdown, in its output order. */
#define KNB_CPU_CATEGORIES 8
extern const char *const knb_cpu_category_names[KNB_CPU_CATEGORIES];

struct knb_result {
	double window_s; /* measured window, seconds */
	unsigned nthreads;
	struct knb_thread_result *threads;
	bool have_cpu_breakdown;
	double cpu_breakdown_pct[KNB_CPU_CATEGORIES];
};

/** Print the human summary and write the JSON (if asked). @return 0 or -1. */
int knb_report(const struct knb_config *c, const struct knb_result *r);

/* The stacks. @return process exit code. */
int knb_kernel_run(const struct knb_config *c);
int knb_lunar_run(const struct knb_config *c, const char *prog);
/** The raw memif ping-pong: no TCP/IP stack, the same frames (knb_raw.c). */
int knb_raw_run(const struct knb_config *c, const char *prog);

/* Flag set by SIGINT/SIGTERM (every stack). */
bool knb_stop_requested(void);
void knb_handle_signals(void);

#endif
