/*
 * synflood.c - the SYN flood generator's options and frames (synflood.h).
 * Frames are written with lunar's own emitters (wire/eth, wire/ipv4,
 * wire/tcp), so their checksums are the ones lunar checks on receive.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synflood.h"

#include "base/log.h"
#include "loop/options.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

/* A Linux client's SYN: its MSS on a 1500-byte link, its default shift and window. */
#define DEFAULT_MSS    1460
#define DEFAULT_WSCALE 7
#define SYN_WINDOW     64240

/* Without --duration or --count a flood still ends. */
#define DEFAULT_DURATION_S 10.0
#define DEFAULT_BATCH	   64

void synflood_usage(FILE *f)
{
	fputs("usage: lunar-synflood --interface IF --dst-mac MAC --dst IP:PORT --src-net CIDR\n"
	      "                      [--duration S | --count N] [--rate PPS] [options]\n"
	      "       lunar-synflood --pcap FILE --count N --dst IP:PORT --src-net CIDR [options]\n"
	      "Sends TCP SYNs from random (spoofed) addresses of CIDR, random ports and ISNs,\n"
	      "with MSS, SACK-permitted, timestamps and window scale, to IP:PORT through an\n"
	      "AF_PACKET socket on IF (needs CAP_NET_RAW), as fast as the kernel takes them or\n"
	      "at --rate, and prints the rate achieved.\n"
	      "  --interface IF      send on this interface (frames go out as they are)\n"
	      "  --dst-mac MAC       the next hop's MAC (the router's, or the target's on a link)\n"
	      "  --src-mac MAC       the frames' source MAC (default: IF's)\n"
	      "  --dst IP:PORT       the target, e.g. 10.78.2.2:8080\n"
	      "  --src-net CIDR      spoofed sources, e.g. 10.99.0.0/16 (route their replies "
	      "nowhere)\n"
	      "  --duration S        stop after S seconds (default 10 unless --count)\n"
	      "  --count N           stop after N frames\n"
	      "  --rate PPS          at most PPS frames a second (default 0: no limit)\n"
	      "  --batch N           frames per sendmmsg() call, 1..1024 (default 64)\n"
	      "  --mss N             the MSS option's value, 88..65535 (default 1460)\n"
	      "  --wscale N          the window scale option's shift, 0..14 (default 7)\n"
	      "  --seed N            random sequence seed (default: from the clock)\n"
	      "  --pcap FILE         write the frames to a pcap file instead of sending (needs "
	      "--count)\n"
	      "  --quiet             print only the final line\n",
	      f);
}

enum {
	OPT_INTERFACE = 256,
	OPT_DST_MAC,
	OPT_SRC_MAC,
	OPT_DST,
	OPT_SRC_NET,
	OPT_DURATION,
	OPT_COUNT,
	OPT_RATE,
	OPT_BATCH,
	OPT_MSS,
	OPT_WSCALE,
	OPT_SEED,
	OPT_PCAP,
	OPT_QUIET,
};

static int parse_mac(const char *name, const char *s, struct rte_ether_addr *out, char *err,
		     size_t errlen)
{
	unsigned b[RTE_ETHER_ADDR_LEN];
	int used = 0;
	bool shape = strlen(s) == 17; /* hh:hh:hh:hh:hh:hh: %x alone takes signs and spaces */

	for (int i = 0; shape && i < 17; i++)
		shape = i % 3 == 2 ? s[i] == ':' : isxdigit((unsigned char)s[i]);
	if (!shape ||
	    sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &used) != 6 ||
	    s[used]) {
		lunar_set_err(err, errlen,
			      "--%s %s: expected a MAC address as six hex pairs, e.g. "
			      "02:00:00:00:00:01 (ip link show IF prints it)",
			      name, s);
		return -EINVAL;
	}
	for (int i = 0; i < RTE_ETHER_ADDR_LEN; i++)
		out->addr_bytes[i] = (uint8_t)b[i];
	return 0;
}

static int parse_dst(const char *s, struct synflood_frame *f, char *err, size_t errlen)
{
	char buf[64];
	char *colon;
	unsigned long port;

	if (strlen(s) >= sizeof(buf) || !(colon = strchr(strcpy(buf, s), ':')))
		goto bad;
	*colon = '\0';
	if (parse_ipv4(buf, &f->dst_ip) ||
	    parse_uint_opt("dst", colon + 1, 1, 65535, &port, err, errlen))
		goto bad;
	f->dst_port = (uint16_t)port;
	return 0;
bad:
	lunar_set_err(err, errlen,
		      "--dst %s: expected IPv4:PORT with a port 1..65535, e.g. "
		      "10.78.2.2:8080",
		      s);
	return -EINVAL;
}

static int parse_src_net(const char *s, struct synflood_frame *f, char *err, size_t errlen)
{
	char buf[64];
	char *slash;
	unsigned long prefix;
	uint32_t addr, mask;

	if (strlen(s) >= sizeof(buf) || !(slash = strchr(strcpy(buf, s), '/')))
		goto bad;
	*slash = '\0';
	if (parse_ipv4(buf, &addr) ||
	    parse_uint_opt("src-net", slash + 1, 0, 32, &prefix, err, errlen))
		goto bad;
	mask = prefix ? ~UINT32_C(0) << (32 - prefix) : 0;
	if (addr & ~mask) {
		lunar_set_err(err, errlen,
			      "--src-net %s: the address has host bits set for /%lu; write the "
			      "subnet's own address, e.g. 10.99.0.0/16",
			      s, prefix);
		return -EINVAL;
	}
	f->src_net = addr;
	f->src_prefix = (uint8_t)prefix;
	return 0;
bad:
	lunar_set_err(err, errlen,
		      "--src-net %s: expected an IPv4 subnet as ADDRESS/PREFIX "
		      "(prefix 0..32), e.g. 10.99.0.0/16",
		      s);
	return -EINVAL;
}

/* The options that need each other, once all are read. */
static int check_opts(struct synflood_opts *o, bool have_duration, bool have_dst, bool have_src_net,
		      char *err, size_t errlen)
{
	if (!have_dst) {
		lunar_set_err(err, errlen,
			      "--dst IP:PORT is required: the target, e.g. "
			      "--dst 10.78.2.2:8080");
		return -EINVAL;
	}
	if (!have_src_net) {
		lunar_set_err(err, errlen,
			      "--src-net CIDR is required: the spoofed sources, e.g. "
			      "--src-net 10.99.0.0/16");
		return -EINVAL;
	}
	if (!o->ifname == !o->pcap) {
		lunar_set_err(err, errlen,
			      "give exactly one of --interface IF (send) and --pcap FILE "
			      "(write the frames to a file)");
		return -EINVAL;
	}
	if (o->ifname && !o->have_dst_mac) {
		lunar_set_err(err, errlen,
			      "--interface needs --dst-mac MAC: the next hop's, e.g. the "
			      "router's (ip -br link show DEV in its namespace)");
		return -EINVAL;
	}
	if (o->pcap && (!o->count || o->count > SYNFLOOD_PCAP_MAX || have_duration)) {
		lunar_set_err(err, errlen,
			      "--pcap needs --count N (1..%u) and no --duration: the "
			      "file holds exactly N frames",
			      SYNFLOOD_PCAP_MAX);
		return -EINVAL;
	}
	if (o->ifname && have_duration && o->duration_s == 0 && !o->count) {
		lunar_set_err(err, errlen,
			      "--duration 0 would never stop; give --count N, or seconds "
			      "above 0");
		return -EINVAL;
	}
	if (o->ifname && !have_duration && !o->count)
		o->duration_s = DEFAULT_DURATION_S;
	return 0;
}

int synflood_parse_args(int argc, char **argv, struct synflood_opts *o, char *err, size_t errlen)
{
	static const struct option longopts[] = {
	    {"interface", required_argument, NULL, OPT_INTERFACE},
	    {"dst-mac", required_argument, NULL, OPT_DST_MAC},
	    {"src-mac", required_argument, NULL, OPT_SRC_MAC},
	    {"dst", required_argument, NULL, OPT_DST},
	    {"src-net", required_argument, NULL, OPT_SRC_NET},
	    {"duration", required_argument, NULL, OPT_DURATION},
	    {"count", required_argument, NULL, OPT_COUNT},
	    {"rate", required_argument, NULL, OPT_RATE},
	    {"batch", required_argument, NULL, OPT_BATCH},
	    {"mss", required_argument, NULL, OPT_MSS},
	    {"wscale", required_argument, NULL, OPT_WSCALE},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"pcap", required_argument, NULL, OPT_PCAP},
	    {"quiet", no_argument, NULL, OPT_QUIET},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool have_duration = false, have_dst = false, have_src_net = false;
	unsigned long v;
	int opt, rc = 0;

	memset(o, 0, sizeof(*o));
	o->batch = DEFAULT_BATCH;
	o->frame.mss = DEFAULT_MSS;
	o->frame.wscale = DEFAULT_WSCALE;
	optind = 0; /* glibc: start over (the tests parse several command lines) */
	opterr = 0;
	while (rc == 0 && (opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_INTERFACE:
			o->ifname = optarg;
			break;
		case OPT_PCAP:
			o->pcap = optarg;
			break;
		case OPT_DST_MAC:
			rc = parse_mac("dst-mac", optarg, &o->frame.dst_mac, err, errlen);
			o->have_dst_mac = true;
			break;
		case OPT_SRC_MAC:
			rc = parse_mac("src-mac", optarg, &o->frame.src_mac, err, errlen);
			o->have_src_mac = true;
			break;
		case OPT_DST:
			rc = parse_dst(optarg, &o->frame, err, errlen);
			have_dst = true;
			break;
		case OPT_SRC_NET:
			rc = parse_src_net(optarg, &o->frame, err, errlen);
			have_src_net = true;
			break;
		case OPT_DURATION:
			rc = parse_seconds_opt("duration", optarg, 86400, &o->duration_s, err,
					       errlen);
			have_duration = true;
			break;
		case OPT_COUNT:
			rc = parse_uint_opt("count", optarg, 1, (unsigned long)1e12, &v, err,
					    errlen);
			o->count = v;
			break;
		case OPT_RATE:
			rc = parse_uint_opt("rate", optarg, 0, 100000000, &v, err, errlen);
			o->rate_pps = v;
			break;
		case OPT_BATCH:
			rc =
			    parse_uint_opt("batch", optarg, 1, SYNFLOOD_BATCH_MAX, &v, err, errlen);
			o->batch = (unsigned)v;
			break;
		/* 88: RFC 9293 3.7.1's smallest IPv4 MSS is 536; 88 is Linux's floor */
		case OPT_MSS:
			rc = parse_uint_opt("mss", optarg, 88, 65535, &v, err, errlen);
			o->frame.mss = (uint16_t)v;
			break;
		case OPT_WSCALE:
			rc = parse_uint_opt("wscale", optarg, 0, TCP_MAX_WSCALE, &v, err, errlen);
			o->frame.wscale = (uint8_t)v;
			break;
		case OPT_SEED:
			rc = parse_uint_opt("seed", optarg, 0, ~0ul, &v, err, errlen);
			o->seed = v;
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case 'h':
			synflood_usage(stdout);
			return 1;
		default:
			lunar_set_err(err, errlen,
				      "unknown option or missing value '%s' (try --help)",
				      argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (rc)
		return rc;
	if (optind < argc) {
		lunar_set_err(err, errlen,
			      "unexpected argument '%s': every setting is an option "
			      "(try --help)",
			      argv[optind]);
		return -EINVAL;
	}
	return check_opts(o, have_duration, have_dst, have_src_net, err, errlen);
}

uint64_t synflood_rng_seed(uint64_t seed)
{
	/* splitmix64 of the seed: nearby seeds give unrelated sequences, and never 0 */
	uint64_t z = seed + UINT64_C(0x9E3779B97F4A7C15);

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	z ^= z >> 31;
	return z ? z : 1;
}

uint32_t synflood_rand_src(const struct synflood_frame *f, uint64_t *rng)
{
	uint32_t host_mask = f->src_prefix ? ~(~UINT32_C(0) << (32 - f->src_prefix)) : ~UINT32_C(0);
	uint32_t host;

	if (f->src_prefix == 32)
		return f->src_net;
	do
		host = (uint32_t)(synflood_rand(rng) >> 32) & host_mask;
	while (f->src_prefix <= 30 && (host == 0 || host == host_mask));
	return f->src_net | host;
}

size_t synflood_build(uint8_t *buf, size_t cap, const struct synflood_frame *f, uint64_t *rng)
{
	uint64_t r1 = synflood_rand(rng), r2 = synflood_rand(rng);
	struct tcp_options opts = {
	    .has_mss = true,
	    .mss = f->mss,
	    .sack_permitted = true,
	    .has_ts = true,
	    .ts_val = (uint32_t)r2,
	    .has_wscale = true,
	    .wscale = f->wscale,
	};
	struct tcp_repr tr = {
	    .sport = (uint16_t)(1024 + (r1 >> 48) % (65536 - 1024)), /* outside the well-known */
	    .dport = f->dst_port,
	    .seq = (uint32_t)r1,
	    .flags = RTE_TCP_SYN_FLAG,
	    .window = SYN_WINDOW,
	};
	struct ipv4_repr ir = {
	    .src = synflood_rand_src(f, rng),
	    .dst = f->dst_ip,
	    .proto = IPPROTO_TCP,
	    .ttl = 64,
	    .id = (uint16_t)(r2 >> 32),
	    .df = true,
	};
	uint8_t *ip = buf + ETH_HDR_LEN, *tcp = ip + IPV4_HDR_LEN;
	size_t tcp_len;

	if (cap < SYNFLOOD_FRAME_LEN)
		return 0;
	tcp_len = tcp_emit(tcp, cap - ETH_HDR_LEN - IPV4_HDR_LEN, &tr, &opts, ir.src, ir.dst, true);
	ir.payload_len = tcp_len;
	if (!tcp_len || !ipv4_emit(ip, cap - ETH_HDR_LEN, &ir, true) ||
	    !eth_emit(buf, cap, &f->dst_mac, &f->src_mac, RTE_ETHER_TYPE_IPV4))
		return 0;
	return ETH_HDR_LEN + IPV4_HDR_LEN + tcp_len;
}
