/*
 * test_xdp.c - root-only tests of the XDP steering program
 * (bpf/lunar_steer.bpf.c) and its host side (src/ctl/xdp.c).
 *
 * A throw-away namespace holds a veth pair xa/xb. Each test attaches the
 * built object to xa the way DPDK's net_af_xdp does (bpf_object load +
 * bpf_xdp_attach with UPDATE_IF_NOEXIST, i.e. driver mode on veth), then
 * checks the pre-flight check, map discovery and configuration, and the
 * classification of crafted frames through BPF_PROG_TEST_RUN. With no AF_XDP
 * socket in xsks_map a lunar frame comes back as XDP_PASS and counts
 * redirect_failed, so the counters tell lunar's frames from the kernel's. One
 * test binds a real AF_XDP socket and sends frames over the veth.
 *
 * Usage: test_ctl_xdp <path to lunar_steer.bpf.o> (or LUNAR_STEER_OBJ).
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "ctl/steer_abi.h"
#include "ctl/xdp.h"
#include "nsutil.h"

static char ns[64];
static const char *obj_path;

struct fx {
	struct bpf_object *obj;
	int prog_fd;
	int ifindex;
	struct xdp_steer st;
	/* only for the AF_XDP test */
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	void *area;
	size_t area_len;
};

/* ---- frames --------------------------------------------------------- */

#define ETH_IP4 0x0800
#define ETH_IP6 0x86dd
#define ETH_ARP 0x0806
#define ETH_VLAN 0x8100

struct frame {
	uint8_t b[256];
	size_t len;
};

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint8_t *eth(struct frame *f, const uint8_t dst[6], uint16_t type)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->b, dst, 6);
	memcpy(f->b + 6, mac_b, 6);
	put16(f->b + 12, type);
	f->len = 14;
	return f->b + 14;
}

/*
 * IPv4 header with @ihl words (options padded with NOPs), protocol @proto,
 * frag_off field @frag (host order, flags included) and @l4len bytes of
 * zeroed layer-4 header after it. Returns the layer-4 header.
 */
static uint8_t *ip4(struct frame *f, uint8_t *p, unsigned ihl, uint8_t proto,
		    uint16_t frag, size_t l4len)
{
	p[0] = 0x40 | ihl;
	put16(p + 2, (uint16_t)(ihl * 4 + l4len));
	put16(p + 6, frag);
	p[8] = 64;
	p[9] = proto;
	memcpy(p + 12, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	memcpy(p + 16, (uint8_t[]){ 10, 0, 0, 1 }, 4);
	memset(p + 20, 1, ihl * 4 - 20);
	f->len += ihl * 4 + l4len;
	return p + ihl * 4;
}

static void tcp_hdr(uint8_t *t, uint16_t dport)
{
	put16(t, 40000);
	put16(t + 2, dport);
	t[12] = 5 << 4;
	t[13] = 0x02; /* SYN */
	put16(t + 14, 65535);
}

static void mk_tcp(struct frame *f, uint16_t dport)
{
	uint8_t *p = eth(f, mac_a, ETH_IP4);

	tcp_hdr(ip4(f, p, 5, IPPROTO_TCP, 0x4000 /* DF */, 20), dport);
}

/* ---- test_run helpers ---------------------------------------------- */

enum verdict { KERNEL, LUNAR };

static void stats(struct fx *f, uint64_t v[3])
{
	assert_int_equal(xdp_steer_stats(&f->st, &v[0], &v[1], &v[2]), 0);
}

static void expect(struct fx *f, const struct frame *fr, enum verdict want,
		   const char *what)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr->b,
		    .data_size_in = (uint32_t)fr->len, .repeat = 1);
	uint64_t a[3], b[3];
	int ret;

	stats(f, a);
	ret = bpf_prog_test_run_opts(f->prog_fd, &o);
	if (ret)
		fail_msg("%s: BPF_PROG_TEST_RUN failed: %s", what, strerror(-ret));
	stats(f, b);
	/* No socket in xsks_map: even lunar's frames fall back to XDP_PASS. */
	if (o.retval != XDP_PASS)
		fail_msg("%s: retval %u, expected XDP_PASS", what, o.retval);
	if (want == KERNEL &&
	    !(b[1] == a[1] + 1 && b[0] == a[0] && b[2] == a[2]))
		fail_msg("%s: expected to_kernel, counters moved %lu/%lu/%lu", what,
			 (unsigned long)(b[0] - a[0]), (unsigned long)(b[1] - a[1]),
			 (unsigned long)(b[2] - a[2]));
	if (want == LUNAR &&
	    !(b[2] == a[2] + 1 && b[0] == a[0] && b[1] == a[1]))
		fail_msg("%s: expected lunar (redirect_failed), counters moved "
			 "%lu/%lu/%lu", what, (unsigned long)(b[0] - a[0]),
			 (unsigned long)(b[1] - a[1]), (unsigned long)(b[2] - a[2]));
}

static void expect_port(struct fx *f, uint16_t port, enum verdict want)
{
	struct frame fr;
	char what[64];

	mk_tcp(&fr, port);
	snprintf(what, sizeof(what), "TCP to port %u", port);
	expect(f, &fr, want, what);
}

/* ---- fixtures --------------------------------------------------------- */

static int group_setup(void **state)
{
	(void)state;
	ns_name(ns, sizeof(ns), "lunar-txdp");
	ns_delete(ns);
	if (ns_sh("ip netns add %s && "
		  "ip -n %s link add xa type veth peer name xb && "
		  "ip -n %s link set xa address 02:00:00:00:00:0a && "
		  "ip -n %s link set xb address 02:00:00:00:00:0b && "
		  "ip -n %s link set xa up && ip -n %s link set xb up",
		  ns, ns, ns, ns, ns, ns)) {
		fprintf(stderr, "cannot create namespace %s with veth xa/xb\n", ns);
		ns_delete(ns);
		return -1;
	}
	if (ns_enter(ns)) {
		ns_delete(ns);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	ns_leave();
	ns_delete(ns);
	return 0;
}

/* Load the object and attach it like net_af_xdp does (driver mode on veth). */
static int load_attach(struct fx *f, uint32_t flags)
{
	struct bpf_program *prog;

	f->ifindex = (int)if_nametoindex("xa");
	f->obj = bpf_object__open_file(obj_path, NULL);
	if (!f->obj || bpf_object__load(f->obj)) {
		fprintf(stderr, "cannot load %s\n", obj_path);
		return -1;
	}
	prog = bpf_object__next_program(f->obj, NULL);
	if (!prog)
		return -1;
	f->prog_fd = bpf_program__fd(prog);
	if (bpf_xdp_attach(f->ifindex, f->prog_fd, flags, NULL)) {
		fprintf(stderr, "cannot attach to xa\n");
		return -1;
	}
	return 0;
}

static int attach_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	*state = f;
	if (!f)
		return -1;
	f->st.cfg_fd = f->st.ports_fd = f->st.stats_fd = -1;
	if (load_attach(f, XDP_FLAGS_UPDATE_IF_NOEXIST))
		return -1;
	if (xdp_steer_open("xa", &f->st, err, sizeof(err))) {
		fprintf(stderr, "xdp_steer_open: %s\n", err);
		return -1;
	}
	return 0;
}

static int attach_teardown(void **state)
{
	struct fx *f = *state;

	if (!f)
		return 0;
	if (f->xsk)
		xsk_socket__delete(f->xsk);
	if (f->umem)
		xsk_umem__delete(f->umem);
	if (f->area)
		munmap(f->area, f->area_len);
	xdp_steer_close(&f->st);
	xdp_detach("xa");
	bpf_object__close(f->obj);
	free(f);
	return 0;
}

/* ---- tests ---------------------------------------------------------------- */

static void t_missing_interface(void **state)
{
	struct xdp_steer st;
	char err[256] = "";

	(void)state;
	assert_int_equal(xdp_check_free("nosuch0", err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "interface nosuch0 not found"));
	assert_int_equal(xdp_steer_open("nosuch0", &st, err, sizeof(err)), -ENODEV);
	assert_int_equal(xdp_detach("nosuch0"), -ENODEV);
	assert_int_equal(xdp_check_free("", err, sizeof(err)), -EINVAL);
}

/* A free interface, then one with a generic-mode program, then free again. */
static void t_free_then_generic(void **state)
{
	struct fx f = { 0 };
	struct xdp_steer st;
	char err[512] = "";

	(void)state;
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), 0);
	assert_int_equal(xdp_steer_open("xa", &st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "has no XDP program"));
	/* Detaching nothing is not an error (cleanup scripts rely on it). */
	assert_int_equal(xdp_detach("xa"), 0);

	assert_int_equal(load_attach(&f, XDP_FLAGS_SKB_MODE), 0);
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "generic mode"));
	assert_int_equal(xdp_steer_open("xa", &st, err, sizeof(err)), 0);
	xdp_steer_close(&st);
	xdp_steer_close(&st); /* idempotent */
	assert_int_equal(xdp_detach("xa"), 0);
	bpf_object__close(f.obj);
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), 0);
}

static void t_busy_native(void **state)
{
	struct fx *f = *state;
	char err[512] = "", want[64];
	uint32_t id = 0;

	assert_int_equal(bpf_xdp_query_id(f->ifindex, 0, &id), 0);
	assert_int_not_equal(id, 0);
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), -EBUSY);
	snprintf(want, sizeof(want), "XDP program lunar_steer (id %u, driver mode)", id);
	if (!strstr(err, want))
		fail_msg("message lacks '%s': %s", want, err);
	assert_non_null(strstr(err, "ip link set dev xa xdp off"));
	assert_non_null(strstr(err, "xdp-loader unload xa --all"));
	assert_int_equal(f->st.prog_id, id);
	assert_int_equal(f->st.ifindex, f->ifindex);
	assert_true(f->st.cfg_fd > 0 && f->st.ports_fd > 0 && f->st.stats_fd > 0);
}

/* Somebody else's program: found, named, and refused. */
static void t_foreign_program(void **state)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct xdp_steer st;
	char err[512] = "";
	int fd, ifindex = (int)if_nametoindex("xa");

	(void)state;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "foreign", "GPL", insns, 2, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_xdp_attach(ifindex, fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL), 0);
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "XDP program foreign"));
	assert_int_equal(xdp_steer_open("xa", &st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "not lunar's steering program"));
	assert_int_equal(xdp_detach("xa"), 0);
	close(fd);
}

static void t_classify_defaults(void **state)
{
	struct fx *f = *state;
	struct frame fr;
	uint8_t *p, *t;

	/* Before any config is written: 61440..65535 are lunar's. */
	expect_port(f, 61440, LUNAR);
	expect_port(f, 65535, LUNAR);
	expect_port(f, 63000, LUNAR);
	expect_port(f, 61439, KERNEL);
	expect_port(f, 8080, KERNEL);
	expect_port(f, 22, KERNEL);

	p = eth(&fr, mac_a, ETH_ARP);
	fr.len += 28;
	p[7] = 1;
	expect(f, &fr, KERNEL, "ARP");

	p = eth(&fr, mac_a, ETH_IP4);
	t = ip4(&fr, p, 5, IPPROTO_ICMP, 0, 8);
	t[0] = 8;
	expect(f, &fr, KERNEL, "ICMP echo");

	p = eth(&fr, mac_a, ETH_IP4);
	t = ip4(&fr, p, 5, IPPROTO_UDP, 0, 8);
	put16(t + 2, 61440);
	expect(f, &fr, KERNEL, "UDP to 61440");

	/* IPv6 TCP to a reserved port: lunar is IPv4-only for now. */
	p = eth(&fr, mac_a, ETH_IP6);
	p[0] = 0x60;
	put16(p + 4, 20);
	p[6] = IPPROTO_TCP;
	p[7] = 64;
	tcp_hdr(p + 40, 61440);
	fr.len += 60;
	expect(f, &fr, KERNEL, "IPv6 TCP to 61440");

	/* 802.1Q-tagged TCP to a reserved port. */
	p = eth(&fr, mac_a, ETH_VLAN);
	put16(p, 100);
	put16(p + 2, ETH_IP4);
	fr.len += 4;
	tcp_hdr(ip4(&fr, p + 4, 5, IPPROTO_TCP, 0, 20), 61440);
	expect(f, &fr, KERNEL, "VLAN TCP to 61440");

	/* IPv4 options: the TCP header moves; IHL 6 and the maximum 15. */
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 6, IPPROTO_TCP, 0, 20), 61440);
	expect(f, &fr, LUNAR, "IHL 6 TCP to 61440");
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 15, IPPROTO_TCP, 0, 20), 61440);
	expect(f, &fr, LUNAR, "IHL 15 TCP to 61440");
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 15, IPPROTO_TCP, 0, 20), 8080);
	expect(f, &fr, KERNEL, "IHL 15 TCP to 8080");

	/* Fragments: first (MF, offset 0) is lunar's; later ones the kernel's. */
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 5, IPPROTO_TCP, 0x2000, 20), 61440);
	expect(f, &fr, LUNAR, "first fragment to 61440");
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 5, IPPROTO_TCP, 0x2000 | 185, 20), 61440);
	expect(f, &fr, KERNEL, "middle fragment");
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 5, IPPROTO_TCP, 1, 20), 61440);
	expect(f, &fr, KERNEL, "last fragment");
}

static void t_malformed(void **state)
{
	struct fx *f = *state;
	struct frame fr;
	uint8_t *p;

	/* Ethernet header only (BPF_PROG_TEST_RUN needs >= 14 bytes). */
	eth(&fr, mac_a, ETH_IP4);
	expect(f, &fr, KERNEL, "Ethernet header only");

	/* IPv4 header cut short. */
	mk_tcp(&fr, 61440);
	fr.len = 14 + 12;
	expect(f, &fr, KERNEL, "truncated IPv4 header");

	/* TCP header cut short (ports present, rest missing). */
	mk_tcp(&fr, 61440);
	fr.len = 14 + 20 + 10;
	expect(f, &fr, KERNEL, "truncated TCP header");

	/* IHL 15 but the frame ends after 20 bytes of IPv4. */
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 15, IPPROTO_TCP, 0, 20), 61440);
	fr.len = 14 + 40;
	expect(f, &fr, KERNEL, "IHL beyond the frame");

	/* IHL < 5. */
	mk_tcp(&fr, 61440);
	fr.b[14] = 0x44;
	expect(f, &fr, KERNEL, "IHL 4");

	/* Version 6 in an IPv4 ethertype. */
	mk_tcp(&fr, 61440);
	fr.b[14] = 0x65;
	expect(f, &fr, KERNEL, "IPv4 ethertype, version 6");

	/* Total length shorter than IPv4 + TCP headers. */
	mk_tcp(&fr, 61440);
	put16(fr.b + 14 + 2, 30);
	expect(f, &fr, KERNEL, "tot_len 30");

	/* Complete frame plus trailing padding is still fine. */
	mk_tcp(&fr, 61440);
	fr.len = 60 + 20;
	expect(f, &fr, LUNAR, "padded frame");
}

static void t_ports_and_range(void **state)
{
	struct fx *f = *state;

	assert_int_equal(xdp_steer_add_port(&f->st, 8080), 0);
	expect_port(f, 8080, LUNAR);
	expect_port(f, 8081, KERNEL);
	assert_int_equal(xdp_steer_add_port(&f->st, 0), 0);
	expect_port(f, 0, LUNAR);
	assert_int_equal(xdp_steer_del_port(&f->st, 8080), 0);
	expect_port(f, 8080, KERNEL);

	assert_int_equal(xdp_steer_set_range(&f->st, 1000, 2000), 0);
	expect_port(f, 999, KERNEL);
	expect_port(f, 1000, LUNAR);
	expect_port(f, 2000, LUNAR);
	expect_port(f, 2001, KERNEL);
	expect_port(f, 61440, KERNEL);
	expect_port(f, 0, LUNAR); /* still added */

	/* lo > hi: empty range, only the added ports remain. */
	assert_int_equal(xdp_steer_set_range(&f->st, 2, 1), 0);
	expect_port(f, 1500, KERNEL);
	expect_port(f, 0, LUNAR);
	assert_int_equal(xdp_steer_del_port(&f->st, 0), 0);
	expect_port(f, 0, KERNEL);

	/* Back to the LUNA range, written explicitly this time. */
	assert_int_equal(xdp_steer_set_range(&f->st, LUNAR_STEER_DEFAULT_LO,
					     LUNAR_STEER_DEFAULT_HI), 0);
	expect_port(f, 61440, LUNAR);
	expect_port(f, 61439, KERNEL);
	expect_port(f, 65535, LUNAR);

	/* A closed handle is refused, not crashed on. */
	struct xdp_steer closed = { .cfg_fd = -1, .ports_fd = -1, .stats_fd = -1 };
	assert_int_equal(xdp_steer_add_port(&closed, 1), -EINVAL);
	assert_int_equal(xdp_steer_set_range(&closed, 1, 2), -EINVAL);
	assert_int_equal(xdp_steer_stats(&closed, NULL, NULL, NULL), -EINVAL);
}

#define XSK_NFRAMES 64
#define XSK_FSIZE XSK_UMEM__DEFAULT_FRAME_SIZE

/* Wait (bounded) for one frame on the AF_XDP socket; returns its length. */
static size_t xsk_recv(struct fx *f, struct xsk_ring_cons *rx,
		       struct xsk_ring_prod *fq, uint8_t *out, size_t outlen)
{
	struct pollfd pfd = { .fd = xsk_socket__fd(f->xsk), .events = POLLIN };
	uint32_t idx;

	for (int i = 0; i < 50; i++) {
		if (xsk_ring_cons__peek(rx, 1, &idx) == 1) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(rx, idx);
			size_t len = d->len < outlen ? d->len : outlen;
			uint32_t fidx;

			memcpy(out, xsk_umem__get_data(f->area, d->addr), len);
			/* Give the frame back to the fill ring. */
			if (xsk_ring_prod__reserve(fq, 1, &fidx) == 1) {
				*xsk_ring_prod__fill_addr(fq, fidx) =
					xsk_umem__extract_addr(d->addr);
				xsk_ring_prod__submit(fq, 1);
			}
			xsk_ring_cons__release(rx, 1);
			return len;
		}
		poll(&pfd, 1, 100);
	}
	return 0;
}

static void send_on_xb(const struct frame *fr)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_ifindex = (int)if_nametoindex("xb"),
		.sll_halen = 6,
	};
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	memcpy(sll.sll_addr, mac_a, 6);
	assert_int_equal(sendto(s, fr->b, fr->len, 0, (struct sockaddr *)&sll,
				sizeof(sll)), (ssize_t)fr->len);
	close(s);
}

/*
 * The real path: an AF_XDP socket on xa queue 0 in xsks_map (what DPDK
 * does), frames sent from xb. Reserved-port TCP lands in the socket; ICMP
 * does not and is counted for the kernel.
 */
static void t_xsk_redirect(void **state)
{
	struct fx *f = *state;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	struct xdp_md ctx = { .ingress_ifindex = (uint32_t)f->ifindex };
	struct frame fr;
	uint8_t got[256];
	uint64_t a[3], b[3];
	uint32_t idx = 0, key = 0;
	int map_fd, xfd, ret;
	size_t n;

	f->area_len = XSK_NFRAMES * XSK_FSIZE;
	f->area = mmap(NULL, f->area_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(f->area != MAP_FAILED);
	ret = xsk_umem__create(&f->umem, f->area, f->area_len, &fq, &cq, NULL);
	if (ret)
		fail_msg("xsk_umem__create: %s", strerror(-ret));
	ret = xsk_socket__create(&f->xsk, "xa", 0, f->umem, &rx, &tx, &cfg);
	if (ret)
		fail_msg("xsk_socket__create on xa: %s", strerror(-ret));
	assert_int_equal(xsk_ring_prod__reserve(&fq, XSK_NFRAMES, &idx), XSK_NFRAMES);
	for (uint32_t i = 0; i < XSK_NFRAMES; i++)
		*xsk_ring_prod__fill_addr(&fq, idx + i) = (uint64_t)i * XSK_FSIZE;
	xsk_ring_prod__submit(&fq, XSK_NFRAMES);
	map_fd = bpf_object__find_map_fd_by_name(f->obj, LUNAR_STEER_XSKS_MAP);
	assert_true(map_fd >= 0);
	xfd = xsk_socket__fd(f->xsk);
	assert_int_equal(bpf_map_update_elem(map_fd, &key, &xfd, BPF_ANY), 0);

	/* test_run with the real rx queue: the verdict is now XDP_REDIRECT. */
	mk_tcp(&fr, 61440);
	/* With a ctx, data_end must be the frame size (0 would be an empty frame). */
	ctx.data_end = (uint32_t)fr.len;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr.b,
		    .data_size_in = (uint32_t)fr.len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	stats(f, a);
	assert_int_equal(bpf_prog_test_run_opts(f->prog_fd, &o), 0);
	assert_int_equal(o.retval, XDP_REDIRECT);
	stats(f, b);
	assert_int_equal(b[0], a[0] + 1);

	/* Over the wire: TCP SYN to 61440 arrives in the socket. */
	send_on_xb(&fr);
	n = xsk_recv(f, &rx, &fq, got, sizeof(got));
	assert_int_equal(n, fr.len);
	assert_memory_equal(got, fr.b, fr.len);

	/* ICMP goes to the kernel: nothing in the socket, to_kernel moves. */
	stats(f, a);
	uint8_t *t = ip4(&fr, eth(&fr, mac_a, ETH_IP4), 5, IPPROTO_ICMP, 0, 8);
	t[0] = 8;
	send_on_xb(&fr);
	mk_tcp(&fr, 61441);
	send_on_xb(&fr);
	/* Frames on one veth queue keep their order: the SYN comes after. */
	n = xsk_recv(f, &rx, &fq, got, sizeof(got));
	assert_int_equal(n, fr.len);
	assert_memory_equal(got, fr.b, fr.len);
	stats(f, b);
	assert_true(b[1] >= a[1] + 1);
	assert_true(b[0] >= a[0] + 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_missing_interface),
		cmocka_unit_test(t_free_then_generic),
		cmocka_unit_test(t_foreign_program),
		cmocka_unit_test_setup_teardown(t_busy_native, attach_setup, attach_teardown),
		cmocka_unit_test_setup_teardown(t_classify_defaults, attach_setup, attach_teardown),
		cmocka_unit_test_setup_teardown(t_malformed, attach_setup, attach_teardown),
		cmocka_unit_test_setup_teardown(t_ports_and_range, attach_setup, attach_teardown),
		cmocka_unit_test_setup_teardown(t_xsk_redirect, attach_setup, attach_teardown),
	};

	ns_require_root("ctl/xdp");
	obj_path = argc > 1 ? argv[1] : getenv("LUNAR_STEER_OBJ");
	if (!obj_path || access(obj_path, R_OK)) {
		fprintf(stderr, "usage: %s <lunar_steer.bpf.o> (or set LUNAR_STEER_OBJ)\n",
			argv[0]);
		return 1;
	}
	return cmocka_run_group_tests_name("ctl/xdp", tests, group_setup,
					   group_teardown);
}
