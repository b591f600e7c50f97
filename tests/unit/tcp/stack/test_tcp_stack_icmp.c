/*
 * test_tcp_stack_icmp.c - ICMP errors through the whole receive path
 * (netif -> tcp_stack -> tcp_icmp), between two stacks in one process: a
 * router drops the client's full-sized segments and answers with
 * "fragmentation needed" (RFC 1191, RFC 5927 7): the client's next
 * segments fit the reported MTU and the stream arrives whole; the same
 * message once its data is acknowledged is off-path (RFC 5927 4.1);
 * errors for no connection and cut-short quotes are dropped and counted;
 * port unreachable on an established connection is only a soft error
 * (RFC 5927 4.2); a host unreachable while the path is down undoes one
 * backoff of the retransmission timer (RFC 6069). The path MTU learned
 * goes into the stack's cache (RFC 1191 5): the peer's other connections,
 * open or opened later, send at it too, and all go back up when the cache
 * forgets it (6.3); so does a black hole's guess (RFC 2923 2.1), when a
 * path drops large datagrams and says nothing. Every outcome shows in the
 * stack's counters.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/pmtu.h"
#include "tcp/tcp_icmp.h"
#include "tcp_pair.h"
#include "wire/icmp.h"

#define US	  1000ull
#define ROUTER	  0x0a0000feu /* 10.0.0.254 */
#define QUOTE_MAX 64

/* An ICMP error from the router to the client, quoting @quote_len bytes of the datagram at @ip. */
static void error_to_client(struct tcp_pair *p, uint8_t type, uint8_t code, uint16_t mtu,
			    const uint8_t *ip, size_t quote_len)
{
	uint8_t msg[ICMP_HDR_LEN + QUOTE_MAX];
	size_t n = icmp_emit(
	    msg, sizeof(msg),
	    &(struct icmp_repr){
		.type = type, .code = code, .seq = mtu, .data = ip, .data_len = quote_len});

	assert_int_equal(n, ICMP_HDR_LEN + quote_len);
	pair_inject_ip(p, &p->a, ROUTER, IPPROTO_ICMP, msg, n);
}

/* The IPv4 datagram in the client's frame @i, not yet carried: its first QUOTE_MAX bytes. */
static void client_datagram(struct tcp_pair *p, unsigned i, uint8_t *ip)
{
	struct rte_mbuf *f = p->a.fp.tx[i];

	assert_true(i < p->a.fp.n_tx);
	assert_true(rte_pktmbuf_data_len(f) >= RTE_ETHER_HDR_LEN + QUOTE_MAX);
	memcpy(ip, rte_pktmbuf_mtod(f, const uint8_t *) + RTE_ETHER_HDR_LEN, QUOTE_MAX);
}

/* The client sends @len bytes of the stream from offset @off; its segments wait at its port. */
static void client_sends_from(struct tcp_pair *p, size_t len, uint64_t off)
{
	uint8_t *buf = malloc(len);

	assert_non_null(buf);
	pair_fill(buf, len, off);
	assert_int_equal(tcp_sock_send(p->cli, buf, len), (int)len);
	free(buf);
	netif_flush(&p->a.nif);
}

/* The stream's first @len bytes. */
static void client_sends(struct tcp_pair *p, size_t len)
{
	client_sends_from(p, len, 0);
}

static uint64_t drops(const struct pair_side *s, enum lunar_drop why)
{
	return s->nif.ctr.drops[why];
}

/*
 * RFC 1191 3, RFC 5927 7: the router on the path takes 1280 bytes and
 * drops all eight 1500-byte datagrams, quoting the first. The client sends
 * them again at once, none over 1280, and new data keeps the new size.
 */
static void test_frag_needed_shrinks_segments(void **state)
{
	const size_t len = 8 * 1448;
	const struct tcp_conn *c;
	struct tcp_pair p;
	uint8_t ip[QUOTE_MAX];

	(void)state;
	pair_open(&p, false);
	c = tcp_sock_conn(p.cli);
	assert_int_equal(c->snd_mss, 1448);
	client_sends(&p, len);
	assert_int_equal(p.a.fp.n_tx, 8);
	client_datagram(&p, 0, ip);
	pair_discard_tx(&p.a); /* lost on the way */
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, ip, 28);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_mss_lowered, 1);
	assert_int_equal(p.a.nif.ctr.rx_icmp_error_tcp, 1);
	assert_int_equal(c->snd_mss, 1280 - 52);
	/*
	 * Carried to the server, not yet received: each lost segment again as
	 * two (1228 + 220 bytes: the scoreboard's records are cut, as Linux's
	 * tcp_simple_retransmit() cuts its queue), none over 1280.
	 */
	assert_int_equal(p.b.fp.rx_n - p.b.fp.rx_head, 16);
	for (unsigned i = p.b.fp.rx_head; i < p.b.fp.rx_n; i++) {
		const uint8_t *d = rte_pktmbuf_mtod(p.b.fp.rx[i], const uint8_t *);

		assert_true((d[RTE_ETHER_HDR_LEN + 2] << 8 | d[RTE_ETHER_HDR_LEN + 3]) <= 1280);
	}
	pair_run(&p, 2000 * US);
	pair_rcvd_ok(&p, len);
	/* RFC 5927 4.1: the same message now quotes acknowledged data: off-path, ignored. */
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 600, ip, 28);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_out_of_window, 1);
	assert_int_equal(drops(&p.a, LUNAR_DROP_TCP_ICMP_OUT_OF_WINDOW), 1);
	assert_int_equal(c->snd_mss, 1280 - 52);
	assert_int_equal(pmtu_get(tcp_stack_pmtu(p.a.tcp), PAIR_IP_B, p.now), 1280);
	pair_close(&p);
}

/*
 * Bad and unbelievable errors are dropped and counted, and change nothing;
 * port unreachable on an established connection (RFC 5927 4.2: hard errors
 * as soft) is recorded and the data still arrives, which clears it.
 */
static void test_errors_counted(void **state)
{
	const struct tcp_conn *c;
	struct tcp_pair p;
	uint8_t ip[QUOTE_MAX], other[QUOTE_MAX];

	(void)state;
	pair_open(&p, false);
	c = tcp_sock_conn(p.cli);
	client_sends(&p, 100);
	client_datagram(&p, 0, ip);
	/* A connection that does not exist: the quoted source port is another. */
	memcpy(other, ip, sizeof(other));
	other[20] ^= 0x01;
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_PORT_UNREACH, 0, other, 28);
	/* RFC 792: the IPv4 header and 8 bytes, one short. */
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1000, ip, 27);
	/* The real one: soft. */
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_PORT_UNREACH, 0, ip, 28);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_no_conn, 1);
	assert_int_equal(drops(&p.a, LUNAR_DROP_TCP_ICMP_NO_CONN), 1);
	assert_int_equal(drops(&p.a, LUNAR_DROP_ICMP_QUOTE_SHORT), 1);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_soft_errors, 1);
	assert_int_equal(c->soft_error, -ECONNREFUSED);
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(c->snd_mss, 1448);
	pair_run(&p, 200 * US);
	pair_rcvd_ok(&p, 100);
	assert_int_equal(c->soft_error, 0);
	assert_int_equal(p.cli_events & (TCP_EV_RESET | TCP_EV_TIMEOUT | TCP_EV_CLOSED), 0);
	pair_close(&p);
}

/*
 * RFC 6069: the path is down; the client's retransmissions are lost and its
 * timer doubles each time. A router's host unreachable quoting SND.UNA
 * undoes one doubling (icmp_rto_reverts), so once the path is back the
 * next retransmission comes sooner, and the data arrives.
 */
static void test_unreachable_reverts_rto(void **state)
{
	const struct tcp_conn *c;
	struct tcp_pair p;
	uint8_t ip[QUOTE_MAX];
	uint64_t rto_at;

	(void)state;
	pair_open(&p, false);
	c = tcp_sock_conn(p.cli);
	client_sends(&p, 100);
	client_datagram(&p, 0, ip);
	p.cut_a = true;
	for (unsigned i = 0; i < 100000 && c->stats.timeouts < 3; i++)
		pair_step(&p);
	assert_int_equal(c->stats.timeouts, 3);
	assert_int_equal(c->rtt.backoff, 3);
	rto_at = c->rto_at;
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_HOST_UNREACH, 0, ip, 28);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_rto_reverts, 1);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_soft_errors, 0);
	assert_int_equal(c->soft_error, -EHOSTUNREACH);
	assert_int_equal(c->rtt.backoff, 2);
	assert_true(c->rto_at < rto_at);
	p.cut_a = false;
	while (p.now < c->rto_at + PAIR_STEP_NS) /* to the reverted timeout, and its carry */
		pair_step(&p);
	assert_int_equal(c->stats.timeouts, 4);
	pair_run(&p, 200 * US);
	pair_rcvd_ok(&p, 100);
	assert_int_equal(c->soft_error, 0);
	assert_int_equal(p.cli_events & (TCP_EV_RESET | TCP_EV_TIMEOUT | TCP_EV_CLOSED), 0);
	pair_close(&p);
}

/* ---- the path MTU cache ---- */

#define PORT2	   7001
#define MAX_SECOND 6

/* Side b's second listener: takes every connection and reads everything it is sent. */
struct second {
	struct tcp_listener *lst;
	struct tcp_sock *s[MAX_SECOND];
	unsigned n;
	size_t rcvd;
};

static void on_second(struct tcp_sock *s, uint32_t events, void *ctx)
{
	struct second *v = ctx;
	uint8_t buf[4096];
	size_t n;

	if (events & TCP_EV_READABLE)
		while ((n = tcp_sock_read(s, buf, sizeof(buf))) > 0)
			v->rcvd += n;
}

static void on_second_accept(struct tcp_listener *l, void *ctx)
{
	struct second *v = ctx;
	struct tcp_sock *s;

	while (v->n < MAX_SECOND && (s = tcp_accept(l, on_second, v)))
		v->s[v->n++] = s;
}

static void on_quiet(struct tcp_sock *s, uint32_t events, void *ctx)
{
	(void)s;
	*(uint32_t *)ctx |= events;
}

/* A new connection from a to b's PORT2, established. */
static struct tcp_sock *connect_second(struct tcp_pair *p, struct second *v, uint32_t *ev)
{
	int rc;
	struct tcp_sock *s;

	if (!v->lst) {
		v->lst = tcp_listen_on(p->b.tcp, PORT2, MAX_SECOND, on_second_accept, v, &rc);
		assert_non_null(v->lst);
	}
	s = tcp_connect_to(p->a.tcp, PAIR_IP_B, PORT2, on_quiet, ev, &rc);
	assert_non_null(s);
	pair_run(p, 1000 * US);
	assert_true(*ev & TCP_EV_CONNECTED);
	return s;
}

/*
 * @s sends @len bytes; every frame it puts on the wire is at most @mtu bytes
 * of IPv4. @return the largest.
 */
static uint32_t send_fits(struct tcp_pair *p, struct tcp_sock *s, size_t len, unsigned mtu)
{
	uint8_t *buf = malloc(len);
	uint32_t largest = 0;

	assert_non_null(buf);
	pair_fill(buf, len, 0);
	assert_int_equal(tcp_sock_send(s, buf, len), (int)len);
	free(buf);
	netif_flush(&p->a.nif);
	assert_true(p->a.fp.n_tx > 0);
	for (unsigned i = 0; i < p->a.fp.n_tx; i++) {
		uint32_t n = rte_pktmbuf_pkt_len(p->a.fp.tx[i]) - RTE_ETHER_HDR_LEN;

		assert_true(n <= mtu);
		largest = n > largest ? n : largest;
	}
	return largest;
}

/*
 * RFC 1191 5: the path MTU is the path's. One "fragmentation needed" about
 * the first connection lowers the second, already open, too
 * (pmtu_conns_lowered), and a third opened later starts at it
 * (pmtu_conns_started) and sends nothing too large. One that knew of a
 * lower path MTU already keeps it. After the cache's
 * lifetime (RFC 1191 6.3: ten minutes) the entry is forgotten and all
 * three go back to the MSS their handshakes allowed (pmtu_conns_raised);
 * a fourth starts there.
 */
static void test_pmtu_shared_by_connections(void **state)
{
	const size_t len = 8 * 1448;
	const struct tcp_stack_stats *st;
	const struct pmtu_cache *pc;
	struct second v = {0};
	uint32_t ev2 = 0, ev3 = 0, ev4 = 0, ev5 = 0;
	struct tcp_sock *c2, *c3, *c4, *c5;
	struct tcp_out out = {0};
	struct tcp_pair p;
	uint8_t ip[QUOTE_MAX];

	(void)state;
	pair_open(&p, false);
	st = tcp_stack_stats(p.a.tcp);
	pc = tcp_stack_pmtu(p.a.tcp);
	c2 = connect_second(&p, &v, &ev2);
	assert_int_equal(tcp_sock_conn(c2)->snd_mss, 1448);
	c5 = connect_second(&p, &v, &ev5);
	assert_true(tcp_path_mtu((struct tcp_conn *)tcp_sock_conn(c5), 1000, p.now, &out));
	assert_int_equal(out.n, 0); /* nothing in flight */
	assert_int_equal(tcp_sock_conn(c5)->snd_mss, 1000 - 52);
	assert_int_equal(pc->used, 0);

	client_sends(&p, len);
	client_datagram(&p, 0, ip);
	pair_discard_tx(&p.a);
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, ip, 28);
	/* the next oversized segment's error, the same MTU: the entry's lifetime starts over */
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, ip, 28);
	pair_step(&p);
	assert_int_equal(st->icmp_mss_lowered, 1);
	assert_int_equal(st->icmp_mtu_not_lower, 1);
	assert_int_equal(pc->stats.refreshed, 1);
	assert_int_equal(tcp_sock_conn(p.cli)->snd_mss, 1280 - 52);
	assert_int_equal(tcp_sock_conn(c2)->snd_mss, 1280 - 52);
	assert_int_equal(tcp_sock_conn(c2)->path_mtu, 1280);
	assert_int_equal(tcp_sock_conn(c5)->snd_mss, 1000 - 52);
	assert_int_equal(st->pmtu_conns_lowered, 1);
	assert_int_equal(pmtu_get(pc, PAIR_IP_B, p.now), 1280);
	assert_int_equal(pc->stats.learned, 1);
	pair_run(&p, 2000 * US);
	pair_rcvd_ok(&p, len);

	send_fits(&p, c2, len, 1280);
	c3 = connect_second(&p, &v, &ev3);
	assert_int_equal(st->pmtu_conns_started, 1);
	assert_int_equal(tcp_sock_conn(c3)->snd_mss, 1280 - 52);
	assert_int_equal(tcp_sock_conn(c3)->mss_clamp, 1448);
	send_fits(&p, c3, len, 1280);
	pair_run(&p, 2000 * US);
	assert_int_equal(v.rcvd, 2 * len);
	assert_int_equal(st->icmp_mss_lowered, 1); /* nothing else was too large */

	/* Ten minutes on: forgotten, and every connection tries the larger MTU again. */
	p.now += PMTU_LIFETIME_NS;
	pair_step(&p);
	assert_int_equal(pc->used, 0);
	assert_int_equal(pc->stats.expired, 1);
	assert_int_equal(st->pmtu_conns_raised, 4);
	assert_int_equal(tcp_sock_conn(c5)->snd_mss, 1448);
	assert_int_equal(tcp_sock_conn(p.cli)->snd_mss, 1448);
	assert_int_equal(tcp_sock_conn(c2)->snd_mss, 1448);
	assert_int_equal(tcp_sock_conn(c3)->snd_mss, 1448);
	assert_int_equal(tcp_sock_conn(c3)->path_mtu, 0);
	c4 = connect_second(&p, &v, &ev4);
	assert_int_equal(tcp_sock_conn(c4)->snd_mss, 1448);
	assert_int_equal(st->pmtu_conns_started, 1);
	assert_int_equal(send_fits(&p, c3, len, 1500), 1500);
	pair_run(&p, 2000 * US);
	assert_int_equal(v.rcvd, 3 * len);
	tcp_listener_close(v.lst);
	pair_close(&p);
}

/*
 * RFC 2923 2.1, RFC 8899 4.3: a path that takes 1280 bytes and drops
 * larger datagrams without a word. The client's full segments time out
 * three times, the MTU steps to 1400 (still too large), three more and
 * to 1280: the stream arrives whole. The guess is the path's, as an
 * ICMP-learned MTU is: the peer's other open connection follows each
 * step and a new one starts at 1280; after cfg.blackhole_hold_ns (not
 * the ten minutes of a reported MTU) all go back up.
 */
static void test_blackhole_guess_shared(void **state)
{
	const size_t len = 8 * 1448;
	const struct tcp_stack_stats *st;
	const struct pmtu_cache *pc;
	struct second v = {0};
	uint32_t ev2 = 0, ev3 = 0;
	struct tcp_sock *c2, *c3;
	struct tcp_config cfg;
	struct tcp_pair p;

	(void)state;
	pair_config(&cfg);
	assert_int_equal(cfg.blackhole_rtos, 3);
	pair_open(&p, false);
	st = tcp_stack_stats(p.a.tcp);
	pc = tcp_stack_pmtu(p.a.tcp);
	c2 = connect_second(&p, &v, &ev2);
	p.mtu_a = 1280;
	client_sends(&p, len);
	pair_run(&p, 1000 * 1000 * US);
	pair_rcvd_ok(&p, len);
	assert_int_equal(tcp_stack_stats(p.b.tcp)->icmp_mss_lowered, 0);
	assert_int_equal(st->pmtu_blackholes, 2);
	assert_int_equal(tcp_sock_conn(p.cli)->snd_mss, 1280 - 52);
	assert_int_equal(pmtu_get(pc, PAIR_IP_B, p.now), 1280);
	assert_int_equal(tcp_sock_conn(c2)->path_mtu, 1280);
	assert_int_equal(st->pmtu_conns_lowered, 2); /* 1400, then 1280 */
	send_fits(&p, c2, len, 1280);
	c3 = connect_second(&p, &v, &ev3);
	assert_int_equal(st->pmtu_conns_started, 1);
	send_fits(&p, c3, len, 1280);
	pair_run(&p, 2000 * US);
	assert_int_equal(v.rcvd, 2 * len);
	assert_int_equal(st->pmtu_blackholes, 2);

	/* Held for blackhole_hold_ns only: then the larger MTU is tried again. */
	p.mtu_a = 0;
	p.now += cfg.blackhole_hold_ns;
	pair_step(&p);
	assert_int_equal(pc->used, 0);
	assert_int_equal(st->pmtu_conns_raised, 3);
	assert_int_equal(tcp_sock_conn(p.cli)->snd_mss, 1448);
	assert_int_equal(send_fits(&p, c3, len, 1500), 1500);
	pair_run(&p, 2000 * US);
	assert_int_equal(v.rcvd, 3 * len);
	tcp_listener_close(v.lst);
	pair_close(&p);
}

/*
 * A peer whose MSS is already below the path (b advertises 1000): a
 * "fragmentation needed" for 1280 lowers no segment (icmp_mtu_recorded,
 * not a drop) but the path MTU is known, kept and cached; a later one for
 * 1400, above it, is ignored (RFC 1191 3) and cached nowhere.
 */
static void test_pmtu_recorded_below_peer_mss(void **state)
{
	struct tcp_config ca, cb;
	const struct tcp_conn *c;
	struct tcp_pair p;
	uint8_t ip[QUOTE_MAX];

	(void)state;
	pair_config(&ca);
	cb = ca;
	cb.mss = 1000;
	pair_open_cfgs(&p, false, &ca, &cb);
	c = tcp_sock_conn(p.cli);
	assert_int_equal(c->snd_mss, 1000 - 12);
	client_sends(&p, 4 * 988);
	client_datagram(&p, 0, ip);
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, ip, 28);
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1400, ip, 28);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_mtu_recorded, 1);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_mtu_not_lower, 1);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_mss_lowered, 0);
	assert_int_equal(drops(&p.a, LUNAR_DROP_TCP_ICMP_MTU_NOT_LOWER), 1);
	assert_int_equal(c->snd_mss, 1000 - 12);
	assert_int_equal(c->path_mtu, 1280);
	assert_int_equal(pmtu_get(tcp_stack_pmtu(p.a.tcp), PAIR_IP_B, p.now), 1280);
	assert_int_equal(tcp_stack_pmtu(p.a.tcp)->stats.refreshed, 0);
	pair_run(&p, 2000 * US);
	pair_rcvd_ok(&p, 4 * 988);
	pair_close(&p);
}

/*
 * RFC 4821 7: after the black-hole steps the client searches upwards at
 * once. On the same narrow path its probes of 1500 and 1400 are lost
 * (no congestion response: no recovery) and the stream arrives whole;
 * the search then waits cfg.probe_interval_ns (100 ms here). Once the path is wide
 * again, the next probe gets through: the client goes back to 1500, the
 * cache forgets the guess before its hold is over, and the peer's other
 * connection goes up with it.
 */
static void test_probe_finds_wider_path(void **state)
{
	const size_t len = 16 * 1448;
	const struct tcp_stack_stats *st;
	const struct pmtu_cache *pc;
	const struct tcp_conn *c;
	struct second v = {0};
	struct tcp_config cfg;
	struct tcp_sock *c2;
	struct tcp_pair p;
	uint32_t ev2 = 0;

	(void)state;
	pair_config(&cfg);
	cfg.probe_interval_ns = 100 * 1000 * US; /* 100 ms, well within the guess's 60 s hold */
	pair_open_cfgs(&p, false, &cfg, &cfg);
	st = tcp_stack_stats(p.a.tcp);
	pc = tcp_stack_pmtu(p.a.tcp);
	c = tcp_sock_conn(p.cli);
	c2 = connect_second(&p, &v, &ev2);
	p.mtu_a = 1280;
	client_sends(&p, len);
	pair_run(&p, 1000 * 1000 * US);
	client_sends_from(&p, len, len);
	pair_run(&p, 1000 * 1000 * US);
	pair_rcvd_ok(&p, 2 * len);
	assert_int_equal(st->pmtu_blackholes, 2);
	assert_int_equal(c->path_mtu, 1280);
	assert_int_equal(c->stats.pmtu_probes, 2);
	assert_int_equal(c->stats.pmtu_probes_lost, 2); /* 1500, then 1400 */
	assert_int_equal(c->stats.pmtu_probes_ok, 0);
	assert_int_equal(c->stats.recoveries, 0);
	assert_true(c->probe_at); /* the next search, from the top, due once there is data */
	assert_int_equal(c->search_high, 1500);
	assert_int_equal(tcp_sock_conn(c2)->path_mtu, 1280);

	p.mtu_a = 0;
	pair_run(&p, 200 * 1000 * US); /* past the interval */
	client_sends_from(&p, len, 2 * len);
	pair_run(&p, 1000 * 1000 * US);
	pair_rcvd_ok(&p, 3 * len);
	assert_int_equal(c->stats.pmtu_probes_ok, 1);
	assert_int_equal(c->path_mtu, 0);
	assert_int_equal(c->snd_mss, 1448);
	assert_int_equal(pc->used, 0);
	assert_int_equal(pc->stats.raised, 1);
	assert_int_equal(pc->stats.expired, 0);
	assert_int_equal(tcp_sock_conn(c2)->path_mtu, 0);
	assert_int_equal(send_fits(&p, c2, len, 1500), 1500);
	pair_run(&p, 2000 * US);
	assert_int_equal(v.rcvd, len);
	tcp_listener_close(v.lst);
	pair_close(&p);
}

/*
 * LUNA 7.4: with two workers, an error quoting a client port of the other
 * worker's share is that worker's: dropped and counted as foreign, not
 * looked up here (where it would find no connection).
 */
static void test_foreign_error_dropped(void **state)
{
	struct tcp_pair p;
	uint8_t ip[28] = {0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, IPPROTO_TCP};

	(void)state;
	pair_workers = 2;
	pair_stacks(&p, false);
	pair_workers = 1;
	ip[12] = 10, ip[15] = 1;		    /* from 10.0.0.1, the client */
	ip[16] = 10, ip[19] = 2;		    /* to 10.0.0.2 */
	ip[20] = 65000 >> 8, ip[21] = 65000 & 0xff; /* 61440..65535's upper half: worker 1's */
	ip[22] = PAIR_PORT >> 8, ip[23] = PAIR_PORT & 0xff;
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, ip, 28);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->foreign, 1);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_no_conn, 0);
	assert_int_equal(drops(&p.a, LUNAR_DROP_TCP_FOREIGN_QUEUE), 1);
	pair_close(&p);
}

/*
 * RFC 1191 6.3: an error arriving after the cached MTU's lifetime, before
 * any poll forgot it, finds it forgotten (the stack expires the cache
 * before it takes the error): the connection is back at the interface's
 * MTU, and the same MTU reported lowers it anew and is learned again,
 * rather than found "not lower" and the stale entry kept alive.
 */
static void test_error_after_lifetime_finds_entry_gone(void **state)
{
	const size_t len = 8 * 1448;
	const struct tcp_stack_stats *st;
	const struct pmtu_cache *pc;
	struct tcp_pair p;
	uint8_t ip[QUOTE_MAX];

	(void)state;
	pair_open(&p, false);
	st = tcp_stack_stats(p.a.tcp);
	pc = tcp_stack_pmtu(p.a.tcp);
	client_sends(&p, len);
	client_datagram(&p, 0, ip);
	pair_discard_tx(&p.a);
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, ip, 28);
	pair_step(&p);
	assert_int_equal(st->icmp_mss_lowered, 1);
	pair_run(&p, 2000 * US);
	pair_rcvd_ok(&p, len);

	p.now += PMTU_LIFETIME_NS - 3000 * US; /* just before the end of the lifetime */
	pair_step(&p);
	assert_int_equal(pmtu_get(pc, PAIR_IP_B, p.now), 1280);
	client_sends_from(&p, len, len); /* at 1280, the MTU still believed */
	client_datagram(&p, p.a.fp.n_tx - 1, ip);
	pair_discard_tx(&p.a);
	p.now += 2000 * US; /* past it, and no poll has run since */
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, ip, 28);
	pair_step(&p);
	assert_int_equal(pc->stats.expired, 1);
	assert_int_equal(st->pmtu_conns_raised, 1);
	assert_int_equal(st->icmp_mtu_not_lower, 0);
	assert_int_equal(st->icmp_mss_lowered, 2);
	assert_int_equal(pc->stats.refreshed, 0);
	assert_int_equal(pc->stats.learned, 2);
	assert_int_equal(pmtu_get(pc, PAIR_IP_B, p.now), 1280);
	assert_int_equal(tcp_sock_conn(p.cli)->snd_mss, 1280 - 52);
	pair_run(&p, 1000 * 1000 * US);
	pair_rcvd_ok(&p, 2 * len);
	pair_close(&p);
}

/*
 * RFC 1191 / tcp_icmp.h: an MTU reported below TCP_PMTU_MIN is taken as
 * TCP_PMTU_MIN. The same report again finds the path MTU known (at the
 * floor): it still holds, and the cache entry's lifetime starts over.
 */
static void test_floored_mtu_reported_again_refreshes(void **state)
{
	const struct pmtu_cache *pc;
	struct tcp_pair p;
	uint8_t ip[QUOTE_MAX];

	(void)state;
	pair_open(&p, false);
	pc = tcp_stack_pmtu(p.a.tcp);
	client_sends(&p, 4 * 1448);
	client_datagram(&p, 0, ip);
	pair_discard_tx(&p.a);
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 500, ip, 28);
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 500, ip, 28);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_mss_floored, 1);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->icmp_mtu_not_lower, 1);
	assert_int_equal(tcp_sock_conn(p.cli)->path_mtu, TCP_PMTU_MIN);
	assert_int_equal(pmtu_get(pc, PAIR_IP_B, p.now), TCP_PMTU_MIN);
	assert_int_equal(pc->stats.learned, 1);
	assert_int_equal(pc->stats.refreshed, 1);
	pair_run(&p, 2000 * US);
	pair_rcvd_ok(&p, 4 * 1448);
	pair_close(&p);
}

/*
 * RFC 1191 5: a lower path MTU learned from one connection's error lowers
 * the peer's other connection at once, and what that one has in flight
 * goes again at the new size then, not at its retransmission timeout:
 * both streams, lost at 1500, arrive within 2 ms.
 */
static void test_pmtu_lowered_conn_resends_at_once(void **state)
{
	const size_t len = 4 * 1448;
	struct second v = {0};
	uint32_t ev2 = 0;
	struct tcp_sock *c2;
	struct tcp_pair p;
	uint8_t *buf = malloc(len);
	uint8_t ip[QUOTE_MAX];

	(void)state;
	assert_non_null(buf);
	pair_open(&p, false);
	c2 = connect_second(&p, &v, &ev2);
	pair_fill(buf, len, 0);
	assert_int_equal(tcp_sock_send(c2, buf, len), (int)len);
	client_sends(&p, len);
	assert_int_equal(p.a.fp.n_tx, 8);
	client_datagram(&p, 4, ip); /* the first connection's */
	pair_discard_tx(&p.a);	    /* all lost on the way */
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_FRAG_NEEDED, 1280, ip, 28);
	pair_step(&p);
	assert_int_equal(tcp_stack_stats(p.a.tcp)->pmtu_conns_lowered, 1);
	assert_int_equal(tcp_sock_conn(c2)->snd_mss, 1280 - 52);
	pair_run(&p, 2000 * US);
	pair_rcvd_ok(&p, len);
	assert_int_equal(v.rcvd, len);
	assert_int_equal(tcp_sock_conn(c2)->stats.retransmits > 0, true);
	free(buf);
	tcp_listener_close(v.lst);
	pair_close(&p);
}

static void on_inline_cli(struct tcp_sock *s, uint32_t events, void *ctx)
{
	(void)s;
	*(uint32_t *)ctx |= events;
}

/*
 * An ICMP error for a socket in inline mode is delivered in place
 * (tcp_stack.c, inline-r2c): a hard error aborting its connect (RFC 5461
 * 4.1, SYN-SENT) runs its callback at once, counted in inline_calls; a
 * socket not in inline mode gets the same event from the poll's dispatch,
 * not inline.
 */
static void test_error_delivered_inline(void **state)
{
	struct tcp_pair p;
	struct tcp_sock *c[2];
	uint32_t ev[2] = {0};
	uint8_t ip[2][28];
	const struct tcp_stack_stats *sa;
	int rc;

	(void)state;
	pair_stacks(&p, false);
	sa = tcp_stack_stats(p.a.tcp);
	for (unsigned i = 0; i < 2; i++) {
		c[i] = tcp_connect_to(p.a.tcp, PAIR_IP_B, PAIR_PORT, on_inline_cli, &ev[i], &rc);
		assert_non_null(c[i]);
	}
	tcp_sock_set_inline(c[0], true);
	netif_flush(&p.a.nif);
	assert_int_equal(p.a.fp.n_tx, 2);
	for (unsigned i = 0; i < 2; i++) {
		const struct rte_mbuf *f = p.a.fp.tx[i];

		assert_true(rte_pktmbuf_data_len(f) >= RTE_ETHER_HDR_LEN + 28);
		memcpy(ip[i], rte_pktmbuf_mtod(f, const uint8_t *) + RTE_ETHER_HDR_LEN, 28);
		/* frame i is connection i's SYN: the connections were made in that order */
		assert_int_equal(ip[i][20] << 8 | ip[i][21], tcp_sock_conn(c[i])->tuple.lport);
	}
	pair_discard_tx(&p.a);
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_PORT_UNREACH, 0, ip[0], 28);
	pair_step(&p);
	assert_true(ev[0] & TCP_EV_RESET);
	assert_int_equal(sa->icmp_aborts, 1);
	assert_int_equal(sa->inline_calls, 1);
	error_to_client(&p, ICMP_TYPE_DEST_UNREACH, ICMP_CODE_PORT_UNREACH, 0, ip[1], 28);
	pair_step(&p);
	assert_true(ev[1] & TCP_EV_RESET);
	assert_int_equal(sa->icmp_aborts, 2);
	assert_int_equal(sa->inline_calls, 1);
	tcp_sock_close(c[0]);
	tcp_sock_close(c[1]);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frag_needed_shrinks_segments),
	    cmocka_unit_test(test_errors_counted),
	    cmocka_unit_test(test_unreachable_reverts_rto),
	    cmocka_unit_test(test_pmtu_shared_by_connections),
	    cmocka_unit_test(test_pmtu_recorded_below_peer_mss),
	    cmocka_unit_test(test_blackhole_guess_shared),
	    cmocka_unit_test(test_probe_finds_wider_path),
	    cmocka_unit_test(test_foreign_error_dropped),
	    cmocka_unit_test(test_error_after_lifetime_finds_entry_gone),
	    cmocka_unit_test(test_floored_mtu_reported_again_refreshes),
	    cmocka_unit_test(test_pmtu_lowered_conn_resends_at_once),
	    cmocka_unit_test(test_error_delivered_inline),
	};

	return cmocka_run_group_tests_name("tcp/stack_icmp", tests, pair_group_setup,
					   pair_group_teardown);
}
