/* icmp.c - ICMP message parse and emit (see icmp.h). */
#include "wire/icmp.h"

#include <assert.h>
#include <string.h>

#include "wire/checksum.h"

static_assert(sizeof(struct rte_icmp_hdr) == ICMP_HDR_LEN, "DPDK ICMP header layout");

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
