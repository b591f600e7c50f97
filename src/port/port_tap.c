/*
 * port_tap.c - the tap port: a Linux tap interface read and written
 * through /dev/net/tun with a virtio-net header per frame (see port_tap.h).
 */
#include "port/port_tap.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "base/log.h"

#define TAP_MAX_MTU  9000
#define TAP_MAX_SEGS 64 /* buffers of one frame we hand to writev() */

struct tap_port {
	struct port base;
	int fd;
	char ifname[IFNAMSIZ];
	struct rte_mbuf *spare; /* a receive buffer kept across empty polls */
	struct port_stats st;
	uint64_t rx_bad_frames; /* too short, or GSO we did not ask for */
	uint64_t rx_errors, tx_errors;
	uint64_t rx_nombuf;
};

static struct tap_port *to_tap(struct port *p)
{
	return (struct tap_port *)p;
}

static uint16_t tap_rx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct tap_port *t = to_tap(p);
	uint16_t got = 0;

	while (got < n) {
		struct virtio_net_hdr vh;
		struct rte_mbuf *m = t->spare ? t->spare : rte_pktmbuf_alloc(p->pool);
		struct iovec iov[2];
		ssize_t r;

		if (!m) {
			t->rx_nombuf++;
			break;
		}
		t->spare = m;
		iov[0] = (struct iovec){.iov_base = &vh, .iov_len = sizeof(vh)};
		iov[1] = (struct iovec){.iov_base = rte_pktmbuf_mtod(m, void *),
					.iov_len = rte_pktmbuf_tailroom(m)};
		r = readv(t->fd, iov, 2);
		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				t->rx_errors++;
			break;
		}
		/* We never asked for GSO frames (no TUN_F_TSO*), so one is not ours to parse. */
		if ((size_t)r < sizeof(vh) + RTE_ETHER_HDR_LEN ||
		    vh.gso_type != VIRTIO_NET_HDR_GSO_NONE) {
			t->rx_bad_frames++;
			continue; /* the spare buffer is still clean */
		}
		t->spare = NULL;
		m->data_len = (uint16_t)(r - (ssize_t)sizeof(vh));
		m->pkt_len = m->data_len;
		/*
		 * The kernel checked the checksum, or (TUN_F_CSUM) left it for
		 * the receiver because the frame never left this host.
		 */
		if (vh.flags & (VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID))
			m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		t->st.rx_packets++;
		t->st.rx_bytes += m->pkt_len;
		pkts[got++] = m;
	}
	return got;
}

/* One's complement add of @v to the 16-bit sum at @p (either byte order, if both agree). */
static void csum_add16(uint8_t *p, uint16_t v)
{
	uint16_t cur;
	uint32_t s;

	memcpy(&cur, p, sizeof(cur));
	s = (uint32_t)cur + v;
	s = (s & 0xffff) + (s >> 16);
	cur = (uint16_t)((s & 0xffff) + (s >> 16));
	memcpy(p, &cur, sizeof(cur));
}

/*
 * The virtio-net header for @m's DPDK transmit offload flags. Checksums
 * become NEEDS_CSUM (the kernel completes them, or trusts them for local
 * delivery), TSO becomes GSO. DPDK's TSO contract puts the pseudo-header
 * sum without the length in the TCP checksum field; a CHECKSUM_PARTIAL
 * packet in Linux carries it with the length, so it is added here.
 * @return 0, or -EINVAL for offload requests this port cannot honour.
 */
static int offload_header(struct rte_mbuf *m, struct virtio_net_hdr *vh)
{
	uint64_t ol = m->ol_flags;
	uint64_t l4 = ol & RTE_MBUF_F_TX_L4_MASK;
	uint32_t start = m->l2_len + m->l3_len;
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);

	memset(vh, 0, sizeof(*vh));
	vh->gso_type = VIRTIO_NET_HDR_GSO_NONE;
	if (ol & RTE_MBUF_F_TX_IP_CKSUM) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + m->l2_len);

		if (m->data_len < start)
			return -EINVAL;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	if (!(ol & RTE_MBUF_F_TX_TCP_SEG) && l4 != RTE_MBUF_F_TX_TCP_CKSUM &&
	    l4 != RTE_MBUF_F_TX_UDP_CKSUM)
		return 0;
	if (m->data_len < start + (l4 == RTE_MBUF_F_TX_UDP_CKSUM ? 8u : 20u))
		return -EINVAL; /* the L4 header must be in the first buffer */
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->csum_start = (uint16_t)start;
	vh->csum_offset = l4 == RTE_MBUF_F_TX_UDP_CKSUM ? 6 : 16;
	if (ol & RTE_MBUF_F_TX_TCP_SEG) {
		if (!m->tso_segsz || m->data_len < start + m->l4_len)
			return -EINVAL;
		vh->csum_offset = 16;
		vh->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
		vh->gso_size = m->tso_segsz;
		vh->hdr_len = (uint16_t)(start + m->l4_len);
		csum_add16(frame + start + 16, rte_cpu_to_be_16((uint16_t)(m->pkt_len - start)));
	}
	return 0;
}

static uint16_t tap_tx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct tap_port *t = to_tap(p);
	uint16_t done;

	for (done = 0; done < n; done++) {
		struct rte_mbuf *m = pkts[done];
		struct iovec iov[TAP_MAX_SEGS + 1];
		struct virtio_net_hdr vh;
		unsigned k = 1;
		ssize_t r;

		if (m->nb_segs > TAP_MAX_SEGS || offload_header(m, &vh)) {
			t->tx_errors++; /* taken and dropped: it can never be sent */
			rte_pktmbuf_free(m);
			continue;
		}
		iov[0] = (struct iovec){.iov_base = &vh, .iov_len = sizeof(vh)};
		for (struct rte_mbuf *s = m; s; s = s->next)
			iov[k++] = (struct iovec){.iov_base = rte_pktmbuf_mtod(s, void *),
						  .iov_len = s->data_len};
		r = writev(t->fd, iov, (int)k);
		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			/*
			 * The caller keeps this one and the rest for later: the TSO
			 * length offload_header() added to its checksum field comes
			 * out again (adding the complement), or the retry adds it twice.
			 */
			if (vh.gso_type == VIRTIO_NET_HDR_GSO_TCPV4)
				csum_add16(rte_pktmbuf_mtod(m, uint8_t *) + vh.csum_start + 16,
					   (uint16_t)~rte_cpu_to_be_16(
					       (uint16_t)(m->pkt_len - vh.csum_start)));
			break;
		}
		if (r < 0) {
			t->tx_errors++;
		} else {
			t->st.tx_packets++;
			t->st.tx_bytes += m->pkt_len;
		}
		rte_pktmbuf_free(m);
	}
	t->st.tx_full += n - done;
	return done;
}

static void tap_stats(struct port *p, struct port_stats *st)
{
	struct tap_port *t = to_tap(p);

	*st = t->st;
	st->rx_missed = t->rx_nombuf;
}

static void tap_dump(struct port *p, FILE *f)
{
	struct tap_port *t = to_tap(p);

	port_print_counters(p, f);
	fprintf(f, "tap %s: rx_bad_frames %lu rx_errors %lu tx_errors %lu\n", t->ifname,
		t->rx_bad_frames, t->rx_errors, t->tx_errors);
}

static void tap_close(struct port *p)
{
	struct tap_port *t = to_tap(p);

	rte_pktmbuf_free(t->spare);
	close(t->fd); /* a tap we created goes away with it; a persistent one stays */
	free(t);
}

/* One line of a sysfs file of the interface, without its newline; false if unreadable. */
static bool read_sysfs(const char *ifname, const char *file, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, file);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/*
 * Up once the kernel has seen the carrier our attaching gave the tap (it
 * notices after up to a second) and, on a bridge, the port forwards:
 * before that, what we send is dropped on the kernel's side.
 */
static bool tap_link_up(struct port *p)
{
	struct tap_port *t = to_tap(p);
	char v[32];

	/* "unknown": a tap created already attached never changes state (no carrier event). */
	if (!read_sysfs(t->ifname, "operstate", v, sizeof(v)) ||
	    (strcmp(v, "up") != 0 && strcmp(v, "unknown") != 0))
		return false;
	if (read_sysfs(t->ifname, "brport/state", v, sizeof(v)))
		return strcmp(v, "3") == 0; /* BR_STATE_FORWARDING */
	return true;
}

static const struct port_ops tap_ops = {
    .rx_burst = tap_rx,
    .tx_burst = tap_tx,
    .stats = tap_stats,
    .dump = tap_dump,
    .link_up = tap_link_up,
    .close = tap_close,
};

/* IFF_* bits of an existing tap (sysfs tun_flags), or -1 if @ifname is no tap. */
static long existing_tun_flags(const char *ifname)
{
	char v[32], *end;
	long flags;

	if (!read_sysfs(ifname, "tun_flags", v, sizeof(v)))
		return -1;
	flags = strtol(v, &end, 0);
	return end == v || flags < 0 ? -1 : flags;
}

int port_tap_precheck(const struct port_spec *spec, char *err, size_t errlen)
{
	if (strlen(spec->ifname) >= IFNAMSIZ) {
		lunar_set_err(err, errlen, "tap name %s is too long: at most %d characters",
			      spec->ifname, IFNAMSIZ - 1);
		return -EINVAL;
	}
	if (if_nametoindex(spec->ifname) == 0)
		return 0; /* created at open */
	if (existing_tun_flags(spec->ifname) >= 0)
		return 0; /* a persistent tap (ip tuntap add ...): attached to */
	lunar_set_err(err, errlen,
		      "interface %s exists and is not a tap; choose another name, or create a "
		      "persistent tap first (ip tuntap add dev %s mode tap)",
		      spec->ifname, spec->ifname);
	return -EEXIST;
}

/* MTU and IFF_UP through an ioctl socket. */
static int configure_link(const char *ifname, unsigned mtu, char *err, size_t errlen)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = 0;

	if (s < 0) {
		lunar_set_err(err, errlen, "tap %s: socket: %s", ifname, strerror(errno));
		return -errno;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%.*s", IFNAMSIZ - 1, ifname);
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(s, SIOCSIFMTU, &ifr) < 0) {
		rc = -errno;
		lunar_set_err(err, errlen, "tap %s: could not set MTU %u: %s", ifname, mtu,
			      strerror(errno));
		goto out;
	}
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) < 0)) {
		rc = -errno;
		lunar_set_err(err, errlen, "tap %s: could not bring it up: %s", ifname,
			      strerror(errno));
	}
out:
	close(s);
	return rc;
}

int port_tap_open(const struct port_spec *spec, struct rte_mempool *pool, struct port **out,
		  char *err, size_t errlen)
{
	unsigned mtu = spec->mtu ? spec->mtu : 1500;
	unsigned offload = TUN_F_CSUM;
	int hdr_size = (int)sizeof(struct virtio_net_hdr);
	long existing = existing_tun_flags(spec->ifname);
	struct tap_port *t;
	struct ifreq ifr;
	int rc;

	rc = port_tap_precheck(spec, err, errlen);
	if (rc)
		return rc;
	if (mtu > TAP_MAX_MTU) {
		lunar_set_err(err, errlen, "--mtu %u: a tap port carries at most %u", mtu,
			      TAP_MAX_MTU);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	snprintf(t->ifname, sizeof(t->ifname), "%.*s", IFNAMSIZ - 1, spec->ifname);
	t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		rc = -errno;
		lunar_set_err(err, errlen,
			      "cannot open /dev/net/tun: %s (load the module: "
			      "modprobe tun)",
			      strerror(errno));
		free(t);
		return rc;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%.*s", IFNAMSIZ - 1, spec->ifname);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	if (existing >= 0 && (existing & IFF_MULTI_QUEUE))
		ifr.ifr_flags |= IFF_MULTI_QUEUE; /* a persistent tap made with multi_queue */
	if (ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
		rc = -errno;
		lunar_set_err(err, errlen, "could not attach to tap %s: %s", spec->ifname,
			      strerror(errno));
		goto fail;
	}
	if (ioctl(t->fd, TUNSETVNETHDRSZ, &hdr_size) < 0) {
		rc = -errno;
		lunar_set_err(err, errlen, "tap %s: no virtio-net header support: %s", spec->ifname,
			      strerror(errno));
		goto fail;
	}
	/* Frames from the kernel may then leave their checksum to us (we trust local ones). */
	if (ioctl(t->fd, TUNSETOFFLOAD, offload) < 0)
		offload = 0;
	rc = configure_link(spec->ifname, mtu, err, errlen);
	if (rc)
		goto fail;
	t->base.ops = &tap_ops;
	t->base.pool = pool;
	t->base.mtu = (uint16_t)mtu;
	t->base.offloads = PORT_OFFLOAD_TX_L4_CKSUM | PORT_OFFLOAD_TX_TSO |
			   PORT_OFFLOAD_TX_MULTISEG | (offload ? PORT_OFFLOAD_RX_L4_CKSUM : 0);
	/*
	 * lunar speaks with a MAC of its own: the kernel's side of the tap has
	 * its own, and a bridge would take frames for that one as its own.
	 */
	rte_eth_random_addr(t->base.mac.addr_bytes);
	snprintf(t->base.name, sizeof(t->base.name), "tap:%s", spec->ifname);
	*out = &t->base;
	return 0;

fail:
	close(t->fd);
	free(t);
	return rc;
}
