/* eth.c - Ethernet II header parse and emit (see eth.h). */
#include "wire/eth.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

static_assert(sizeof(struct rte_ether_hdr) == ETH_HDR_LEN, "DPDK Ethernet header layout");

/*
 * A tag EtherType (IEEE 802.1Q, 802.1ad and the pre-standard QinQ values)
 * means the real EtherType sits 4 bytes further on; lunar runs on untagged
 * ports only, so a tagged frame is dropped rather than misread.
 */
static bool eth_is_vlan_tag(uint16_t ethertype)
{
	switch (ethertype) {
	case RTE_ETHER_TYPE_VLAN:
	case RTE_ETHER_TYPE_QINQ:
	case RTE_ETHER_TYPE_QINQ1:
	case RTE_ETHER_TYPE_QINQ2:
	case RTE_ETHER_TYPE_QINQ3:
		return true;
	default:
		return false;
	}
}

enum lunar_drop eth_parse(const uint8_t *buf, size_t len, struct eth_repr *out)
{
	struct rte_ether_hdr h;

	if (len < ETH_HDR_LEN)
		return LUNAR_DROP_ETH_SHORT;
	/* Copy out: rte_ether_hdr is 2-byte aligned and @buf may not be. */
	memcpy(&h, buf, ETH_HDR_LEN);
	out->dst = h.dst_addr;
	out->src = h.src_addr;
	out->ethertype = rte_be_to_cpu_16(h.ether_type);
	if (eth_is_vlan_tag(out->ethertype))
		return LUNAR_DROP_ETH_VLAN;
	out->payload = buf + ETH_HDR_LEN;
	out->payload_len = len - ETH_HDR_LEN;
	return LUNAR_DROP_NONE;
}

size_t eth_emit(uint8_t *buf, size_t cap, const struct rte_ether_addr *dst,
		const struct rte_ether_addr *src, uint16_t ethertype)
{
	struct rte_ether_hdr h;

	if (cap < ETH_HDR_LEN)
		return 0;
	h.dst_addr = *dst;
	h.src_addr = *src;
	h.ether_type = rte_cpu_to_be_16(ethertype);
	memcpy(buf, &h, ETH_HDR_LEN);
	return ETH_HDR_LEN;
}
