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
 * The per-queue plan (LUNA §7.4) runs on a second pair ma/mb with
 * MQ_QUEUES queues: BPF_PROG_TEST_RUN with an xdp_md context whose
 * ingress_ifindex is ma can set rx_queue_index to any of ma's rx queues
 * (kernel ≥ 5.15: net/bpf/test_run.c, xdp_convert_md_to_buff(), which
 * requires the ifindex and a registered rxq), so the program's verdict for
 * every (source port, destination port, arrival queue) of a sweep is
 * compared with flow_plan_queue_of(). The tc peer program
 * (lunar_peer_steer.bpf.o) is checked the same way through its per-queue
 * counter, and both together over the wire: frames sent on mb through the
 * peer program arrive at ma on their owner queues, and without it most
 * arrive on the wrong one and are dropped as misqueued. A third pair wa/wb
 * has more rx queues than xsks_map has slots, for the shared last stats row.
 *
 * Usage: test_ctl_xdp <lunar_steer.bpf.o> <lunar_peer_steer.bpf.o>
 * (or LUNAR_STEER_OBJ and LUNAR_PEER_STEER_OBJ).
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "base/compiler.h"
#include "ctl/flow_plan.h"
#include "ctl/steer_abi.h"
#include "ctl/xdp.h"
#include "nsutil.h"

/* Queues of the multi-queue pair ma/mb: more than any plan below uses, so
 * frames also arrive on queues no worker owns. (`ip link` takes "ma" for
 * an abbreviation of "master": the commands say "name ma" and "dev ma".) */
#define MQ_QUEUES 8
/* Queues of the pair wa/wb: two past the last one the program has a row for. */
#define WIDE_QUEUES (LUNAR_STEER_MAX_QUEUES + 2)

static char ns[64];
static const char *obj_path, *peer_obj_path;

struct fx {
	struct bpf_object *obj;
	int prog_fd;
	int ifindex;
	const char *ifname;
	struct xdp_steer st;
	/* only for the multi-queue tests: the tc program on mb */
	struct bpf_object *peer_obj;
	int peer_fd;
	bool tc_hooked;
	/* only for the AF_XDP test */
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	void *area;
	size_t area_len;
};

/* ---- frames --------------------------------------------------------- */

#define ETH_IP4	 0x0800
#define ETH_IP6	 0x86dd
#define ETH_ARP	 0x0806
#define ETH_VLAN 0x8100

struct frame {
	uint8_t b[256];
	size_t len;
};

static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0a};
static const uint8_t mac_b[6] = {0x02, 0, 0, 0, 0, 0x0b};

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
static uint8_t *ip4(struct frame *f, uint8_t *p, unsigned ihl, uint8_t proto, uint16_t frag,
		    size_t l4len)
{
	p[0] = 0x40 | ihl;
	put16(p + 2, (uint16_t)(ihl * 4 + l4len));
	put16(p + 6, frag);
	p[8] = 64;
	p[9] = proto;
	memcpy(p + 12, (uint8_t[]){10, 0, 0, 2}, 4);
	memcpy(p + 16, (uint8_t[]){10, 0, 0, 1}, 4);
	memset(p + 20, 1, ihl * 4 - 20);
	f->len += ihl * 4 + l4len;
	return p + ihl * 4;
}

static void tcp_hdr_ports(uint8_t *t, uint16_t sport, uint16_t dport)
{
	put16(t, sport);
	put16(t + 2, dport);
	t[12] = 5 << 4;
	t[13] = 0x02; /* SYN */
	put16(t + 14, 65535);
}

static void tcp_hdr(uint8_t *t, uint16_t dport)
{
	tcp_hdr_ports(t, 40000, dport);
}

static void mk_tcp2(struct frame *f, uint16_t sport, uint16_t dport)
{
	uint8_t *p = eth(f, mac_a, ETH_IP4);

	tcp_hdr_ports(ip4(f, p, 5, IPPROTO_TCP, 0x4000 /* DF */, 20), sport, dport);
}

static void mk_tcp(struct frame *f, uint16_t dport)
{
	mk_tcp2(f, 40000, dport);
}

/* ---- test_run helpers ---------------------------------------------- */

enum verdict { KERNEL, LUNAR };

static void stats(struct fx *f, uint64_t v[3])
{
	assert_int_equal(xdp_steer_stats(&f->st, &v[0], &v[1], &v[2]), 0);
}

static void expect(struct fx *f, const struct frame *fr, enum verdict want, const char *what)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr->b, .data_size_in = (uint32_t)fr->len,
		    .repeat = 1);
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
	if (want == KERNEL && !(b[1] == a[1] + 1 && b[0] == a[0] && b[2] == a[2]))
		fail_msg("%s: expected to_kernel, counters moved %lu/%lu/%lu", what,
			 (unsigned long)(b[0] - a[0]), (unsigned long)(b[1] - a[1]),
			 (unsigned long)(b[2] - a[2]));
	if (want == LUNAR && !(b[2] == a[2] + 1 && b[0] == a[0] && b[1] == a[1]))
		fail_msg("%s: expected lunar (redirect_failed), counters moved "
			 "%lu/%lu/%lu",
			 what, (unsigned long)(b[0] - a[0]), (unsigned long)(b[1] - a[1]),
			 (unsigned long)(b[2] - a[2]));
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
	/*
	 * No IPv6 in the namespace: its neighbour discovery and MLD frames
	 * would pass through the program under test and move the per-queue
	 * counters the tests compare exactly.
	 */
	if (ns_sh("ip netns add %s && "
		  "ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
		  "net.ipv6.conf.default.disable_ipv6=1 && "
		  "ip -n %s link add xa type veth peer name xb && "
		  "ip -n %s link set xa address 02:00:00:00:00:0a && "
		  "ip -n %s link set xb address 02:00:00:00:00:0b && "
		  "ip -n %s link set xa up && ip -n %s link set xb up && "
		  "ip -n %s link add name ma numtxqueues %d numrxqueues %d type veth "
		  "peer name mb numtxqueues %d numrxqueues %d && "
		  "ip -n %s link set dev ma address 02:00:00:00:00:0a && "
		  "ip -n %s link set dev mb address 02:00:00:00:00:0b && "
		  "ip -n %s link set dev ma up && ip -n %s link set dev mb up",
		  ns, ns, ns, ns, ns, ns, ns, ns, MQ_QUEUES, MQ_QUEUES, MQ_QUEUES, MQ_QUEUES, ns,
		  ns, ns, ns)) {
		fprintf(stderr, "cannot create namespace %s with veths xa/xb, ma/mb\n", ns);
		ns_delete(ns);
		return -1;
	}
	/* wa/wb: more rx queues than the map has slots (LUNAR_STEER_MAX_QUEUES). */
	if (ns_sh("ip -n %s link add name wa numtxqueues %d numrxqueues %d type veth "
		  "peer name wb numtxqueues %d numrxqueues %d && "
		  "ip -n %s link set dev wa up && ip -n %s link set dev wb up",
		  ns, WIDE_QUEUES, WIDE_QUEUES, WIDE_QUEUES, WIDE_QUEUES, ns, ns)) {
		fprintf(stderr, "cannot create veth wa/wb with %d queues in %s\n", WIDE_QUEUES, ns);
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
static int load_attach_on(struct fx *f, const char *ifname, uint32_t flags)
{
	struct bpf_program *prog;

	f->ifindex = (int)if_nametoindex(ifname);
	f->ifname = ifname;
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
		fprintf(stderr, "cannot attach to %s\n", ifname);
		return -1;
	}
	return 0;
}

static int load_attach(struct fx *f, uint32_t flags)
{
	return load_attach_on(f, "xa", flags);
}

/* A fixture with the steering program attached to @ifname and opened. */
static struct fx *setup_on(void **state, const char *ifname)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	*state = f;
	if (!f)
		return NULL;
	f->st.cfg_fd = f->st.ports_fd = f->st.stats_fd = f->st.cookie_fd = -1;
	if (load_attach_on(f, ifname, XDP_FLAGS_UPDATE_IF_NOEXIST))
		return NULL;
	if (xdp_steer_open(ifname, &f->st, err, sizeof(err))) {
		fprintf(stderr, "xdp_steer_open: %s\n", err);
		return NULL;
	}
	return f;
}

static int attach_setup(void **state)
{
	return setup_on(state, "xa") ? 0 : -1;
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
	if (f->tc_hooked) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)if_nametoindex("mb"),
			    .attach_point = BPF_TC_EGRESS);
		bpf_tc_hook_destroy(&hook);
	}
	bpf_object__close(f->peer_obj);
	xdp_steer_close(&f->st);
	xdp_detach(f->ifname ? f->ifname : "xa");
	bpf_object__close(f->obj);
	free(f);
	return 0;
}

/* The steering program on the multi-queue ma, the peer program loaded (not attached). */
static int mq_setup(void **state)
{
	struct fx *f = setup_on(state, "ma");

	if (!f)
		return -1;
	f->peer_obj = bpf_object__open_file(peer_obj_path, NULL);
	if (!f->peer_obj || bpf_object__load(f->peer_obj)) {
		fprintf(stderr, "cannot load %s\n", peer_obj_path);
		return -1;
	}
	f->peer_fd = bpf_program__fd(bpf_object__next_program(f->peer_obj, NULL));
	return f->peer_fd >= 0 ? 0 : -1;
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
	struct fx f = {0};
	struct xdp_steer st;
	char err[512] = "";
	int lock;

	(void)state;
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), 0);
	assert_int_equal(xdp_steer_open("xa", &st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "has no XDP program"));
	/* Detaching nothing is not an error (cleanup scripts rely on it). */
	assert_int_equal(xdp_detach("xa"), 0);

	assert_int_equal(load_attach(&f, XDP_FLAGS_SKB_MODE), 0);
	lock = xdp_owner_lock("xa", err, sizeof(err)); /* we are its live lunar process */
	assert_true(lock >= 0);
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "generic mode"));
	xdp_owner_unlock("xa", lock);
	assert_int_equal(xdp_steer_open("xa", &st, err, sizeof(err)), 0);
	xdp_steer_close(&st);
	xdp_steer_close(&st); /* idempotent */
	assert_int_equal(xdp_detach("xa"), 0);
	bpf_object__close(f.obj);
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), 0);
}

/*
 * lunar_steer with a live lunar process behind it (the owner lock held: here
 * by this process on another descriptor) is refused, naming the process,
 * the program and the fix, and stays attached.
 */
static void t_busy_native(void **state)
{
	struct fx *f = *state;
	char err[512] = "", want[96];
	uint32_t id = 0, after = 0;
	int lock;

	assert_int_equal(bpf_xdp_query_id(f->ifindex, 0, &id), 0);
	assert_int_not_equal(id, 0);
	lock = xdp_owner_lock("xa", err, sizeof(err));
	assert_true(lock >= 0);
	assert_int_equal(xdp_owner_lock("xa", err, sizeof(err)), -EBUSY); /* a second holder */
	snprintf(want, sizeof(want), "another lunar process (pid %d,", (int)getpid());
	if (!strstr(err, want))
		fail_msg("message lacks '%s': %s", want, err);
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), -EBUSY);
	xdp_owner_unlock("xa", lock);
	if (!strstr(err, want))
		fail_msg("message lacks '%s': %s", want, err);
	snprintf(want, sizeof(want), "XDP program lunar_steer (id %u, driver mode)", id);
	if (!strstr(err, want))
		fail_msg("message lacks '%s': %s", want, err);
	assert_non_null(strstr(err, "stop that process"));
	assert_int_equal(bpf_xdp_query_id(f->ifindex, 0, &after), 0);
	assert_int_equal(after, id);
	assert_int_equal(f->st.prog_id, id);
	assert_int_equal(f->st.ifindex, f->ifindex);
	assert_true(f->st.cfg_fd > 0 && f->st.ports_fd > 0 && f->st.stats_fd > 0);
}

/*
 * lunar_steer with nobody holding the owner lock was left by a lunar process
 * that died (SIGKILL, a crash): it is removed, and the interface is free.
 */
static void t_stale_lunar_program_removed(void **state)
{
	struct fx f = {0};
	char err[512] = "";
	uint32_t id = 0;
	int lock;

	(void)state;
	assert_int_equal(load_attach(&f, XDP_FLAGS_DRV_MODE), 0);
	assert_int_equal(bpf_xdp_query_id(f.ifindex, 0, &id), 0);
	assert_int_not_equal(id, 0);
	assert_int_equal(xdp_check_free("xa", err, sizeof(err)), 0);
	assert_int_equal(bpf_xdp_query_id(f.ifindex, 0, &id), 0);
	assert_int_equal(id, 0);
	bpf_object__close(f.obj);
	/* The lock was taken only to look: the next process can have it. */
	lock = xdp_owner_lock("xa", err, sizeof(err));
	assert_true(lock >= 0);
	xdp_owner_unlock("xa", lock);
}

/* The lock file of interface "xa" in this network namespace (xdp.c's naming). */
static void lock_path_of_xa(char *path, size_t len)
{
	struct stat st;

	assert_int_equal(stat("/proc/self/ns/net", &st), 0);
	snprintf(path, len, "/run/lunar/xdp-%lu-xa.lock", (unsigned long)st.st_ino);
}

/*
 * The owner lock's file lives only while it is held: a process that lets go
 * removes it, so /run/lunar does not fill up run after run. A file left by a
 * process that was killed is taken over (our PID replaces its) and removed
 * in turn.
 */
static void t_lock_file_removed_on_unlock(void **state)
{
	char path[128], err[256] = "", buf[32] = "", want[32];
	struct stat st;
	FILE *fp;
	int lock;

	(void)state;
	lock_path_of_xa(path, sizeof(path));
	lock = xdp_owner_lock("xa", err, sizeof(err));
	assert_true(lock >= 0);
	assert_int_equal(stat(path, &st), 0);
	xdp_owner_unlock("xa", lock);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);

	fp = fopen(path, "w"); /* what a SIGKILLed holder leaves */
	assert_non_null(fp);
	fputs("999999\n", fp);
	fclose(fp);
	lock = xdp_owner_lock("xa", err, sizeof(err));
	assert_true(lock >= 0);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	snprintf(want, sizeof(want), "%d\n", (int)getpid());
	assert_string_equal(buf, want);
	xdp_owner_unlock("xa", lock);
	assert_int_equal(stat(path, &st), -1);
}

/* Somebody else's program: found, named, and refused. */
static void t_foreign_program(void **state)
{
	const struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
	    {.code = BPF_JMP | BPF_EXIT},
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
	/* The offset is 13 bits of 8-byte units (RFC 791): 256 and above too. */
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 5, IPPROTO_TCP, 256, 20), 61440);
	expect(f, &fr, KERNEL, "last fragment at offset 256");
	p = eth(&fr, mac_a, ETH_IP4);
	tcp_hdr(ip4(&fr, p, 5, IPPROTO_TCP, 0x2000 | 0x1f00, 20), 61440);
	expect(f, &fr, KERNEL, "middle fragment at offset 0x1f00");

	/* An IPv4 TCP segment behind another ethertype is not IPv4. */
	p = eth(&fr, mac_a, 0x88b5);
	tcp_hdr(ip4(&fr, p, 5, IPPROTO_TCP, 0, 20), 61440);
	expect(f, &fr, KERNEL, "IPv4 TCP to 61440 behind ethertype 0x88b5");
	p = eth(&fr, mac_a, ETH_IP6);
	tcp_hdr(ip4(&fr, p, 5, IPPROTO_TCP, 0, 20), 61440);
	expect(f, &fr, KERNEL, "IPv4 TCP to 61440 behind the IPv6 ethertype");
}

/*
 * An ICMP error of @type in an IPv4 header of @oihl words, quoting a TCP
 * segment @qsport -> @qdport whose IPv4 header has @qihl words, @ql4 bytes
 * of its TCP header quoted, the quoted protocol @qproto.
 */
static void mk_icmp_error_full(struct frame *f, unsigned oihl, uint8_t type, unsigned qihl,
			       uint8_t qproto, uint16_t qsport, uint16_t qdport, size_t ql4)
{
	uint8_t *p = eth(f, mac_a, ETH_IP4);
	uint8_t *icmp = ip4(f, p, oihl, IPPROTO_ICMP, 0, 8);
	uint8_t *q;

	icmp[0] = type;
	q = ip4(f, icmp + 8, qihl, qproto, 0x4000, ql4);
	put16(q, qsport);
	put16(q + 2, qdport);
	put16(p + 2, (uint16_t)(f->len - 14));
}

/* An ICMP error of @type quoting a TCP segment @qsport -> 80 (see above). */
static void mk_icmp_error(struct frame *f, uint8_t type, unsigned qihl, uint8_t qproto,
			  uint16_t qsport, size_t ql4)
{
	mk_icmp_error_full(f, 5, type, qihl, qproto, qsport, 80, ql4);
}

/*
 * Remove the 4 bytes at @off of @f and make the IPv4 header at @ip (which
 * contains @off) 4 words long: what follows then starts where an IHL of 4
 * says it does, so only the IHL check keeps a reader from taking it.
 */
static void ihl4_at(struct frame *f, size_t ip, size_t off)
{
	memmove(f->b + off, f->b + off + 4, f->len - off - 4);
	f->len -= 4;
	f->b[ip] = (uint8_t)((f->b[ip] & 0xf0) | 4);
}

/*
 * ICMP errors about lunar's segments (RFC 5927, RFC 1191) are lunar's:
 * the quoted source port (the local end) decides, as the destination port
 * does for segments. Other ICMP, errors quoting other ports or protocols,
 * and quotes too short to hold the ports stay with the kernel.
 */
static void t_classify_icmp_errors(void **state)
{
	static const struct {
		uint8_t type;
		unsigned qihl;
		uint8_t qproto;
		uint16_t qsport;
		size_t ql4;
		enum verdict want;
		const char *what;
	} cases[] = {
	    {3, 5, IPPROTO_TCP, 61440, 8, LUNAR, "frag needed quoting TCP from 61440"},
	    {11, 5, IPPROTO_TCP, 65535, 20, LUNAR, "time exceeded quoting TCP from 65535"},
	    {12, 15, IPPROTO_TCP, 63000, 8, LUNAR, "parameter problem, quoted IHL 15"},
	    {3, 5, IPPROTO_TCP, 8080, 8, KERNEL, "error quoting TCP from 8080"},
	    {3, 5, IPPROTO_UDP, 61440, 8, KERNEL, "error quoting UDP from 61440"},
	    {4, 5, IPPROTO_TCP, 61440, 8, KERNEL, "source quench quoting TCP from 61440"},
	    {0, 5, IPPROTO_TCP, 61440, 8, KERNEL, "echo reply"},
	    {3, 5, IPPROTO_TCP, 61440, 7, KERNEL, "quote one byte short of 8"},
	};
	struct fx *f = *state;
	struct frame fr;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		mk_icmp_error(&fr, cases[i].type, cases[i].qihl, cases[i].qproto, cases[i].qsport,
			      cases[i].ql4);
		expect(f, &fr, cases[i].want, cases[i].what);
	}
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	fr.b[14 + 20 + 8] = 0x44;
	expect(f, &fr, KERNEL, "quoted IHL 4");

	/* IPv4 options in the error's own header: the ICMP header follows them. */
	mk_icmp_error_full(&fr, 6, 3, 5, IPPROTO_TCP, 61440, 80, 8);
	expect(f, &fr, LUNAR, "error with IPv4 options quoting TCP from 61440");
	mk_icmp_error_full(&fr, 15, 11, 5, IPPROTO_TCP, 61440, 80, 8);
	expect(f, &fr, LUNAR, "error with IHL 15 quoting TCP from 61440");
}

/*
 * ICMP errors quoting a lunar port that are still the kernel's, because
 * the error or its quote is not what RFC 792 describes: the outer frame not
 * IPv4 (ethertype, version, IHL below 5, RFC 791), the error itself a
 * fragment (the kernel reassembles it), a quoted header that is not IPv4
 * or has IHL below 5, and the quote of a non-first fragment (its first 8
 * bytes are data, not ports). Each frame would be lunar's if the check in
 * question were missing.
 */
static void t_icmp_errors_kernel(void **state)
{
	struct fx *f = *state;
	struct frame fr;

	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	expect(f, &fr, LUNAR, "the well-formed error");

	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	put16(fr.b + 12, 0x88b5); /* IEEE local experimental */
	expect(f, &fr, KERNEL, "IPv4-looking error behind ethertype 0x88b5");
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	put16(fr.b + 12, ETH_ARP);
	expect(f, &fr, KERNEL, "IPv4-looking error behind the ARP ethertype");

	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	fr.b[14] = 0x65;
	expect(f, &fr, KERNEL, "error with outer version 6");

	/* The ICMP header where an IHL of 4 puts it, over the destination address. */
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	ihl4_at(&fr, 14, 14 + 16);
	put16(fr.b + 14 + 2, (uint16_t)(fr.len - 14));
	expect(f, &fr, KERNEL, "error with outer IHL 4");

	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	put16(fr.b + 14 + 6, 0x2000);
	expect(f, &fr, KERNEL, "first fragment of an error (MF)");
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	put16(fr.b + 14 + 6, 0x2000 | 300);
	expect(f, &fr, KERNEL, "middle fragment of an error");
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	put16(fr.b + 14 + 6, 1);
	expect(f, &fr, KERNEL, "last fragment of an error");

	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	fr.b[14 + 28] = 0x65;
	expect(f, &fr, KERNEL, "quoted version 6");

	/* The quoted ports where a quoted IHL of 4 puts them. */
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	ihl4_at(&fr, 14 + 28, 14 + 28 + 16);
	put16(fr.b + 14 + 2, (uint16_t)(fr.len - 14));
	expect(f, &fr, KERNEL, "quoted IHL 4, ports after 16 bytes");

	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	put16(fr.b + 14 + 28 + 6, 185);
	expect(f, &fr, KERNEL, "quote of a last fragment");
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	put16(fr.b + 14 + 28 + 6, 0x2000 | 0x1000);
	expect(f, &fr, KERNEL, "quote of a middle fragment, offset above 255");
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8);
	put16(fr.b + 14 + 28 + 6, 0x2000);
	expect(f, &fr, LUNAR, "quote of a first fragment");
	/* A listening port marked in lunar_ports is lunar's too. */
	assert_int_equal(xdp_steer_add_port(&f->st, 8080), 0);
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 8080, 8);
	expect(f, &fr, LUNAR, "error quoting TCP from listening 8080");
	assert_int_equal(xdp_steer_del_port(&f->st, 8080), 0);
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
	/* IHL 4 with a TCP header to 61440 right where it says (RFC 791: at least 5). */
	mk_tcp(&fr, 61440);
	ihl4_at(&fr, 14, 14 + 16);
	put16(fr.b + 14 + 2, (uint16_t)(fr.len - 14));
	expect(f, &fr, KERNEL, "IHL 4, TCP header after 16 bytes");

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

/*
 * With lunar's address set, a segment to a lunar port but another
 * address (a container's on a macvlan of the interface, a secondary
 * address) is the kernel's; the range and plan stay as they were.
 */
static void t_other_address_to_kernel(void **state)
{
	struct fx *f = *state;
	struct frame fr;

	expect_port(f, 61440, LUNAR);				     /* address 0: any */
	assert_int_equal(xdp_steer_set_addr(&f->st, 0x0a000001), 0); /* the frames' 10.0.0.1 */
	expect_port(f, 61440, LUNAR);
	assert_int_equal(xdp_steer_set_addr(&f->st, 0x0a000009), 0);
	expect_port(f, 61440, KERNEL);
	assert_int_equal(xdp_steer_set_range(&f->st, 1000, 2000), 0); /* keeps the address */
	expect_port(f, 1500, KERNEL);
	assert_int_equal(f->st.ip, 0x0a000009);
	assert_int_equal(xdp_steer_set_addr(&f->st, 0), 0);
	expect_port(f, 1500, LUNAR);
	mk_tcp(&fr, 1500);
	expect(f, &fr, LUNAR, "any address again");
	assert_int_equal(
	    xdp_steer_set_range(&f->st, LUNAR_STEER_DEFAULT_LO, LUNAR_STEER_DEFAULT_HI), 0);
}

/*
 * The same holds for ICMP errors: one sent to another address (a
 * container sharing the interface, with a server on a port lunar also
 * listens on) is about that host's connection, and its kernel needs it
 * (RFC 1191 path MTU discovery, RFC 5927); lunar must not take it.
 */
static void t_other_address_icmp_to_kernel(void **state)
{
	struct fx *f = *state;
	struct frame fr;

	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 61440, 8); /* to 10.0.0.1 */
	expect(f, &fr, LUNAR, "error, address 0: any");
	assert_int_equal(xdp_steer_set_addr(&f->st, 0x0a000001), 0);
	expect(f, &fr, LUNAR, "error to lunar's address");
	assert_int_equal(xdp_steer_set_addr(&f->st, 0x0a000009), 0);
	expect(f, &fr, KERNEL, "error to another address");
	assert_int_equal(xdp_steer_add_port(&f->st, 8080), 0);
	mk_icmp_error(&fr, 3, 5, IPPROTO_TCP, 8080, 8);
	expect(f, &fr, KERNEL, "error to another address, a port lunar listens on");
	assert_int_equal(xdp_steer_set_addr(&f->st, 0), 0);
	expect(f, &fr, LUNAR, "error quoting the listener, address 0: any");
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
	assert_int_equal(
	    xdp_steer_set_range(&f->st, LUNAR_STEER_DEFAULT_LO, LUNAR_STEER_DEFAULT_HI), 0);
	expect_port(f, 61440, LUNAR);
	expect_port(f, 61439, KERNEL);
	expect_port(f, 65535, LUNAR);

	/* A closed handle is refused, not crashed on. */
	struct xdp_steer closed = {.cfg_fd = -1, .ports_fd = -1, .stats_fd = -1, .cookie_fd = -1};
	assert_int_equal(xdp_steer_add_port(&closed, 1), -EINVAL);
	assert_int_equal(xdp_steer_set_range(&closed, 1, 2), -EINVAL);
	assert_int_equal(xdp_steer_stats(&closed, NULL, NULL, NULL), -EINVAL);
}

#define XSK_NFRAMES 64
#define XSK_FSIZE   XSK_UMEM__DEFAULT_FRAME_SIZE

/* Wait (bounded) for one frame on the AF_XDP socket; returns its length. */
static size_t xsk_recv(struct fx *f, struct xsk_ring_cons *rx, struct xsk_ring_prod *fq,
		       uint8_t *out, size_t outlen)
{
	struct pollfd pfd = {.fd = xsk_socket__fd(f->xsk), .events = POLLIN};
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

/*
 * An AF_XDP socket in copy mode on @ifname's rx queue @queue, its fill
 * ring stocked with every frame of the fixture's area, and put in
 * xsks_map at @queue, as DPDK's af_xdp PMD does; attach_teardown() frees
 * it.
 */
static void xsk_bind(struct fx *f, const char *ifname, uint32_t queue, struct xsk_ring_prod *fq,
		     struct xsk_ring_cons *cq, struct xsk_ring_cons *rx, struct xsk_ring_prod *tx)
{
	struct xsk_socket_config cfg = {
	    .rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
	    .tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
	    .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	    .bind_flags = XDP_COPY,
	};
	uint32_t idx = 0;
	int map_fd, xfd, ret;

	f->area_len = XSK_NFRAMES * XSK_FSIZE;
	f->area =
	    mmap(NULL, f->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(f->area != MAP_FAILED);
	ret = xsk_umem__create(&f->umem, f->area, f->area_len, fq, cq, NULL);
	if (ret)
		fail_msg("xsk_umem__create: %s", strerror(-ret));
	ret = xsk_socket__create(&f->xsk, ifname, queue, f->umem, rx, tx, &cfg);
	if (ret)
		fail_msg("xsk_socket__create on %s queue %u: %s", ifname, queue, strerror(-ret));
	assert_int_equal(xsk_ring_prod__reserve(fq, XSK_NFRAMES, &idx), XSK_NFRAMES);
	for (uint32_t i = 0; i < XSK_NFRAMES; i++)
		*xsk_ring_prod__fill_addr(fq, idx + i) = (uint64_t)i * XSK_FSIZE;
	xsk_ring_prod__submit(fq, XSK_NFRAMES);
	map_fd = bpf_object__find_map_fd_by_name(f->obj, LUNAR_STEER_XSKS_MAP);
	assert_true(map_fd >= 0);
	xfd = xsk_socket__fd(f->xsk);
	assert_int_equal(bpf_map_update_elem(map_fd, &queue, &xfd, BPF_ANY), 0);
}

/* Send @fr from @ifname (AF_PACKET: through its egress tc hook and queue choice). */
static void send_on(const char *ifname, const struct frame *fr)
{
	struct sockaddr_ll sll = {
	    .sll_family = AF_PACKET,
	    .sll_ifindex = (int)if_nametoindex(ifname),
	    .sll_halen = 6,
	};
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	memcpy(sll.sll_addr, mac_a, 6);
	assert_int_equal(sendto(s, fr->b, fr->len, 0, (struct sockaddr *)&sll, sizeof(sll)),
			 (ssize_t)fr->len);
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
	struct xdp_md ctx = {.ingress_ifindex = (uint32_t)f->ifindex};
	struct frame fr;
	uint8_t got[256];
	uint64_t a[3], b[3];
	size_t n;

	xsk_bind(f, "xa", 0, &fq, &cq, &rx, &tx);

	/* test_run with the real rx queue: the verdict is now XDP_REDIRECT. */
	mk_tcp(&fr, 61440);
	/* With a ctx, data_end must be the frame size (0 would be an empty frame). */
	ctx.data_end = (uint32_t)fr.len;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr.b, .data_size_in = (uint32_t)fr.len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
	stats(f, a);
	assert_int_equal(bpf_prog_test_run_opts(f->prog_fd, &o), 0);
	assert_int_equal(o.retval, XDP_REDIRECT);
	stats(f, b);
	assert_int_equal(b[0], a[0] + 1);

	/* Over the wire: TCP SYN to 61440 arrives in the socket. */
	send_on("xb", &fr);
	n = xsk_recv(f, &rx, &fq, got, sizeof(got));
	assert_int_equal(n, fr.len);
	assert_memory_equal(got, fr.b, fr.len);

	/* ICMP goes to the kernel: nothing in the socket, to_kernel moves. */
	stats(f, a);
	uint8_t *t = ip4(&fr, eth(&fr, mac_a, ETH_IP4), 5, IPPROTO_ICMP, 0, 8);
	t[0] = 8;
	send_on("xb", &fr);
	mk_tcp(&fr, 61441);
	send_on("xb", &fr);
	/* Frames on one veth queue keep their order: the SYN comes after. */
	n = xsk_recv(f, &rx, &fq, got, sizeof(got));
	assert_int_equal(n, fr.len);
	assert_memory_equal(got, fr.b, fr.len);
	stats(f, b);
	assert_true(b[1] >= a[1] + 1);
	assert_true(b[0] >= a[0] + 1);
}

/* ---- the per-queue plan (LUNA §7.4) ------------------------------------- */

#define LISTEN_PORT 8080

static void queue_counters(struct fx *f, uint32_t q, struct xdp_steer_counters *c)
{
	int ret = xdp_steer_counters(&f->st, q, c);

	if (ret)
		fail_msg("xdp_steer_counters(%u): %s", q, strerror(-ret));
}

/* Run the XDP program on @fr as if it arrived on rx queue @q of f->ifindex. */
static uint32_t run_on_queue(struct fx *f, const struct frame *fr, uint32_t q)
{
	struct xdp_md ctx = {.data_end = (uint32_t)fr->len,
			     .ingress_ifindex = (uint32_t)f->ifindex,
			     .rx_queue_index = q};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr->b, .data_size_in = (uint32_t)fr->len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
	int ret = bpf_prog_test_run_opts(f->prog_fd, &o);

	if (ret)
		fail_msg("BPF_PROG_TEST_RUN on queue %u: %s", q, strerror(-ret));
	return o.retval;
}

/* The destination ports of a sweep: each sub-range's edges, and around. */
static size_t sweep_dports(const struct flow_plan *p, uint16_t *out)
{
	size_t n = 0;

	for (unsigned q = 0; q < p->n_queues; q++) {
		uint16_t lo, hi;

		flow_plan_client_range(p, q, &lo, &hi);
		out[n++] = lo;
		out[n++] = (uint16_t)(lo + 1);
		out[n++] = (uint16_t)(lo + (hi - lo) / 2);
		out[n++] = hi;
	}
	out[n++] = (uint16_t)(p->lo - 1);
	out[n++] = LISTEN_PORT;
	out[n++] = LISTEN_PORT + 1;
	out[n++] = 22;
	return n;
}

static const uint16_t sweep_sports[] = {0, 1, 2, 3, 4, 5, 6, 7, 1023, 40000, 40001, 61440, 65535};

/* Which counter of the arrival queue a lunar segment must move, by the C plan. */
static unsigned want_owner(const struct flow_plan *p, enum flow_listen_mode mode, uint16_t sport,
			   uint16_t dport, unsigned q)
{
	if (!flow_plan_reserved(p, dport) && mode == FLOW_LISTEN_RSS)
		return q;
	return flow_plan_queue_of(p, sport, dport);
}

/* One check of a sweep: plan @p with @mode, one segment sport -> dport. */
typedef void (*sweep_check)(struct fx *f, const struct flow_plan *p, enum flow_listen_mode mode,
			    uint16_t sport, uint16_t dport);
/* Write @p and @mode into the program under test. */
typedef void (*sweep_config)(struct fx *f, const struct flow_plan *p, enum flow_listen_mode mode);

/*
 * For each worker count in @ns_ (at most MQ_QUEUES) and both listen modes:
 * configure the plan over the LUNA range, then check every pair of the
 * sweep's source and destination ports.
 */
static void sweep(struct fx *f, const unsigned *ns_, size_t nn, sweep_config config,
		  sweep_check check)
{
	uint16_t dports[4 * MQ_QUEUES + 4];

	for (size_t i = 0; i < nn; i++) {
		for (int mode = FLOW_LISTEN_LOW_BITS; mode <= FLOW_LISTEN_RSS; mode++) {
			struct flow_plan p;
			char err[200];
			size_t nd;

			assert_true(ns_[i] <= MQ_QUEUES);
			assert_int_equal(flow_plan_init(&p, ns_[i], 61440, 65535, err, sizeof(err)),
					 0);
			config(f, &p, (enum flow_listen_mode)mode);
			nd = sweep_dports(&p, dports);
			for (size_t d = 0; d < nd; d++)
				for (size_t s = 0; s < ARRAY_SIZE(sweep_sports); s++)
					check(f, &p, (enum flow_listen_mode)mode, sweep_sports[s],
					      dports[d]);
		}
	}
}

static void xdp_config(struct fx *f, const struct flow_plan *p, enum flow_listen_mode mode)
{
	assert_int_equal(xdp_steer_set_plan(&f->st, p, mode), 0);
}

/* The segment on every queue of ma: verdict and counter as the C plan says. */
static void xdp_check(struct fx *f, const struct flow_plan *p, enum flow_listen_mode mode,
		      uint16_t sp, uint16_t dp)
{
	bool lunar = flow_plan_reserved(p, dp) || dp == LISTEN_PORT;
	struct frame fr;

	mk_tcp2(&fr, sp, dp);
	for (unsigned q = 0; q < MQ_QUEUES; q++) {
		struct xdp_steer_counters a, b;
		unsigned owner = want_owner(p, mode, sp, dp, q);
		uint32_t want_ret = lunar && owner != q ? XDP_DROP : XDP_PASS, got;

		queue_counters(f, q, &a);
		got = run_on_queue(f, &fr, q);
		queue_counters(f, q, &b);
		if (got != want_ret)
			fail_msg("n=%u mode=%d %u->%u on queue %u: retval %u, want %u "
				 "(owner %u)",
				 p->n_queues, mode, sp, dp, q, got, want_ret, owner);
		if (b.to_kernel - a.to_kernel != !lunar ||
		    b.misqueued - a.misqueued != (lunar && owner != q) ||
		    b.redirect_failed - a.redirect_failed != (lunar && owner == q) ||
		    b.to_lunar != a.to_lunar)
			fail_msg("n=%u mode=%d %u->%u on queue %u: counters moved "
				 "k%lu m%lu r%lu",
				 p->n_queues, mode, sp, dp, q,
				 (unsigned long)(b.to_kernel - a.to_kernel),
				 (unsigned long)(b.misqueued - a.misqueued),
				 (unsigned long)(b.redirect_failed - a.redirect_failed));
	}
}

/*
 * Every (source port, destination port, arrival queue) of the sweep, for
 * several worker counts and both listen modes: the XDP program's verdict
 * and counter are what flow_plan_queue_of() says: redirect (here XDP_PASS,
 * no socket: redirect_failed) on the owner queue, XDP_DROP and misqueued on
 * any other, XDP_PASS and to_kernel for what is not lunar's.
 */
static void t_plan_matches_flow_plan(void **state)
{
	static const unsigned ns_[] = {2, 3, 4, 8};
	struct fx *f = *state;

	assert_int_equal(xdp_steer_add_port(&f->st, LISTEN_PORT), 0);
	sweep(f, ns_, ARRAY_SIZE(ns_), xdp_config, xdp_check);
}

/* The single-queue plan and the defaults: every lunar segment stays on its queue. */
static void t_plan_single_queue(void **state)
{
	struct fx *f = *state;
	struct xdp_steer_counters a, b;
	struct flow_plan p;
	struct frame fr;
	char err[200];

	assert_int_equal(f->st.n_queues, 0); /* a fresh program: defaults */
	mk_tcp2(&fr, 1027, 65535);	     /* owner 3 of a 4-worker plan */
	for (unsigned q = 0; q < MQ_QUEUES; q++)
		assert_int_equal(run_on_queue(f, &fr, q), XDP_PASS);
	queue_counters(f, XDP_STEER_ALL_QUEUES, &a);
	assert_int_equal(a.misqueued, 0);
	assert_int_equal(a.redirect_failed, MQ_QUEUES);
	queue_counters(f, 5, &a);
	assert_int_equal(a.redirect_failed, 1);

	assert_int_equal(flow_plan_init(&p, 1, 61440, 65535, err, sizeof(err)), 0);
	assert_int_equal(xdp_steer_set_plan(&f->st, &p, FLOW_LISTEN_LOW_BITS), 0);
	queue_counters(f, XDP_STEER_ALL_QUEUES, &a);
	for (unsigned q = 0; q < MQ_QUEUES; q++)
		assert_int_equal(run_on_queue(f, &fr, q), XDP_PASS);
	queue_counters(f, XDP_STEER_ALL_QUEUES, &b);
	assert_int_equal(b.misqueued, a.misqueued);
	assert_int_equal(b.redirect_failed - a.redirect_failed, MQ_QUEUES);
}

/* Host side: bad plans refused, range and plan kept apart, a new handle sees both. */
static void t_plan_host_side(void **state)
{
	struct fx *f = *state;
	struct flow_plan p = {.n_queues = 4, .lo = 61440, .hi = 65535};
	struct xdp_steer_counters c;
	struct xdp_steer st2;
	struct frame fr;
	char err[256];

	assert_int_equal(xdp_steer_set_plan(&f->st, &p, (enum flow_listen_mode)7), -EINVAL);
	assert_int_equal(xdp_steer_set_plan(&f->st, NULL, FLOW_LISTEN_RSS), -EINVAL);
	p.n_queues = 0;
	assert_int_equal(xdp_steer_set_plan(&f->st, &p, FLOW_LISTEN_RSS), -EINVAL);
	p.n_queues = FLOW_PLAN_MAX_QUEUES + 1;
	assert_int_equal(xdp_steer_set_plan(&f->st, &p, FLOW_LISTEN_RSS), -EINVAL);
	p = (struct flow_plan){.n_queues = 4, .lo = 65000, .hi = 65100};
	assert_int_equal(xdp_steer_set_plan(&f->st, &p, FLOW_LISTEN_RSS), -EINVAL);
	assert_int_equal(f->st.n_queues, 0); /* nothing written */

	p = (struct flow_plan){.n_queues = 4, .lo = 61440, .hi = 65535};
	assert_int_equal(xdp_steer_set_plan(&f->st, &p, FLOW_LISTEN_RSS), 0);
	/* A range too small for 4 workers is refused; a fitting one keeps the plan. */
	assert_int_equal(xdp_steer_set_range(&f->st, 65000, 65100), -EINVAL);
	assert_int_equal(xdp_steer_set_range(&f->st, 50000, 50000 + 4095), 0);
	assert_int_equal(f->st.n_queues, 4);
	assert_int_equal(f->st.listen, FLOW_LISTEN_RSS);
	mk_tcp2(&fr, 40000, 50000 + 4095); /* last sub-range: queue 3 */
	assert_int_equal(run_on_queue(f, &fr, 3), XDP_PASS);
	assert_int_equal(run_on_queue(f, &fr, 0), XDP_DROP);
	mk_tcp2(&fr, 40000, 61440); /* the old range: the kernel's now */
	assert_int_equal(run_on_queue(f, &fr, 1), XDP_PASS);

	/* Another handle on the same program learns the config in force. */
	assert_int_equal(xdp_steer_open("ma", &st2, err, sizeof(err)), 0);
	assert_int_equal(st2.lo, 50000);
	assert_int_equal(st2.hi, 50000 + 4095);
	assert_int_equal(st2.n_queues, 4);
	assert_int_equal(st2.listen, FLOW_LISTEN_RSS);
	xdp_steer_close(&st2);

	/* Counters per queue: 0 and 3 saw one lunar segment each, 1 one for the kernel. */
	queue_counters(f, 0, &c);
	assert_int_equal(c.misqueued, 1);
	queue_counters(f, 3, &c);
	assert_int_equal(c.redirect_failed, 1);
	queue_counters(f, 1, &c);
	assert_true(c.to_kernel >= 1);
	/* Queue 64 is the shared row of queues past the map; 65 does not exist. */
	assert_int_equal(xdp_steer_counters(&f->st, LUNAR_STEER_MAX_QUEUES, &c), 0);
	assert_int_equal(xdp_steer_counters(&f->st, LUNAR_STEER_MAX_QUEUES + 1, &c), -EINVAL);
	assert_int_equal(xdp_steer_counters(&f->st, 0, NULL), -EINVAL);
}

/* Write @p (with @mode) and the listening port into the peer program's maps. */
static void peer_config(struct fx *f, const struct flow_plan *p, enum flow_listen_mode mode)
{
	struct lunar_steer_cfg cfg = {.valid = 1,
				      .lo = p->lo,
				      .hi = p->hi,
				      .n_queues = (uint16_t)p->n_queues,
				      .listen = (uint16_t)mode};
	uint32_t key = 0, port = LISTEN_PORT, one = 1;
	int cfg_fd = bpf_object__find_map_fd_by_name(f->peer_obj, LUNAR_STEER_CFG_MAP);
	int ports_fd = bpf_object__find_map_fd_by_name(f->peer_obj, LUNAR_STEER_PORTS_MAP);

	assert_true(cfg_fd >= 0 && ports_fd >= 0);
	assert_int_equal(bpf_map_update_elem(cfg_fd, &key, &cfg, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(ports_fd, &port, &one, BPF_ANY), 0);
}

static uint64_t peer_stat(struct fx *f, uint32_t slot)
{
	int fd = bpf_object__find_map_fd_by_name(f->peer_obj, LUNAR_PEER_STATS_MAP);
	int ncpu = libbpf_num_possible_cpus();
	uint64_t vals[ncpu > 0 ? ncpu : 1], sum = 0;

	assert_true(fd >= 0 && ncpu > 0);
	assert_int_equal(bpf_map_lookup_elem(fd, &slot, vals), 0);
	for (int c = 0; c < ncpu; c++)
		sum += vals[c];
	return sum;
}

/* The peer program's counter of the queue the C plan names (or "untouched") moves. */
static void peer_check(struct fx *f, const struct flow_plan *p, enum flow_listen_mode mode,
		       uint16_t sp, uint16_t dp)
{
	bool steered = p->n_queues > 1 && (flow_plan_reserved(p, dp) ||
					   (dp == LISTEN_PORT && mode == FLOW_LISTEN_LOW_BITS));
	uint32_t slot = steered ? flow_plan_queue_of(p, sp, dp) : LUNAR_PEER_STAT_UNTOUCHED;
	struct frame fr;
	uint64_t before;

	mk_tcp2(&fr, sp, dp);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr.b, .data_size_in = (uint32_t)fr.len,
		    .repeat = 1);
	before = peer_stat(f, slot);
	assert_int_equal(bpf_prog_test_run_opts(f->peer_fd, &o), 0);
	assert_int_equal(o.retval, 0 /* TC_ACT_OK */);
	if (peer_stat(f, slot) != before + 1)
		fail_msg("peer n=%u mode=%d %u->%u: slot %u did not move", p->n_queues, mode, sp,
			 dp, slot);
}

/*
 * The tc peer program picks, for the same sweep, the queue
 * flow_plan_queue_of() names (its counter of that queue moves), and leaves
 * alone what is not lunar's, listening ports in RSS mode, and everything
 * under a single-queue plan.
 */
static void t_peer_matches_flow_plan(void **state)
{
	static const unsigned ns_[] = {1, 2, 3, 4, 8};

	sweep(*state, ns_, ARRAY_SIZE(ns_), peer_config, peer_check);
}

/* Wait (bounded) until the lunar segments counted on ma reach @want. */
static void wait_lunar(struct fx *f, uint64_t want, struct xdp_steer_counters *c)
{
	for (int i = 0; i < 100; i++) {
		queue_counters(f, XDP_STEER_ALL_QUEUES, c);
		if (c->redirect_failed + c->misqueued >= want)
			return;
		usleep(20000);
	}
	fail_msg("only %lu of %lu lunar segments reached ma",
		 (unsigned long)(c->redirect_failed + c->misqueued), (unsigned long)want);
}

#define WIRE_FRAMES 32

/* The frames of the wire test: 16 to the sub-ranges, 16 to the listening port. */
static void wire_frame(const struct flow_plan *p, unsigned i, struct frame *fr, unsigned *owner)
{
	uint16_t sp, dp;

	if (i < 16) {
		uint16_t lo, hi;

		flow_plan_client_range(p, i % p->n_queues, &lo, &hi);
		sp = (uint16_t)(5000 + i);
		dp = (uint16_t)(lo + i);
	} else {
		sp = (uint16_t)(33000 + 7 * i);
		dp = LISTEN_PORT;
	}
	mk_tcp2(fr, sp, dp);
	*owner = flow_plan_queue_of(p, sp, dp);
}

/*
 * Over the wire: frames sent on mb pass its egress tc program and arrive on
 * ma's rx queue = mb's tx queue. With the peer program every lunar segment
 * lands on its owner queue (nothing misqueued, per-queue counts as
 * planned); without it the kernel's flow hash spreads them over 8 queues
 * and most are dropped as misqueued.
 */
static void t_peer_steers_over_veth(void **state)
{
	struct fx *f = *state;
	struct xdp_steer_counters c0, c;
	uint64_t per_queue[MQ_QUEUES] = {0};
	struct flow_plan p;
	struct frame fr;
	unsigned owner;
	char err[200];
	int ret;

	assert_int_equal(flow_plan_init(&p, 4, 61440, 65535, err, sizeof(err)), 0);
	assert_int_equal(xdp_steer_set_plan(&f->st, &p, FLOW_LISTEN_LOW_BITS), 0);
	assert_int_equal(xdp_steer_add_port(&f->st, LISTEN_PORT), 0);
	peer_config(f, &p, FLOW_LISTEN_LOW_BITS);

	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)if_nametoindex("mb"),
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, topts, .prog_fd = f->peer_fd);
	ret = bpf_tc_hook_create(&hook);
	if (ret && ret != -EEXIST)
		fail_msg("clsact on mb: %s", strerror(-ret));
	f->tc_hooked = true;
	ret = bpf_tc_attach(&hook, &topts);
	if (ret)
		fail_msg("tc attach on mb egress: %s", strerror(-ret));

	queue_counters(f, XDP_STEER_ALL_QUEUES, &c0);
	for (unsigned i = 0; i < WIRE_FRAMES; i++) {
		wire_frame(&p, i, &fr, &owner);
		per_queue[owner]++;
		send_on("mb", &fr);
	}
	wait_lunar(f, c0.redirect_failed + c0.misqueued + WIRE_FRAMES, &c);
	assert_int_equal(c.misqueued - c0.misqueued, 0);
	assert_int_equal(c.redirect_failed - c0.redirect_failed, WIRE_FRAMES);
	for (unsigned q = 0; q < MQ_QUEUES; q++) {
		struct xdp_steer_counters cq;

		queue_counters(f, q, &cq);
		if (cq.redirect_failed != per_queue[q])
			fail_msg("queue %u got %lu lunar segments, planned %lu", q,
				 (unsigned long)cq.redirect_failed, (unsigned long)per_queue[q]);
	}

	/* No flow director: the kernel's hash picks, the plan mostly disagrees. */
	topts.prog_fd = topts.prog_id = 0;
	topts.flags = 0;
	assert_int_equal(bpf_tc_hook_destroy(&hook), 0);
	f->tc_hooked = false;
	queue_counters(f, XDP_STEER_ALL_QUEUES, &c0);
	for (unsigned i = 0; i < WIRE_FRAMES; i++) {
		wire_frame(&p, i, &fr, &owner);
		send_on("mb", &fr);
	}
	wait_lunar(f, c0.redirect_failed + c0.misqueued + WIRE_FRAMES, &c);
	assert_int_equal(c.redirect_failed + c.misqueued - c0.redirect_failed - c0.misqueued,
			 WIRE_FRAMES);
	assert_true(c.misqueued > c0.misqueued);
}

/* xdp_steer_set_cookie() writes the whole entry of a queue, and refuses what has no entry. */
static void t_cookie_entry(void **state)
{
	struct fx *f = *state;
	struct lunar_cookie_cfg c = {.key = {0x0102030405060708ull, 0x1112131415161718ull},
				     .until_ktime = 42,
				     .clock_off = -7,
				     .ip = 0x0100000a,
				     .mss = 1448,
				     .window = 64240,
				     .wscale = 9,
				     .flags = LUNAR_COOKIE_SACK | LUNAR_COOKIE_TS,
				     .ttl = 64};
	struct lunar_cookie_cfg got;
	struct xdp_steer closed = {.cfg_fd = -1, .ports_fd = -1, .stats_fd = -1, .cookie_fd = -1};
	uint32_t q = 5, q0 = 0;

	assert_int_equal(xdp_steer_set_cookie(&f->st, q, &c), 0);
	assert_int_equal(bpf_map_lookup_elem(f->st.cookie_fd, &q, &got), 0);
	assert_memory_equal(&got, &c, sizeof(c));
	/* Other queues stay unarmed (until_ktime 0 never answers). */
	assert_int_equal(bpf_map_lookup_elem(f->st.cookie_fd, &q0, &got), 0);
	assert_int_equal(got.until_ktime, 0);
	assert_int_equal(xdp_steer_set_cookie(&f->st, LUNAR_STEER_MAX_QUEUES, &c), -EINVAL);
	assert_int_equal(xdp_steer_set_cookie(&f->st, 0, NULL), -EINVAL);
	assert_int_equal(xdp_steer_set_cookie(&closed, 0, &c), -EINVAL);
}

/* ---- more host side and plan ------------------------------------------- */

static int wide_setup(void **state)
{
	return setup_on(state, "wa") ? 0 : -1;
}

/*
 * Queues past the map (64 and up) share the last stats row (steer_abi.h):
 * their frames are counted there, not in queue 0's row, and the sum over
 * all queues includes that row. No AF_XDP socket can serve them, so a
 * lunar segment there is a failed redirect.
 */
static void t_queues_past_the_map(void **state)
{
	struct fx *f = *state;
	struct xdp_steer_counters a0, b0, a64, b64, aall, ball;
	struct frame fr;

	queue_counters(f, 0, &a0);
	queue_counters(f, LUNAR_STEER_MAX_QUEUES, &a64);
	queue_counters(f, XDP_STEER_ALL_QUEUES, &aall);
	mk_tcp(&fr, 61440);
	assert_int_equal(run_on_queue(f, &fr, LUNAR_STEER_MAX_QUEUES), XDP_PASS);
	assert_int_equal(run_on_queue(f, &fr, LUNAR_STEER_MAX_QUEUES + 1), XDP_PASS);
	mk_tcp(&fr, 22);
	assert_int_equal(run_on_queue(f, &fr, LUNAR_STEER_MAX_QUEUES + 1), XDP_PASS);
	queue_counters(f, 0, &b0);
	queue_counters(f, LUNAR_STEER_MAX_QUEUES, &b64);
	queue_counters(f, XDP_STEER_ALL_QUEUES, &ball);
	assert_memory_equal(&a0, &b0, sizeof(a0));
	assert_int_equal(b64.redirect_failed - a64.redirect_failed, 2);
	assert_int_equal(b64.to_kernel - a64.to_kernel, 1);
	assert_int_equal(ball.redirect_failed - aall.redirect_failed, 2);
	assert_int_equal(ball.to_kernel - aall.to_kernel, 1);
	assert_int_equal(ball.to_lunar, aall.to_lunar);
}

/* Open file descriptors of this process. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * A handle keeps only the four maps it uses: opening and closing it leaves
 * no descriptor behind (the program's other maps, xsks_map and the
 * object's data sections, are closed at once), so a long-lived lunar
 * reopening it does not run out of descriptors.
 */
static void t_open_close_no_fd_leak(void **state)
{
	struct fx *f = *state;
	struct xdp_steer st;
	char err[256];
	int before = count_fds();

	for (int i = 0; i < 3; i++) {
		assert_int_equal(xdp_steer_open("xa", &st, err, sizeof(err)), 0);
		xdp_steer_close(&st);
	}
	assert_int_equal(count_fds(), before);
	(void)f;
}

enum { M_CFG, M_PORTS, M_STATS, M_COOKIE, M_OTHER, M_N };

/*
 * An XDP program using maps named as lunar_steer's, with map @wrong (or
 * none: M_N) of type @wrong_type instead; attached to xa. Returns its fd.
 */
static int attach_lookalike(int wrong, uint32_t wrong_type, int map_fds[M_N])
{
	static const struct {
		const char *name;
		uint32_t type, value, entries;
	} maps[M_N] = {
	    {LUNAR_STEER_CFG_MAP, BPF_MAP_TYPE_ARRAY, sizeof(struct lunar_steer_cfg), 1},
	    {LUNAR_STEER_PORTS_MAP, BPF_MAP_TYPE_ARRAY, sizeof(__u32), LUNAR_STEER_NPORTS},
	    {LUNAR_STEER_STATS_MAP, BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u64),
	     LUNAR_STEER_STAT_ROWS * LUNAR_STEER_NSTATS},
	    {LUNAR_STEER_COOKIE_MAP, BPF_MAP_TYPE_ARRAY, sizeof(struct lunar_cookie_cfg),
	     LUNAR_STEER_MAX_QUEUES},
	    {"other", BPF_MAP_TYPE_ARRAY, sizeof(__u32), 1},
	};
	struct bpf_insn insns[2 * M_N + 2];
	int fd;

	memset(insns, 0, sizeof(insns));
	for (int i = 0; i < M_N; i++) {
		map_fds[i] = bpf_map_create(i == wrong ? wrong_type : maps[i].type, maps[i].name, 4,
					    maps[i].value, maps[i].entries, NULL);
		assert_true(map_fds[i] >= 0);
		/* r1 = the map: the program uses it, so it is among the program's maps. */
		insns[2 * i] = (struct bpf_insn){.code = BPF_LD | BPF_DW | BPF_IMM,
						 .dst_reg = BPF_REG_1,
						 .src_reg = BPF_PSEUDO_MAP_FD,
						 .imm = map_fds[i]};
	}
	insns[2 * M_N] = (struct bpf_insn){
	    .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS};
	insns[2 * M_N + 1] = (struct bpf_insn){.code = BPF_JMP | BPF_EXIT};
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "lookalike", "GPL", insns, ARRAY_SIZE(insns), NULL);
	assert_true(fd >= 0);
	assert_int_equal(
	    bpf_xdp_attach((int)if_nametoindex("xa"), fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL), 0);
	return fd;
}

/*
 * Map discovery checks each map's type, not only its name and sizes: a
 * lunar_stats that is a plain array (no per-CPU slots: the counters would
 * be read as one CPU's), a per-CPU lunar_cfg (the program would read
 * another CPU's config) or a hash lunar_cookie is another program's layout,
 * refused with -EPROTO. The same maps with the right types are accepted,
 * and neither way leaks a descriptor.
 */
static void t_map_of_another_type(void **state)
{
	static const struct {
		int map;
		uint32_t type;
	} wrong[] = {
	    {M_N, 0},
	    {M_STATS, BPF_MAP_TYPE_ARRAY},
	    {M_CFG, BPF_MAP_TYPE_PERCPU_ARRAY},
	    {M_COOKIE, BPF_MAP_TYPE_HASH},
	};
	int before = count_fds();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(wrong); i++) {
		struct xdp_steer st;
		char err[512] = "";
		int map_fds[M_N], prog, ret;

		prog = attach_lookalike(wrong[i].map, wrong[i].type, map_fds);
		ret = xdp_steer_open("xa", &st, err, sizeof(err));
		if (wrong[i].map == M_N) {
			assert_int_equal(ret, 0);
			xdp_steer_close(&st);
		} else {
			if (ret != -EPROTO)
				fail_msg("map %d of type %u: open returned %d (%s)", wrong[i].map,
					 wrong[i].type, ret, err);
			assert_non_null(strstr(err, "another layout"));
		}
		assert_int_equal(xdp_detach("xa"), 0);
		close(prog);
		for (int m = 0; m < M_N; m++)
			close(map_fds[m]);
	}
	assert_int_equal(count_fds(), before);
}

/*
 * xdp_detach_lunar() (lunar's cleanup on exit) removes lunar_steer only:
 * another program on the interface is not lunar's to remove (-EPERM, still
 * attached); no program is nothing to do.
 */
static void t_detach_lunar_only(void **state)
{
	const struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	int ifindex = (int)if_nametoindex("xa"), fd;
	uint32_t id = 0, after = 0;
	struct fx f = {0};

	(void)state;
	assert_int_equal(xdp_detach_lunar("xa"), 0);
	assert_int_equal(xdp_detach_lunar("nosuch0"), -ENODEV);
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "foreign", "GPL", insns, 2, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_xdp_attach(ifindex, fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL), 0);
	assert_int_equal(bpf_xdp_query_id(ifindex, 0, &id), 0);
	assert_int_equal(xdp_detach_lunar("xa"), -EPERM);
	assert_int_equal(bpf_xdp_query_id(ifindex, 0, &after), 0);
	assert_int_equal(after, id);
	assert_int_equal(xdp_detach("xa"), 0);
	close(fd);

	assert_int_equal(load_attach(&f, XDP_FLAGS_DRV_MODE), 0);
	assert_int_equal(xdp_detach_lunar("xa"), 0);
	assert_int_equal(bpf_xdp_query_id(ifindex, 0, &after), 0);
	assert_int_equal(after, 0);
	bpf_object__close(f.obj);
}

/* A frame's verdict on queue @q of ma and which of @q's counters it moved. */
static void expect_on_queue(struct fx *f, const struct frame *fr, uint32_t q, uint32_t want_ret,
			    enum lunar_steer_stat want_stat, const char *what)
{
	struct xdp_steer_counters a, b;
	uint64_t d[LUNAR_STEER_NSTATS];
	uint32_t got;

	queue_counters(f, q, &a);
	got = run_on_queue(f, fr, q);
	queue_counters(f, q, &b);
	d[LUNAR_STEER_TO_LUNAR] = b.to_lunar - a.to_lunar;
	d[LUNAR_STEER_TO_KERNEL] = b.to_kernel - a.to_kernel;
	d[LUNAR_STEER_REDIRECT_FAILED] = b.redirect_failed - a.redirect_failed;
	d[LUNAR_STEER_MISQUEUED] = b.misqueued - a.misqueued;
	d[LUNAR_STEER_SYNCOOKIE] = b.syncookies - a.syncookies;
	if (got != want_ret)
		fail_msg("%s on queue %u: retval %u, want %u", what, q, got, want_ret);
	for (int s = 0; s < LUNAR_STEER_NSTATS; s++)
		if (d[s] != (s == (int)want_stat))
			fail_msg("%s on queue %u: counter %d moved by %lu, want counter %d", what,
				 q, s, (unsigned long)d[s], want_stat);
}

/*
 * The address and the plan are two parts of one config, each kept when the
 * other is set, and a second handle (another lunar process, lunar_ctl)
 * reads both: with a 4-worker plan and lunar's address, a segment on
 * another worker's queue is dropped as misqueued after the address is set,
 * and a segment to another address stays the kernel's after the plan is
 * replaced.
 */
static void t_addr_and_plan_kept(void **state)
{
	struct fx *f = *state;
	struct flow_plan p4, p2;
	struct xdp_steer st2;
	struct frame fr;
	char err[256];

	assert_int_equal(flow_plan_init(&p4, 4, 61440, 65535, err, sizeof(err)), 0);
	assert_int_equal(flow_plan_init(&p2, 2, 61440, 65535, err, sizeof(err)), 0);
	mk_tcp2(&fr, 40000, 61440); /* to 10.0.0.1, first sub-range: queue 0 */

	assert_int_equal(xdp_steer_set_plan(&f->st, &p4, FLOW_LISTEN_LOW_BITS), 0);
	assert_int_equal(xdp_steer_set_addr(&f->st, 0x0a000001), 0);
	assert_int_equal(f->st.n_queues, 4);
	expect_on_queue(f, &fr, 1, XDP_DROP, LUNAR_STEER_MISQUEUED, "plan kept by the address");
	expect_on_queue(f, &fr, 0, XDP_PASS, LUNAR_STEER_REDIRECT_FAILED, "lunar's address");

	assert_int_equal(xdp_steer_open("ma", &st2, err, sizeof(err)), 0);
	assert_int_equal(st2.ip, 0x0a000001);
	assert_int_equal(st2.n_queues, 4);
	/* The second handle's range keeps the address and plan it read. */
	assert_int_equal(xdp_steer_set_range(&st2, 61440, 65535), 0);
	xdp_steer_close(&st2);
	expect_on_queue(f, &fr, 1, XDP_DROP, LUNAR_STEER_MISQUEUED, "after another handle");
	expect_on_queue(f, &fr, 0, XDP_PASS, LUNAR_STEER_REDIRECT_FAILED, "after another handle");

	assert_int_equal(xdp_steer_set_addr(&f->st, 0x0a000009), 0);
	expect_on_queue(f, &fr, 0, XDP_PASS, LUNAR_STEER_TO_KERNEL, "another address");
	assert_int_equal(xdp_steer_set_plan(&f->st, &p2, FLOW_LISTEN_RSS), 0);
	assert_int_equal(f->st.ip, 0x0a000009);
	expect_on_queue(f, &fr, 0, XDP_PASS, LUNAR_STEER_TO_KERNEL, "address kept by the plan");
	expect_on_queue(f, &fr, 1, XDP_PASS, LUNAR_STEER_TO_KERNEL, "address kept by the plan");
	assert_int_equal(xdp_steer_set_addr(&f->st, 0x0a000001), 0);
	expect_on_queue(f, &fr, 1, XDP_DROP, LUNAR_STEER_MISQUEUED, "the 2-worker plan kept");
}

/*
 * With several workers an ICMP error about a lunar connection belongs to
 * the worker owning the connection, found from the quoted segment as from
 * a segment of it arriving here: the quoted source port is the local end
 * (destination of the flow), the quoted destination port the peer's
 * (source of the flow). On the owner's queue it goes to lunar; on any
 * other it goes to the kernel (PASS, not a misqueued drop: no socket could
 * take it there, and nobody answers an ICMP error, RFC 1122 3.2.2).
 */
static void t_plan_icmp_errors(void **state)
{
	struct fx *f = *state;
	struct flow_plan p;
	struct frame fr;
	char err[200];
	static const struct {
		uint16_t qsport, qdport;
	} quotes[] = {
	    {LISTEN_PORT, 40001}, /* listening port: the peer's port % 4 = 1 */
	    {LISTEN_PORT, 40002},
	    {63488, 80}, /* reserved range: sub-range 2 */
	    {65535, 80},
	};

	assert_int_equal(flow_plan_init(&p, 4, 61440, 65535, err, sizeof(err)), 0);
	assert_int_equal(xdp_steer_set_plan(&f->st, &p, FLOW_LISTEN_LOW_BITS), 0);
	assert_int_equal(xdp_steer_add_port(&f->st, LISTEN_PORT), 0);
	for (size_t i = 0; i < ARRAY_SIZE(quotes); i++) {
		unsigned owner = flow_plan_queue_of(&p, quotes[i].qdport, quotes[i].qsport);
		char what[96];

		mk_icmp_error_full(&fr, 5, 3, 5, IPPROTO_TCP, quotes[i].qsport, quotes[i].qdport,
				   8);
		snprintf(what, sizeof(what), "error quoting %u -> %u (owner %u)", quotes[i].qsport,
			 quotes[i].qdport, owner);
		for (unsigned q = 0; q < MQ_QUEUES; q++)
			expect_on_queue(
			    f, &fr, q, XDP_PASS,
			    q == owner ? LUNAR_STEER_REDIRECT_FAILED : LUNAR_STEER_TO_KERNEL, what);
	}
	/* RSS mode: a listening port's connection is the arrival queue's. */
	assert_int_equal(xdp_steer_set_plan(&f->st, &p, FLOW_LISTEN_RSS), 0);
	mk_icmp_error_full(&fr, 5, 3, 5, IPPROTO_TCP, LISTEN_PORT, 40001, 8);
	for (unsigned q = 0; q < MQ_QUEUES; q++)
		expect_on_queue(f, &fr, q, XDP_PASS, LUNAR_STEER_REDIRECT_FAILED,
				"error quoting the listener, RSS");
}

/*
 * Each rx queue's lunar segments go into that queue's own AF_XDP socket
 * (xsks_map[rx queue], as DPDK fills it): with a socket bound to ma's
 * queue 3 only, a segment arriving on queue 3 is redirected, one on queue
 * 0 finds no socket and falls back to the kernel.
 */
static void t_xsk_on_queue_3(void **state)
{
	struct fx *f = *state;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	struct frame fr;

	xsk_bind(f, "ma", 3, &fq, &cq, &rx, &tx);

	mk_tcp(&fr, 61440);
	expect_on_queue(f, &fr, 3, XDP_REDIRECT, LUNAR_STEER_TO_LUNAR, "lunar segment");
	expect_on_queue(f, &fr, 0, XDP_PASS, LUNAR_STEER_REDIRECT_FAILED, "lunar segment");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_missing_interface),
	    cmocka_unit_test(t_free_then_generic),
	    cmocka_unit_test(t_foreign_program),
	    cmocka_unit_test(t_stale_lunar_program_removed),
	    cmocka_unit_test(t_lock_file_removed_on_unlock),
	    cmocka_unit_test_setup_teardown(t_busy_native, attach_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_classify_defaults, attach_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_classify_icmp_errors, attach_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_icmp_errors_kernel, attach_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_malformed, attach_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_ports_and_range, attach_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_other_address_to_kernel, attach_setup,
					    attach_teardown),
	    cmocka_unit_test_setup_teardown(t_other_address_icmp_to_kernel, attach_setup,
					    attach_teardown),
	    cmocka_unit_test_setup_teardown(t_xsk_redirect, attach_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_cookie_entry, attach_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_open_close_no_fd_leak, attach_setup, attach_teardown),
	    cmocka_unit_test(t_map_of_another_type),
	    cmocka_unit_test(t_detach_lunar_only),
	    cmocka_unit_test_setup_teardown(t_queues_past_the_map, wide_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_addr_and_plan_kept, mq_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_plan_icmp_errors, mq_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_xsk_on_queue_3, mq_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_plan_single_queue, mq_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_plan_matches_flow_plan, mq_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_plan_host_side, mq_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_peer_matches_flow_plan, mq_setup, attach_teardown),
	    cmocka_unit_test_setup_teardown(t_peer_steers_over_veth, mq_setup, attach_teardown),
	};

	ns_require_root("ctl/xdp");
	obj_path = argc > 1 ? argv[1] : getenv("LUNAR_STEER_OBJ");
	peer_obj_path = argc > 2 ? argv[2] : getenv("LUNAR_PEER_STEER_OBJ");
	if (!obj_path || access(obj_path, R_OK) || !peer_obj_path || access(peer_obj_path, R_OK)) {
		fprintf(stderr,
			"usage: %s <lunar_steer.bpf.o> <lunar_peer_steer.bpf.o> "
			"(or set LUNAR_STEER_OBJ and LUNAR_PEER_STEER_OBJ)\n",
			argv[0]);
		return 1;
	}
	return cmocka_run_group_tests_name("ctl/xdp", tests, group_setup, group_teardown);
}
