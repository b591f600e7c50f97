/* udp.c - UDP header parse and emit (see udp.h). */
#include "wire/udp.h"

#include <assert.h>
#include <netinet/in.h>

#include "wire/checksum.h"

static_assert(sizeof(struct rte_udp_hdr) == UDP_HDR_LEN, "DPDK UDP header layout");

enum lunar_drop udp_parse(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst,
			  bool verify_csum, struct udp_repr *out)
{
	/* rte_udp_hdr is packed (alignment 1), so any @buf is fine. */
	const struct rte_udp_hdr *h = (const struct rte_udp_hdr *)buf;
	size_t ulen;

	if (len < UDP_HDR_LEN)
		return LUNAR_DROP_UDP_SHORT;
	/* RFC 768: length counts header and data, so at least 8. */
	ulen = rte_be_to_cpu_16(h->dgram_len);
	if (ulen < UDP_HDR_LEN || ulen > len)
		return LUNAR_DROP_UDP_BAD_LEN;
	/*
	 * RFC 768: an all-zero checksum field means none was sent; RFC 1122
	 * 4.1.3.4 then requires the datagram be accepted. A computed 0 is
	 * sent as 0xffff, which the sum below accepts like any other value.
	 */
	if (verify_csum && h->dgram_cksum != 0 &&
	    inet_csum_l4(buf, ulen, src, dst, IPPROTO_UDP) != 0)
		return LUNAR_DROP_UDP_BAD_CHECKSUM;
	out->sport = rte_be_to_cpu_16(h->src_port);
	out->dport = rte_be_to_cpu_16(h->dst_port);
	out->payload = buf + UDP_HDR_LEN;
	out->payload_len = ulen - UDP_HDR_LEN;
	return LUNAR_DROP_NONE;
}

void udp_fill_csum(uint8_t *buf, size_t len, uint32_t src, uint32_t dst)
{
	struct rte_udp_hdr *h = (struct rte_udp_hdr *)buf;
	uint16_t sum;

	h->dgram_cksum = 0;
	sum = inet_csum_l4(buf, len, src, dst, IPPROTO_UDP);
	/* RFC 768: a computed zero is transmitted as all ones. */
	h->dgram_cksum = sum == 0 ? 0xffff : sum;
}

size_t udp_emit(uint8_t *buf, size_t cap, const struct udp_repr *r, uint32_t src, uint32_t dst,
		bool fill_csum)
{
	struct rte_udp_hdr *h = (struct rte_udp_hdr *)buf;
	size_t ulen = UDP_HDR_LEN + r->payload_len;

	if (r->payload_len > UINT16_MAX - UDP_HDR_LEN)
		return 0;
	if (cap < (fill_csum ? ulen : UDP_HDR_LEN))
		return 0;
	h->src_port = rte_cpu_to_be_16(r->sport);
	h->dst_port = rte_cpu_to_be_16(r->dport);
	h->dgram_len = rte_cpu_to_be_16((uint16_t)ulen);
	h->dgram_cksum = 0;
	if (fill_csum)
		udp_fill_csum(buf, ulen, src, dst);
	return UDP_HDR_LEN;
}
