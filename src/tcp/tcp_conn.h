/*
 * tcp_conn.h - one TCP connection as a sans-I/O state machine (RFC 9293).
 *
 * Read first: RFC 9293 (3.3.2 states, 3.10 event processing), RFC 7323
 * (window scale, timestamps, PAWS), RFC 2018 (SACK), RFC 6298 (RTO),
 * RFC 5681 and RFC 6582 (congestion control; tcp_cc.h for CUBIC, RFC 9438,
 * and DCTCP, RFC 8257), RFC 3168 (ECN), RFC 6675 and RFC 8985 (SACK
 * loss recovery, RACK-TLP), RFC 2883 (D-SACK), RFC 1122 4.2.3.3/4.2.3.4
 * (silly window avoidance), RFC 5961 (blind in-window attacks).
 *
 * The core never reads a clock, never touches a port and never allocates
 * packets. Each call takes the connection, its input (a parsed segment, an
 * application request, or the time) and `now`, and:
 *  - appends the segments to send to a struct tcp_out (headers described,
 *    payload given as a range of the send buffer: no copy);
 *  - sets event bits in c->events for the application;
 *  - updates the connection's deadlines (tcp_next_deadline()).
 * So every behaviour is testable with a virtual clock and scripted segments.
 *
 * Buffers: payload sent is held by reference (Zbuf) in the send buffer until
 * acknowledged; payload received is held by reference (the received frame)
 * in the receive queue until the application takes it. Nothing is copied.
 */
#ifndef LUNAR_TCP_TCP_CONN_H
#define LUNAR_TCP_TCP_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp/tcp_cc.h"
#include "tcp/tcp_frto.h"
#include "tcp/tcp_rack.h"
#include "tcp/tcp_reass.h"
#include "tcp/tcp_rtt.h"
#include "tcp/tcp_scoreboard.h"
#include "tcp/tcp_table.h"
#include "tcp/tcp_undo.h"
#include "wire/tcp.h"

/** RFC 9293 3.3.2. */
enum tcp_state {
	TCP_CLOSED,
	TCP_LISTEN,
	TCP_SYN_SENT,
	TCP_SYN_RECEIVED,
	TCP_ESTABLISHED,
	TCP_FIN_WAIT_1,
	TCP_FIN_WAIT_2,
	TCP_CLOSE_WAIT,
	TCP_CLOSING,
	TCP_LAST_ACK,
	TCP_TIME_WAIT,
};

const char *tcp_state_name(enum tcp_state s);

/** Per-connection knobs; tcp_config_default() gives the datacenter defaults. */
struct tcp_config {
	uint16_t mss;	  /**< MSS we advertise; 0: MTU - 40 (1460 without an interface) */
	uint32_t tso_max; /**< largest segment handed to a TSO port (0: no TSO, MSS-sized) */
	/**
	 * Segments of several MSSs on a port without TSO too, cut into
	 * frames by tcp_stack in software (GSO). tcp_stack sets tso_max from
	 * this and the port, and leaves it set only where it does the
	 * cutting; the core then sends at most TCP_OUT_MAX frames' worth a
	 * call, as it would without GSO.
	 */
	bool gso;
	/**
	 * Software GRO: a receive burst's in-order segments of one
	 * connection with matching headers go to TCP as one train
	 * (tcp_input_train()). tcp_stack's; the core ignores it.
	 */
	bool gro;
	uint32_t rcv_buf;    /**< receive buffer (window) bytes */
	uint32_t snd_buf;    /**< send buffer bytes */
	bool window_scaling; /**< RFC 7323 2 */
	bool timestamps;     /**< RFC 7323 3 (RTTM and PAWS) */
	bool sack;	     /**< RFC 2018 */
	/**
	 * With SACK negotiated, report data received twice in the next ACK's
	 * first SACK block (RFC 2883), as Linux's net.ipv4.tcp_dsack: the
	 * sender learns a retransmission was needless (RACK widens its
	 * reordering window, RFC 8985 6.2).
	 */
	bool dsack;
	/**
	 * With SACK negotiated, recover losses from a scoreboard (RFC 6675)
	 * with RACK-TLP loss detection (RFC 8985), as Linux does by default;
	 * off (or without SACK): NewReno on duplicate ACKs (RFC 6582).
	 */
	bool rack;
	/**
	 * A tail loss probe sends new data when there is some and the peer's
	 * window takes it (RFC 8985 7.3's SHOULD, as Linux). Off by default:
	 * the probe is the last segment sent, again. A receiver sitting on a
	 * delayed ACK (Linux's lasts 40 ms, beyond lunar's 4 ms RTO floor, and
	 * a new in-order segment need not end it) ACKs a duplicate at once
	 * with a D-SACK, so the tail is known in one probe instead of an RTO
	 * (docs/benchmarks.md "Tail loss probes that retransmit").
	 */
	bool tlp_new_data;
	/**
	 * A probe in recovery too (beyond RFC 8985 7.2, which sends none
	 * there, nor does Linux): when no ACK has come for 2*SRTT plus the
	 * delayed-ACK timeout, the oldest segment not SACKed (most often a
	 * lost retransmission with nothing sent after it that RACK could
	 * judge it by) goes again, up to probe_max times until the ACKs make
	 * progress. With a 4 ms RTO floor and RTTs of tens of microseconds,
	 * such a stall cost an RTO, ~100 RTTs; the probe costs one segment
	 * (docs/benchmarks.md "A probe in recovery"). On by default.
	 */
	bool recovery_probe;
	/**
	 * Probes (tail loss, and in recovery) sent a PTO apart before the RTO
	 * when none draws an ACK. RFC 8985 7.3 and Linux send one; lunar two
	 * by default: with loss in both directions a probe or its ACK is lost
	 * often enough (~10% at 5% loss) that a second probe, one segment,
	 * saves most of the RTOs left (docs/benchmarks.md "A probe in
	 * recovery"). 1 restores the RFC's rule; 0 is taken as 1.
	 */
	uint8_t probe_max;
	/**
	 * F-RTO (RFC 5682, tcp_frto.h): after a first RTO, two new segments
	 * instead of more retransmissions once the first ACK advances, so
	 * that the ACK after them tells a spurious RTO (data late, not lost)
	 * from a real one without timestamps; a spurious one is undone as
	 * Eifel's are. On by default, as Linux's net.ipv4.tcp_frto.
	 */
	bool frto;
	/**
	 * Black-hole detection (RFC 2923 2.1, RFC 8899 4.3; tcp_icmp.h): after
	 * this many RTOs in a row with no new data acknowledged, a datagram at
	 * SND.UNA larger than the next plateau below it (1500, 1400, 1280,
	 * 1024, 576 bytes) is taken to be too large for a path that drops it
	 * without a word, and the plateau becomes the path MTU; each further
	 * run of as many RTOs at the new size tries the next one. 3 by default
	 * (Linux, with net.ipv4.tcp_mtu_probing = 1, which is not its
	 * default, acts after tcp_retries1 = 3 timeouts' worth of time on a
	 * 200 ms base, per socket); 0: off.
	 */
	uint8_t blackhole_rtos;
	/**
	 * ...and not before data has gone unacknowledged this long: a stall
	 * of a few RTOs at a 4 ms floor (a paused peer, a path re-converging)
	 * is not a black hole. 200 ms by default.
	 */
	uint64_t blackhole_min_ns;
	/**
	 * How long the stack's path MTU cache holds a black hole's plateau
	 * for the peer's connections before the larger MTU is tried again: a
	 * guess (an outage of as many RTOs looks the same), so held shorter
	 * than a reported MTU's 10 minutes. 60 s by default.
	 */
	uint64_t blackhole_hold_ns;
	/**
	 * RFC 4821 7, RFC 8899 5.1.1 (PMTU_RAISE_TIMER): a connection whose
	 * path MTU is below its interface's searches for a larger one with
	 * probes, one datagram of new data at a time (tcp_icmp.h
	 * tcp_pmtu_probe_len()): at once after a black-hole step (which may
	 * have been an outage, not a narrow path), else this long after it was
	 * lowered or its last search ended. 600 s by default (Linux's
	 * net.ipv4.tcp_probe_interval); 0: never. Needs the scoreboard
	 * (SACK and cfg.rack), which tells whose loss was the probe's.
	 */
	uint64_t probe_interval_ns;
	/** The congestion control algorithm (tcp_cc.h); NewReno by default (LUNA 9). */
	enum tcp_cc_algo cc;
	/**
	 * ECN (RFC 3168), as Linux's net.ipv4.tcp_ecn: TCP_ECN_OFF, TCP_ECN_ON
	 * (ask on active opens, accept on passive ones) or TCP_ECN_ACCEPT
	 * (accept only; the default). DCTCP asks whatever this says.
	 */
	uint8_t ecn;
	/**
	 * RFC 3168 6.1.1.1: a SYN that drew no answer goes again without ECN
	 * setup (a middlebox may drop ECN-setup SYNs), and our data then goes
	 * without ECT whatever the SYN-ACK says (6.1.1: no ECT after sending a
	 * non-ECN-setup SYN; tcp_conn.ecn_no_ect). On by default, as Linux's
	 * net.ipv4.tcp_ecn_fallback.
	 */
	bool ecn_fallback;
	/**
	 * HyStart++ (RFC 9406) in the first slow start, for every algorithm:
	 * RttThresh's bounds (RFC 9406's 4 and 16 ms by default; a datacenter
	 * may want tens of microseconds). hystart_min_ns 0: standard slow start.
	 */
	uint64_t hystart_min_ns, hystart_max_ns;
	bool nodelay;	  /**< disable Nagle (RFC 9293 3.7.4) */
	bool delayed_ack; /**< RFC 1122 4.2.3.2 / RFC 5681 4.2 */
	/**
	 * The ACK owed for every second full segment waits for the end of the
	 * receive burst (tcp_burst_end()), so one ACK covers the burst and a
	 * reply made in it carries the ACK instead. tcp_stack sets it, as it
	 * calls tcp_burst_end() after each burst; a bare connection acks at once.
	 */
	bool ack_per_burst;
	/**
	 * A listener whose backlog is full answers SYNs with SYN cookies
	 * (RFC 4987 3.6, tcp_syncookie.h) instead of dropping them. Used by
	 * tcp_stack; on by default, as in Linux.
	 */
	bool syncookies;
	uint64_t delack_ns;    /**< delayed ACK timeout (< 500 ms per RFC 1122) */
	uint64_t rto_init_ns;  /**< RFC 6298 (2.1) initial RTO */
	uint64_t rto_min_ns;   /**< RFC 6298 (2.4) floor; LUNA uses 4 ms */
	uint64_t rto_max_ns;   /**< RFC 6298 (2.5) ceiling */
	uint64_t msl_ns;       /**< TIME_WAIT lasts 2 * MSL (RFC 9293 3.4.2) */
	uint64_t fin_wait2_ns; /**< an orphaned FIN-WAIT-2 (no application) gives up after this */
	/**
	 * An orphan (no application) whose data waits in a zero window gives
	 * up after this many probes, answered or not (Linux's
	 * tcp_orphan_retries, 8); 0: never (only unanswered ones end it).
	 */
	unsigned orphan_probes;
	uint64_t user_timeout_ns; /**< give up when data stays unacknowledged this long, or a
				       zero window's probes stay unanswered this long */
	/** RFC 5961 7: challenge ACKs (and 5.2 ACKs) a second, per connection; 0: no limit */
	uint32_t challenge_ack_limit;
	unsigned syn_retries; /**< SYN / SYN-ACK retransmissions before giving up */
	bool keepalive;	      /**< RFC 1122 4.2.3.6, off by default */
	uint64_t keepalive_idle_ns, keepalive_intvl_ns;
	unsigned keepalive_probes;
	unsigned iw_segments;	  /**< initial window in segments (0: RFC 5681 formula) */
	uint32_t reass_max_bytes; /**< out-of-order data held at most (0: rcv_buf) */
	unsigned reass_max_segs;  /**< out-of-order slices held at most */
};

void tcp_config_default(struct tcp_config *cfg);

/** Event bits for the application, accumulated in c->events. */
enum tcp_event {
	TCP_EV_CONNECTED = 1u << 0, /**< reached ESTABLISHED */
	TCP_EV_READABLE = 1u << 1,  /**< in-order data queued */
	TCP_EV_WRITABLE = 1u << 2,  /**< send buffer space freed */
	TCP_EV_EOF = 1u << 3,	    /**< peer sent FIN: no more data will come */
	TCP_EV_RESET = 1u << 4,	    /**< connection reset (or refused) by peer */
	TCP_EV_TIMEOUT = 1u << 5,   /**< gave up: peer unreachable (ETIMEDOUT) */
	TCP_EV_CLOSED = 1u << 6,    /**< reached CLOSED: the connection may be freed */
};

/** One segment to transmit; payload is [seq, seq + len) of the send buffer. */
struct tcp_tx {
	uint32_t seq, ack;
	uint16_t wnd;  /**< window field as sent (already scaled down) */
	uint8_t flags; /**< RTE_TCP_*_FLAG */
	uint32_t len;  /**< payload bytes from the send buffer (0: none) */
	/** nonzero: a TSO segment; the port cuts it into this much payload each */
	uint16_t tso_mss;
	struct tcp_options opts;
	bool retransmit; /**< counts as a retransmission */
	uint8_t ecn;	 /**< IP ECN field to send (RFC 3168 5): TCP_ECN_ECT0 or 0 */
};

#define TCP_OUT_MAX 64

/*
 * In-order slices queued before small segments are copied into a dense
 * buffer rather than each pinning its packet buffer (tcp_conn.c, "receive
 * queue"; docs/MEMORY.md, "Receive queue compaction").
 */
#define TCP_RCVQ_COMPACT_AFTER 16

/** Where the core writes what to send. */
struct tcp_out {
	struct tcp_tx seg[TCP_OUT_MAX];
	unsigned n;
};

/**
 * How short the packet memory that received data lives in is, as the layer
 * below judges it (received payload is kept zero-copy in the frames it
 * arrived in, so what TCP holds, the port cannot receive into).
 */
enum tcp_mem_pressure {
	TCP_MEM_NORMAL,
	/** Out-of-order segments are not kept, and the receive window's right
	 *  edge does not move (peers may send only what was already offered). */
	TCP_MEM_LOW,
	/** Also no payload is kept at all, in order or not: segments are still
	 *  processed for their ACKs, which free memory; the data comes again. */
	TCP_MEM_CRITICAL,
};

/** The send buffer: a ring of referenced chunks, from snd_una onwards. */
struct tcp_chunk {
	const uint8_t *data; /**< Zbuf memory; the buffer holds one reference */
	uint32_t len;
};

struct tcp_sndbuf {
	struct tcp_chunk *ring;
	uint32_t cap, head, count; /* ring capacity (power of two), first, number */
	uint32_t head_off;	   /* bytes of ring[head] already acknowledged */
	uint32_t bytes;		   /* unacknowledged + unsent bytes held */
	/*
	 * Where tcp_tx_slices() last took bytes from, so that framing the next
	 * segment does not walk every chunk in flight again: chunk number
	 * cur_chunk (counted as released, modulo 2^32) starts at cur_seq.
	 */
	uint32_t released; /* chunks released from the front so far */
	uint32_t cur_chunk, cur_seq;
	bool cur_valid;
};

/** Counters of one connection (summed per worker by the stack). */
struct tcp_conn_stats {
	uint64_t fastpath_ack, fastpath_data, slowpath;
	uint64_t acks_worked_later; /* ACK bookkeeping left for tcp_ack_work() (ack_defer) */
	uint64_t segs_in, segs_out, bytes_in, bytes_out;
	uint64_t retransmits, fast_retransmits, timeouts;
	uint64_t dupacks, ooo_segs, paws_rejects, challenge_acks, zero_window_probes;
	uint64_t orphans_dropped; /**< given up in a zero window after cfg.orphan_probes */
	uint64_t out_of_window; /**< unacceptable segments (3.10.7.4 first check), ACKed, dropped */
	uint64_t ack_unsent;	/**< ACKs of data never sent, ACKed and dropped */
	uint64_t ack_too_old;	/**< ACKs below SND.UNA - MAX.SND.WND (RFC 5961 5.2) */
	/** challenge ACKs not sent: over the limit (RFC 5961 7) */
	uint64_t challenge_acks_limited;
	uint64_t ooo_refused; /**< out-of-order segments not kept: memory pressure */
	uint64_t ooo_full; /**< out-of-order segments not kept: reass_max_bytes / _segs reached */
	uint64_t beyond_window; /**< acceptable segments whose payload past RCV.NXT + RCV.WND was
				   cut (all of it at a zero window): rcv_buf is full */
	/** in-order segments whose payload was not kept: critical memory */
	uint64_t rcv_mem_dropped;
	uint64_t ooo_pruned_bytes; /**< out-of-order bytes given back under memory pressure */
	/** small in-order segments copied into a dense buffer (not pinned) */
	uint64_t rcvq_compacted;
	uint64_t rcvq_compacted_bytes; /**< their bytes */
	uint64_t sack_blocks;	       /**< SACK blocks received and used (RFC 2018) */
	uint64_t sack_invalid;	  /**< SACK blocks ignored: empty or outside (SND.UNA, SND.MAX] */
	uint64_t dsacks;	  /**< D-SACKs received (RFC 2883): the peer got something twice */
	uint64_t dsacks_sent;	  /**< D-SACKs sent (RFC 2883): we got something twice */
	uint64_t rack_lost;	  /**< segments RACK marked lost (RFC 8985 6.2) */
	uint64_t recoveries;	  /**< SACK-based fast recoveries entered (RFC 6675) */
	uint64_t tlp_probes;	  /**< tail loss probes sent (RFC 8985 7.3) */
	uint64_t tlp_recoveries;  /**< losses a probe alone repaired (RFC 8985 7.4) */
	uint64_t recovery_probes; /**< probes sent in recovery (cfg.recovery_probe) */
	uint64_t sb_nomem;	  /**< scoreboard could not grow: fell back to NewReno */
	uint64_t spurious_rtos;	  /**< RTOs undone: the original had arrived (RFC 3522, RFC 3708) */
	/** recoveries undone: every retransmission D-SACKed (RFC 3708) */
	uint64_t spurious_recoveries;
	uint64_t frto_spurious;	    /**< of spurious_rtos, those F-RTO found (RFC 5682) */
	uint64_t ecn_ce;	    /**< data segments that arrived marked CE (RFC 3168 5) */
	uint64_t ecn_ece;	    /**< ACKs that echoed congestion (ECE) */
	uint64_t ecn_cuts;	    /**< window reductions for ECN echoes (RFC 3168 6.1.2) */
	uint64_t ecn_syn_fallbacks; /**< connects whose SYN was resent without ECN setup (RFC
				       3168 6.1.1.1) */
	uint64_t cwnd_unused_cuts;  /**< cwnd brought down for going unused an RTO (RFC 2861) */
	/** path MTU lowered to a plateau after RTOs (cfg.blackhole_rtos) */
	uint64_t pmtu_blackholes;
	/** path MTU probes sent (RFC 4821: one larger datagram of new data) */
	uint64_t pmtu_probes;
	uint64_t pmtu_probes_ok; /**< of those, acknowledged: the path MTU went up to the probe's */
	/** of those, lost (RACK, a timeout, or an ICMP error about it) */
	uint64_t pmtu_probes_lost;
};

struct tcp_conn {
	enum tcp_state state;
	struct tcp_4tuple tuple;
	struct tcp_config cfg;

	/* RFC 9293 3.3.1 send sequence variables */
	uint32_t iss;	      /**< initial send sequence number */
	uint32_t snd_una;     /**< oldest unacknowledged sequence number */
	uint32_t snd_nxt;     /**< next sequence number to send */
	uint32_t snd_max;     /**< highest sequence number sent + 1 (snd_nxt may go back on RTO) */
	uint32_t snd_wnd;     /**< peer's window, bytes (scaled) */
	uint32_t snd_wl1;     /**< segment seq of the last window update */
	uint32_t snd_wl2;     /**< segment ack of the last window update */
	uint32_t max_snd_wnd; /**< largest window the peer offered (SWS, 3.8.6.2.1) */
	uint8_t snd_wscale;   /**< shift for the peer's window field */

	/* RFC 9293 3.3.1 receive sequence variables */
	uint32_t irs;	    /**< initial receive sequence number */
	uint32_t rcv_nxt;   /**< next sequence number expected */
	uint32_t rcv_wnd;   /**< window we advertised last (bytes) */
	uint32_t rcv_adv;   /**< right edge we advertised: rcv_nxt + rcv_wnd then */
	uint8_t rcv_wscale; /**< shift we apply to our window field */

	uint16_t snd_mss; /**< effective send MSS: mss_clamp, lower if the path's MTU is */
	/** what the handshake allows: peer's MSS option, ours, minus options */
	uint16_t mss_clamp;
	/**
	 * The path MTU to the peer, when lower than the interface's (0: not
	 * known to be): from a "fragmentation needed" about this connection
	 * (tcp_icmp.h) or the stack's path MTU cache (net/pmtu.h), which also
	 * hands it over at the start and takes it back when it expires.
	 */
	uint16_t path_mtu;
	/**
	 * Black-hole detection lowered path_mtu (tcp_blackhole()): the stack
	 * gives it to its cache, for cfg.blackhole_hold_ns, and clears this.
	 */
	bool pmtu_guessed;
	/**
	 * A probe raised path_mtu (0: to the interface's again): the stack
	 * raises its cache and the peer's other connections, and clears this.
	 */
	bool pmtu_probed;
	/*
	 * Path MTU search (RFC 4821 7.2-7.6), tcp_icmp.c. probe_mtu: the MTU
	 * of the probe in flight (0: none); [probe_seq, probe_end) its data,
	 * kept after it failed until acknowledged (empty: none).
	 * search_high: the largest MTU not yet found too large (a probe tries
	 * it). probe_at: when the next probe may go (0: no search).
	 */
	uint16_t probe_mtu;
	uint16_t search_high;
	uint32_t probe_seq, probe_end;
	uint64_t probe_at;
	bool ws_ok, ts_ok, sack_ok; /**< negotiated options */
	/* ECN (RFC 3168), when both SYNs agreed to it (ecn_ok) */
	bool ecn_ok;
	/**
	 * RFC 3168 6.1.1: a non-ECN-setup SYN was sent (our fallback,
	 * cfg.ecn_fallback) or received (the peer's, resent in SYN-RECEIVED).
	 * Our data then goes without ECT (6.1.1's MUST NOT and SHOULD NOT),
	 * while an agreed ecn_ok still echoes CE and answers ECE: the other
	 * end may have taken the first, ECN-setup, SYN or SYN-ACK (Linux
	 * does), and its marks must not go unanswered.
	 */
	bool ecn_no_ect;
	/**
	 * Our ACKs carry ECE. RFC 3168 6.1.3: from a CE-marked segment until
	 * one with CWR. DCTCP (RFC 8257 3.2): exactly while the last data
	 * segment was CE-marked.
	 */
	bool ecn_echo;

	/* RFC 7323 timestamps */
	uint32_t ts_recent;	/**< TS.Recent */
	uint64_t ts_recent_ns;	/**< when TS.Recent was set (PAWS 24-day rule, 5.5) */
	uint32_t last_ack_sent; /**< Last.ACK.sent (RFC 7323 4.3) */

	/* FIN bookkeeping */
	bool fin_queued;  /**< application closed: FIN goes after the data */
	bool fin_sent;	  /**< our FIN has a sequence number (snd_max covers it) */
	uint32_t fin_seq; /**< sequence number of our FIN */
	bool fin_rcvd;	  /**< peer's FIN consumed */
	/**
	 * The peer's FIN came beyond a gap: taken when RCV.NXT reaches
	 * fin_ooo_seq (its sequence number), as Linux keeps it with the
	 * out-of-order data; SACK blocks ending there cover it.
	 */
	bool fin_ooo;
	uint32_t fin_ooo_seq;
	bool orphan; /**< no application any more: FIN-WAIT-2 must not wait forever */

	/* buffers */
	struct tcp_sndbuf snd;
	struct tcp_slice *rcvq; /**< in-order data not yet taken by the application */
	uint32_t rcvq_cap, rcvq_head, rcvq_count, rcvq_bytes;
	/*
	 * Receive queue compaction: the dense buffer small segments are
	 * copied into (lunar holds one reference while it fills; NULL: none),
	 * where the next byte goes, and the room left. The buffer comes from
	 * rx_alloc (the stack: a packet buffer of the port's pool, whose
	 * pressure levels then count it), or without one is a 4 KiB Zbuf
	 * object; it must be Zbuf memory, held with zbuf_hold()/zbuf_drop().
	 */
	uint8_t *rcvq_fill_obj, *rcvq_fill;
	uint32_t rcvq_fill_room;
	uint8_t *(*rx_alloc)(void *ctx, uint32_t *room); /**< lunar's reference; NULL if none */
	void *rx_alloc_ctx;
	uint32_t app_held; /**< bytes taken zero-copy and not yet released: still in our buffers */
	struct tcp_reass reass;
	/* RFC 2883: a duplicate range received, for the next ACK's first SACK block. */
	bool dsack_pending;
	struct tcp_sack_block dsack;

	/* reliability */
	struct tcp_rtt rtt;
	struct tcp_cc cc;
	/**
	 * SACK loss recovery (cfg.rack and SACK negotiated): every segment in
	 * flight and RACK-TLP's state. sb_on is false without SACK, or once
	 * the scoreboard failed to grow (NewReno from then on).
	 */
	bool sb_on;
	bool sb_kick;	      /**< recovery just began: its first retransmission ignores the pipe */
	uint8_t stall_probes; /**< probes sent since the ACKs last made progress */
	struct tcp_scoreboard sb;
	struct tcp_rack rack;
	struct tcp_undo undo; /**< the last reduction, until it is proved spurious or ages */
	struct tcp_frto frto; /**< after a first RTO: was it spurious (RFC 5682)? */
	uint32_t rtt_seq;     /**< timed segment: sample when this is acknowledged */
	uint64_t rtt_start;   /**< when the timed segment was sent; 0 = none timed */
	unsigned retries;     /**< consecutive RTO expiries */
	/**
	 * Of those, the ones since snd_mss last changed (tcp_path_mtu()): the
	 * timeouts black-hole detection judges the current size by, so a step
	 * another connection's guess or an ICMP error made is not taken again.
	 */
	unsigned rtos_at_size;
	/** when the oldest outstanding data was first sent, or last ACKed */
	uint64_t unacked_since;
	uint64_t last_send_ns; /**< last data or FIN sent (idle restart, RFC 5681 4.1) */
	/*
	 * cwnd validation (as Linux's tcp_cwnd_validate(); RFC 7661's aim):
	 * the most sent and unacknowledged in the current window of data
	 * (which ends when SND.UNA reaches cwnd_usage_seq), and whether cwnd
	 * was what held the sender back in it. cwnd grows only if it was
	 * (in slow start: while cwnd < 2 * max_flight).
	 */
	uint32_t max_flight;
	uint32_t cwnd_usage_seq;
	bool cwnd_limited;
	/*
	 * An unused cwnd decays (RFC 2861 as Linux's
	 * tcp_cwnd_application_limited()): since cwnd_stamp_ns cwnd has not
	 * held the sender back, and cwnd_used is the most in flight meanwhile.
	 */
	uint64_t cwnd_stamp_ns;
	uint32_t cwnd_used;

	/* ACK state */
	enum tcp_mem_pressure mem_pressure; /**< set by the layer below before each call */

	unsigned ack_pending; /**< full segments received since our last ACK */
	bool ack_now;	      /**< an ACK must go out with the next output */
	bool ack_burst;	      /**< an ACK must go out by the end of this receive burst */
	/**
	 * Set by the layer below while it gathers a receive burst's work:
	 * tcp_output() then only notes that output is owed, and the layer
	 * calls tcp_burst_end() once the burst and its callbacks are done, so
	 * the data an application sends segment by segment goes out in one
	 * pass. An ACK that must go now (ack_now) goes at once, alone.
	 */
	bool hold_output;
	bool output_owed; /**< tcp_output() was held */
	/**
	 * Set by the layer below when it runs tcp_ack_work() after its
	 * transmit (tcp_stack's after-transmit mode): an ACK of everything
	 * sent, arriving with data on the fast path, then updates SND.UNA,
	 * the send buffer, the window and the RTT at once, and leaves the
	 * rest (the scoreboard and RACK, congestion control, the RTO and
	 * probe timers) in ack_work for tcp_ack_work(). Until then cwnd has
	 * not grown by it and the scoreboard still holds the records it
	 * acknowledged; the core does that work first itself in tcp_input(),
	 * tcp_input_train(), tcp_timer(), tcp_icmp_error() and
	 * tcp_path_mtu(), which may resend from the scoreboard, and in
	 * output() when the old cwnd would hold data back (a reply from the
	 * callback larger than it).
	 */
	bool ack_defer;
	bool ack_work_due;
	struct tcp_cc_ack ack_work; /**< the congestion control's view of that ACK */

	/* deadlines (0 = not armed), nanoseconds */
	uint64_t rto_at, delack_at, persist_at, keepalive_at, timewait_at;
	uint64_t rack_at; /**< RACK reordering timer (RFC 8985 6.2 step 6) */
	uint64_t tlp_at;  /**< tail loss probe timer (RFC 8985 7.2) */
	unsigned persist_backoff, keepalive_sent;
	uint64_t last_rx_ns;	  /**< last segment from the peer (keepalive idle) */
	uint64_t challenge_since; /**< start of the second challenge_n counts (RFC 5961 7) */
	uint32_t challenge_n;	  /**< challenge ACKs sent in it */

	uint32_t events; /**< enum tcp_event bits not yet taken by the application */
	int error;	 /**< 0, or -ECONNRESET, -ECONNREFUSED, -ETIMEDOUT */
	/** The last ICMP error taken as soft (tcp_icmp.h), 0 once new data is ACKed */
	int soft_error;
	struct tcp_conn_stats stats;
	void *user; /**< the layer above's cookie */
};

/**
 * Initialise @c in CLOSED with @cfg for @tuple; @iss from tcp_isn().
 * @return 0 or -ENOMEM (send ring / receive queue allocation).
 */
int tcp_conn_init(struct tcp_conn *c, const struct tcp_config *cfg, const struct tcp_4tuple *tuple,
		  uint32_t iss, uint64_t now);
/** Release every buffer reference the connection holds. */
void tcp_conn_fini(struct tcp_conn *c);

/** Active open (RFC 9293 3.10.1): CLOSED -> SYN_SENT, a SYN is sent. */
int tcp_connect(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** Passive open: CLOSED -> LISTEN; the next tcp_input() must be the SYN. */
void tcp_listen(struct tcp_conn *c);
/**
 * Passive open from a SYN cookie (tcp_syncookie.h): @c, made with the
 * cookie as its ISS, takes @syn (the peer's SYN as the cookie recalls it:
 * its ISN, options and window) as if it had answered it with a SYN-ACK,
 * and is left in SYN-RECEIVED; nothing is sent. The handshake's ACK is
 * then given to tcp_input() as usual.
 */
void tcp_conn_from_cookie(struct tcp_conn *c, const struct tcp_repr *syn, uint64_t now);

/**
 * A segment for this connection arrived (RFC 9293 3.10.7). @seg->payload
 * points into Zbuf memory; what the connection keeps it references itself.
 */
void tcp_input(struct tcp_conn *c, const struct tcp_repr *seg, uint64_t now, struct tcp_out *out);

/** One segment's payload in a train (tcp_input_train()). */
struct tcp_piece {
	const uint8_t *data;
	uint32_t len;
};

/**
 * A train of segments for this connection (software GRO, the stack's
 * receive burst): @n payload pieces in sequence from @seg->seq, each a
 * segment whose header was @seg's but for its sequence number (and a PSH
 * on the last). Taken by header prediction as the segments one at a time
 * would be, and only while output is held for the burst's end
 * (hold_output). @return how many of the first pieces it took (0: none;
 * the caller gives those left to tcp_input() one by one).
 */
unsigned tcp_input_train(struct tcp_conn *c, const struct tcp_repr *seg, const struct tcp_piece *pc,
			 unsigned n, uint64_t now, struct tcp_out *out);

/** The bookkeeping of an ACK left for later (ack_defer), if any: done now. */
void tcp_ack_work(struct tcp_conn *c);

/** Send what may be sent now: data, FIN, window updates, pending ACKs. */
void tcp_output(struct tcp_conn *c, uint64_t now, struct tcp_out *out);

/** Run the timers that are due at @now. */
void tcp_timer(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** The earliest armed deadline, or UINT64_MAX. */
uint64_t tcp_next_deadline(const struct tcp_conn *c);

/**
 * Queue @len bytes at @data (Zbuf memory) for sending; takes its own
 * reference. @return bytes accepted (0 when the send buffer is full or the
 * connection cannot send), or -ENOTCONN / -EPIPE, or -EFAULT when @data is
 * not Zbuf memory or the range runs past the end of its object.
 */
int tcp_send(struct tcp_conn *c, const uint8_t *data, uint32_t len);
/**
 * Whether @c takes data now: 0, or the error tcp_send() would return
 * whatever the room (-EPIPE: the application closed; the connection's
 * error, or -ENOTCONN, once it is gone or not yet open).
 */
int tcp_send_state(const struct tcp_conn *c);
/** Free space in the send buffer. */
uint32_t tcp_send_space(const struct tcp_conn *c);

/**
 * Take up to @max slices of in-order received data; the caller owns one
 * Zbuf reference per slice, given to it as the application's
 * (zbuf_give(); zbuf_unref(slice.data) when done). Taking data
 * opens the receive window; a window update is sent if it grew enough
 * (RFC 9293 3.8.6.2.2). @return slices taken.
 */
unsigned tcp_recv(struct tcp_conn *c, struct tcp_slice *out, unsigned max, uint64_t now,
		  struct tcp_out *o);
/**
 * The zero-copy read (LUNA §6.2): like tcp_recv(), but the slices stay
 * charged to the receive buffer while the application holds them, so the
 * advertised window shrinks instead of the buffers running out. Give them
 * back with tcp_recv_release(). No window update is sent here.
 */
unsigned tcp_recv_hold(struct tcp_conn *c, struct tcp_slice *out, unsigned max);
/**
 * The application is done with @len held bytes: the window may open again
 * (an update is sent if it grew enough).
 */
void tcp_recv_release(struct tcp_conn *c, uint32_t len, uint64_t now, struct tcp_out *o);
/** Bytes of in-order data queued for the application. */
static inline uint32_t tcp_recv_bytes(const struct tcp_conn *c)
{
	return c->rcvq_bytes;
}

/**
 * Send a window update if the receive window can now open by enough (RFC
 * 9293 3.8.6.2.2): after the application took data, or memory pressure
 * ended.
 */
void tcp_window_update(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/**
 * The receive burst that brought segments to @c is over: release
 * hold_output, send what tcp_output() held, then the ACK the burst earned
 * (cfg.ack_per_burst) unless something sent carried it.
 * @return whether it sent a pure ACK.
 */
bool tcp_burst_end(struct tcp_conn *c, uint64_t now, struct tcp_out *out);

/**
 * Give back every out-of-order segment held (RFC 2018 8: a receiver may
 * discard data it has SACKed; the sender keeps it until it is cumulatively
 * acknowledged). For memory pressure. @return bytes released.
 */
uint32_t tcp_prune_ooo(struct tcp_conn *c);

/** CLOSE (RFC 9293 3.10.4): no more data from us; FIN after queued data. */
void tcp_close(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/** ABORT (RFC 9293 3.10.5): send RST if synchronized, go to CLOSED. */
void tcp_abort(struct tcp_conn *c, uint64_t now, struct tcp_out *out);
/**
 * Close with received data left unread (RFC 1122 4.2.2.13, RFC 2525
 * 2.17): as tcp_abort(), but the RST goes in LAST-ACK and CLOSING too, as
 * Linux's tcp_close() sends it, so that a peer waiting for our lost FIN
 * learns the data was not taken rather than waiting for ever.
 */
void tcp_abort_unread(struct tcp_conn *c, uint64_t now, struct tcp_out *out);

/**
 * Where the payload of a tcp_tx lives: up to @max slices covering
 * [seq, seq + len) of the send buffer (no references are taken; valid until
 * the connection next processes an ACK). It moves the send buffer's
 * framing cursor, hence @c is not const. @return slices written.
 */
unsigned tcp_tx_slices(struct tcp_conn *c, uint32_t seq, uint32_t len, struct tcp_slice *out,
		       unsigned max);

/**
 * A reply to a segment that has no connection (RFC 9293 3.10.7.1, "If the
 * state is CLOSED"): a RST, unless the segment itself is a RST.
 * @return true and fills @rst if one must be sent.
 */
bool tcp_reset_for(const struct tcp_repr *seg, struct tcp_tx *rst);

#endif
