/*
 * tcp_cc.h - congestion control: one engine and the algorithms behind one
 * small interface (struct tcp_cc_ops), chosen per connection.
 *
 * The engine owns what every algorithm shares: fast retransmit and NewReno
 * fast recovery (RFC 5681 3.2, RFC 6582) or the entry into SACK-based
 * recovery (RFC 6675), the restart after a timeout (RFC 5681 3.1, eq. 4 and
 * the loss window) or after idle (RFC 5681 4.1), and the response to an ECN
 * echo at most once per window (RFC 3168 6.1.2). An algorithm says only how
 * cwnd grows outside recovery, what ssthresh becomes on a congestion signal,
 * and what it learns from each ACK:
 *  - NewReno (RFC 5681 3.1 with RFC 3465 byte counting), the default: LUNA
 *    (section 9) found it enough inside a datacenter;
 *  - CUBIC (RFC 9438), tcp_cc_cubic.c;
 *  - DCTCP (RFC 8257), tcp_cc_dctcp.c, which needs ECN (RFC 3168).
 * Pure state: the caller reports ACKs, duplicate ACKs, ECN echoes and
 * timeouts and asks what to (re)send. Counts bytes, not segments.
 */
#ifndef LUNAR_TCP_TCP_CC_H
#define LUNAR_TCP_TCP_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp/tcp_hystart.h"
#include "tcp/tcp_seq.h"

/** The algorithms (tcp_config.cc). */
enum tcp_cc_algo {
	TCP_CC_NEWRENO,
	TCP_CC_CUBIC,
	TCP_CC_DCTCP,
	TCP_CC_ALGO_COUNT,
};

/** tcp_config.ecn: ECN (RFC 3168) as Linux's net.ipv4.tcp_ecn 0, 1 and 2. */
enum { TCP_ECN_OFF, TCP_ECN_ON, TCP_ECN_ACCEPT };

/** The name of @a ("newreno", "cubic", "dctcp"), or NULL. */
const char *tcp_cc_algo_name(enum tcp_cc_algo a);
/** The algorithm called @name (also "reno"); -1 if none is. */
int tcp_cc_algo_by_name(const char *name);

/** What made the window shrink. */
enum tcp_cc_signal {
	TCP_CC_SIG_LOSS, /**< fast retransmit or SACK recovery (or a repaired tail loss) */
	TCP_CC_SIG_ECN,	 /**< an ECN echo (RFC 3168 6.1.2) */
	TCP_CC_SIG_RTO,	 /**< the retransmission timer */
};

/** One acceptable ACK as the algorithm sees it. */
struct tcp_cc_ack {
	uint32_t ack;	  /**< the new SND.UNA */
	uint32_t acked;	  /**< bytes it newly acknowledged (0: a duplicate) */
	uint32_t flight;  /**< snd_max - snd_una before it */
	uint32_t snd_nxt; /**< snd_max: one past the highest sequence sent */
	bool ece;	  /**< it carried ECE on an ECN connection */
	/**
	 * The sender has not been using its window (tcp_conn's cwnd
	 * validation): cwnd does not grow on this ACK (RFC 9438 5.8, RFC 7661).
	 */
	bool app_limited;
	uint64_t now_ns;
	uint64_t rtt_ns; /**< smoothed RTT; 0: no sample yet */
	/** This ACK's own RTT measurement, for HyStart++ (0: none, e.g. Karn). */
	uint64_t rtt_sample_ns;
};

struct tcp_cc;
union tcp_cc_algo_state;

/**
 * An algorithm. Every hook but ssthresh and grow may be NULL. Hooks see
 * the engine's fields (cwnd, ssthresh, smss) and own cc->algo.
 */
struct tcp_cc_ops {
	const char *name;
	bool needs_ecn; /**< runs only with ECN: the connection asks for it */
	/**
	 * As a receiver, echo exactly which data was CE-marked (RFC 8257 3.2:
	 * ECE mirrors the last segment's mark, each change acknowledged at
	 * once) instead of RFC 3168 6.1.3's ECE from a CE until a CWR.
	 */
	bool ece_exact;
	void (*init)(struct tcp_cc *cc);
	/** Outside recovery, an ACK of new data: grow cwnd. */
	void (*grow)(struct tcp_cc *cc, const struct tcp_cc_ack *a);
	/** Every acceptable ACK, in recovery or not, before the engine acts on it. */
	void (*acked)(struct tcp_cc *cc, const struct tcp_cc_ack *a);
	/** A congestion signal: the new ssthresh (the engine sets cwnd from it). */
	uint32_t (*ssthresh)(struct tcp_cc *cc, uint32_t flight, enum tcp_cc_signal sig);
	/** cwnd was cut back to the restart window after idle (RFC 5681 4.1). */
	void (*idle)(struct tcp_cc *cc);
	/**
	 * The last reduction was spurious (tcp_cc_undo()): take back the
	 * state @prior saved before it. NULL: the state stays as it is.
	 */
	void (*undo)(struct tcp_cc *cc, const union tcp_cc_algo_state *prior);
	/**
	 * smss changed from @old_smss (a path MTU learned): state kept in
	 * segments must be rescaled. NULL: the state is in bytes.
	 */
	void (*mss_changed)(struct tcp_cc *cc, uint32_t old_smss);
};

extern const struct tcp_cc_ops tcp_cc_newreno_ops, tcp_cc_cubic_ops, tcp_cc_dctcp_ops;

/** CUBIC's state (RFC 9438 4.1), windows in segments. */
struct tcp_cc_cubic {
	double w_max;	   /**< window before the last reduction */
	double cwnd_prior; /**< cwnd when it was reduced (4.3, Reno-friendly alpha) */
	double k;	   /**< seconds the cubic takes from cwnd_epoch back to w_max */
	double cwnd_epoch; /**< cwnd when this congestion avoidance stage began */
	double w_est;	   /**< the Reno-friendly estimate (4.3) */
	double carry;	   /**< growth owed, bytes, below one */
	uint64_t epoch_ns; /**< when the stage began; 0: at the next ACK */
	bool after_rto;	   /**< the stage follows a timeout: K = 0, W_max = cwnd (4.8) */
};

/** DCTCP's state (RFC 8257 3.3). */
struct tcp_cc_dctcp {
	uint32_t alpha;	       /**< the estimated fraction of marked bytes, in 1/2^20 */
	uint32_t window_end;   /**< the observation window ends when SND.UNA passes this */
	uint64_t bytes_acked;  /**< acknowledged in this window */
	uint64_t bytes_marked; /**< of those, by ACKs carrying ECE */
	bool started;	       /**< window_end is set */
};

/** What the algorithm keeps (cc->algo). */
union tcp_cc_algo_state {
	struct tcp_cc_cubic cubic;
	struct tcp_cc_dctcp dctcp;
};

struct tcp_cc {
	const struct tcp_cc_ops *ops;
	uint32_t cwnd;	      /**< congestion window, bytes */
	uint32_t ssthresh;    /**< slow start threshold, bytes */
	uint32_t smss;	      /**< sender maximum segment size */
	uint32_t bytes_acked; /**< congestion avoidance byte counter (RFC 3465) */
	unsigned dupacks;     /**< consecutive duplicate ACKs */
	bool in_recovery;     /**< fast recovery in progress */
	/**
	 * The recovery is SACK-based (RFC 6675, entered by tcp_cc_enter_recovery()):
	 * what is sent is paced by the pipe, so partial ACKs neither deflate
	 * cwnd nor ask for a retransmission, and duplicate ACKs do not inflate it.
	 */
	bool sack_recovery;
	/**
	 * Proportional Rate Reduction (RFC 6937, SSRB) for a SACK-based
	 * recovery: bytes delivered to the receiver and bytes sent since it
	 * began, and the flight when it began (RecoverFS). tcp_cc_prr_ack()
	 * turns them into cwnd on each ACK.
	 */
	uint32_t prr_delivered, prr_out, recover_fs;
	/**
	 * RFC 6582 "recover", stored as snd_nxt when recovery began or the RTO
	 * fired, i.e. one past RFC 6582's "highest sequence number
	 * transmitted". So an ACK "covers more than recover" when
	 * ack > recover, and acknowledges "all of the data up to and including
	 * recover" (a full ACK) when ack >= recover, both modulo 2^32.
	 */
	uint32_t recover;
	/**
	 * The step 1 guard is armed: no ACK has yet covered more than recover
	 * since it was set. False after init (RFC 6582 3.2 sets recover to the
	 * ISS, which every ACK of data covers) and once an ACK passes recover,
	 * so a recover left behind by 2^31 bytes never blocks fast retransmit.
	 */
	bool recover_armed;
	/**
	 * An RTO fired and no ACK has advanced snd_una since: the next RTO is a
	 * repeat for the same segment and holds ssthresh (RFC 5681 3.1, after
	 * eq. 4). An undo clears it too, so the scoreboard's reneging rule
	 * counts RTOs by tcp_conn.retries instead.
	 */
	bool rto_repeat;
	/**
	 * The ECN response's window (RFC 3168 6.1.2): no further reduction for
	 * an ECN echo until an ACK passes ecn_recover (snd_nxt when the window
	 * was last reduced, for any reason).
	 */
	uint32_t ecn_recover;
	bool ecn_armed;
	/**
	 * The window was reduced, for any reason: the first new data after it
	 * carries CWR on an ECN connection (RFC 3168 6.1.2; Linux queues it
	 * on loss and timeout too), or the peer echoes the old CE for ever and
	 * the next window is cut again for it. tcp_xmit() clears it.
	 */
	bool cwr_owed;
	/**
	 * The window as it was before the last fresh reduction (a recovery
	 * entered, or a first RTO outside one), for tcp_cc_undo() should it
	 * prove spurious (RFC 4015 3, RFC 9438 4.9).
	 */
	struct {
		uint32_t cwnd, ssthresh;
		union tcp_cc_algo_state algo;
		struct tcp_hystart hs; /**< HyStart++ resumes if the first slow start does */
	} prior;
	union tcp_cc_algo_state algo;
	/**
	 * HyStart++ (RFC 9406) in the first slow start, for every algorithm;
	 * off after tcp_cc_init(), turned on by tcp_hystart_init(&cc->hs, ...).
	 */
	struct tcp_hystart hs;
};

/** What the sender must do after an event. */
enum tcp_cc_action {
	TCP_CC_NONE,
	TCP_CC_RETRANSMIT_FIRST, /**< retransmit the first unacknowledged segment */
};

/**
 * The initial window, bytes. @iw_segments nonzero: iw_segments * SMSS
 * (saturating). Zero: RFC 5681 3.1's upper bound, in whole segments:
 * 4*SMSS if SMSS <= 1095, 3*SMSS if SMSS <= 2190, else 2*SMSS. That is
 * RFC 3390 (1), min(4*SMSS, max(2*SMSS, 4380)), where it is a whole number
 * of segments (SMSS <= 1095, 1460, > 2190); between those RFC 5681's "MUST
 * NOT be more than 3 segments" governs (SMSS = 1448 gives 4344, not 4380).
 */
uint32_t tcp_cc_initial_window(uint32_t smss, unsigned iw_segments);
/**
 * cwnd = IW (tcp_cc_initial_window()), ssthresh = UINT32_MAX (RFC 5681 3.1:
 * "arbitrarily high"), no recovery, step 1 guard disarmed, algorithm @algo
 * (NewReno if out of range).
 */
void tcp_cc_init(struct tcp_cc *cc, uint32_t smss, unsigned iw_segments, enum tcp_cc_algo algo);
/**
 * The segment size changed (path MTU): cwnd stays in bytes (the units
 * changed, not the path's load); an algorithm's state in segments is
 * rescaled, or CUBIC's W_max would be counted in the old size.
 */
void tcp_cc_set_smss(struct tcp_cc *cc, uint32_t smss);
/**
 * An ACK that advanced snd_una by a->acked bytes (> 0) to a->ack, a->flight
 * being the bytes in flight before it (snd_nxt - old snd_una).
 * Outside recovery the algorithm grows cwnd; NewReno: slow start
 * (cwnd < ssthresh) adds min(acked, 2*SMSS) (RFC 3465 2.2, L = 2), a
 * quarter of that in HyStart++'s CSS, and HyStart++ may end slow start
 * here (ssthresh = cwnd, RFC 9406 4.2);
 * congestion avoidance adds SMSS per cwnd bytes acknowledged (RFC 3465 2.1).
 * In recovery, a full ACK (ack >= recover) leaves it with
 * cwnd = min(ssthresh, max(flight - acked, SMSS) + SMSS) (RFC 6582 3.2
 * step 5, option 1); a partial ACK deflates cwnd by @acked, adds back SMSS
 * if acked >= SMSS (never below 1 SMSS) and asks for a retransmit. The
 * caller also resets the retransmission timer on the first partial ACK
 * (RFC 6582 3.2 step 5).
 */
enum tcp_cc_action tcp_cc_on_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a);
/**
 * An ACK carrying ECE on an ECN connection (RFC 3168 6.1.2), after
 * tcp_cc_on_ack() or tcp_cc_on_dupack() took it: unless the window was
 * already reduced in this window of data (in recovery, or SND.UNA
 * @snd_una not past ecn_recover), ssthresh = the algorithm's ECN response,
 * cwnd = ssthresh, and the window is marked reduced up to @snd_nxt.
 * @return whether cwnd was reduced (the caller then sets CWR on its next
 * new data segment).
 */
bool tcp_cc_on_ece(struct tcp_cc *cc, uint32_t snd_una, uint32_t snd_nxt, uint32_t flight);
/**
 * A duplicate ACK (RFC 5681 2 definition) of @ack while @snd_nxt was the
 * next sequence to send (snd_max: the highest sent plus one). The first two
 * change nothing here (limited transmit, RFC 3042, is the caller's). The
 * third starts fast retransmit (RFC 6582 3.2 step 2: ssthresh =
 * max(flight/2, 2*SMSS), recover = snd_nxt, cwnd = ssthresh + 3*SMSS,
 * returns TCP_CC_RETRANSMIT_FIRST) unless the ACK does not cover more than
 * "recover" (step 1's guard against spurious re-entry after a timeout or a
 * previous recovery). In recovery each one inflates cwnd by SMSS (step 3).
 * Here and below, "max(flight/2, 2*SMSS)" is NewReno's reduction: the
 * algorithm's ssthresh hook gives it (CUBIC: beta * cwnd, RFC 9438 4.6).
 */
enum tcp_cc_action tcp_cc_on_dupack(struct tcp_cc *cc, uint32_t ack, uint32_t snd_nxt,
				    uint32_t flight);
/**
 * Loss detected on a SACK connection (RACK, RFC 8985, or RFC 6675
 * IsLost()) while not in recovery: unless the RFC 6582 3.2 step 1 guard
 * holds (@snd_una not past recover), enter SACK-based recovery
 * (RFC 6675 5 step 4): ssthresh = cwnd = max(flight/2, 2*SMSS),
 * recover = @snd_nxt. @return whether recovery was entered.
 */
bool tcp_cc_enter_recovery(struct tcp_cc *cc, uint32_t snd_una, uint32_t snd_nxt, uint32_t flight);
/**
 * A recovery is under way, a fast one or a timeout's (RFC 8985's "fast or
 * timeout recovery"): in recovery, or @snd_una still below the "recover"
 * an RTO or a recovery set, so what was sent before it is being repaired.
 */
static inline bool tcp_cc_recovering(const struct tcp_cc *cc, uint32_t snd_una)
{
	return cc->in_recovery || (cc->recover_armed && seq_lt(snd_una, cc->recover));
}
/**
 * An ACK during (or starting) a SACK-based recovery that delivered
 * @delivered bytes (newly cumulatively acknowledged or SACKed, RFC 6937
 * DeliveredData), the pipe being @pipe once it is taken: set cwnd to
 * pipe + sndcnt, sndcnt per RFC 6937 3.1 with the slow-start reduction
 * bound (SSRB). While pipe > ssthresh the sends keep pace with the
 * deliveries at ssthresh / RecoverFS, so the window comes down over one
 * round trip instead of stopping all sending until the pipe drains; below
 * ssthresh it grows back at most one SMSS beyond what was delivered, as
 * slow start would. Nothing to send on the first ACK still allows one
 * SMSS (the fast retransmit).
 */
void tcp_cc_prr_ack(struct tcp_cc *cc, uint32_t delivered, uint32_t pipe);
/** @bytes were sent (new or again) during a SACK-based recovery (RFC 6937 prr_out). */
static inline void tcp_cc_prr_sent(struct tcp_cc *cc, uint32_t bytes)
{
	cc->prr_out += bytes;
}
/**
 * A loss repaired by a tail loss probe alone (RFC 8985 7.4.2): the same
 * reduction as a fast recovery, ssthresh = cwnd = max(flight/2, 2*SMSS),
 * without entering one.
 */
void tcp_cc_reduce(struct tcp_cc *cc, uint32_t flight);
/**
 * RTO expired (RFC 5681 3.1 eq. 4: ssthresh = max(flight/2, 2*SMSS), held
 * on a repeated timeout with no ACK between; cwnd = the loss window,
 * 1 SMSS). Leaves recovery and sets recover = @snd_nxt (snd_max, before any
 * go-back-N rewind) with the step 1 guard armed (RFC 6582 3.2, "after a
 * retransmit timeout").
 * @return whether this is a fresh reduction (not a repeat, not within a
 * recovery), which saved the window before it for tcp_cc_undo(); a
 * repeat or a timeout in recovery keeps what the episode's start saved.
 */
bool tcp_cc_on_timeout(struct tcp_cc *cc, uint32_t flight, uint32_t snd_nxt);
/**
 * The last fresh reduction (a recovery or an RTO) was spurious: nothing
 * was lost (RFC 3522, RFC 3708 detected it). As Linux and RFC 9438 4.9:
 * cwnd = max(cwnd, prior cwnd), ssthresh = max(ssthresh, prior ssthresh),
 * the algorithm's state back to before the reduction (CUBIC's W_max, K and
 * epoch) and HyStart++'s (a first slow start goes on watched), out of
 * recovery, the RTO repeat, step 1 and ECN-window guards cleared (the
 * reduction they guard did not happen).
 */
void tcp_cc_undo(struct tcp_cc *cc);
/**
 * RFC 2861 3 (as Linux's tcp_cwnd_application_limited()): for an RTO cwnd
 * held nothing back and at most @used bytes were in flight. Outside
 * recovery, if max(@used, IW) is below cwnd: ssthresh = max(ssthresh,
 * 3/4 cwnd), so slow start regains the window quickly when it is needed,
 * and cwnd = (cwnd + max(@used, IW)) / 2. @return whether cwnd came down.
 */
bool tcp_cc_unused(struct tcp_cc *cc, uint32_t used, unsigned iw_segments);
/**
 * RFC 5681 4.1: restart after the connection was idle longer than an RTO:
 * cwnd = min(cwnd, RW) with RW = IW (tcp_cc_initial_window()); HyStart++,
 * if still watching, starts over in slow start.
 */
void tcp_cc_on_idle(struct tcp_cc *cc, unsigned iw_segments);

#endif
