/*
 * netlink.c - the kernel's control plane seen from lunar (LUNA §7.3):
 * one-shot interface queries and the neighbour/route watcher (see
 * netlink.h). Uses libmnl over NETLINK_ROUTE.
 *
 * The watcher keeps a small shadow of what it has told its user (reachable
 * neighbours, best route per prefix). The shadow lets it (a) suppress
 * repeats, (b) report entries that vanished while notifications were lost
 * (socket overrun) or were removed silently (IPv4 flushes routes without
 * RTM_DELROUTE when a link or address goes away), by re-dumping the table and
 * sweeping what the dump no longer contains, and (c) present "one route per
 * prefix, lowest metric wins", which is all lunar's forwarding needs.
 */
#include "ctl/netlink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_arp.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "base/compiler.h"
#include "base/log.h"

/*
 * Receive buffer. The kernel sizes dump messages after the largest buffer a
 * reader has offered, up to 32 KiB, so 64 KiB never truncates.
 */
#define NL_BUF_SIZE (64 * 1024)
/* Socket buffer for notifications: bursts (a flushed table) fit in it. */
#define NL_RCVBUF   (4 * 1024 * 1024)
#define NL_ATTR_MAX 64
/*
 * States in which the kernel itself uses a neighbour's address (the kernel's
 * NUD_VALID, which uapi headers do not export). STALE, DELAY and PROBE
 * still hold the last confirmed address; the kernel re-probes on its own.
 */
#define NL_NUD_VALID (NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)

/* ---- attribute helpers ------------------------------------------------ */

struct attrs {
	const struct nlattr *tb[NL_ATTR_MAX + 1];
};

static int collect_attr(const struct nlattr *attr, void *data)
{
	struct attrs *a = data;
	uint16_t type = mnl_attr_get_type(attr);

	/* Unknown (newer) attributes are skipped, never an error. */
	if (type <= NL_ATTR_MAX)
		a->tb[type] = attr;
	return MNL_CB_OK;
}

/* An IPv4 address attribute, converted to host order; false if malformed. */
static bool attr_ip4(const struct nlattr *attr, uint32_t *ip)
{
	if (!attr || mnl_attr_get_payload_len(attr) != 4)
		return false;
	*ip = ntohl(mnl_attr_get_u32(attr));
	return true;
}

static bool attr_u32(const struct nlattr *attr, uint32_t *v)
{
	if (!attr || mnl_attr_get_payload_len(attr) != 4)
		return false;
	*v = mnl_attr_get_u32(attr);
	return true;
}

static bool attr_mac(const struct nlattr *attr, uint8_t mac[6])
{
	if (!attr || mnl_attr_get_payload_len(attr) != 6)
		return false;
	memcpy(mac, mnl_attr_get_payload(attr), 6);
	return true;
}

/* ---- route parsing, shared by the query and the watcher ---------------- */

struct route {
	uint32_t dst;
	uint8_t plen;
	uint32_t gw;
	uint32_t prio;
};

/* The gateway of the first next hop of RTA_MULTIPATH leaving via @ifindex. */
static bool multipath_via(const struct nlattr *mp, int ifindex, uint32_t *gw)
{
	const struct rtnexthop *nh = mnl_attr_get_payload(mp);
	int len = mnl_attr_get_payload_len(mp);

	while (len >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) && nh->rtnh_len <= len) {
		if (nh->rtnh_ifindex == ifindex) {
			struct attrs a = {0};

			*gw = 0;
			mnl_attr_parse_payload(RTNH_DATA(nh), nh->rtnh_len - sizeof(*nh),
					       collect_attr, &a);
			attr_ip4(a.tb[RTA_GATEWAY], gw);
			return true;
		}
		len -= RTNH_ALIGN(nh->rtnh_len);
		nh = RTNH_NEXT(nh);
	}
	return false;
}

/* What parse_route() found in a message. */
enum route_kind {
	ROUTE_OTHER,	/* not an IPv4 main-table route: the kernel's business */
	ROUTE_NOT_OURS, /* one, but not a unicast route through our interface (*r has its key) */
	ROUTE_OURS,	/* a unicast route leaving through @ifindex: *r */
};

/*
 * Decode @nlh if it is an IPv4 main-table unicast route leaving through
 * @ifindex. Local, broadcast and other tables are the kernel's business;
 * a main-table route elsewhere (another interface, a blackhole) still has
 * its key (destination, length, metric) decoded, for a replacement.
 */
static enum route_kind parse_route(const struct nlmsghdr *nlh, int ifindex, struct route *r)
{
	const struct rtmsg *rtm;
	struct attrs a = {0};
	uint32_t table, oif;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*rtm)))
		return ROUTE_OTHER;
	rtm = mnl_nlmsg_get_payload(nlh);
	if (rtm->rtm_family != AF_INET || rtm->rtm_dst_len > 32)
		return ROUTE_OTHER;
	if (mnl_attr_parse(nlh, sizeof(*rtm), collect_attr, &a) < 0)
		return ROUTE_OTHER;
	table = rtm->rtm_table;
	attr_u32(a.tb[RTA_TABLE], &table);
	if (table != RT_TABLE_MAIN)
		return ROUTE_OTHER;
	memset(r, 0, sizeof(*r));
	r->plen = rtm->rtm_dst_len;
	attr_ip4(a.tb[RTA_DST], &r->dst);
	attr_u32(a.tb[RTA_PRIORITY], &r->prio);
	if (rtm->rtm_type != RTN_UNICAST)
		return ROUTE_NOT_OURS;
	if (attr_u32(a.tb[RTA_OIF], &oif)) {
		if ((int)oif != ifindex)
			return ROUTE_NOT_OURS;
		attr_ip4(a.tb[RTA_GATEWAY], &r->gw);
		return ROUTE_OURS;
	}
	if (a.tb[RTA_MULTIPATH] && multipath_via(a.tb[RTA_MULTIPATH], ifindex, &r->gw))
		return ROUTE_OURS;
	return ROUTE_NOT_OURS;
}

/* ---- one-shot requests ------------------------------------------------- */

/*
 * Bytes at the start of datagram @buf (@n bytes) that hold whole messages:
 * the walk stops at the first message shorter than its header or not
 * fitting, padding included, in what remains. libmnl cannot be left to
 * walk raw input: mnl_nlmsg_ok() compares nlmsg_len as an int, so a length
 * of 2^31 or more passes it and mnl_nlmsg_next() jumps far outside the
 * buffer (or, 0xffffffff aligning to 0, never moves: an endless loop);
 * and libmnl's attribute walk runs to the padded end of a message, up to
 * 3 bytes past an unpadded last one. The kernel pads every message
 * (NLMSG_ALIGN), so it never sends what this cuts off.
 */
static size_t nl_whole_len(const void *buf, size_t n)
{
	size_t off = 0;

	while (n - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)((const char *)buf + off);
		size_t len = nlh->nlmsg_len;

		if (len < sizeof(*nlh) || len > n - off || MNL_ALIGN(len) > n - off)
			break;
		off += MNL_ALIGN(len);
	}
	return off;
}

/*
 * Send @nlh and feed every reply to @cb until NLMSG_DONE (dumps) or the
 * ACK (requests sent with NLM_F_ACK). Returns 0 or a negative errno, the
 * kernel's own error included.
 */
static int nl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	unsigned int portid = mnl_socket_get_portid(nl);
	uint32_t seq = nlh->nlmsg_seq;
	char *buf;
	int ret;

	buf = malloc(NL_BUF_SIZE);
	if (!buf)
		return -ENOMEM;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, NL_BUF_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (nl_whole_len(buf, (size_t)n) != (size_t)n) {
			ret = -EPROTO; /* malformed reply (see nl_whole_len) */
			break;
		}
		errno = 0;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
		if (ret < 0) {
			ret = errno ? -errno : -EPROTO;
			break;
		}
		if (ret == MNL_CB_STOP) {
			ret = 0;
			break;
		}
	}
out:
	free(buf);
	return ret;
}

static struct mnl_socket *open_sock(unsigned int groups)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, groups, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;

		mnl_socket_close(nl);
		errno = e;
		return NULL;
	}
	return nl;
}

static struct nlmsghdr *put_req(char *buf, uint16_t type, uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	return nlh;
}

struct query {
	struct nl_ifinfo *out;
	bool have_mac, have_addr, have_gw;
	uint16_t link_type;
	uint32_t gw_prio;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct query *q = data;
	const struct ifinfomsg *ifi;
	struct attrs a = {0};
	uint32_t mtu;

	if (nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (ifi->ifi_index != q->out->ifindex)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(*ifi), collect_attr, &a) < 0)
		return MNL_CB_OK;
	q->link_type = ifi->ifi_type;
	q->have_mac = attr_mac(a.tb[IFLA_ADDRESS], q->out->mac);
	if (attr_u32(a.tb[IFLA_MTU], &mtu))
		q->out->mtu = mtu;
	return MNL_CB_OK;
}

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct query *q = data;
	const struct ifaddrmsg *ifa;
	struct attrs a = {0};
	uint32_t ip;

	if (q->have_addr || nlh->nlmsg_type != RTM_NEWADDR ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifa)))
		return MNL_CB_OK;
	ifa = mnl_nlmsg_get_payload(nlh);
	/* Secondaries are aliases of the primary; lunar speaks from the primary. */
	if (ifa->ifa_family != AF_INET || (int)ifa->ifa_index != q->out->ifindex ||
	    (ifa->ifa_flags & IFA_F_SECONDARY) || ifa->ifa_prefixlen > 32)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(*ifa), collect_attr, &a) < 0)
		return MNL_CB_OK;
	/* IFA_LOCAL is our address; IFA_ADDRESS is the peer on p2p links. */
	if (!attr_ip4(a.tb[IFA_LOCAL], &ip) && !attr_ip4(a.tb[IFA_ADDRESS], &ip))
		return MNL_CB_OK;
	q->out->addr = ip;
	q->out->prefix_len = ifa->ifa_prefixlen;
	q->have_addr = true;
	return MNL_CB_OK;
}

static int gw_cb(const struct nlmsghdr *nlh, void *data)
{
	struct query *q = data;
	struct route r;

	if (nlh->nlmsg_type != RTM_NEWROUTE || parse_route(nlh, q->out->ifindex, &r) != ROUTE_OURS)
		return MNL_CB_OK;
	if (r.plen != 0 || !r.gw)
		return MNL_CB_OK;
	/* Several defaults: the kernel uses the lowest metric, so do we. */
	if (!q->have_gw || r.prio < q->gw_prio) {
		q->out->gateway = r.gw;
		q->gw_prio = r.prio;
		q->have_gw = true;
	}
	return MNL_CB_OK;
}

int nl_query_if(const char *ifname, struct nl_ifinfo *out, char *err, size_t errlen)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nl_ifinfo info = {0};
	struct query q = {.out = &info};
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	uint32_t seq = (uint32_t)time(NULL);
	unsigned int idx;
	int ret;

	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE) {
		lunar_set_err(err, errlen, "invalid interface name '%s'",
			      ifname ? ifname : "(null)");
		return -EINVAL;
	}
	idx = if_nametoindex(ifname);
	if (!idx) {
		lunar_set_err(err, errlen, "interface %s not found; create it or check `ip link`",
			      ifname);
		return -ENODEV;
	}
	info.ifindex = (int)idx;

	nl = open_sock(0);
	if (!nl) {
		ret = -errno;
		lunar_set_err(err, errlen, "cannot open a netlink socket: %s", strerror(errno));
		return ret;
	}

	nlh = put_req(req, RTM_GETLINK, NLM_F_ACK, seq++);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = info.ifindex;
	ret = nl_talk(nl, nlh, link_cb, &q);
	if (ret < 0) {
		lunar_set_err(err, errlen, "cannot read link %s: %s", ifname, strerror(-ret));
		goto out;
	}
	if (q.link_type != ARPHRD_ETHER || !q.have_mac) {
		lunar_set_err(err, errlen,
			      "interface %s is not Ethernet (link type %u); lunar "
			      "needs an Ethernet interface (veth, NIC, tap)",
			      ifname, q.link_type);
		ret = -EPROTONOSUPPORT;
		goto out;
	}

	nlh = put_req(req, RTM_GETADDR, NLM_F_DUMP, seq++);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ret = nl_talk(nl, nlh, addr_cb, &q);
	if (ret < 0) {
		lunar_set_err(err, errlen, "cannot read addresses of %s: %s", ifname,
			      strerror(-ret));
		goto out;
	}
	if (!q.have_addr) {
		lunar_set_err(err, errlen,
			      "interface %s has no IPv4 address; give it one (ip addr "
			      "add A.B.C.D/N dev %s) or pass --ip",
			      ifname, ifname);
		ret = -EADDRNOTAVAIL;
		goto out;
	}

	nlh = put_req(req, RTM_GETROUTE, NLM_F_DUMP, seq++);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	ret = nl_talk(nl, nlh, gw_cb, &q);
	if (ret < 0) {
		lunar_set_err(err, errlen, "cannot read routes of %s: %s", ifname, strerror(-ret));
		goto out;
	}
	*out = info;
out:
	mnl_socket_close(nl);
	return ret;
}

/* ---- the watcher --------------------------------------------------------- */

enum table { T_NONE, T_NEIGH, T_ROUTE };

struct kneigh {
	uint32_t ip;
	uint8_t mac[6];
	uint32_t gen;
};

struct kroute {
	struct route r;
	uint32_t gen;
	/*
	 * The kernel holds another route under this key (`ip route append`:
	 * same prefix and metric). It uses the first, which is r; when r goes,
	 * the next takes over, and only a dump says which it is.
	 */
	bool aliased;
};

struct nl_watch {
	struct mnl_socket *ev;	/* subscribed; also carries the dumps */
	struct mnl_socket *req; /* synchronous requests (resolve) */
	bool detached;		/* no sockets: nl_watch_open_detached() */
	unsigned int portid;
	int ifindex;
	struct nl_watch_ops ops;
	void *ctx;
	uint32_t seq;

	/* dump in progress (T_NONE if none) and dumps still to run */
	enum table dump;
	uint32_t dump_seq;
	uint32_t dump_gen;
	bool dump_intr;
	bool want[3];
	/* generation per table: bumped by each resync, stamped on entries seen */
	uint32_t gen[3];

	struct kneigh *neigh;
	size_t nneigh, neigh_cap;
	struct kroute *route;
	size_t nroute, route_cap;

	int delivered;
	char *buf;
};

static void *grow(void *arr, size_t *cap, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	void *p = realloc(arr, ncap * elem);

	if (p)
		*cap = ncap;
	return p;
}

static void emit_neigh(struct nl_watch *w, uint32_t ip, const uint8_t mac[6], bool reachable)
{
	w->delivered++;
	if (w->ops.neigh)
		w->ops.neigh(w->ctx, ip, mac, reachable);
}

static void emit_route(struct nl_watch *w, const struct route *r, bool add)
{
	w->delivered++;
	if (w->ops.route)
		w->ops.route(w->ctx, r->dst, r->plen, r->gw, add);
}

static struct kneigh *find_neigh(const struct nl_watch *w, uint32_t ip)
{
	for (size_t i = 0; i < w->nneigh; i++)
		if (w->neigh[i].ip == ip)
			return &w->neigh[i];
	return NULL;
}

bool nl_watch_known(const struct nl_watch *w, uint32_t ip, uint8_t mac[6])
{
	const struct kneigh *k = w ? find_neigh(w, ip) : NULL;

	if (k)
		memcpy(mac, k->mac, 6);
	return k != NULL;
}

static void drop_neigh(struct nl_watch *w, struct kneigh *k)
{
	*k = w->neigh[--w->nneigh];
}

static void neigh_update(struct nl_watch *w, uint32_t ip, const uint8_t *mac, bool reachable)
{
	static const uint8_t zero[6];
	struct kneigh *k = find_neigh(w, ip);

	if (!reachable) {
		/*
		 * Delivered even for unknown entries: INCOMPLETE and FAILED
		 * tell lunar that a resolution is pending or gave up.
		 */
		emit_neigh(w, ip, k ? k->mac : zero, false);
		if (k)
			drop_neigh(w, k);
		return;
	}
	if (k) {
		k->gen = w->gen[T_NEIGH];
		if (!memcmp(k->mac, mac, 6))
			return; /* REACHABLE <-> STALE churn: nothing new */
	} else {
		if (w->nneigh == w->neigh_cap) {
			struct kneigh *n = grow(w->neigh, &w->neigh_cap, sizeof(*n));

			if (!n) {
				/* Untracked but still delivered. */
				LOG_ERR("netlink watcher: out of memory tracking neighbours");
				emit_neigh(w, ip, mac, true);
				return;
			}
			w->neigh = n;
		}
		k = &w->neigh[w->nneigh++];
		k->ip = ip;
		k->gen = w->gen[T_NEIGH];
	}
	memcpy(k->mac, mac, 6);
	emit_neigh(w, ip, mac, true);
}

static void neigh_msg(struct nl_watch *w, const struct nlmsghdr *nlh)
{
	const struct ndmsg *ndm;
	struct attrs a = {0};
	uint8_t mac[6] = {0};
	bool has_mac, reachable;
	uint32_t ip;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_family != AF_INET || ndm->ndm_ifindex != w->ifindex ||
	    (ndm->ndm_flags & NTF_PROXY))
		return;
	if (mnl_attr_parse(nlh, sizeof(*ndm), collect_attr, &a) < 0 ||
	    !attr_ip4(a.tb[NDA_DST], &ip))
		return;
	has_mac = attr_mac(a.tb[NDA_LLADDR], mac);
	reachable = nlh->nlmsg_type == RTM_NEWNEIGH && has_mac && (ndm->ndm_state & NL_NUD_VALID);
	neigh_update(w, ip, mac, reachable);
}

static bool same_key(const struct route *a, const struct route *b)
{
	return a->dst == b->dst && a->plen == b->plen && a->prio == b->prio;
}

/* The lowest-metric known route for @dst/@plen, as the kernel would pick. */
static struct kroute *best_route(struct nl_watch *w, uint32_t dst, uint8_t plen)
{
	struct kroute *best = NULL;

	for (size_t i = 0; i < w->nroute; i++) {
		struct kroute *k = &w->route[i];

		if (k->r.dst == dst && k->r.plen == plen && (!best || k->r.prio < best->r.prio))
			best = k;
	}
	return best;
}

static void resync(struct nl_watch *w, enum table t)
{
	w->gen[t]++;
	w->want[t] = true;
}

static struct kroute *route_find(struct nl_watch *w, const struct route *r)
{
	for (size_t i = 0; i < w->nroute; i++)
		if (same_key(&w->route[i].r, r))
			return &w->route[i];
	return NULL;
}

/*
 * Route @r of ours, from a dump (@dumped) or a notification carrying
 * @nlflags; @k is the route known under its key (route_find()), or NULL. A route appended under a
 * key already known (NLM_F_APPEND) is one the kernel does not use while the first stands; in a
 * dump, the kernel lists a key's routes in the order it tries them, so the first of this dump's
 * generation is the one in use and the others wait behind it.
 */
static void route_add(struct nl_watch *w, struct kroute *k, const struct route *r, bool dumped,
		      uint16_t nlflags)
{
	if (k) {
		bool seen = k->gen == w->gen[T_ROUTE];

		if (k->r.gw != r->gw &&
		    ((dumped && seen) || (!dumped && (nlflags & NLM_F_APPEND)))) {
			k->aliased = true; /* behind ours: not used */
			return;
		}
		if (dumped && !seen)
			k->aliased = false; /* the dump shows what else there is */
		k->gen = w->gen[T_ROUTE];
		if (k->r.gw == r->gw)
			return;
		if (!dumped && !(nlflags & NLM_F_REPLACE))
			k->aliased = true; /* `ip route prepend`: the old one waits behind */
		k->r.gw = r->gw;	   /* `ip route replace` or `prepend` with a new gateway */
	} else {
		if (w->nroute == w->route_cap) {
			struct kroute *n = grow(w->route, &w->route_cap, sizeof(*n));

			if (!n) {
				LOG_ERR("netlink watcher: out of memory tracking routes");
				emit_route(w, r, true);
				return;
			}
			w->route = n;
		}
		k = &w->route[w->nroute++];
		k->r = *r;
		k->gen = w->gen[T_ROUTE];
		k->aliased = false;
	}
	/* A worse-metric duplicate is remembered but not announced. */
	if (best_route(w, r->dst, r->plen) == k)
		emit_route(w, &k->r, true);
}

/* Forget known route @k; announce its removal or the next best in its place. */
static void route_forget(struct nl_watch *w, struct kroute *k)
{
	struct route gone = k->r;
	bool was_best = best_route(w, gone.dst, gone.plen) == k;
	struct kroute *next;

	*k = w->route[--w->nroute];
	if (!was_best)
		return;
	next = best_route(w, gone.dst, gone.plen);
	if (next)
		emit_route(w, &next->r, true);
	else
		emit_route(w, &gone, false);
}

static void route_msg(struct nl_watch *w, const struct nlmsghdr *nlh, bool dumped)
{
	struct route r;
	enum route_kind kind = parse_route(nlh, w->ifindex, &r);
	struct kroute *k;

	if (kind == ROUTE_OTHER)
		return;
	k = route_find(w, &r);
	/*
	 * A route of ours gone, or replaced by one elsewhere (`ip route
	 * replace` onto another interface, or by a blackhole: IPv4 sends no
	 * RTM_DELROUTE for the old one): forget ours under that key.
	 */
	if (nlh->nlmsg_type == RTM_NEWROUTE) {
		if (kind == ROUTE_OURS) {
			route_add(w, k, &r, dumped, nlh->nlmsg_flags);
			return;
		}
		if (k && (nlh->nlmsg_flags & NLM_F_APPEND))
			k->aliased = true; /* appended elsewhere: behind ours */
		if (!(nlh->nlmsg_flags & NLM_F_REPLACE))
			return;
	} else if (kind != ROUTE_OURS) {
		return;
	} else if (k && k->r.gw != r.gw) {
		return; /* one appended behind ours went, not ours */
	} else if (k && k->aliased) {
		/*
		 * Ours went, and a route appended behind it now stands in its
		 * place: a dump says which, and whether it is ours.
		 */
		resync(w, T_ROUTE);
		return;
	}
	if (k)
		route_forget(w, k);
}

/* Entries the finished dump did not confirm are gone: report them. */
static void sweep(struct nl_watch *w, enum table t)
{
	uint32_t gen = w->gen[t];

	if (t == T_NEIGH) {
		for (size_t i = 0; i < w->nneigh;) {
			struct kneigh *k = &w->neigh[i];

			if (k->gen == gen) {
				i++;
				continue;
			}
			emit_neigh(w, k->ip, k->mac, false);
			drop_neigh(w, k); /* moves the last entry to i */
		}
	} else {
		for (size_t i = 0; i < w->nroute;) {
			if (w->route[i].gen == gen) {
				i++;
				continue;
			}
			route_forget(w, &w->route[i]);
		}
	}
}

static int start_next_dump(struct nl_watch *w)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	enum table t;

	if (w->dump != T_NONE)
		return 0; /* one dump per socket at a time */
	if (w->want[T_NEIGH])
		t = T_NEIGH;
	else if (w->want[T_ROUTE])
		t = T_ROUTE;
	else
		return 0;
	w->want[t] = false;
	if (t == T_NEIGH) {
		nlh = put_req(req, RTM_GETNEIGH, NLM_F_DUMP, ++w->seq);
		struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
		ndm->ndm_family = AF_INET;
	} else {
		nlh = put_req(req, RTM_GETROUTE, NLM_F_DUMP, ++w->seq);
		struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
		rtm->rtm_family = AF_INET;
	}
	/*
	 * Detached: nothing to send to. The dump is recorded as requested all
	 * the same, so that replies fed with this sequence number drive the
	 * same state machine as the kernel's would.
	 */
	if (!w->detached && mnl_socket_sendto(w->ev, nlh, nlh->nlmsg_len) < 0) {
		int e = errno;

		LOG_ERR("netlink watcher: cannot request a %s dump: %s",
			t == T_NEIGH ? "neighbour" : "route", strerror(e));
		return -e;
	}
	w->dump = t;
	w->dump_seq = nlh->nlmsg_seq;
	w->dump_gen = w->gen[t];
	w->dump_intr = false;
	return 0;
}

static void dump_done(struct nl_watch *w, int error)
{
	enum table t = w->dump;

	w->dump = T_NONE;
	if (error) {
		/* Not retried here: a persistent error would spin the poll. */
		LOG_ERR("netlink watcher: %s dump failed: %s", t == T_NEIGH ? "neighbour" : "route",
			strerror(error));
		return;
	}
	if (w->dump_intr) {
		/* The table changed under the dump; entries may be missing. */
		resync(w, t);
		return;
	}
	/* Only a complete dump of the current generation may sweep. */
	if (w->dump_gen == w->gen[t])
		sweep(w, t);
}

/*
 * An NLMSG_ERROR's code as a positive errno: 0 acknowledges; anything but
 * a negative errno (-4095..-1, as the kernel sends) is a protocol error,
 * so a garbled INT_MIN is never negated.
 */
static int nl_error(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
		return EPROTO;
	if (!e->error)
		return 0;
	return e->error < 0 && e->error >= -4095 ? -e->error : EPROTO;
}

static void handle_msg(struct nl_watch *w, const struct nlmsghdr *nlh)
{
	bool dump_reply =
	    w->dump != T_NONE && nlh->nlmsg_seq == w->dump_seq && nlh->nlmsg_pid == w->portid;

	if (dump_reply && (nlh->nlmsg_flags & NLM_F_DUMP_INTR))
		w->dump_intr = true;
	switch (nlh->nlmsg_type) {
	case NLMSG_DONE:
		if (dump_reply)
			dump_done(w, 0);
		break;
	case NLMSG_ERROR:
		if (dump_reply)
			dump_done(w, nl_error(nlh));
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		neigh_msg(w, nlh);
		break;
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		route_msg(w, nlh, dump_reply);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK: {
		const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

		/*
		 * Link down/up or removal flushes routes (and neighbours)
		 * without per-entry notifications: re-dump and sweep.
		 */
		if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*ifi)) &&
		    ifi->ifi_index == w->ifindex) {
			resync(w, T_NEIGH);
			resync(w, T_ROUTE);
		}
		break;
	}
	case RTM_NEWADDR:
	case RTM_DELADDR: {
		const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);

		/* Removing an address silently removes its routes. */
		if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*ifa)) && ifa->ifa_family == AF_INET &&
		    (int)ifa->ifa_index == w->ifindex)
			resync(w, T_ROUTE);
		break;
	}
	default:
		break;
	}
}

/* A watcher without sockets or receive buffer; NULL with errno set. */
static struct nl_watch *watch_alloc(int ifindex, const struct nl_watch_ops *ops, void *ctx)
{
	struct nl_watch *w;

	if (ifindex <= 0 || !ops) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->ifindex = ifindex;
	w->ops = *ops;
	w->ctx = ctx;
	return w;
}

struct nl_watch *nl_watch_open(int ifindex, const struct nl_watch_ops *ops, void *ctx)
{
	struct nl_watch *w;
	int e, rcvbuf = NL_RCVBUF;

	w = watch_alloc(ifindex, ops, ctx);
	if (!w)
		return NULL;
	w->buf = malloc(NL_BUF_SIZE);
	if (!w->buf)
		goto fail;
	w->seq = (uint32_t)time(NULL);

	/* Subscribe before dumping: a change after the dump cannot be missed. */
	w->ev = open_sock(RTMGRP_NEIGH | RTMGRP_IPV4_ROUTE | RTMGRP_LINK | RTMGRP_IPV4_IFADDR);
	if (!w->ev) {
		LOG_ERR("netlink watcher: cannot open netlink socket: %s", strerror(errno));
		goto fail;
	}
	w->portid = mnl_socket_get_portid(w->ev);
	/* FORCE (root) beats rmem_max; otherwise take what we may have. */
	if (setsockopt(mnl_socket_get_fd(w->ev), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) < 0)
		setsockopt(mnl_socket_get_fd(w->ev), SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			   sizeof(rcvbuf));
	w->req = open_sock(0);
	if (!w->req) {
		LOG_ERR("netlink watcher: cannot open netlink socket: %s", strerror(errno));
		goto fail;
	}
	resync(w, T_NEIGH);
	resync(w, T_ROUTE);
	e = start_next_dump(w);
	if (e < 0) {
		errno = -e;
		goto fail;
	}
	return w;
fail:
	e = errno;
	nl_watch_close(w);
	errno = e;
	return NULL;
}

struct nl_watch *nl_watch_open_detached(int ifindex, const struct nl_watch_ops *ops, void *ctx)
{
	struct nl_watch *w = watch_alloc(ifindex, ops, ctx);

	if (!w)
		return NULL;
	w->detached = true; /* portid and seq stay 0: the first dump is seq 1 */
	resync(w, T_NEIGH);
	resync(w, T_ROUTE);
	start_next_dump(w); /* cannot fail detached: it sends nothing */
	return w;
}

int nl_watch_fd(struct nl_watch *w)
{
	if (!w)
		return -EINVAL;
	return w->detached ? -EBADF : mnl_socket_get_fd(w->ev);
}

/* Notifications were lost (or a datagram truncated): rebuild both tables. */
static void rx_lost(struct nl_watch *w)
{
	resync(w, T_NEIGH);
	resync(w, T_ROUTE);
}

/* Handle every whole message of one received datagram (see nl_whole_len). */
static void rx_datagram(struct nl_watch *w, const void *buf, size_t n)
{
	const struct nlmsghdr *nlh = buf;
	int len = (int)nl_whole_len(buf, n > INT_MAX ? INT_MAX : n);

	for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
		handle_msg(w, nlh);
}

int nl_watch_poll(struct nl_watch *w)
{
	int fd, ret;

	if (!w)
		return -EINVAL;
	if (w->detached)
		return -EBADF;
	fd = mnl_socket_get_fd(w->ev);
	w->delivered = 0;
	for (;;) {
		ssize_t n;

		n = recv(fd, w->buf, NL_BUF_SIZE, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno != ENOBUFS)
				return -errno;
			/* Notifications were lost: rebuild both tables. */
			LOG_WARN("netlink watcher: notifications lost (socket "
				 "overrun); re-reading neighbours and routes");
			rx_lost(w);
		} else if (n > NL_BUF_SIZE) {
			/* Cannot happen with 64 KiB; treat like an overrun. */
			rx_lost(w);
		} else {
			rx_datagram(w, w->buf, (size_t)n);
		}
		ret = start_next_dump(w);
		if (ret < 0)
			return ret;
	}
	return w->delivered;
}

int nl_watch_feed(struct nl_watch *w, const void *buf, size_t len)
{
	int ret;

	if (!w || (!buf && len))
		return -EINVAL;
	w->delivered = 0;
	if (buf)
		rx_datagram(w, buf, len);
	else
		rx_lost(w);
	ret = start_next_dump(w);
	return ret < 0 ? ret : w->delivered;
}

int nl_watch_resolve(struct nl_watch *w, uint32_t ip)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;
	int ret;

	if (!w || !ip)
		return -EINVAL;
	if (w->detached)
		return -EBADF; /* no kernel to ask, and no UDP fallback either */
	/*
	 * NTF_USE makes the kernel call neigh_event_send(): an absent entry is
	 * created (NLM_F_CREATE) in NUD_NONE and moved to INCOMPLETE with an
	 * ARP request sent; a valid entry is left as it is. NLM_F_REPLACE lets
	 * it act on an existing (e.g. FAILED) entry too.
	 */
	nlh = put_req(req, RTM_NEWNEIGH, NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, ++w->seq);
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_INET;
	ndm->ndm_ifindex = w->ifindex;
	ndm->ndm_state = NUD_NONE;
	ndm->ndm_flags = NTF_USE;
	mnl_attr_put_u32(nlh, NDA_DST, htonl(ip));
	ret = nl_talk(w->req, nlh, NULL, NULL);
	if (ret == -EPERM || ret == -EINVAL || ret == -EOPNOTSUPP)
		return nl_resolve_udp(w->ifindex, ip);
	return ret;
}

int nl_resolve_udp(int ifindex, uint32_t ip)
{
	struct sockaddr_in sin = {
	    .sin_family = AF_INET,
	    .sin_port = htons(9), /* discard */
	    .sin_addr.s_addr = htonl(ip),
	};
	int fd, ret = 0;

	if (ifindex <= 0 || !ip)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/*
	 * Pin the interface so the ARP goes out where lunar runs; without
	 * CAP_NET_RAW this fails and the route decides, which is the same
	 * interface whenever @ip is on its subnet.
	 */
	setsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &ifindex, sizeof(ifindex));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (send(fd, "", 0, 0) < 0 && errno != EAGAIN))
		ret = -errno;
	close(fd);
	return ret;
}

void nl_watch_close(struct nl_watch *w)
{
	if (!w)
		return;
	if (w->ev)
		mnl_socket_close(w->ev);
	if (w->req)
		mnl_socket_close(w->req);
	free(w->neigh);
	free(w->route);
	free(w->buf);
	free(w);
}
