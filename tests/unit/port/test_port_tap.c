/*
 * test_port_tap.c - the tap port against a real kernel tap, in a network
 * namespace of the test's own (unshare; needs root, skipped otherwise).
 * A packet socket on the tap's kernel side sees what the port transmits
 * and injects what it should receive, so every check compares bytes and
 * the offload metadata the kernel took from the virtio-net header.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "fake_port.h"
#include "port/port_tap.h"

#define TAP "lt0"

static struct rte_mempool *pool;
static bool netns_ok;

static int group_setup(void **state)
{
	(void)state;
	if (test_eal_init())
		return -1;
	/* Jumbo frames fit one buffer, as lunar sizes its pool for the MTU. */
	pool = rte_pktmbuf_pool_create("tap_pool", 256, 0, 0, 9216 + RTE_PKTMBUF_HEADROOM,
				       (int)rte_socket_id());
	/* A network namespace, and a sysfs that shows it (as `ip netns exec` mounts one). */
	netns_ok = unshare(CLONE_NEWNET | CLONE_NEWNS) == 0 &&
		   mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
		   umount2("/sys", MNT_DETACH) == 0 &&
		   mount("sysfs", "/sys", "sysfs", 0, NULL) == 0;
	if (netns_ok) {
		/* No IPv6 chatter from the kernel's side of the tap: only our frames. */
		FILE *f = fopen("/proc/sys/net/ipv6/conf/default/disable_ipv6", "w");

		if (f) {
			fputs("1\n", f);
			fclose(f);
		}
	}
	return pool ? 0 : -1;
}

static struct port *open_tap(unsigned mtu)
{
	struct port_spec spec = {.kind = PORT_KIND_TAP, .mtu = (uint16_t)mtu};
	struct port *p = NULL;
	char err[256];

	if (!netns_ok)
		skip(); /* not root: no namespace of our own */
	snprintf(spec.ifname, sizeof(spec.ifname), "%s", TAP);
	assert_int_equal(port_tap_open(&spec, pool, &p, err, sizeof(err)), 0);
	return p;
}

static int sysfs_int(const char *file)
{
	char path[128];
	int v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/" TAP "/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%i", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* A packet socket on the tap's kernel side. */
static int kernel_side(void)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = (int)if_nametoindex(TAP)};
	int one = 1;
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));

	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sll, sizeof(sll)), 0);
	assert_int_equal(setsockopt(s, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)), 0);
	return s;
}

/* Receive one frame on the packet socket (waiting up to a second); its tp_status too. */
static ssize_t kernel_recv(int s, uint8_t *buf, size_t len, uint32_t *status)
{
	for (int i = 0; i < 1000; i++) {
		union {
			char b[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = {.iov_base = buf, .iov_len = len};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = ctl.b,
				    .msg_controllen = sizeof(ctl.b)};
		ssize_t r = recvmsg(s, &mh, 0);

		if (r < 0) {
			usleep(1000);
			continue;
		}
		*status = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA)
				*status =
				    ((struct tpacket_auxdata *)(void *)CMSG_DATA(c))->tp_status;
		return r;
	}
	return -1;
}

/* Ethernet + IPv4 + (TCP|UDP) frame with @payload bytes, IP checksum filled. */
static size_t build_frame(uint8_t *f, uint8_t proto, size_t payload)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
	size_t l4 = proto == IPPROTO_TCP ? 20 : 8;

	memset(f, 0, 14 + 20 + l4 + payload);
	memcpy(f, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00", 14);
	ip->version_ihl = 0x45;
	ip->total_length = htons((uint16_t)(20 + l4 + payload));
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = htonl(0x0a000002);
	ip->dst_addr = htonl(0x0a000001);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (proto == IPPROTO_TCP)
		f[14 + 20 + 12] = 5 << 4; /* data offset */
	for (size_t i = 0; i < payload; i++)
		f[14 + 20 + l4 + i] = (uint8_t)(i * 7);
	return 14 + 20 + l4 + payload;
}

static void dump_has(struct port *p, const char *needle)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	p->ops->dump(p, f);
	fclose(f);
	if (!strstr(buf, needle))
		fail_msg("dump lacks '%s':\n%s", needle, buf);
	free(buf);
}

/* A name the kernel cannot take, and an interface that is not a tap: refused with the fix. */
static void test_precheck(void **state)
{
	struct port_spec spec = {.kind = PORT_KIND_TAP};
	char err[256];

	(void)state;
	if (!netns_ok)
		skip();
	snprintf(spec.ifname, sizeof(spec.ifname), "a-name-far-too-long");
	assert_int_equal(port_tap_precheck(&spec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too long"));
	snprintf(spec.ifname, sizeof(spec.ifname), "lo");
	assert_int_equal(port_tap_precheck(&spec, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "ip tuntap add"));
	snprintf(spec.ifname, sizeof(spec.ifname), TAP);
	assert_int_equal(port_tap_precheck(&spec, err, sizeof(err)), 0); /* created at open */
}

/* Open creates the tap with our MTU and up; the link comes up; close removes it. */
static void test_open_mtu_link_close(void **state)
{
	struct port *p;
	bool up = false;

	(void)state;
	p = open_tap(9000);
	assert_int_equal(p->mtu, 9000);
	assert_int_equal(sysfs_int("mtu"), 9000);
	assert_true(sysfs_int("flags") & IFF_UP);
	assert_true(p->offloads & PORT_OFFLOAD_TX_TSO);
	for (int i = 0; i < 3000 && !up; i++) {
		up = p->ops->link_up(p);
		if (!up)
			usleep(1000);
	}
	if (!up) {
		char st[32] = "?";
		FILE *f = fopen("/sys/class/net/" TAP "/operstate", "r");

		if (f) {
			if (!fgets(st, sizeof(st), f))
				st[0] = '\0';
			fclose(f);
		}
		port_close(p);
		fail_msg("link never came up: operstate %s", st);
	}
	port_close(p);
	assert_int_equal(if_nametoindex(TAP), 0);
	assert_int_equal(test_pool_in_use(pool), 0);
}

/* What the kernel sends into the tap arrives whole, jumbo included. */
static void test_rx(void **state)
{
	static uint8_t frame[9014];
	struct rte_mbuf *got[4];
	struct port *p;
	unsigned n = 0;
	int s;

	(void)state;
	p = open_tap(9000);
	s = kernel_side();
	for (size_t len = 60; len <= 9014; len = len == 60 ? 1514 : len == 1514 ? 9014 : 99999) {
		build_frame(frame, IPPROTO_UDP, len - 42);
		assert_int_equal(send(s, frame, len, 0), (ssize_t)len);
		n = 0;
		for (int i = 0; i < 1000 && !n; i++) {
			n = port_rx_burst(p, got, 4);
			if (!n)
				usleep(1000);
		}
		assert_int_equal(n, 1);
		assert_int_equal(got[0]->pkt_len, len);
		assert_memory_equal(rte_pktmbuf_mtod(got[0], uint8_t *), frame, len);
		rte_pktmbuf_free(got[0]);
	}
	assert_int_equal(port_rx_burst(p, got, 4), 0);
	close(s);
	port_close(p);
	assert_int_equal(test_pool_in_use(pool), 0);
}

/* A plain frame goes out byte for byte; a UDP checksum offload reaches the kernel as partial. */
static void test_tx_plain_and_csum(void **state)
{
	uint8_t frame[1514], seen[2048];
	struct rte_mbuf *m;
	struct port *p;
	uint32_t status;
	size_t len;
	int s;

	(void)state;
	p = open_tap(1500);
	s = kernel_side();
	len = build_frame(frame, IPPROTO_UDP, 100);
	m = test_mbuf(pool, frame, len);
	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	assert_int_equal(kernel_recv(s, seen, sizeof(seen), &status), (ssize_t)len);
	assert_memory_equal(seen, frame, len);
	assert_false(status & TP_STATUS_CSUMNOTREADY);

	m = test_mbuf(pool, frame, len);
	m->l2_len = 14;
	m->l3_len = 20;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_UDP_CKSUM;
	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	assert_int_equal(kernel_recv(s, seen, sizeof(seen), &status), (ssize_t)len);
	assert_true(status & TP_STATUS_CSUMNOTREADY); /* NEEDS_CSUM: the kernel completes it */
	dump_has(p, "tx 2 pkts");
	close(s);
	port_close(p);
	assert_int_equal(test_pool_in_use(pool), 0);
}

/*
 * TSO becomes one GSO frame the kernel takes whole; the TCP checksum field,
 * which DPDK's TSO contract leaves without the length, now carries the
 * pseudo-header sum with the TCP length, as Linux expects of a partial one.
 */
static void test_tx_tso(void **state)
{
	static uint8_t frame[9014], seen[9100];
	struct rte_mbuf *m;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + 14);
	struct port *p;
	uint32_t status;
	uint16_t ph, field;
	size_t len;
	int s;

	(void)state;
	p = open_tap(1500);
	s = kernel_side();
	len = build_frame(frame, IPPROTO_TCP, 4000);
	ph = rte_ipv4_phdr_cksum(ip, RTE_MBUF_F_TX_TCP_SEG); /* without the length */
	memcpy(frame + 14 + 20 + 16, &ph, 2);
	m = test_mbuf(pool, frame, len);
	m->l2_len = 14;
	m->l3_len = 20;
	m->l4_len = 20;
	m->tso_segsz = 1000;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_TCP_SEG;
	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	assert_int_equal(kernel_recv(s, seen, sizeof(seen), &status), (ssize_t)len);
	assert_true(status & TP_STATUS_CSUMNOTREADY);
	memcpy(&field, seen + 14 + 20 + 16, 2);
	assert_int_equal(field, rte_ipv4_phdr_cksum(ip, 0)); /* with the length */
	assert_memory_equal(seen + 14 + 20 + 20, frame + 14 + 20 + 20, 4000);
	dump_has(p, "tx_errors 0");
	close(s);
	port_close(p);
	assert_int_equal(test_pool_in_use(pool), 0);
}

/* An offload it cannot honour (L4 header not in the frame) is taken, dropped and counted. */
static void test_tx_bad_offload_counted(void **state)
{
	uint8_t frame[64];
	struct rte_mbuf *m[2];
	struct port *p;
	size_t len;

	(void)state;
	p = open_tap(1500);
	len = build_frame(frame, IPPROTO_UDP, 0);
	m[0] = test_mbuf(pool, frame, 14 + 20 + 4); /* the UDP header cut short */
	m[0]->l2_len = 14;
	m[0]->l3_len = 20;
	m[0]->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_UDP_CKSUM;
	m[1] = test_mbuf(pool, frame, len);
	assert_int_equal(port_tx_burst(p, m, 2), 2); /* both taken: the first dropped */
	dump_has(p, "tx_errors 1");
	dump_has(p, "tx 1 pkts");
	port_close(p);
	assert_int_equal(test_pool_in_use(pool), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_precheck), cmocka_unit_test(test_open_mtu_link_close),
	    cmocka_unit_test(test_rx),	     cmocka_unit_test(test_tx_plain_and_csum),
	    cmocka_unit_test(test_tx_tso),   cmocka_unit_test(test_tx_bad_offload_counted),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
