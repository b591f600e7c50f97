/* tcp.c - TCP header and option parse and emit (see tcp.h). */
#include "wire/tcp.h"

#include <assert.h>
#include <netinet/in.h>
#include <string.h>

#include "wire/checksum.h"

static_assert(sizeof(struct rte_tcp_hdr) == TCP_HDR_LEN, "DPDK TCP header layout");

/* Options are not aligned: read multi-byte fields a byte at a time. */
static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint8_t *put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static uint8_t *put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

/*
 * RFC 9293 3.1: options are EOL, NOP, or kind, length, data where length
 * counts kind and length octets. A receiver must skip options it does not
 * know (MUST-6) and be prepared for illegal lengths such as zero (MUST-7):
 * a length < 2 or past the header leaves no way to find the next option,
 * and a known option with a length other than its fixed one cannot be
 * decoded, so both drop the segment.
 */
static enum lunar_drop tcp_parse_options(const uint8_t *opt, size_t len, struct tcp_options *o)
{
	size_t i = 0;

	memset(o, 0, sizeof(*o));
	/*
	 * Every segment of an established connection with timestamps carries
	 * exactly NOP, NOP, TS (RFC 7323 appendix A's layout): read it at
	 * once, as Linux's tcp_parse_aligned_timestamp() does. The loop below
	 * gives the same for it.
	 */
	if (len == 12 && opt[0] == TCP_OPT_NOP && opt[1] == TCP_OPT_NOP && opt[2] == TCP_OPT_TS &&
	    opt[3] == 10) {
		o->has_ts = true;
		o->ts_val = get_be32(opt + 4);
		o->ts_ecr = get_be32(opt + 8);
		return LUNAR_DROP_NONE;
	}
	while (i < len) {
		uint8_t kind = opt[i];
		const uint8_t *d;
		uint8_t olen;

		if (kind == TCP_OPT_EOL)
			break;
		if (kind == TCP_OPT_NOP) {
			i++;
			continue;
		}
		if (len - i < 2)
			return LUNAR_DROP_TCP_BAD_OPTION; /* no room for the length octet */
		olen = opt[i + 1];
		if (olen < 2 || olen > len - i)
			return LUNAR_DROP_TCP_BAD_OPTION;
		d = opt + i + 2;
		switch (kind) {
		case TCP_OPT_MSS: /* RFC 9293 3.2: kind 2, length 4, 16-bit MSS */
			if (olen != 4)
				return LUNAR_DROP_TCP_BAD_OPTION;
			o->has_mss = true;
			o->mss = get_be16(d);
			break;
		case TCP_OPT_WS: /* RFC 7323 2.2: kind 3, length 3, shift count */
			if (olen != 3)
				return LUNAR_DROP_TCP_BAD_OPTION;
			o->has_wscale = true;
			/* RFC 7323 2.3: a shift above 14 MUST be treated as 14. */
			o->wscale = d[0] > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : d[0];
			break;
		case TCP_OPT_SACK_PERM: /* RFC 2018 2: kind 4, length 2 */
			if (olen != 2)
				return LUNAR_DROP_TCP_BAD_OPTION;
			o->sack_permitted = true;
			break;
		case TCP_OPT_SACK: /* RFC 2018 3: kind 5, length 2 + 8n, n = 1..4 */
			if (olen < 10 || (olen - 2) % 8 != 0)
				return LUNAR_DROP_TCP_BAD_OPTION;
			/* 40 option bytes cap n at 4; olen <= len - i enforced it. */
			o->sack_count = (uint8_t)((olen - 2) / 8);
			for (unsigned int b = 0; b < o->sack_count; b++) {
				o->sack[b].left = get_be32(d + 8 * b);
				o->sack[b].right = get_be32(d + 8 * b + 4);
			}
			break;
		case TCP_OPT_TS: /* RFC 7323 3.2: kind 8, length 10, TSval, TSecr */
			if (olen != 10)
				return LUNAR_DROP_TCP_BAD_OPTION;
			o->has_ts = true;
			o->ts_val = get_be32(d);
			o->ts_ecr = get_be32(d + 4);
			break;
		default:
			break; /* unknown: skipped (RFC 9293 3.1, MUST-6) */
		}
		i += olen;
	}
	return LUNAR_DROP_NONE;
}

enum lunar_drop tcp_parse(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst,
			  bool verify_csum, struct tcp_repr *out)
{
	/* rte_tcp_hdr is packed (alignment 1), so any @buf is fine. */
	const struct rte_tcp_hdr *h = (const struct rte_tcp_hdr *)buf;
	size_t hdr_len;
	enum lunar_drop why;

	if (len < TCP_HDR_LEN)
		return LUNAR_DROP_TCP_SHORT;
	/* RFC 9293 3.1: data offset counts 32-bit words, at least 5. */
	hdr_len = (size_t)(h->data_off >> 4) * 4;
	if (hdr_len < TCP_HDR_LEN || hdr_len > len)
		return LUNAR_DROP_TCP_BAD_OFFSET;
	/* RFC 9293 3.1 / 3.10.7: the checksum covers pseudo-header and segment. */
	if (verify_csum && inet_csum_l4(buf, len, src, dst, IPPROTO_TCP) != 0)
		return LUNAR_DROP_TCP_BAD_CHECKSUM;
	why = tcp_parse_options(buf + TCP_HDR_LEN, hdr_len - TCP_HDR_LEN, &out->opts);
	if (why != LUNAR_DROP_NONE)
		return why;
	out->sport = rte_be_to_cpu_16(h->src_port);
	out->dport = rte_be_to_cpu_16(h->dst_port);
	out->seq = rte_be_to_cpu_32(h->sent_seq);
	out->ack = rte_be_to_cpu_32(h->recv_ack);
	out->flags = h->tcp_flags;
	out->window = rte_be_to_cpu_16(h->rx_win);
	out->urg = rte_be_to_cpu_16(h->tcp_urp);
	out->hdr_len = (uint16_t)hdr_len;
	out->ecn = TCP_ECN_NOT_ECT; /* the caller knows the IP header */
	out->payload = buf + hdr_len;
	out->payload_len = len - hdr_len;
	return LUNAR_DROP_NONE;
}

/* How tcp_emit() lays out a given option set; see tcp_opts_plan(). */
struct tcp_opts_plan {
	bool aligned;	    /* NOP-padded so 32-bit fields sit on 4-byte boundaries */
	unsigned int nsack; /* SACK blocks that fit */
	size_t len;	    /* option bytes, padded to a multiple of 4 */
};

static size_t tcp_opts_aligned_len(const struct tcp_options *o, unsigned int nsack)
{
	size_t n = 0;

	n += o->has_mss ? 4 : 0;
	n += o->has_ts ? 12 : (o->sack_permitted ? 4 : 0); /* SACK-perm rides with TS */
	n += o->has_wscale ? 4 : 0;
	n += nsack ? 4 + 8 * nsack : 0;
	return n;
}

static size_t tcp_opts_packed_len(const struct tcp_options *o, unsigned int nsack)
{
	size_t n = 0;

	n += o->has_mss ? 4 : 0;
	n += o->sack_permitted ? 2 : 0;
	n += o->has_ts ? 10 : 0;
	n += o->has_wscale ? 3 : 0;
	n += nsack ? 2 + 8 * nsack : 0;
	return (n + 3) & ~(size_t)3;
}

/*
 * Prefer the NOP-aligned layout everyone sends; if it does not fit in the
 * 40 option bytes, pack the options without NOPs; only if even that does
 * not fit, leave out trailing SACK blocks (RFC 2018 3: send as many as
 * fit; with timestamps that is 3, NOP-aligned). Any option set
 * tcp_parse() returned fits packed, so parse -> emit -> parse is lossless.
 */
static struct tcp_opts_plan tcp_opts_plan(const struct tcp_options *o)
{
	struct tcp_opts_plan p = {.aligned = true, .nsack = 0, .len = 0};

	if (o == NULL)
		return p;
	p.nsack = o->sack_count > TCP_MAX_SACK_BLOCKS ? TCP_MAX_SACK_BLOCKS : o->sack_count;
	for (;; p.nsack--) {
		p.aligned = true;
		p.len = tcp_opts_aligned_len(o, p.nsack);
		if (p.len <= TCP_OPT_MAX_LEN)
			return p;
		p.aligned = false;
		p.len = tcp_opts_packed_len(o, p.nsack);
		if (p.len <= TCP_OPT_MAX_LEN)
			return p;
		/* Never underflows: with no SACK blocks the aligned layout needs <= 20 bytes. */
	}
}

static uint8_t *tcp_put_sack(uint8_t *p, const struct tcp_options *o, unsigned int nsack)
{
	*p++ = TCP_OPT_SACK;
	*p++ = (uint8_t)(2 + 8 * nsack);
	for (unsigned int b = 0; b < nsack; b++) {
		p = put_be32(p, o->sack[b].left);
		p = put_be32(p, o->sack[b].right);
	}
	return p;
}

static uint8_t *tcp_put_ts(uint8_t *p, const struct tcp_options *o)
{
	*p++ = TCP_OPT_TS;
	*p++ = 10;
	p = put_be32(p, o->ts_val);
	return put_be32(p, o->ts_ecr);
}

static void tcp_write_options(uint8_t *p, const struct tcp_options *o,
			      const struct tcp_opts_plan *plan)
{
	uint8_t *end = p + plan->len;

	if (o->has_mss) {
		*p++ = TCP_OPT_MSS;
		*p++ = 4;
		p = put_be16(p, o->mss);
	}
	if (plan->aligned) {
		if (o->has_ts) {
			/* SACK-permitted fills the 2 bytes the TS option leaves. */
			*p++ = o->sack_permitted ? TCP_OPT_SACK_PERM : TCP_OPT_NOP;
			*p++ = o->sack_permitted ? 2 : TCP_OPT_NOP;
			p = tcp_put_ts(p, o);
		} else if (o->sack_permitted) {
			*p++ = TCP_OPT_NOP;
			*p++ = TCP_OPT_NOP;
			*p++ = TCP_OPT_SACK_PERM;
			*p++ = 2;
		}
		if (o->has_wscale) {
			*p++ = TCP_OPT_NOP;
			*p++ = TCP_OPT_WS;
			*p++ = 3;
			*p++ = o->wscale;
		}
		if (plan->nsack) {
			*p++ = TCP_OPT_NOP;
			*p++ = TCP_OPT_NOP;
			p = tcp_put_sack(p, o, plan->nsack);
		}
	} else {
		if (o->sack_permitted) {
			*p++ = TCP_OPT_SACK_PERM;
			*p++ = 2;
		}
		if (o->has_ts)
			p = tcp_put_ts(p, o);
		if (o->has_wscale) {
			*p++ = TCP_OPT_WS;
			*p++ = 3;
			*p++ = o->wscale;
		}
		if (plan->nsack)
			p = tcp_put_sack(p, o, plan->nsack);
	}
	/* RFC 9293 3.1: the header ends on a 32-bit boundary, padded with zeros (EOL). */
	memset(p, TCP_OPT_EOL, (size_t)(end - p));
}

size_t tcp_hdr_len(const struct tcp_options *opts)
{
	return TCP_HDR_LEN + tcp_opts_plan(opts).len;
}

void tcp_fill_csum(uint8_t *buf, size_t len, uint32_t src, uint32_t dst)
{
	struct rte_tcp_hdr *h = (struct rte_tcp_hdr *)buf;

	h->cksum = 0;
	h->cksum = inet_csum_l4(buf, len, src, dst, IPPROTO_TCP);
}

size_t tcp_emit(uint8_t *buf, size_t cap, const struct tcp_repr *r, const struct tcp_options *opts,
		uint32_t src, uint32_t dst, bool fill_csum)
{
	struct rte_tcp_hdr *h = (struct rte_tcp_hdr *)buf;
	struct tcp_opts_plan plan = tcp_opts_plan(opts);
	size_t hdr_len = TCP_HDR_LEN + plan.len;

	/* The segment must fit in an IPv4 packet (20-byte IP header, no options). */
	if (r->payload_len > UINT16_MAX - 20 - hdr_len)
		return 0;
	if (cap < hdr_len + (fill_csum ? r->payload_len : 0))
		return 0;
	h->src_port = rte_cpu_to_be_16(r->sport);
	h->dst_port = rte_cpu_to_be_16(r->dport);
	h->sent_seq = rte_cpu_to_be_32(r->seq);
	h->recv_ack = rte_cpu_to_be_32(r->ack);
	h->data_off = (uint8_t)((hdr_len / 4) << 4); /* reserved bits zero */
	h->tcp_flags = r->flags;
	h->rx_win = rte_cpu_to_be_16(r->window);
	h->cksum = 0;
	h->tcp_urp = rte_cpu_to_be_16(r->urg);
	if (plan.len)
		tcp_write_options(buf + TCP_HDR_LEN, opts, &plan);
	if (fill_csum)
		tcp_fill_csum(buf, hdr_len + r->payload_len, src, dst);
	return hdr_len;
}
