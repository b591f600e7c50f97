/*
 * lunar-synflood - a SYN flood generator (RFC 4987 2): owns the sending.
 * Frames from synflood.c go out of an AF_PACKET socket in sendmmsg()
 * batches with PACKET_QDISC_BYPASS (no qdisc: the driver's transmit
 * directly), as fast as the kernel takes them or paced to --rate, for
 * --duration seconds or --count frames; or into a pcap file (--pcap). The
 * last line is the rate achieved, in a form scripts read:
 *
 *   synflood: sent N frames in S s: R pps, E send errors
 */
#include <errno.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "synflood.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The classic pcap format (no libpcap needed): header, then a record per frame. */
static int write_pcap(const struct synflood_opts *o, uint64_t *rng)
{
	struct {
		uint32_t magic;
		uint16_t major, minor;
		int32_t zone;
		uint32_t sigfigs, snaplen, linktype;
	} hdr = {0xa1b2c3d4, 2, 4, 0, 0, 65535, 1 /* LINKTYPE_ETHERNET */};
	uint8_t frame[SYNFLOOD_FRAME_LEN];
	FILE *f = fopen(o->pcap, "wb");

	if (!f) {
		fprintf(stderr, "lunar-synflood: --pcap %s: %s\n", o->pcap, strerror(errno));
		return 1;
	}
	fwrite(&hdr, sizeof(hdr), 1, f);
	for (uint64_t i = 0; i < o->count; i++) {
		uint32_t rec[4] = {(uint32_t)(i / 1000000), (uint32_t)(i % 1000000)};
		size_t len = synflood_build(frame, sizeof(frame), &o->frame, rng);

		rec[2] = rec[3] = (uint32_t)len;
		fwrite(rec, sizeof(rec), 1, f);
		fwrite(frame, len, 1, f);
	}
	if (fclose(f)) {
		fprintf(stderr, "lunar-synflood: --pcap %s: %s\n", o->pcap, strerror(errno));
		return 1;
	}
	if (!o->quiet)
		printf("synflood: wrote %llu frames to %s\n", (unsigned long long)o->count,
		       o->pcap);
	return 0;
}

/* An AF_PACKET socket that sends on @ifname and receives nothing (protocol 0). */
static int open_socket(struct synflood_opts *o, struct sockaddr_ll *to)
{
	struct sockaddr_ll bind_to = {.sll_family = AF_PACKET};
	struct ifreq ifr;
	int fd, ifindex, one = 1;

	if (strlen(o->ifname) >= IFNAMSIZ) {
		fprintf(stderr, "lunar-synflood: --interface %s: names are at most %d characters\n",
			o->ifname, IFNAMSIZ - 1);
		return -1;
	}
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		fprintf(stderr,
			"lunar-synflood: AF_PACKET socket: %s (run as root or give the "
			"program CAP_NET_RAW)\n",
			strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, o->ifname);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		fprintf(stderr,
			"lunar-synflood: --interface %s: %s (ip -br link lists the "
			"interfaces of this namespace)\n",
			o->ifname, strerror(errno));
		goto fail;
	}
	ifindex = ifr.ifr_ifindex; /* the next ioctl reuses the union */
	bind_to.sll_ifindex = ifindex;
	if (bind(fd, (struct sockaddr *)&bind_to, sizeof(bind_to)) < 0) {
		fprintf(stderr, "lunar-synflood: bind to %s: %s\n", o->ifname, strerror(errno));
		goto fail;
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) < 0)
		fprintf(stderr,
			"lunar-synflood: PACKET_QDISC_BYPASS: %s (sending through the "
			"qdisc)\n",
			strerror(errno));
	if (!o->have_src_mac) {
		if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
			fprintf(stderr, "lunar-synflood: %s's MAC: %s (give --src-mac)\n",
				o->ifname, strerror(errno));
			goto fail;
		}
		memcpy(o->frame.src_mac.addr_bytes, ifr.ifr_hwaddr.sa_data, RTE_ETHER_ADDR_LEN);
	}
	memset(to, 0, sizeof(*to));
	to->sll_family = AF_PACKET;
	to->sll_ifindex = ifindex;
	to->sll_protocol = htons(ETH_P_IP);
	to->sll_halen = RTE_ETHER_ADDR_LEN;
	memcpy(to->sll_addr, o->frame.dst_mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	return fd;
fail:
	close(fd);
	return -1;
}

struct flood_result {
	uint64_t sent, errors, ns;
	bool failed; /* stopped by an error other than a full device */
};

/*
 * Send until the duration, the count or a signal. Pacing: a token bucket
 * refilled by the clock each round, so the average holds at --rate and a
 * batch never runs ahead of it by more than its own size.
 */
static void flood(const struct synflood_opts *o, int fd, struct sockaddr_ll *to, uint64_t *rng,
		  struct flood_result *res)
{
	static uint8_t frames[SYNFLOOD_BATCH_MAX][SYNFLOOD_FRAME_LEN];
	static struct iovec iov[SYNFLOOD_BATCH_MAX];
	static struct mmsghdr msgs[SYNFLOOD_BATCH_MAX];
	uint64_t start = mono_ns(), now = start, attempted = 0;
	uint64_t end = o->duration_s > 0 ? start + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;

	for (unsigned i = 0; i < o->batch; i++) {
		iov[i].iov_base = frames[i];
		msgs[i].msg_hdr = (struct msghdr){.msg_name = to,
						  .msg_namelen = sizeof(*to),
						  .msg_iov = &iov[i],
						  .msg_iovlen = 1};
	}
	while (!stop_requested && now < end && (!o->count || attempted < o->count)) {
		uint64_t n = o->batch;
		int r;

		if (o->count && o->count - attempted < n)
			n = o->count - attempted;
		if (o->rate_pps) {
			uint64_t due =
			    (uint64_t)((double)(now - start) * (double)o->rate_pps / 1e9);

			if (due <= attempted) { /* ahead: sleep until the next frame is due */
				uint64_t wait = 1000000000ull / o->rate_pps + 1;
				struct timespec ts = {0, (long)(wait < 1000000 ? wait : 1000000)};

				nanosleep(&ts, NULL);
				now = mono_ns();
				continue;
			}
			if (due - attempted < n)
				n = due - attempted;
		}
		for (unsigned i = 0; i < n; i++)
			iov[i].iov_len =
			    synflood_build(frames[i], SYNFLOOD_FRAME_LEN, &o->frame, rng);
		r = sendmmsg(fd, msgs, (unsigned)n, 0);
		if (r > 0) {
			res->sent += (uint64_t)r;
			attempted += (uint64_t)r;
		} else if (errno == ENOBUFS || errno == EAGAIN || errno == ENOMEM) {
			res->errors++; /* the device refused one: counted as tried, as a sender
					  would */
			attempted++;
		} else if (errno != EINTR) {
			fprintf(stderr, "lunar-synflood: sendmmsg on %s: %s\n", o->ifname,
				strerror(errno));
			res->failed = true;
			break;
		}
		now = mono_ns();
	}
	res->ns = mono_ns() - start;
}

int main(int argc, char **argv)
{
	struct synflood_opts o;
	struct sockaddr_ll to;
	struct flood_result res = {0};
	char err[256];
	uint64_t rng;
	double secs;
	int rc, fd;

	rc = synflood_parse_args(argc, argv, &o, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc) {
		fprintf(stderr, "lunar-synflood: %s\n", err);
		return 2;
	}
	rng = synflood_rng_seed(o.seed ? o.seed : mono_ns());
	if (o.pcap)
		return write_pcap(&o, &rng);
	fd = open_socket(&o, &to);
	if (fd < 0)
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!o.quiet)
		printf("synflood: %s -> %u.%u.%u.%u:%u from %u.%u.%u.%u/%u, %s\n", o.ifname,
		       o.frame.dst_ip >> 24, (o.frame.dst_ip >> 16) & 255,
		       (o.frame.dst_ip >> 8) & 255, o.frame.dst_ip & 255, o.frame.dst_port,
		       o.frame.src_net >> 24, (o.frame.src_net >> 16) & 255,
		       (o.frame.src_net >> 8) & 255, o.frame.src_net & 255, o.frame.src_prefix,
		       o.rate_pps ? "paced" : "as fast as the kernel takes them");
	fflush(stdout);
	flood(&o, fd, &to, &rng, &res);
	close(fd);
	secs = (double)res.ns / 1e9;
	printf("synflood: sent %llu frames in %.2f s: %.0f pps, %llu send errors\n",
	       (unsigned long long)res.sent, secs, secs > 0 ? (double)res.sent / secs : 0.0,
	       (unsigned long long)res.errors);
	return res.failed;
}
