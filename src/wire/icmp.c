/* icmp.c - ICMP message parse and emit, and an error's quote (see icmp.h). */
#include "wire/icmp.h"

#include <assert.h>
#include <string.h>

#include "wire/checksum.h"
#include "wire/ipv4.h"

static_assert(sizeof(struct rte_icmp_hdr) == ICMP_HDR_LEN, "DPDK ICMP header layout");

/* Big-endian 32 bits at any alignment. */
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

enum lunar_drop icmp_parse(const uint8_t *buf, size_t len, struct icmp_repr *out)
{
	/* rte_icmp_hdr is packed (alignment 1), so any @buf is fine. */
	const struct rte_icmp_hdr *h = (const struct rte_icmp_hdr *)buf;

	if (len < ICMP_HDR_LEN)
		return LUNAR_DROP_ICMP_SHORT;
	/* RFC 792: the checksum covers the ICMP message from the type field on. */
	if (inet_csum(buf, len) != 0)
		return LUNAR_DROP_ICMP_BAD_CHECKSUM;
	out->type = h->icmp_type;
	out->code = h->icmp_code;
	out->id = rte_be_to_cpu_16(h->icmp_ident);
	out->seq = rte_be_to_cpu_16(h->icmp_seq_nb);
	out->data = buf + ICMP_HDR_LEN;
	out->data_len = len - ICMP_HDR_LEN;
	return LUNAR_DROP_NONE;
}

size_t icmp_emit(uint8_t *buf, size_t cap, const struct icmp_repr *r)
{
	struct rte_icmp_hdr *h = (struct rte_icmp_hdr *)buf;

	if (cap < ICMP_HDR_LEN || r->data_len > cap - ICMP_HDR_LEN)
		return 0;
	if (r->data != NULL && r->data != buf + ICMP_HDR_LEN && r->data_len > 0)
		memmove(buf + ICMP_HDR_LEN, r->data, r->data_len);
	h->icmp_type = r->type;
	h->icmp_code = r->code;
	h->icmp_cksum = 0;
	h->icmp_ident = rte_cpu_to_be_16(r->id);
	h->icmp_seq_nb = rte_cpu_to_be_16(r->seq);
	h->icmp_cksum = inet_csum(buf, ICMP_HDR_LEN + r->data_len);
	return ICMP_HDR_LEN + r->data_len;
}

enum lunar_drop icmp_error_parse(const struct icmp_repr *r, struct icmp_quote *out)
{
	const uint8_t *q = r->data;
	size_t hlen;

	if (r->data_len < IPV4_HDR_LEN + ICMP_QUOTE_L4_LEN)
		return LUNAR_DROP_ICMP_QUOTE_SHORT;
	if (q[0] >> 4 != 4 || (q[0] & 0x0f) < 5)
		return LUNAR_DROP_ICMP_QUOTE_BAD_HDR;
	hlen = (size_t)(q[0] & 0x0f) * 4;
	if (r->data_len < hlen + ICMP_QUOTE_L4_LEN)
		return LUNAR_DROP_ICMP_QUOTE_SHORT;
	/* Fragment offset (13 bits of bytes 6..7): only the first fragment holds the ports. */
	if (((q[6] & 0x1f) | q[7]) != 0)
		return LUNAR_DROP_ICMP_QUOTE_BAD_HDR;
	out->type = r->type;
	out->code = r->code;
	/* RFC 1191 4: the next-hop MTU is the low half of the header's "unused" word. */
	out->mtu =
	    r->type == ICMP_TYPE_DEST_UNREACH && r->code == ICMP_CODE_FRAG_NEEDED ? r->seq : 0;
	out->total_len = (uint16_t)(q[2] << 8 | q[3]);
	out->proto = q[9];
	out->src = rd32(q + 12);
	out->dst = rd32(q + 16);
	out->l4 = q + hlen;
	out->l4_len = r->data_len - hlen;
	out->sport = (uint16_t)(out->l4[0] << 8 | out->l4[1]);
	out->dport = (uint16_t)(out->l4[2] << 8 | out->l4[3]);
	out->seq = rd32(out->l4 + 4);
	return LUNAR_DROP_NONE;
}
