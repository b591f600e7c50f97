// SPDX-License-Identifier: BSD-3-Clause
/*
 * lunar_xdp_pass.bpf.c - an XDP program that passes every frame, for the
 * kernel end of a veth whose other end runs lunar.
 *
 * Lunar's XDP program sends frames back out of the interface they came in
 * on (XDP_TX: the SYN-cookie responder, lunar_syncookie.bpf.h). A veth
 * queues such frames on its peer's ring, but it only wakes the peer to
 * take them when the peer has an XDP program of its own (Linux
 * drivers/net/veth.c, veth_xdp_flush()); without one they wait for other
 * traffic, or are lost once the ring is full. A NIC needs nothing of the
 * kind; on veth, scripts and tests attach this to the peer.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int lunar_xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
