/* ipv4.c - IPv4 header parse and emit (see ipv4.h). */
#include "wire/ipv4.h"

#include <assert.h>
#include <string.h>

#include "wire/checksum.h"

static_assert(sizeof(struct rte_ipv4_hdr) == IPV4_HDR_LEN, "DPDK IPv4 header layout");

/*
 * Walk the options (RFC 791 3.1) and record which known ones are present.
 * Per RFC 1122 3.2.1.8 a host must accept options in any datagram and
 * ignore those it does not implement, but it must be able to tell where
 * each one ends: EOL ends the list, NOP is a single octet, and every
 * other option (known or not) is type, length, data with length >= 2 and
 * the whole option inside the header. Anything else is malformed; a
 * length we cannot trust means we cannot find the next option.
 * The contents of known options are not interpreted here (lunar neither
 * records routes nor honours source routes); net/ decides from opt_flags.
 */
static enum lunar_drop ipv4_walk_options(const uint8_t *opt, size_t len, uint8_t *flags)
{
	size_t i = 0;

	*flags = 0;
	while (i < len) {
		uint8_t type = opt[i];
		uint8_t olen;

		if (type == IPV4_OPT_TYPE_EOL)
			break;
		if (type == IPV4_OPT_TYPE_NOP) {
			i++;
			continue;
		}
		if (len - i < 2)
			return LUNAR_DROP_IP_BAD_OPTIONS; /* no room for the length octet */
		olen = opt[i + 1];
		if (olen < 2 || olen > len - i)
			return LUNAR_DROP_IP_BAD_OPTIONS;
		switch (type) {
		case IPV4_OPT_TYPE_RR:
			*flags |= IPV4_OPT_RR;
			break;
		case IPV4_OPT_TYPE_TS:
			*flags |= IPV4_OPT_TS;
			break;
		case IPV4_OPT_TYPE_LSRR:
			*flags |= IPV4_OPT_LSRR;
			break;
		case IPV4_OPT_TYPE_SSRR:
			*flags |= IPV4_OPT_SSRR;
			break;
		case IPV4_OPT_TYPE_RA:
			*flags |= IPV4_OPT_RA;
			break;
		default:
			*flags |= IPV4_OPT_OTHER;
			break;
		}
		i += olen;
	}
	return LUNAR_DROP_NONE;
}

/*
 * RFC 1122 3.2.1.3: a host must silently discard a datagram whose source
 * is not a unicast address of some host: limited broadcast (a), class D
 * multicast (RFC 1112 4) and loopback (g) "MUST NOT appear outside a host".
 * Deliberately accepted here:
 *  - 0.0.0.0 ("this host", RFC 1122 3.2.1.3 (a)): legal as a source while
 *    a host is booting (DHCP/BOOTP clients); whether to answer is net/'s call.
 *  - class E 240.0.0.0/4 other than 255.255.255.255: reserved, but not
 *    forbidden as a source by RFC 1122, and some private fabrics use it.
 *  - subnet-directed broadcasts: recognising them needs the netmask, so
 *    that check belongs to net/.
 */
static bool ipv4_src_is_bad(uint32_t src)
{
	if (src == 0xffffffffu)
		return true; /* limited broadcast */
	if ((src & 0xf0000000u) == 0xe0000000u)
		return true; /* 224.0.0.0/4 multicast */
	if ((src & 0xff000000u) == 0x7f000000u)
		return true; /* 127.0.0.0/8 loopback */
	return false;
}

enum lunar_drop ipv4_parse(const uint8_t *buf, size_t len, bool verify_csum, struct ipv4_repr *out)
{
	/* rte_ipv4_hdr is packed (alignment 1), so any @buf is fine. */
	const struct rte_ipv4_hdr *h = (const struct rte_ipv4_hdr *)buf;
	uint16_t frag;
	size_t hdr_len, total_len;
	enum lunar_drop why;

	if (len < IPV4_HDR_LEN)
		return LUNAR_DROP_IP_SHORT;
	/* RFC 791 3.1 / RFC 1122 3.2.1.1: silently discard if version != 4. */
	if ((h->version_ihl >> 4) != 4)
		return LUNAR_DROP_IP_BAD_VERSION;
	/* RFC 791 3.1: IHL counts 32-bit words; the minimum header is 5. */
	hdr_len = (size_t)(h->version_ihl & 0x0f) * 4;
	if (hdr_len < IPV4_HDR_LEN || hdr_len > len)
		return LUNAR_DROP_IP_BAD_IHL;
	/*
	 * RFC 791 3.1: total length covers header and data. Below the header
	 * is nonsense; beyond what we received means truncation. More bytes
	 * than total_len is Ethernet padding of short frames: not an error,
	 * just excluded from the payload.
	 */
	total_len = rte_be_to_cpu_16(h->total_length);
	if (total_len < hdr_len || total_len > len)
		return LUNAR_DROP_IP_BAD_TOTAL_LEN;
	/* RFC 1122 3.2.1.2: a host MUST verify the header checksum. */
	if (verify_csum && inet_csum(buf, hdr_len) != 0)
		return LUNAR_DROP_IP_BAD_CHECKSUM;
	why = ipv4_walk_options(buf + IPV4_HDR_LEN, hdr_len - IPV4_HDR_LEN, &out->opt_flags);
	if (why != LUNAR_DROP_NONE)
		return why;
	/* RFC 791 3.2: MF or a non-zero offset means a fragment; no reassembly. */
	frag = rte_be_to_cpu_16(h->fragment_offset);
	if (frag & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
		return LUNAR_DROP_IP_FRAGMENT;
	out->src = rte_be_to_cpu_32(h->src_addr);
	if (ipv4_src_is_bad(out->src))
		return LUNAR_DROP_IP_BAD_SRC;

	out->dst = rte_be_to_cpu_32(h->dst_addr);
	out->proto = h->next_proto_id;
	out->ttl = h->time_to_live;
	out->tos = h->type_of_service;
	out->id = rte_be_to_cpu_16(h->packet_id);
	out->df = (frag & RTE_IPV4_HDR_DF_FLAG) != 0;
	out->hdr_len = (uint16_t)hdr_len;
	out->total_len = (uint16_t)total_len;
	out->payload = buf + hdr_len;
	out->payload_len = total_len - hdr_len;
	return LUNAR_DROP_NONE;
}

size_t ipv4_emit(uint8_t *buf, size_t cap, const struct ipv4_repr *r, bool fill_csum)
{
	struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)buf;

	if (cap < IPV4_HDR_LEN || r->payload_len > UINT16_MAX - IPV4_HDR_LEN)
		return 0;
	h->version_ihl = RTE_IPV4_VHL_DEF; /* version 4, IHL 5 */
	h->type_of_service = r->tos;
	h->total_length = rte_cpu_to_be_16((uint16_t)(IPV4_HDR_LEN + r->payload_len));
	h->packet_id = rte_cpu_to_be_16(r->id);
	h->fragment_offset = rte_cpu_to_be_16(r->df ? RTE_IPV4_HDR_DF_FLAG : 0);
	h->time_to_live = r->ttl;
	h->next_proto_id = r->proto;
	h->hdr_checksum = 0;
	h->src_addr = rte_cpu_to_be_32(r->src);
	h->dst_addr = rte_cpu_to_be_32(r->dst);
	if (fill_csum)
		h->hdr_checksum = inet_csum(h, IPV4_HDR_LEN);
	return IPV4_HDR_LEN;
}
