/*
 * test_xdp_syncookie.c - root-only tests of the XDP SYN-cookie responder
 * (bpf/lunar_syncookie.bpf.h) against lunar's C code.
 *
 * The steering object is loaded (not attached: BPF_PROG_TEST_RUN needs no
 * interface for queue 0), its lunar_cookie entry armed by hand. SYNs are
 * built with lunar's own emitters, run through the program, and the reply
 * parsed with lunar's own parsers (checksums verified). The reply must be
 * XDP_TX and be the SYN-ACK tcp_xmit() would send: addresses and MACs
 * swapped, ACK = ISN + 1, the ISN the cookie tcp_syncookie_make() makes for
 * the SYN at the worker's clock (ktime + clock_off), which
 * tcp_syncookie_check() then accepts with the SYN's options, the options
 * offered and agreed to, ECE for an ECN-setup SYN when agreed, TSval = the
 * worker's milliseconds + ISS. Everything the responder must not answer
 * goes on to lunar (redirect, which with no AF_XDP socket falls back to
 * XDP_PASS and counts redirect_failed) or to the kernel. One test attaches
 * the program to a multi-queue veth in a throw-away namespace, so that a
 * SYN can arrive on a queue other than 0 and the counters be read through
 * the host side (ctl/xdp.c).
 *
 * Usage: test_ctl_xdp_syncookie <lunar_steer.bpf.o> (or LUNAR_STEER_OBJ).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <rte_ip.h>

#include "ctl/steer_abi.h"
#include "ctl/xdp.h"
#include "tcp/tcp_syncookie.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "nsutil.h"

#define LUNAR_IP    0x0a000001u /* 10.0.0.1, host order */
#define PEER_IP	    0x0a000002u
#define LISTEN_PORT 7000
#define PEER_PORT   40000
#define PEER_ISN    0x11223344u
#define CLOCK_OFF   123456789012ll /* the worker's clock runs ahead of ktime */

static const char *obj_path;
static const uint8_t mac_lunar[6] = {0x02, 0, 0, 0, 0, 0x0a};
static const uint8_t mac_peer[6] = {0x02, 0, 0, 0, 0, 0x0b};

struct fx {
	struct bpf_object *obj;
	int prog_fd, cookie_fd, ports_fd, stats_fd;
	struct lunar_cookie_cfg cfg;
	/* only for the multi-queue test: namespace, veth, handle */
	char ns[64];
	int ifindex;
	struct xdp_steer st;
};

struct frame {
	uint8_t b[256];
	size_t len;
};

static uint64_t ktime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void arm(struct fx *f, uint64_t until)
{
	uint32_t q = 0;

	f->cfg.until_ktime = until;
	assert_int_equal(bpf_map_update_elem(f->cookie_fd, &q, &f->cfg, BPF_ANY), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	uint32_t port = LISTEN_PORT, one = 1;

	*state = f;
	f->obj = bpf_object__open_file(obj_path, NULL);
	if (!f->obj || bpf_object__load(f->obj)) {
		fprintf(stderr, "cannot load %s\n", obj_path);
		return -1;
	}
	f->prog_fd = bpf_program__fd(bpf_object__next_program(f->obj, NULL));
	f->cookie_fd = bpf_object__find_map_fd_by_name(f->obj, LUNAR_STEER_COOKIE_MAP);
	f->ports_fd = bpf_object__find_map_fd_by_name(f->obj, LUNAR_STEER_PORTS_MAP);
	f->stats_fd = bpf_object__find_map_fd_by_name(f->obj, LUNAR_STEER_STATS_MAP);
	if (f->prog_fd < 0 || f->cookie_fd < 0 || f->ports_fd < 0 || f->stats_fd < 0)
		return -1;
	if (bpf_map_update_elem(f->ports_fd, &port, &one, BPF_ANY))
		return -1;
	for (unsigned i = 0; i < 16; i++)
		((uint8_t *)f->cfg.key)[i] = (uint8_t)(0x5a ^ (i * 37));
	f->cfg.clock_off = CLOCK_OFF;
	f->cfg.ip = rte_cpu_to_be_32(LUNAR_IP);
	f->cfg.mss = 1448;
	f->cfg.window = 64240;
	f->cfg.wscale = 9;
	f->cfg.ttl = 47; /* not the SYN's 64: the reply's TTL must be the worker's */
	f->cfg.flags = LUNAR_COOKIE_WS | LUNAR_COOKIE_SACK | LUNAR_COOKIE_TS | LUNAR_COOKIE_ECN;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f)
		bpf_object__close(f->obj);
	free(f);
	return 0;
}

#define MQ_QUEUES 4

/*
 * setup(), plus a namespace with a veth sqa/sqb of MQ_QUEUES queues and the
 * program attached to sqa and opened through the host side, so that
 * BPF_PROG_TEST_RUN can name an rx queue other than 0.
 */
static int mq_setup(void **state)
{
	struct fx *f;
	char err[256];

	if (setup(state))
		return -1;
	f = *state;
	f->st.cfg_fd = f->st.ports_fd = f->st.stats_fd = f->st.cookie_fd = -1;
	ns_name(f->ns, sizeof(f->ns), "lunar-txsc");
	ns_delete(f->ns);
	if (ns_sh("ip netns add %s && "
		  "ip -n %s link add name sqa numtxqueues %d numrxqueues %d type veth "
		  "peer name sqb numtxqueues %d numrxqueues %d && "
		  "ip -n %s link set dev sqa up && ip -n %s link set dev sqb up",
		  f->ns, f->ns, MQ_QUEUES, MQ_QUEUES, MQ_QUEUES, MQ_QUEUES, f->ns, f->ns) ||
	    ns_enter(f->ns)) {
		fprintf(stderr, "cannot create namespace %s with veth sqa/sqb\n", f->ns);
		goto fail;
	}
	f->ifindex = (int)if_nametoindex("sqa");
	if (!f->ifindex ||
	    bpf_xdp_attach(f->ifindex, f->prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL)) {
		fprintf(stderr, "cannot attach to sqa\n");
		goto fail;
	}
	if (xdp_steer_open("sqa", &f->st, err, sizeof(err))) {
		fprintf(stderr, "xdp_steer_open: %s\n", err);
		goto fail;
	}
	return 0;
fail:
	ns_leave();
	ns_delete(f->ns);
	f->ns[0] = 0;
	return -1;
}

static int mq_teardown(void **state)
{
	struct fx *f = *state;

	if (f && f->ns[0]) {
		xdp_steer_close(&f->st);
		ns_leave();
		ns_delete(f->ns);
	}
	return teardown(state);
}

/* A SYN (or @flags) from the peer to @dport with options @o, @data bytes of payload. */
static void mk_syn(struct frame *fr, uint16_t dport, uint8_t flags, const struct tcp_options *o,
		   size_t data)
{
	struct tcp_repr r = {.sport = PEER_PORT,
			     .dport = dport,
			     .seq = PEER_ISN,
			     .flags = flags,
			     .window = 65535,
			     .payload_len = (uint32_t)data};
	struct ipv4_repr ir = {
	    .src = PEER_IP, .dst = LUNAR_IP, .proto = IPPROTO_TCP, .ttl = 64, .df = true};
	size_t th;

	memset(fr, 0, sizeof(*fr));
	memcpy(fr->b, mac_lunar, 6);
	memcpy(fr->b + 6, mac_peer, 6);
	fr->b[12] = 0x08;
	th = tcp_hdr_len(o);
	memset(fr->b + 34 + th, 0xab, data);
	assert_int_equal(tcp_emit(fr->b + 34, sizeof(fr->b) - 34, &r, o, PEER_IP, LUNAR_IP, true),
			 th);
	ir.payload_len = th + data;
	assert_int_equal(ipv4_emit(fr->b + 14, sizeof(fr->b) - 14, &ir, true), 20);
	fr->len = 34 + th + data;
}

static uint64_t stat(struct fx *f, uint32_t which)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t vals[512], sum = 0;
	uint32_t k = which; /* row 0: queue 0 */

	assert_true(ncpu > 0 && ncpu <= 512);
	assert_int_equal(bpf_map_lookup_elem(f->stats_fd, &k, vals), 0);
	for (int c = 0; c < ncpu; c++)
		sum += vals[c];
	return sum;
}

/* Run @in; @out the frame after. @return the verdict. */
static uint32_t run(struct fx *f, const struct frame *in, struct frame *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in->b, .data_size_in = (uint32_t)in->len,
		    .data_out = out->b, .data_size_out = sizeof(out->b), .repeat = 1);

	memset(out, 0, sizeof(*out));
	assert_int_equal(bpf_prog_test_run_opts(f->prog_fd, &o), 0);
	out->len = o.data_size_out;
	return o.retval;
}

/* @in must go on unanswered: to lunar (redirect_failed, no socket) or to the kernel. */
static void expect_not_answered(struct fx *f, const struct frame *in, bool to_lunar,
				const char *what)
{
	uint64_t tx0 = stat(f, LUNAR_STEER_SYNCOOKIE), l0 = stat(f, LUNAR_STEER_REDIRECT_FAILED),
		 k0 = stat(f, LUNAR_STEER_TO_KERNEL);
	struct frame out;
	uint32_t v = run(f, in, &out);

	if (v != XDP_PASS || stat(f, LUNAR_STEER_SYNCOOKIE) != tx0)
		fail_msg("%s: answered (verdict %u)", what, v);
	if (out.len != in->len || memcmp(out.b, in->b, in->len))
		fail_msg("%s: the frame was changed", what);
	if (to_lunar ? stat(f, LUNAR_STEER_REDIRECT_FAILED) != l0 + 1
		     : stat(f, LUNAR_STEER_TO_KERNEL) != k0 + 1)
		fail_msg("%s: expected to go to %s", what, to_lunar ? "lunar" : "the kernel");
}

/*
 * Run the SYN @o with the extra header @flags (ECE, CWR) and @agree as the
 * worker's flags, and check the SYN-ACK against lunar's code. Only a SYN
 * with both ECE and CWR is an ECN-setup SYN (RFC 3168 6.1.1).
 */
static void check_answer_flags(struct fx *f, const struct tcp_options *o, uint8_t ecnflags,
			       uint8_t agree)
{
	uint8_t flags = RTE_TCP_SYN_FLAG | ecnflags;
	bool ecn = (ecnflags & (RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG)) ==
		   (RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG);
	struct tcp_4tuple t = {
	    .laddr = LUNAR_IP, .raddr = PEER_IP, .lport = LISTEN_PORT, .rport = PEER_PORT};
	struct frame in, out;
	struct ipv4_repr ir;
	struct tcp_repr syn, sa, ack;
	struct tcp_syncookie_opts back;
	uint64_t t0, t1, n0 = stat(f, LUNAR_STEER_SYNCOOKIE);
	uint16_t want_mss;
	uint32_t v;

	f->cfg.flags = agree;
	arm(f, ktime() + 60ull * 1000000000ull);
	mk_syn(&in, LISTEN_PORT, flags, o, 0);
	assert_int_equal(tcp_parse(in.b + 34, in.len - 34, PEER_IP, LUNAR_IP, true, &syn),
			 LUNAR_DROP_NONE);
	t0 = ktime() + CLOCK_OFF;
	v = run(f, &in, &out);
	t1 = ktime() + CLOCK_OFF;
	assert_int_equal(v, XDP_TX);
	assert_int_equal(stat(f, LUNAR_STEER_SYNCOOKIE), n0 + 1);
	assert_int_equal(out.len, 74);

	/* Ethernet and IPv4, back where the SYN came from. */
	assert_memory_equal(out.b, mac_peer, 6);
	assert_memory_equal(out.b + 6, mac_lunar, 6);
	assert_int_equal(out.b[12] << 8 | out.b[13], 0x0800);
	assert_int_equal(ipv4_parse(out.b + 14, out.len - 14, true, &ir), LUNAR_DROP_NONE);
	assert_int_equal(ir.src, LUNAR_IP);
	assert_int_equal(ir.dst, PEER_IP);
	assert_int_equal(ir.proto, IPPROTO_TCP);
	assert_int_equal(ir.ttl, f->cfg.ttl);
	assert_int_equal(ir.tos, 0); /* a SYN-ACK is not ECT (RFC 3168 6.1.1) */
	assert_true(ir.df);
	assert_int_equal(ir.payload_len, 40);

	/* TCP, its checksum verified. */
	assert_int_equal(tcp_parse(out.b + 34, out.len - 34, LUNAR_IP, PEER_IP, true, &sa),
			 LUNAR_DROP_NONE);
	assert_int_equal(sa.sport, LISTEN_PORT);
	assert_int_equal(sa.dport, PEER_PORT);
	assert_int_equal(sa.ack, PEER_ISN + 1);
	assert_int_equal(sa.payload_len, 0);
	assert_int_equal(sa.window, f->cfg.window);
	assert_int_equal(sa.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG |
				       (ecn && (agree & LUNAR_COOKIE_ECN) ? RTE_TCP_ECE_FLAG : 0));
	if (sa.seq != tcp_syncookie_make((const uint8_t *)f->cfg.key, &t, &syn, t0) &&
	    sa.seq != tcp_syncookie_make((const uint8_t *)f->cfg.key, &t, &syn, t1))
		fail_msg("ISS %08x is not lunar's cookie for the SYN", sa.seq);
	assert_true(sa.opts.has_mss);
	assert_int_equal(sa.opts.mss, f->cfg.mss);
	assert_int_equal(sa.opts.sack_permitted, o->sack_permitted && (agree & LUNAR_COOKIE_SACK));
	assert_int_equal(sa.opts.has_wscale, o->has_wscale && (agree & LUNAR_COOKIE_WS));
	if (sa.opts.has_wscale)
		assert_int_equal(sa.opts.wscale, f->cfg.wscale);
	assert_int_equal(sa.opts.has_ts, o->has_ts && (agree & LUNAR_COOKIE_TS));
	if (sa.opts.has_ts) {
		uint32_t lo = (uint32_t)(t0 / 1000000) + sa.seq,
			 hi = (uint32_t)(t1 / 1000000) + sa.seq;

		/* tcp_ts_now() at the worker's clock */
		assert_true(sa.opts.ts_val - lo <= hi - lo);
		assert_int_equal(sa.opts.ts_ecr, o->ts_val);
	}

	/* The handshake's ACK passes lunar's check, and the cookie recalls the SYN. */
	memset(&ack, 0, sizeof(ack));
	ack.seq = PEER_ISN + 1;
	ack.ack = sa.seq + 1;
	assert_true(tcp_syncookie_check((const uint8_t *)f->cfg.key, &t, &ack, t1, &back));
	want_mss = o->has_mss ? o->mss : 536;
	assert_true(back.mss <= want_mss);
	assert_int_equal(back.has_wscale, o->has_wscale);
	if (o->has_wscale)
		assert_int_equal(back.wscale, o->wscale > 14 ? 14 : o->wscale);
	assert_int_equal(back.sack_permitted, o->sack_permitted);
	assert_int_equal(back.ecn_setup, ecn);
}

/* check_answer_flags() for a plain SYN, or an ECN-setup one if @ecn. */
static void check_answer(struct fx *f, const struct tcp_options *o, bool ecn, uint8_t agree)
{
	check_answer_flags(f, o, ecn ? RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG : 0, agree);
}

static void t_answers_like_lunar(void **state)
{
	struct fx *f = *state;
	const uint8_t all =
	    LUNAR_COOKIE_WS | LUNAR_COOKIE_SACK | LUNAR_COOKIE_TS | LUNAR_COOKIE_ECN;
	struct tcp_options none = {0}, mss = {.has_mss = true, .mss = 1460},
			   linux_like = {.has_mss = true,
					 .mss = 1460,
					 .sack_permitted = true,
					 .has_ts = true,
					 .ts_val = 0xdeadbeef,
					 .has_wscale = true,
					 .wscale = 7},
			   jumbo_ws = {.has_mss = true,
				       .mss = 8960,
				       .has_wscale = true,
				       .wscale = 14},
			   odd = {.has_mss = true, .mss = 1300, .sack_permitted = true};

	check_answer(f, &none, false, all);
	check_answer(f, &mss, false, all);
	check_answer(f, &linux_like, false, all);
	check_answer(f, &linux_like, true, all);
	check_answer(f, &linux_like, true, 0); /* the worker agrees to none: MSS only */
	check_answer(f, &linux_like, true, LUNAR_COOKIE_TS);
	check_answer(f, &jumbo_ws, false, all);
	check_answer(f, &odd, true, all);
}

/* A SYN whose options are NOP-padded differently (no tcp_emit() layout) reads the same. */
static void t_options_any_layout(void **state)
{
	struct fx *f = *state;
	struct frame in, out;
	struct tcp_options o = {
	    .has_mss = true, .mss = 1460, .has_wscale = true, .wscale = 3, .sack_permitted = true};
	struct tcp_repr sa;
	uint8_t *t = in.b + 34;
	/* WS, NOP, SACK-permitted, EOL first then MSS: the MSS after EOL is not read. */
	const uint8_t opts[12] = {3, 3, 3, 1, 4, 2, 0, 0, 2, 4, 0x05, 0xb4};

	arm(f, ktime() + 60ull * 1000000000ull);
	mk_syn(&in, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0); /* 20 + 12 bytes of header */
	assert_int_equal(in.len, 34 + 32);
	memcpy(t + 20, opts, sizeof(opts));
	t[16] = t[17] = 0;
	tcp_fill_csum(t, 32, PEER_IP, LUNAR_IP);
	assert_int_equal(run(f, &in, &out), XDP_TX);
	assert_int_equal(tcp_parse(out.b + 34, out.len - 34, LUNAR_IP, PEER_IP, true, &sa),
			 LUNAR_DROP_NONE);
	assert_true(sa.opts.has_wscale && sa.opts.sack_permitted && !sa.opts.has_ts);
	/* Lunar's check recalls 536, the default: the MSS sat after the EOL. */
	{
		struct tcp_4tuple tu = {
		    .laddr = LUNAR_IP, .raddr = PEER_IP, .lport = LISTEN_PORT, .rport = PEER_PORT};
		struct tcp_repr ack = {.seq = PEER_ISN + 1, .ack = sa.seq + 1};
		struct tcp_syncookie_opts back;

		assert_true(tcp_syncookie_check((const uint8_t *)f->cfg.key, &tu, &ack,
						ktime() + CLOCK_OFF, &back));
		assert_int_equal(back.mss, 536);
		assert_int_equal(back.wscale, 3);
	}
}

static void t_not_answered(void **state)
{
	struct fx *f = *state;
	struct tcp_options o = {.has_mss = true, .mss = 1460, .sack_permitted = true};
	struct frame fr;

	arm(f, ktime() + 60ull * 1000000000ull);
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, &o, 0);
	expect_not_answered(f, &fr, true, "SYN-ACK");
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG, &o, 0);
	expect_not_answered(f, &fr, true, "SYN+RST");
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG, &o, 0);
	expect_not_answered(f, &fr, true, "SYN+FIN");
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_ACK_FLAG, &o, 0);
	expect_not_answered(f, &fr, true, "ACK");
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 10);
	expect_not_answered(f, &fr, true, "SYN with data");
	mk_syn(&fr, 65000, RTE_TCP_SYN_FLAG, &o, 0);
	expect_not_answered(f, &fr, true, "SYN to a client port (reserved range)");
	mk_syn(&fr, 7001, RTE_TCP_SYN_FLAG, &o, 0);
	expect_not_answered(f, &fr, false, "SYN to a port lunar does not listen on");

	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);
	fr.b[34 + 16] ^= 1;
	expect_not_answered(f, &fr, true, "bad TCP checksum");
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);
	fr.b[14 + 10] ^= 1;
	expect_not_answered(f, &fr, true, "bad IPv4 checksum");
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);
	fr.b[34 + 21] = 3; /* MSS option of length 3 */
	fr.b[34 + 16] = fr.b[34 + 17] = 0;
	tcp_fill_csum(fr.b + 34, fr.len - 34, PEER_IP, LUNAR_IP);
	expect_not_answered(f, &fr, true, "malformed option");

	/* Another destination, and sources ipv4_parse() refuses. */
	f->cfg.ip = rte_cpu_to_be_32(LUNAR_IP + 1);
	arm(f, ktime() + 60ull * 1000000000ull);
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);
	expect_not_answered(f, &fr, true, "another destination address");
	f->cfg.ip = rte_cpu_to_be_32(LUNAR_IP);
	arm(f, ktime() + 60ull * 1000000000ull);
	for (unsigned i = 0; i < 3; i++) {
		static const uint8_t bad_src[3][4] = {
		    {255, 255, 255, 255}, {224, 0, 0, 1}, {127, 0, 0, 1}};

		mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);
		memcpy(fr.b + 14 + 12, bad_src[i], 4);
		fr.b[14 + 10] = fr.b[14 + 11] = 0;
		{
			uint16_t c = (uint16_t)~rte_raw_cksum(fr.b + 14, 20);

			memcpy(fr.b + 14 + 10, &c, 2);
		}
		expect_not_answered(f, &fr, true, "refused source");
	}

	/* Not armed, or no longer. */
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);
	arm(f, 0);
	expect_not_answered(f, &fr, true, "responder not armed");
	arm(f, ktime() - 1);
	expect_not_answered(f, &fr, true, "responder armed until a past time");
	arm(f, ktime() + 60ull * 1000000000ull);
	{
		struct frame out;

		assert_int_equal(run(f, &fr, &out), XDP_TX); /* the same SYN, armed again */
	}
}

/*
 * Inputs a hostile or odd peer sends that still make a well-formed SYN:
 * a window scale above 14 is answered as 14 (RFC 7323 2.3: "MUST use 14"),
 * and ECE or CWR alone is not an ECN-setup SYN (RFC 3168 6.1.1: only both
 * together ask for ECN), so the SYN-ACK carries no ECE and the cookie
 * recalls no ECN.
 */
static void t_answers_hostile_syn(void **state)
{
	struct fx *f = *state;
	const uint8_t all =
	    LUNAR_COOKIE_WS | LUNAR_COOKIE_SACK | LUNAR_COOKIE_TS | LUNAR_COOKIE_ECN;
	struct tcp_options ws15 = {.has_mss = true, .mss = 1460, .has_wscale = true, .wscale = 15},
			   ws255 = {
			       .has_mss = true, .mss = 1460, .has_wscale = true, .wscale = 255};

	check_answer(f, &ws15, false, all);
	check_answer(f, &ws255, false, all);
	check_answer_flags(f, &ws15, RTE_TCP_ECE_FLAG, all);
	check_answer_flags(f, &ws15, RTE_TCP_CWR_FLAG, all);
}

/* Recompute the IPv4 header checksum of @fr after an edit. */
static void fix_ip_csum(struct frame *fr)
{
	uint16_t c;

	fr->b[14 + 10] = fr->b[14 + 11] = 0;
	c = (uint16_t)~rte_raw_cksum(fr->b + 14, 20);
	memcpy(fr->b + 14 + 10, &c, 2);
}

/*
 * A SYN to the listener whose 12 option bytes are @opts (valid checksums),
 * and lunar's own verdict on it, which must be a drop for a bad option.
 */
static void mk_syn_opts(struct frame *fr, const uint8_t opts[12])
{
	struct tcp_options o = {
	    .has_mss = true, .mss = 1460, .has_wscale = true, .wscale = 3, .sack_permitted = true};
	struct tcp_repr r;
	uint8_t *t = fr->b + 34;

	mk_syn(fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);
	assert_int_equal(fr->len, 34 + 32);
	memcpy(t + 20, opts, 12);
	tcp_fill_csum(t, 32, PEER_IP, LUNAR_IP);
	assert_int_not_equal(tcp_parse(t, 32, PEER_IP, LUNAR_IP, true, &r), LUNAR_DROP_NONE);
}

/*
 * SYNs lunar would not accept as they are are not answered here but go on
 * to lunar, which counts and drops them: options lunar's parser refuses
 * (RFC 9293 3.1: a length counts kind and length, so below 2 is malformed;
 * MSS is exactly 4 bytes, RFC 9293 3.2; SACK blocks 2 + 8n, RFC 2018 3),
 * the first fragment of a SYN (MF set: lunar drops fragments), and a SYN
 * with data even when the data's sum happens to leave the header's
 * checksum unchanged.
 */
static void t_hostile_not_answered(void **state)
{
	static const struct {
		uint8_t opts[12];
		const char *what;
	} bad[] = {
	    {{254, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "option length 0"},
	    {{254, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "option length 1"},
	    {{2, 6, 0x05, 0xb4, 0, 0, 1, 1, 1, 1, 1, 1}, "MSS option of length 6"},
	    {{2, 3, 0x05, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "MSS option of length 3"},
	    {{5, 12, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0}, "SACK option of length 12"},
	};
	struct fx *f = *state;
	struct tcp_options o = {.has_mss = true, .mss = 1460, .sack_permitted = true};
	struct frame fr;
	size_t th;

	arm(f, ktime() + 60ull * 1000000000ull);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mk_syn_opts(&fr, bad[i].opts);
		expect_not_answered(f, &fr, true, bad[i].what);
	}

	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);
	fr.b[14 + 6] |= 0x20; /* MF, offset 0 */
	fix_ip_csum(&fr);
	expect_not_answered(f, &fr, true, "first fragment of a SYN");

	/*
	 * Two data bytes 0xfffd: their word plus the 2 they add to the
	 * pseudo-header's length is ones' complement zero, so the checksum
	 * over the header alone verifies too. Only the total length tells.
	 */
	th = tcp_hdr_len(&o);
	mk_syn(&fr, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 2);
	fr.b[34 + th] = 0xff;
	fr.b[34 + th + 1] = 0xfd;
	tcp_fill_csum(fr.b + 34, th + 2, PEER_IP, LUNAR_IP);
	expect_not_answered(f, &fr, true, "SYN with data summing to zero");
}

/* Run @in as if it arrived on rx queue @q of sqa; @out the frame after. */
static uint32_t run_on_queue(struct fx *f, const struct frame *in, uint32_t q, struct frame *out)
{
	struct xdp_md ctx = {.data_end = (uint32_t)in->len,
			     .ingress_ifindex = (uint32_t)f->ifindex,
			     .rx_queue_index = q};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in->b, .data_size_in = (uint32_t)in->len,
		    .data_out = out->b, .data_size_out = sizeof(out->b), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	memset(out, 0, sizeof(*out));
	assert_int_equal(bpf_prog_test_run_opts(f->prog_fd, &o), 0);
	out->len = o.data_size_out;
	return o.retval;
}

static struct xdp_steer_counters counters(struct fx *f, uint32_t q)
{
	struct xdp_steer_counters c;

	assert_int_equal(xdp_steer_counters(&f->st, q, &c), 0);
	return c;
}

/*
 * Each worker arms the responder of its own queue (lunar_cookie is keyed
 * by rx queue): armed on queue 2 through xdp_steer_set_cookie(), a SYN
 * arriving on queue 2 is answered and counted in queue 2's .syncookies as
 * the host side reads it; the same SYN on unarmed queue 0 goes on to lunar
 * (to queue 0's worker, which answers it itself).
 */
static void t_armed_on_its_queue(void **state)
{
	struct fx *f = *state;
	struct tcp_options o = {.has_mss = true, .mss = 1460};
	struct xdp_steer_counters a2, a0, b2, b0, all0, all1;
	struct frame in, out;
	struct tcp_repr sa;

	f->cfg.until_ktime = ktime() + 60ull * 1000000000ull;
	assert_int_equal(xdp_steer_set_cookie(&f->st, 2, &f->cfg), 0);
	mk_syn(&in, LISTEN_PORT, RTE_TCP_SYN_FLAG, &o, 0);

	a2 = counters(f, 2);
	a0 = counters(f, 0);
	all0 = counters(f, XDP_STEER_ALL_QUEUES);
	assert_int_equal(run_on_queue(f, &in, 2, &out), XDP_TX);
	assert_int_equal(out.len, 74);
	assert_int_equal(tcp_parse(out.b + 34, out.len - 34, LUNAR_IP, PEER_IP, true, &sa),
			 LUNAR_DROP_NONE);
	assert_int_equal(sa.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(sa.ack, PEER_ISN + 1);
	b2 = counters(f, 2);
	assert_int_equal(b2.syncookies, a2.syncookies + 1);
	assert_int_equal(b2.to_lunar + b2.redirect_failed, a2.to_lunar + a2.redirect_failed);
	all1 = counters(f, XDP_STEER_ALL_QUEUES);
	assert_int_equal(all1.syncookies, all0.syncookies + 1);

	assert_int_equal(run_on_queue(f, &in, 0, &out), XDP_PASS);
	assert_int_equal(out.len, in.len);
	assert_memory_equal(out.b, in.b, in.len);
	b0 = counters(f, 0);
	assert_int_equal(b0.syncookies, a0.syncookies);
	assert_int_equal(b0.redirect_failed, a0.redirect_failed + 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(t_answers_like_lunar, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_options_any_layout, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_not_answered, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_answers_hostile_syn, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_hostile_not_answered, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_armed_on_its_queue, mq_setup, mq_teardown),
	};

	ns_require_root("ctl/xdp_syncookie");
	obj_path = argc > 1 ? argv[1] : getenv("LUNAR_STEER_OBJ");
	if (!obj_path || access(obj_path, R_OK)) {
		fprintf(stderr, "usage: %s <lunar_steer.bpf.o> (or set LUNAR_STEER_OBJ)\n",
			argv[0]);
		return 1;
	}
	return cmocka_run_group_tests_name("ctl/xdp_syncookie", tests, NULL, NULL);
}
