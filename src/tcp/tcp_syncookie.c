/*
 * tcp_syncookie.c - making and checking SYN cookies (format in tcp_syncookie.h).
 */
#include "tcp/tcp_syncookie.h"

#include <string.h>

#include <sodium.h>

/*
 * MSS values a cookie can say, ascending: the RFC 9293 default, common
 * Internet and tunnel values, Ethernet's 1460, and the jumbo frames of a
 * datacenter (9000-byte MTU, with and without 12 bytes of timestamps).
 */
static const uint16_t mss_table[8] = {536, 1200, 1360, 1440, 1460, 4036, 8948, 8960};

#define WSCALE_NONE 15u
#define MAC_BITS    23
#define MAC_MASK    ((1u << MAC_BITS) - 1)

static uint32_t mac(const uint8_t *key, const struct tcp_4tuple *t, uint32_t peer_isn,
		    uint64_t slot, uint32_t opt_bits)
{
	struct {
		uint32_t laddr, raddr;
		uint16_t lport, rport;
		uint32_t peer_isn, opt_bits;
		uint64_t slot;
	} in;
	unsigned char out[crypto_shorthash_BYTES];
	uint32_t h;

	_Static_assert(TCP_SYNCOOKIE_KEY_BYTES == crypto_shorthash_KEYBYTES, "SipHash key");
	memset(&in, 0, sizeof(in)); /* no padding bytes of the stack's */
	in.laddr = t->laddr;
	in.raddr = t->raddr;
	in.lport = t->lport;
	in.rport = t->rport;
	in.peer_isn = peer_isn;
	in.opt_bits = opt_bits;
	in.slot = slot;
	crypto_shorthash(out, (const unsigned char *)&in, sizeof(in), key);
	memcpy(&h, out, sizeof(h));
	return h & MAC_MASK;
}

bool tcp_syncookie_ecn_setup(const struct tcp_repr *syn)
{
	const uint8_t both = RTE_TCP_ECE_FLAG | RTE_TCP_CWR_FLAG;

	return (syn->flags & both) == both;
}

uint32_t tcp_syncookie_make(const uint8_t *key, const struct tcp_4tuple *t,
			    const struct tcp_repr *syn, uint64_t now_ns)
{
	const struct tcp_options *o = &syn->opts;
	uint16_t mss = o->has_mss ? o->mss : 536; /* RFC 9293 3.7.1 default */
	uint32_t idx = 0, bits;

	for (uint32_t i = 0; i < 8; i++)
		if (mss_table[i] <= mss)
			idx = i;
	bits = idx << 6 | (o->has_wscale ? (o->wscale > 14 ? 14u : o->wscale) : WSCALE_NONE) << 2 |
	       (o->sack_permitted ? 2u : 0u) | (tcp_syncookie_ecn_setup(syn) ? 1u : 0u);
	return bits << MAC_BITS | mac(key, t, syn->seq, now_ns >> TCP_SYNCOOKIE_SLOT_SHIFT, bits);
}

bool tcp_syncookie_check(const uint8_t *key, const struct tcp_4tuple *t, const struct tcp_repr *ack,
			 uint64_t now_ns, struct tcp_syncookie_opts *out)
{
	uint32_t cookie = ack->ack - 1, peer_isn = ack->seq - 1;
	uint32_t bits = cookie >> MAC_BITS, want = cookie & MAC_MASK;
	uint64_t slot = now_ns >> TCP_SYNCOOKIE_SLOT_SHIFT;
	bool ok = mac(key, t, peer_isn, slot, bits) == want ||
		  (slot > 0 && mac(key, t, peer_isn, slot - 1, bits) == want);
	uint32_t ws = bits >> 2 & 0xf;

	if (!ok)
		return false;
	out->mss = mss_table[bits >> 6];
	out->has_wscale = ws != WSCALE_NONE;
	out->wscale = out->has_wscale ? (uint8_t)ws : 0;
	out->sack_permitted = bits & 2;
	out->ecn_setup = bits & 1;
	return true;
}
