/*
 * port_ethdev.c - DPDK ethdev ports (memif, af_xdp): device creation
 * from a port_spec, queue setup, offload discovery, burst I/O, teardown.
 */
#include "port/port_ethdev.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "base/log.h"
#include "ctl/xdp.h"
#include "mem/zbuf.h"
#include "port/memif_gate.h"
#include "port/xsk_channels.h"

/* The device, shared by the ports of its queues; the last one closed closes it. */
struct ethdev_dev {
	uint16_t port_id;
	char devname[32];
	char ifname[32];
	enum port_kind kind;
	unsigned n_queues, open;
	int owner_lock; /* af_xdp: xdp_owner_lock() while the device is open, else -1 */
};

/* One queue pair of a device: what one worker polls. */
struct ethdev_port {
	struct port base;
	struct ethdev_dev *dev;
	uint16_t port_id, queue;
	struct port_stats sw;	  /* rx/tx counted in software: vdevs' xstats differ */
	unsigned fill_ring_mbufs; /* af_xdp: mbufs the PMD keeps on this queue's fill ring */
	bool trusted;		  /* memif --trust-link: frames need no checksum check */
	struct memif_gate *gate;  /* memif: brackets bursts against a peer's disconnect */
};

static struct ethdev_port *to_ethdev(struct port *p)
{
	return (struct ethdev_port *)p;
}

static uint16_t ethdev_rx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct ethdev_port *e = to_ethdev(p);
	uint16_t got;

	memif_gate_enter(e->gate);
	got = rte_eth_rx_burst(e->port_id, e->queue, pkts, n);
	memif_gate_leave(e->gate);

	e->sw.rx_packets += got;
	for (uint16_t i = 0; i < got; i++) {
		e->sw.rx_bytes += pkts[i]->pkt_len;
		/* A trusted link: the peer is lunar in this host's memory (port_spec.h). */
		if (e->trusted)
			pkts[i]->ol_flags |=
			    RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	}
	return got;
}

static uint16_t ethdev_tx(struct port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct ethdev_port *e = to_ethdev(p);
	uint64_t bytes = 0;
	uint16_t sent;

	/* Sum before sending: the PMD may free the mbufs as soon as it has them. */
	for (uint16_t i = 0; i < n; i++)
		bytes += pkts[i]->pkt_len;
	memif_gate_enter(e->gate);
	sent = rte_eth_tx_burst(e->port_id, e->queue, pkts, n);
	memif_gate_leave(e->gate);
	if (sent < n) {
		for (uint16_t i = sent; i < n; i++)
			bytes -= pkts[i]->pkt_len;
		e->sw.tx_full += n - sent;
	}
	e->sw.tx_packets += sent;
	e->sw.tx_bytes += bytes;
	return sent;
}

static void ethdev_stats(struct port *p, struct port_stats *st)
{
	struct ethdev_port *e = to_ethdev(p);
	struct rte_eth_stats hw;

	*st = e->sw;
	/* Device-wide drops are reported once, by queue 0. */
	if (e->queue == 0 && rte_eth_stats_get(e->port_id, &hw) == 0)
		st->rx_missed = hw.imissed + hw.rx_nombuf;
}

static bool ethdev_link_up(struct port *p)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(to_ethdev(p)->port_id, &link) != 0)
		return false;
	return link.link_status == RTE_ETH_LINK_UP;
}

static void ethdev_dump(struct port *p, FILE *f)
{
	port_print_counters(p, f);
	/* Process-wide: how often a peer's disconnect had to wait for a burst. */
	if (to_ethdev(p)->gate)
		fprintf(f, "  memif_unmap_waits %lu\n",
			(unsigned long)atomic_load(&memif_gate_stats.unmap_waits));
}

/* The device record goes; its interface's owner lock with it (after any detach). */
static void dev_free(struct ethdev_dev *d)
{
	xdp_owner_unlock(d->ifname, d->owner_lock);
	free(d);
}

static void dev_close(struct ethdev_dev *d)
{
	rte_eth_dev_stop(d->port_id);
	rte_eth_dev_close(d->port_id);
	rte_vdev_uninit(d->devname);
	/* The af_xdp PMD detaches its program on close; make sure nothing stays. */
	if (d->kind == PORT_KIND_AF_XDP)
		xdp_detach_lunar(d->ifname);
	dev_free(d); /* after the detach: a successor finds the interface free */
}

static void ethdev_close(struct port *p)
{
	struct ethdev_port *e = to_ethdev(p);
	struct ethdev_dev *d = e->dev;

	/*
	 * af_xdp reaps its completion ring at the start of a transmit call, so
	 * the last frames sent stay on it until the next one: make that call.
	 */
	memif_gate_enter(e->gate);
	rte_eth_tx_done_cleanup(e->port_id, e->queue, 0);
	rte_eth_tx_burst(e->port_id, e->queue, NULL, 0);
	memif_gate_leave(e->gate);
	memif_gate_put(e->gate);
	/* It also abandons its fill ring's mbufs (see zbuf_pktpool_device_held). */
	if (d->kind == PORT_KIND_AF_XDP)
		zbuf_pktpool_device_held(e->base.pool, e->fill_ring_mbufs);
	free(e);
	if (--d->open == 0)
		dev_close(d);
}

static const struct port_ops ethdev_ops = {
    .rx_burst = ethdev_rx,
    .tx_burst = ethdev_tx,
    .stats = ethdev_stats,
    .dump = ethdev_dump,
    .link_up = ethdev_link_up,
    .close = ethdev_close,
};

/*
 * Is a process listening on the unix socket at @path? Read /proc/net/unix
 * rather than connecting: a connect would make a live memif server start
 * (and then abort) a control channel.
 */
static bool unix_path_listening(const char *path)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long flags;
		char p[256] = "";

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %*s %255s", &flags, p) == 2 &&
		    !strcmp(p, path) && (flags & 0x10000 /* __SO_ACCEPTCON */))
			found = true;
	}
	fclose(f);
	return found;
}

static int memif_precheck(const struct port_spec *spec, char *err, size_t errlen)
{
	char dir[sizeof(spec->path)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", spec->path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		lunar_set_err(
		    err, errlen,
		    "memif socket directory %s does not exist; create it (mkdir -p %s, or "
		    "scripts/topo.sh memif up for /run/lunar)",
		    dir, dir);
		return -ENOENT;
	}
	if (!spec->memif_server)
		return 0; /* a client's server is checked when it connects (port_ethdev_open) */
	if (stat(spec->path, &st) != 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		lunar_set_err(
		    err, errlen,
		    "memif socket path %s exists and is not a socket; choose another path or "
		    "remove the file",
		    spec->path);
		return -EEXIST;
	}
	if (unix_path_listening(spec->path)) {
		lunar_set_err(
		    err, errlen,
		    "memif socket %s is in use by another process; stop it or choose another "
		    "socket path",
		    spec->path);
		return -EADDRINUSE;
	}
	/* Nobody listens: a leftover of a process that died. Remove it. */
	LOG_INFO("removing stale memif socket %s", spec->path);
	unlink(spec->path);
	return 0;
}

int port_ethdev_precheck(const struct port_spec *spec, char *err, size_t errlen)
{
	switch (spec->kind) {
	case PORT_KIND_AF_XDP:
		if (if_nametoindex(spec->ifname) == 0) {
			lunar_set_err(
			    err, errlen,
			    "interface %s not found; create it (see scripts/topo.sh) or check "
			    "`ip link`",
			    spec->ifname);
			return -ENODEV;
		}
		return xdp_check_free(spec->ifname, err, errlen);
	case PORT_KIND_MEMIF:
		return memif_precheck(spec, err, errlen);
	default:
		lunar_set_err(err, errlen, "no port given; use --port");
		return -EINVAL;
	}
}

static int build_devargs(const struct port_ethdev_args *a, char *devname, size_t dn, char *args,
			 size_t an)
{
	static unsigned seq;
	const struct port_spec *s = a->spec;
	int n;

	switch (s->kind) {
	case PORT_KIND_AF_XDP:
		snprintf(devname, dn, "net_af_xdp%u", seq++);
		/*
		 * busy_budget=0: DPDK's default (64) turns on preferred busy
		 * polling, and then every empty receive burst is a recvfrom()
		 * system call. lunar's loop already polls; those calls only
		 * wake the veth's NAPI thread and cost a task switch each
		 * (4 KiB RPC over veth: p50 10.9 -> 10.0 us, docs/benchmarks.md).
		 */
		n = snprintf(args, an,
			     "iface=%s,start_queue=0,queue_count=%u,force_copy=1,busy_budget=0%s%s",
			     s->ifname, a->n_queues ? a->n_queues : 1,
			     a->xdp_prog ? ",xdp_prog=" : "", a->xdp_prog ? a->xdp_prog : "");
		break;
	case PORT_KIND_MEMIF:
		snprintf(devname, dn, "net_memif%u", seq++);
		{
			/*
			 * One ring buffer per frame: jumbo frames spread over several
			 * 2 KiB memif buffers come apart under load in DPDK 22.11's memif.
			 */
			unsigned bsize = 2048;

			while (bsize < (unsigned)(s->mtu ? s->mtu : 1500) + RTE_ETHER_HDR_LEN + 4)
				bsize <<= 1;
			n = snprintf(args, an, "role=%s,socket=%s,socket-abstract=no,id=0,bsize=%u",
				     s->memif_server ? "server" : "client", s->path, bsize);
		}
		break;
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= an ? -ENAMETOOLONG : 0;
}

static uint32_t discover_offloads(const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	uint32_t off = 0;
	const uint64_t rx_l4 = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
	const uint64_t tx_l4 = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;

	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) {
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
		off |= PORT_OFFLOAD_RX_IPV4_CKSUM;
	}
	if ((info->rx_offload_capa & rx_l4) == rx_l4) {
		conf->rxmode.offloads |= rx_l4;
		off |= PORT_OFFLOAD_RX_L4_CKSUM;
	}
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		off |= PORT_OFFLOAD_TX_IPV4_CKSUM;
	}
	if ((info->tx_offload_capa & tx_l4) == tx_l4) {
		conf->txmode.offloads |= tx_l4;
		off |= PORT_OFFLOAD_TX_L4_CKSUM;
	}
	/* TSO needs chained buffers and both checksum offloads. */
	if ((info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_TSO) &&
	    (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) &&
	    (off & PORT_OFFLOAD_TX_IPV4_CKSUM) && (off & PORT_OFFLOAD_TX_L4_CKSUM)) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
		off |= PORT_OFFLOAD_TX_TSO;
	}
	/*
	 * Chains let TCP frame payload without copying it (header buffer +
	 * the application's buffers attached). DPDK 22.11's af_xdp sends only
	 * the first segment, and says so by not offering this.
	 */
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		off |= PORT_OFFLOAD_TX_MULTISEG;
	}
	return off;
}

int port_ethdev_open(const struct port_ethdev_args *a, struct port **out, char *err, size_t errlen)
{
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	struct ethdev_port *q[PORT_MAX_QUEUES] = {0};
	struct ethdev_dev *d;
	unsigned nq = a->n_queues ? a->n_queues : 1;
	unsigned in_use_before[PORT_MAX_QUEUES];
	char args[256];
	uint32_t dev_max, offloads;
	uint16_t mtu, link_mtu = 0;
	bool started = false;
	int rc;

	if (nq > PORT_MAX_QUEUES)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->kind = a->spec->kind;
	d->n_queues = nq;
	d->owner_lock = -1;
	snprintf(d->ifname, sizeof(d->ifname), "%s", a->spec->ifname);
	if (d->kind == PORT_KIND_AF_XDP) {
		/*
		 * Held while the program is ours: a later process tells a crash from a live owner.
		 */
		rc = xdp_owner_lock(d->ifname, err, errlen);
		if (rc < 0) {
			dev_free(d);
			return rc;
		}
		d->owner_lock = rc;
	}
	if (d->kind == PORT_KIND_AF_XDP) {
		int have = xsk_channels_count(d->ifname);

		if (have >= 0 && (unsigned)have < nq) {
			lunar_set_err(
			    err, errlen,
			    "%u workers need %u queues, but %s has %d; create the veth with "
			    "numrxqueues %u numtxqueues %u (LUNAR_QUEUES=%u scripts/topo.sh "
			    "veth up) or give the NIC more channels (ethtool -L)",
			    nq, nq, d->ifname, have, nq, nq, nq);
			dev_free(d);
			return -EINVAL;
		}
		/*
		 * One worker per queue, every queue: the device hashes lunar's
		 * flows over all it has, and a segment on a queue no worker polls
		 * reaches the kernel, which has no socket for it and resets the
		 * connection (lunar steers no NIC rules here: ctl/flow_rules.h).
		 */
		if (have > 0 && (unsigned)have > nq) {
			lunar_set_err(
			    err, errlen,
			    "%s has %d queues but lunar runs %u worker%s on it: segments "
			    "the device hashes to the other queues would reach the kernel, "
			    "which resets lunar's connections; run %d workers (--core with "
			    "%d CPUs) or give %s %u queue%s (ethtool -L %s combined %u; a "
			    "veth: LUNAR_QUEUES=%u scripts/topo.sh veth up)",
			    d->ifname, have, nq, nq == 1 ? "" : "s", have, have, d->ifname, nq,
			    nq == 1 ? "" : "s", d->ifname, nq, nq);
			dev_free(d);
			return -EINVAL;
		}
	}
	rc = build_devargs(a, d->devname, sizeof(d->devname), args, sizeof(args));
	if (rc) {
		if (rc == -ENAMETOOLONG)
			lunar_set_err(err, errlen,
				      "%s port: its device arguments do not fit in %zu bytes; "
				      "use a shorter socket or XDP program path",
				      port_kind_name(a->spec->kind), sizeof(args));
		else
			lunar_set_err(err, errlen, "%s port: not opened through DPDK",
				      port_kind_name(a->spec->kind));
		dev_free(d);
		return rc;
	}
	/* The PMD counts only combined channels, which a veth has none of (xsk_channels.h). */
	xsk_channels_translate(d->kind == PORT_KIND_AF_XDP && nq > 1);
	rc = rte_vdev_init(d->devname, args);
	xsk_channels_translate(false);
	if (rc < 0) {
		lunar_set_err(err, errlen,
			      "could not create %s port (%s %s): %s; see the DPDK log lines above",
			      port_kind_name(a->spec->kind), d->devname, args, strerror(-rc));
		dev_free(d);
		return rc;
	}
	rc = rte_eth_dev_get_port_by_name(d->devname, &d->port_id);
	if (rc < 0)
		goto fail_uninit;
	rc = rte_eth_dev_info_get(d->port_id, &info);
	if (rc < 0)
		goto fail_uninit;
	if (info.max_rx_queues < nq || info.max_tx_queues < nq) {
		lunar_set_err(
		    err, errlen,
		    "%u workers need %u queues, but the %s device has %u rx and %u tx queues%s", nq,
		    nq, port_kind_name(a->spec->kind), info.max_rx_queues, info.max_tx_queues,
		    a->spec->kind == PORT_KIND_AF_XDP
			? "; create the veth with numrxqueues/numtxqueues (scripts/topo.sh)"
			: "");
		rc = -EINVAL;
		goto fail_quiet;
	}
	offloads = discover_offloads(&info, &conf);
	if (a->spec->trusted) /* nothing computes them: nothing checks them (port_spec.h) */
		offloads |= PORT_OFFLOAD_RX_IPV4_CKSUM | PORT_OFFLOAD_RX_L4_CKSUM |
			    PORT_OFFLOAD_TX_IPV4_CKSUM | PORT_OFFLOAD_TX_L4_CKSUM;
	mtu = a->spec->mtu ? a->spec->mtu : 1500;
	dev_max = RTE_MIN((uint32_t)info.max_mtu,
			  info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN);
	if (mtu > dev_max && a->spec->kind == PORT_KIND_MEMIF) {
		/*
		 * DPDK 22.11's memif reports 1518-byte frames, but its data path
		 * moves frames of any size over chained descriptors: the MTU of a
		 * memif link is whatever both lunar ends agree on.
		 */
		conf.rxmode.mtu = 1500;
		link_mtu = mtu;
	} else if (mtu > dev_max) {
		lunar_set_err(err, errlen, "--mtu %u: the %s device carries at most %u", mtu,
			      port_kind_name(a->spec->kind), dev_max);
		rc = -EINVAL;
		goto fail_quiet;
	} else {
		/* ethdev takes the MTU at configure time; not every PMD has mtu_set. */
		conf.rxmode.mtu = mtu;
	}
	for (unsigned i = 0; i < nq; i++)
		in_use_before[i] = rte_mempool_in_use_count(a->pools[i]);
	rc = rte_eth_dev_configure(d->port_id, (uint16_t)nq, (uint16_t)nq, &conf);
	if (rc < 0)
		goto fail_uninit;
	/* Each queue fills from its own worker's pool: workers share no buffers. */
	for (unsigned i = 0; i < nq; i++) {
		rc = rte_eth_rx_queue_setup(d->port_id, (uint16_t)i, a->rx_desc ? a->rx_desc : 1024,
					    rte_eth_dev_socket_id(d->port_id), NULL, a->pools[i]);
		if (rc < 0)
			goto fail_uninit;
		rc = rte_eth_tx_queue_setup(d->port_id, (uint16_t)i, a->tx_desc ? a->tx_desc : 1024,
					    rte_eth_dev_socket_id(d->port_id), NULL);
		if (rc < 0)
			goto fail_uninit;
	}
	if (!link_mtu && rte_eth_dev_get_mtu(d->port_id, &mtu) == 0)
		link_mtu = mtu;
	rc = rte_eth_dev_start(d->port_id);
	if (rc < 0 && d->kind == PORT_KIND_MEMIF && !a->spec->memif_server) {
		/* DPDK's memif answers -1 for anything; say what a client lacks. */
		lunar_set_err(err, errlen,
			      "memif client: no server accepted a connection on %s; start the "
			      "other side (--port memif:%s:server) first and wait for it to be "
			      "ready",
			      a->spec->path, a->spec->path);
		goto fail_quiet;
	}
	if (rc < 0)
		goto fail_uninit;
	started = true;
	for (unsigned i = 0; i < nq; i++) {
		struct ethdev_port *e = calloc(1, sizeof(*e));

		if (!e) {
			rc = -ENOMEM;
			goto fail_queues;
		}
		q[i] = e;
		d->open++;
		e->dev = d;
		e->port_id = d->port_id;
		e->queue = (uint16_t)i;
		e->base.offloads = offloads;
		e->trusted = a->spec->trusted;
		if (d->kind == PORT_KIND_MEMIF && !(e->gate = memif_gate_get())) {
			lunar_set_err(
			    err, errlen,
			    "%s: more than %d memif queues are open in this process; use fewer "
			    "ports or workers",
			    d->devname, MEMIF_GATE_MAX);
			rc = -ENOSPC;
			goto fail_gates;
		}
		e->base.mtu = link_mtu ? link_mtu : 1500;
		e->base.queue = (uint16_t)i;
		e->base.n_queues = (uint16_t)nq;
		rte_eth_macaddr_get(d->port_id, &e->base.mac);
		if (d->kind == PORT_KIND_AF_XDP)
			e->fill_ring_mbufs =
			    rte_mempool_in_use_count(a->pools[i]) - in_use_before[i];
		e->base.ops = &ethdev_ops;
		e->base.pool = a->pools[i];
		if (nq == 1)
			snprintf(e->base.name, sizeof(e->base.name), "%s:%.56s",
				 port_kind_name(a->spec->kind),
				 a->spec->kind == PORT_KIND_MEMIF ? a->spec->path
								  : a->spec->ifname);
		else
			snprintf(e->base.name, sizeof(e->base.name), "%s:%.50s#q%u",
				 port_kind_name(a->spec->kind),
				 a->spec->kind == PORT_KIND_MEMIF ? a->spec->path : a->spec->ifname,
				 i);
	}
	for (unsigned i = 0; i < nq; i++)
		out[i] = &q[i]->base;
	return 0;

fail_queues:
	lunar_set_err(err, errlen, "out of memory for the %s queues", d->devname);
fail_gates:
	for (unsigned i = 0; i < nq; i++) {
		if (q[i])
			memif_gate_put(q[i]->gate);
		free(q[i]);
	}
	goto fail_quiet;
fail_uninit:
	lunar_set_err(err, errlen, "could not set up %s port %s: %s", port_kind_name(a->spec->kind),
		      d->devname,
		      rc == -1 ? "the driver gave no reason" : strerror(rc < 0 ? -rc : rc));
fail_quiet:
	d->open = 0;
	if (started) /* DPDK will not close a started device (memif's stays registered) */
		rte_eth_dev_stop(d->port_id);
	rte_eth_dev_close(d->port_id);
	rte_vdev_uninit(d->devname);
	if (d->kind == PORT_KIND_AF_XDP)
		xdp_detach_lunar(d->ifname);
	dev_free(d);
	return rc < 0 ? rc : -EIO;
}

uint16_t port_ethdev_id(struct port *p)
{
	while (p->inner)
		p = p->inner;
	return to_ethdev(p)->port_id;
}
