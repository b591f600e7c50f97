/*
 * tcp_pair.h - two TCP stacks in one process, for tests of tcp_stack and
 * its socket calls (the core's own tests are in tests/unit/tcp/core).
 *
 * Each side is a netif over a fake port (tests/unit/port/fake_port.h) with
 * a tcp_stack on it. What one side transmits is copied, as a wire would,
 * into a fresh buffer of the other side's packet pool and received there.
 * Both packet pools are Zbuf pools (zbuf_pktpool_create), so received
 * payload is Zbuf memory as in lunar; Zbuf runs on the DPDK backend over
 * an EAL without hugepages (--no-huge, IOVA as VA). Time is virtual:
 * pair_run() advances it in small steps and runs each side's loop (receive,
 * stack timers and callbacks, neighbour timers, transmit) as
 * lunar_env_poll() does, so every run is the same.
 *
 * Side a is 10.0.0.1, side b 10.0.0.2; each knows the other's MAC from
 * the start. pair_stacks() stops there (tests of the interfaces above the
 * stack, tests/unit/api, open their own connections); pair_open() also
 * connects a, the client, to b, the server, listening on PAIR_PORT, which
 * reads whatever arrives (copying) into p->rcvd, for the test to check.
 */
#ifndef LUNAR_TESTS_TCP_PAIR_H
#define LUNAR_TESTS_TCP_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_port.h"
#include "net/netif.h"
#include "tcp/tcp_stack.h"

#define PAIR_PORT    7000
#define PAIR_IP_A    0x0a000001u /* 10.0.0.1 */
#define PAIR_IP_B    0x0a000002u /* 10.0.0.2 */
#define PAIR_STEP_NS 10000ull	 /* virtual time per loop iteration */

struct pair_side {
	struct fake_port fp;
	struct netif nif;
	struct tcp_stack *tcp;
	bool tso;	      /* made with pair_tso: the wire does the NIC's offloads */
	unsigned nic_segs_in; /* then: frames the port was given to cut (TSO) */
};

struct tcp_pair {
	struct pair_side a, b;
	struct flow_plan plan;
	uint64_t now;
	struct tcp_listener *lst;
	struct tcp_sock *cli, *srv;	 /* the connection's two ends */
	uint32_t cli_events, srv_events; /* every event bit each end was given */
	bool hold_b;	/* the server's frames (its ACKs) wait at its port, not carried */
	bool hold_a;	/* the client's frames wait at its port, for the test to look at */
	bool cut_a;	/* the client's frames are lost on the way (a path that is down) */
	uint16_t mtu_a; /* nonzero: the client's datagrams larger than this are lost, silently */
	bool srv_echo;	/* the server sends back what it reads, from its callback */
	uint8_t *rcvd;	/* what the server read, in order */
	size_t rcvd_len, rcvd_cap;
};

/* The connection table of stacks made from now on (64; a test that needs more sets it back). */
extern unsigned pair_max_conns;
/* Workers in the pair's flow plan (both sides are worker 0); 1 by default. */
extern unsigned pair_workers;
/* The flow plan's reserved range is pair_reserved_lo..65535 (61440 by default). */
extern uint16_t pair_reserved_lo;
/*
 * Ports of stacks made from now on offload the TCP checksum and TSO (as
 * tap's), and the wire does what a NIC would with them (segments cut,
 * checksums filled) before the other side receives. Off by default.
 */
extern bool pair_tso;

/* cmocka group fixtures: EAL, Zbuf (DPDK backend, no hugepages), the pools. */
int pair_group_setup(void **state);
int pair_group_teardown(void **state);

/**
 * Both stacks up, nothing open. @attach as for pair_open().
 */
void pair_stacks(struct tcp_pair *p, bool attach);
/** The configuration pair_stacks() gives both sides (Nagle off, 256 KiB buffers). */
void pair_config(struct tcp_config *cfg);
/** pair_stacks() with both sides configured by @cfg. */
void pair_stacks_cfg(struct tcp_pair *p, bool attach, const struct tcp_config *cfg);
/** pair_stacks() with the client (a) configured by @cfg_a, the server (b) by @cfg_b. */
void pair_stacks_cfgs(struct tcp_pair *p, bool attach, const struct tcp_config *cfg_a,
		      const struct tcp_config *cfg_b);
/**
 * Both stacks up, connected and accepted. @attach: frame sent payload by
 * reference (a header pool and a port taking chained buffers, as memif and
 * tap), else copy it into the frame (as af_xdp).
 */
void pair_open(struct tcp_pair *p, bool attach);
/** pair_open() with each side's configuration (pair_stacks_cfgs()). */
void pair_open_cfgs(struct tcp_pair *p, bool attach, const struct tcp_config *cfg_a,
		    const struct tcp_config *cfg_b);
/**
 * The server's socket callback (ctx: the pair): reads everything that
 * arrives into p->rcvd, sending it back with srv_echo. pair_open() gives
 * it to the connection it accepts; tests accepting their own use it too.
 */
void pair_on_srv(struct tcp_sock *s, uint32_t events, void *ctx);
/** Run both loops for @ns of virtual time, carrying every frame across (see hold_b, cut_a). */
void pair_run(struct tcp_pair *p, uint64_t ns);
/**
 * With hold_b, carry the first @n frames the server sent and still holds
 * (all if fewer) to the client, in order, at its next step: a delay spike
 * on the ACK path, ending.
 */
void pair_release_b(struct tcp_pair *p, unsigned n);
struct rte_mempool;
/** The header pool both stacks frame attached payload with (pair_open(p, true)). */
struct rte_mempool *pair_hdr_pool(void);
/** The same for the client's frames held with hold_a, to the server. */
void pair_release_a(struct tcp_pair *p, unsigned n);
/** One loop iteration of each side (PAIR_STEP_NS), and the frames carried. */
void pair_step(struct tcp_pair *p);
/**
 * The first part of a loop iteration of side @s (no time passes): receive,
 * the stack's poll, transmit, within zbuf_defer_begin(). The test then
 * looks, and ends it as the loop does: tcp_stack_after_tx(), zbuf_defer_end().
 */
void pair_poll_to_tx(struct tcp_pair *p, struct pair_side *s);
/** Reset what is open, free both stacks, assert every packet buffer came back. */
void pair_close(struct tcp_pair *p);

/**
 * A segment @r (its payload at r->payload) from the other side's address
 * and MAC to side @to, checksummed, received at @to's port at the next
 * step as if it came over the wire: a peer's stray or forged segment.
 */
void pair_inject(struct tcp_pair *p, struct pair_side *to, const struct tcp_repr *r);
/**
 * An IPv4 datagram from @src (any address: a router's, for an ICMP error)
 * to side @to, protocol @proto, carrying @len bytes at @l4 as they are,
 * received at @to's port at the next step.
 */
void pair_inject_ip(struct tcp_pair *p, struct pair_side *to, uint32_t src, uint8_t proto,
		    const void *l4, size_t len);

/**
 * A SYN from 10.0.0.1:@sport to b's PAIR_PORT, from no socket of a's, and
 * b's answer thrown away: a spoofed source that never completes the
 * handshake (RFC 4987 2.2), leaving b one half-open connection.
 */
void pair_syn_nowhere(struct tcp_pair *p, uint16_t sport);
/** Free what side @s has sent and not yet had carried (with hold_b, the server's frames). */
void pair_discard_tx(struct pair_side *s);

/** The two framings a test can take from *state: payload copied into frames, or attached. */
extern bool pair_copied, pair_attached;
/** cmocka entries running test @f once with each framing. */
#define PAIR_BOTH_FRAMINGS(f)                                                                      \
	{#f "/copied", f, NULL, NULL, &pair_copied},                                               \
	{                                                                                          \
#f "/attached", f, NULL, NULL, &pair_attached                                      \
	}

/** Byte @off of the test stream: what senders send and pair_rcvd_ok() expects. */
static inline uint8_t pair_byte(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 9));
}
/** Fill @buf with @len bytes of the stream from @off. */
void pair_fill(uint8_t *buf, size_t len, uint64_t off);
/** The server has read exactly @len bytes, and they are the stream's first @len. */
void pair_rcvd_ok(const struct tcp_pair *p, size_t len);

#endif
