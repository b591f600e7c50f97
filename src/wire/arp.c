/* arp.c - Ethernet/IPv4 ARP parse and emit (see arp.h). */
#include "wire/arp.h"

#include <assert.h>
#include <string.h>

static_assert(sizeof(struct rte_arp_hdr) == ARP_PKT_LEN, "DPDK ARP header layout");

enum lunar_drop arp_parse(const uint8_t *buf, size_t len, struct arp_repr *out)
{
	struct rte_arp_hdr h;

	if (len < ARP_PKT_LEN)
		return LUNAR_DROP_ARP_SHORT;
	/* Copy out: rte_arp_hdr is 2-byte aligned and @buf may not be. */
	memcpy(&h, buf, ARP_PKT_LEN);

	/* RFC 826: only the Ethernet (hrd 1) / IPv4 (pro 0x0800) pairing. */
	if (h.arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    h.arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    h.arp_hlen != RTE_ETHER_ADDR_LEN || h.arp_plen != sizeof(uint32_t))
		return LUNAR_DROP_ARP_BAD_FORMAT;

	out->op = rte_be_to_cpu_16(h.arp_opcode);
	if (out->op != RTE_ARP_OP_REQUEST && out->op != RTE_ARP_OP_REPLY)
		return LUNAR_DROP_ARP_BAD_OP;

	/*
	 * The sender hardware address is what we would cache and send to;
	 * a group (multicast, which includes broadcast) or all-zero address
	 * can never be a station's own address (IEEE 802 I/G bit).
	 */
	out->sha = h.arp_data.arp_sha;
	if (rte_is_multicast_ether_addr(&out->sha) || rte_is_zero_ether_addr(&out->sha))
		return LUNAR_DROP_ARP_BAD_SENDER;

	out->tha = h.arp_data.arp_tha;
	out->spa = rte_be_to_cpu_32(h.arp_data.arp_sip);
	out->tpa = rte_be_to_cpu_32(h.arp_data.arp_tip);
	return LUNAR_DROP_NONE;
}

size_t arp_emit(uint8_t *buf, size_t cap, const struct arp_repr *r)
{
	struct rte_arp_hdr h;

	if (cap < ARP_PKT_LEN)
		return 0;
	h.arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	h.arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	h.arp_hlen = RTE_ETHER_ADDR_LEN;
	h.arp_plen = sizeof(uint32_t);
	h.arp_opcode = rte_cpu_to_be_16(r->op);
	h.arp_data.arp_sha = r->sha;
	h.arp_data.arp_sip = rte_cpu_to_be_32(r->spa);
	h.arp_data.arp_tha = r->tha;
	h.arp_data.arp_tip = rte_cpu_to_be_32(r->tpa);
	memcpy(buf, &h, ARP_PKT_LEN);
	return ARP_PKT_LEN;
}
