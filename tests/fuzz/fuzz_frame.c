/*
 * fuzz_frame.c - libFuzzer target for the whole receive chain, as the net
 * layer runs it: eth_parse -> arp_parse, or ipv4_parse -> icmp_parse /
 * udp_parse / tcp_parse on the IPv4 payload with the IPv4 addresses.
 * Input: flags byte (FUZZ_F_*), Ethernet frame. FUZZ_F_FIXUP repairs the
 * IPv4 and L4 checksums first, so the upper layers are reached with
 * verification on. Invariant: every layer's payload lies inside its
 * parent's, and the parse outcome is one of that layer's drop reasons.
 */
#include "fuzz_common.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/udp.h"

/* Repair IPv4 and L4 checksums in place, where the headers allow it. */
static void fix_frame(uint8_t *f, size_t len)
{
	uint8_t *ip = f + ETH_HDR_LEN, *l4;
	size_t iplen, hl, total;
	uint32_t src, dst;

	if (len < ETH_HDR_LEN + IPV4_HDR_LEN || f[12] != 0x08 || f[13] != 0x00)
		return;
	iplen = len - ETH_HDR_LEN;
	hl = (size_t)(ip[0] & 0x0f) * 4;
	total = (size_t)ip[2] << 8 | ip[3];
	if (hl < IPV4_HDR_LEN || hl > iplen || total < hl || total > iplen)
		return;
	fuzz_fix_ipv4(ip, iplen);
	src = (uint32_t)ip[12] << 24 | (uint32_t)ip[13] << 16 | (uint32_t)ip[14] << 8 | ip[15];
	dst = (uint32_t)ip[16] << 24 | (uint32_t)ip[17] << 16 | (uint32_t)ip[18] << 8 | ip[19];
	l4 = ip + hl;
	switch (ip[9]) {
	case IPPROTO_ICMP:
		fuzz_fix_icmp(l4, total - hl);
		break;
	case IPPROTO_UDP:
		fuzz_fix_udp(l4, total - hl, src, dst);
		break;
	case IPPROTO_TCP:
		fuzz_fix_tcp(l4, total - hl, src, dst);
		break;
	default:
		break;
	}
}

static void run_l4(const struct ipv4_repr *ip, bool verify)
{
	enum lunar_drop why;

	switch (ip->proto) {
	case IPPROTO_ICMP: {
		struct icmp_repr r;

		why = icmp_parse(ip->payload, ip->payload_len, &r);
		FUZZ_CHECK(why == LUNAR_DROP_NONE || why == LUNAR_DROP_ICMP_SHORT ||
			   why == LUNAR_DROP_ICMP_BAD_CHECKSUM);
		if (why == LUNAR_DROP_NONE)
			FUZZ_CHECK(fuzz_inside(ip->payload, ip->payload_len, r.data, r.data_len));
		break;
	}
	case IPPROTO_UDP: {
		struct udp_repr r;

		why = udp_parse(ip->payload, ip->payload_len, ip->src, ip->dst, verify, &r);
		FUZZ_CHECK(why == LUNAR_DROP_NONE || why == LUNAR_DROP_UDP_SHORT ||
			   why == LUNAR_DROP_UDP_BAD_LEN || why == LUNAR_DROP_UDP_BAD_CHECKSUM);
		if (why == LUNAR_DROP_NONE)
			FUZZ_CHECK(
			    fuzz_inside(ip->payload, ip->payload_len, r.payload, r.payload_len));
		break;
	}
	case IPPROTO_TCP: {
		struct tcp_repr r;

		why = tcp_parse(ip->payload, ip->payload_len, ip->src, ip->dst, verify, &r);
		FUZZ_CHECK(why == LUNAR_DROP_NONE || why == LUNAR_DROP_TCP_SHORT ||
			   why == LUNAR_DROP_TCP_BAD_OFFSET || why == LUNAR_DROP_TCP_BAD_CHECKSUM ||
			   why == LUNAR_DROP_TCP_BAD_OPTION);
		if (why == LUNAR_DROP_NONE)
			FUZZ_CHECK(
			    fuzz_inside(ip->payload, ip->payload_len, r.payload, r.payload_len));
		break;
	}
	default:
		break; /* IP_UNKNOWN_PROTO: net/'s call */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct eth_repr eth;
	bool verify;

	if (!fuzz_input_init(&in, data, size, false))
		return 0;
	verify = in.flags & FUZZ_F_VERIFY;
	if (in.flags & FUZZ_F_FIXUP)
		fix_frame(in.pkt, in.len);
	if (eth_parse(in.pkt, in.len, &eth) != LUNAR_DROP_NONE)
		goto out;
	FUZZ_CHECK(fuzz_inside(in.pkt, in.len, eth.payload, eth.payload_len));

	if (eth.ethertype == RTE_ETHER_TYPE_ARP) {
		struct arp_repr arp;

		(void)arp_parse(eth.payload, eth.payload_len, &arp);
	} else if (eth.ethertype == RTE_ETHER_TYPE_IPV4) {
		struct ipv4_repr ip;
		enum lunar_drop why = ipv4_parse(eth.payload, eth.payload_len, verify, &ip);

		if (why == LUNAR_DROP_NONE) {
			FUZZ_CHECK(
			    fuzz_inside(eth.payload, eth.payload_len, ip.payload, ip.payload_len));
			run_l4(&ip, verify);
		}
	}
out:
	fuzz_input_free(&in);
	return 0;
}
