/*
 * dispatch.h - dispatch mode (LUNA §5.2, the object-storage case): one core
 * runs the stack and polls the port; application threads on other cores
 * exchange requests and buffers with it over lock-free rings, and sleep when
 * they have nothing to do, so only the stack core polls. This decouples the
 * application's work from the protocol's (NetChannel) at the price of one
 * ring hop each way, instead of LUNA's default run-to-completion.
 *
 * A channel (struct lunar_chan) joins the stack core to ONE application
 * thread: two single-producer/single-consumer DPDK rings of struct lunar_msg,
 * stack->app and app->stack, and an eventfd to wake the application. Several
 * application threads means several channels; a dispatcher
 * (struct lunar_dispatch) owns an array of them and the stack core polls
 * all of them each iteration with lunar_dispatch_poll(). No EAL is needed:
 * the rings live in ordinary memory (rte_ring_init).
 *
 * The stack side never blocks: a full ring returns -ENOBUFS and is counted,
 * and the caller applies backpressure (stop reading that connection, say).
 * The application side spins briefly (lunar_chan_config.spin_ns; not on the
 * CPU the stack last sent from, where the spin would only keep the stack
 * from running), then sleeps on the eventfd; the stack writes the eventfd
 * only when the application said it is going to sleep. Protocol, and why
 * no wakeup is lost:
 *
 *   application (consumer)            stack (producer)
 *   A1 sleeping = 1                   P1 enqueue (ring tail, release)
 *   A2 full fence (seq_cst)           P2 full fence (seq_cst)
 *   A3 ring empty? no: sleeping = 0,  P3 sleeping? yes: sleeping = 0 and
 *      take the messages                 write the eventfd
 *   A4 yes: block on the eventfd
 *
 * The two fences are ordered one way or the other. If A2 comes first, P3
 * reads A1's store, so it writes the eventfd and the block in A4 returns (an
 * eventfd stays readable until it is read, so a write that comes before the
 * block is not lost) - or P3 reads a later 0, stored only by an application
 * that is no longer asleep and receives before it sleeps again. If P2 comes
 * first, A3 sees P1's message and the application does not block. The only other
 * outcome, both (A3 finds the ring empty, P3 finds sleeping = 0), would need
 * each thread's load to miss the other's store made before its fence: that
 * is the store-buffering pattern the seq_cst fences exclude. At worst both
 * sides act (A3 sees the message, P3 sees sleeping = 1): one spurious
 * eventfd count, which the next sleep reads and goes back to sleep.
 * P3 clears the flag with an exchange, so a burst of sends while the
 * application sleeps costs one eventfd write, not one per message.
 *
 * A shared core: when the application thread went to sleep on the CPU the
 * stack sends from (it has nowhere else to run, on a small machine), P3's
 * eventfd write for a channel of a dispatcher waits for the dispatcher's
 * next lunar_dispatch_poll(), which writes it and then yields the CPU to
 * the thread. The thread wakes once for the messages sent since the last
 * poll rather than preempting the stack for each, and runs at once rather than when
 * the scheduler next preempts the polling loop (milliseconds, at times).
 * Counted: lunar_chan_stats.wakeups_deferred, lunar_dispatch_handoffs().
 * So the stack core must poll the dispatcher every iteration (it must
 * anyway, to read the applications' requests), send on the dispatcher's
 * channels only from that thread, and, before it blocks or stops polling
 * with a thread still waiting, call lunar_dispatch_flush_wakes(). A lone
 * channel (no dispatcher) never defers.
 *
 * Buffers: lunar_msg.buf is a Zbuf pointer passed by reference, and the
 * reference moves with the message: the sender stops touching it once the
 * send succeeded (on -ENOBUFS it still owns it), and the receiver owns it
 * from the dequeue on (releases it with zbuf_unref, or sends it back). A
 * message still queued at teardown is handed to a drain callback; without
 * one, its buffer is released with zbuf_unref(). Nothing leaks either way.
 *
 * Threads: the stack_* calls are for the stack core only, the app_* calls
 * for the channel's one application thread only (SPSC rings). Statistics
 * may be read from anywhere.
 */
#ifndef LUNAR_LOOP_DISPATCH_H
#define LUNAR_LOOP_DISPATCH_H

#include <stdint.h>

/**
 * One request, response or event. The channel moves it and interprets
 * nothing: op, len, conn and arg mean what the application and the stack
 * agree on. @buf is a Zbuf pointer (or NULL); its reference moves with the
 * message. 32 bytes: two to a cache line.
 */
struct lunar_msg {
	uint32_t op;
	uint32_t len;
	uint64_t conn;
	void *buf;
	uint64_t arg;
};

/** A message still queued when its channel is freed (the channel owned it). */
typedef void (*lunar_msg_drain_fn)(struct lunar_msg *m, void *ctx);

struct lunar_chan_config {
	unsigned size;	  /* messages each ring holds (1 .. 1<<20); 0: 1024 */
	unsigned spin_ns; /* how long app_wait polls before sleeping; 0: none */
};
#define LUNAR_CHAN_DEFAULT_SIZE 1024
#define LUNAR_CHAN_MAX_SIZE	(1u << 20)
/** A good spin: long enough to catch a reply in flight, short next to a sleep. */
#define LUNAR_CHAN_DEFAULT_SPIN_NS 20000

struct lunar_chan_stats {
	/* counted by the stack side */
	uint64_t to_app;	   /* messages enqueued for the application */
	uint64_t app_full;	   /* messages refused: stack->app ring full (-ENOBUFS) */
	uint64_t from_app;	   /* messages dequeued from the application */
	uint64_t wakeups;	   /* sleeps the stack ended (took the flag; the eventfd
				      written at once, or deferred) */
	uint64_t wakeups_deferred; /* of those, deferred to the dispatcher's next poll
				      (the thread slept on the stack's CPU); a
				      sleep that timed out meanwhile shares its
				      write with the next */
	/* counted by the application side */
	uint64_t to_stack;	/* messages enqueued for the stack */
	uint64_t stack_full;	/* messages refused: app->stack ring full (-ENOBUFS) */
	uint64_t from_stack;	/* messages dequeued from the stack */
	uint64_t sleeps;	/* times the application blocked on the eventfd, or was
				   about to and the stack's wakeup came first */
	uint64_t spurious;	/* sleeps that woke to an empty ring */
	uint64_t spins;		/* waits that spun first (and slept only if the spin
				   found nothing) */
	uint64_t spins_skipped; /* waits that skipped the spin: the thread was on
				   the CPU the stack last sent from */
};

struct lunar_chan;

/**
 * A channel with rings of @cfg->size messages (NULL: defaults).
 * @return 0, -EINVAL (size above LUNAR_CHAN_MAX_SIZE), -ENOMEM, or the error
 *         of eventfd() (-EMFILE).
 */
int lunar_chan_create(const struct lunar_chan_config *cfg, struct lunar_chan **out);
/**
 * Free the channel; no thread may use it any more (join the application
 * thread first). Messages still queued either way go to @drain(msg, ctx),
 * or, @drain NULL, have their buf released with zbuf_unref().
 * @return the number of messages drained.
 */
unsigned lunar_chan_free(struct lunar_chan *ch, lunar_msg_drain_fn drain, void *ctx);
/**
 * Tell the application there will be no more messages: app_wait() returns
 * -EPIPE once the ring is empty, and both sides' sends fail with -EPIPE.
 * Any thread; wakes a sleeping application.
 */
void lunar_chan_shutdown(struct lunar_chan *ch);
/** Counters, read from any thread (each is exact; together a snapshot). */
void lunar_chan_stats(const struct lunar_chan *ch, struct lunar_chan_stats *out);
/** Capacity of each ring in messages. */
unsigned lunar_chan_size(const struct lunar_chan *ch);

/* --- stack side: never blocks --- */

/**
 * Enqueue @m for the application and wake it if it is asleep.
 * @return 0, -ENOBUFS (ring full, counted: @m and its buf are still the
 *         caller's), or -EPIPE (shut down).
 */
int lunar_chan_stack_send(struct lunar_chan *ch, const struct lunar_msg *m);
/**
 * Enqueue up to @n messages in order, with one wakeup check for all.
 * @return how many were taken (the rest, counted as refused, stay the
 *         caller's), 0 when shut down.
 */
unsigned lunar_chan_stack_send_burst(struct lunar_chan *ch, const struct lunar_msg *m, unsigned n);
/** Messages the stack->app ring can take now (the stack is its one producer). */
unsigned lunar_chan_stack_room(const struct lunar_chan *ch);
/** Dequeue up to @max messages from the application. @return how many. */
unsigned lunar_chan_stack_recv(struct lunar_chan *ch, struct lunar_msg *out, unsigned max);

/* --- application side: one thread per channel --- */

/**
 * Enqueue @m for the stack (which polls; no wakeup needed).
 * @return 0, -ENOBUFS (ring full, counted: retry, the stack is draining it),
 *         or -EPIPE (shut down).
 */
int lunar_chan_app_send(struct lunar_chan *ch, const struct lunar_msg *m);
/** Dequeue up to @max messages without waiting. @return how many. */
unsigned lunar_chan_app_recv(struct lunar_chan *ch, struct lunar_msg *out, unsigned max);
/**
 * Dequeue up to @max messages, waiting for the first: spin up to spin_ns
 * (unless this thread is on the CPU the stack last sent from), then sleep
 * on the eventfd, up to @timeout_ms in all (-1: no limit; 0: no
 * wait, no sleep).
 * @return how many (0: timed out), -EPIPE (shut down and nothing queued:
 *         every message the stack sent before the shutdown comes first),
 *         -EINTR (a signal interrupted the sleep), -ENOMEM (poll() could
 *         not sleep), or -EINVAL (@max 0).
 */
int lunar_chan_app_wait(struct lunar_chan *ch, struct lunar_msg *out, unsigned max, int timeout_ms);
/**
 * For an application that waits on its own poll/epoll set: the eventfd, and
 * the two halves of the sleep protocol around its own blocking call.
 * sleep_begin() returns 0 if the application may now block on the fd (it
 * must then call sleep_end() when it wakes, whatever woke it), or 1 if
 * messages arrived meanwhile (or the channel is shut down): do not block,
 * receive them. sleep_end() clears the flag and reads the eventfd.
 */
int lunar_chan_app_fd(const struct lunar_chan *ch);
int lunar_chan_app_sleep_begin(struct lunar_chan *ch);
void lunar_chan_app_sleep_end(struct lunar_chan *ch);

/* --- dispatcher: the stack core's set of channels --- */

struct lunar_dispatch;

/**
 * A message @m arrived from the application thread of channel @idx
 * (lunar_dispatch_chan(d, idx) == @ch). The callback owns @m->buf now; it
 * may send on any channel (replies go on @ch).
 */
typedef void (*lunar_dispatch_fn)(struct lunar_chan *ch, unsigned idx, struct lunar_msg *m,
				  void *ctx);

/**
 * @nchans channels (one per application thread), each made with @cfg.
 * @return 0, -EINVAL (@nchans 0 or above 1024, bad @cfg), -ENOMEM, -EMFILE.
 */
int lunar_dispatch_create(unsigned nchans, const struct lunar_chan_config *cfg,
			  struct lunar_dispatch **out);
/** Free every channel (see lunar_chan_free). @return messages drained in all. */
unsigned lunar_dispatch_free(struct lunar_dispatch *d, lunar_msg_drain_fn drain, void *ctx);
struct lunar_chan *lunar_dispatch_chan(struct lunar_dispatch *d, unsigned idx);
unsigned lunar_dispatch_count(const struct lunar_dispatch *d);
/** lunar_chan_shutdown() on every channel. */
void lunar_dispatch_shutdown(struct lunar_dispatch *d);
/** Polls that woke threads sleeping on the stack's CPU and yielded to them. */
uint64_t lunar_dispatch_handoffs(const struct lunar_dispatch *d);
/**
 * Write the eventfds of the wakeups deferred since the last poll, without
 * yielding: for a stack core about to block, or to stop polling, while an
 * application thread may still wait (lunar_dispatch_poll() does it itself).
 */
void lunar_dispatch_flush_wakes(struct lunar_dispatch *d);
/**
 * Stack core, once per iteration: take up to @budget messages (0: 32 per
 * channel) from the channels' app->stack rings and call @fn for each. The
 * budget is shared fairly: each channel gets its share in turn, starting
 * one channel further each call, so a busy application cannot starve the
 * others nor the port. Messages of one channel keep their order. First,
 * the wakeups deferred since the last poll are written and the CPU is
 * yielded once (see "A shared core" above).
 * @return messages handled.
 */
unsigned lunar_dispatch_poll(struct lunar_dispatch *d, lunar_dispatch_fn fn, void *ctx,
			     unsigned budget);

#endif
