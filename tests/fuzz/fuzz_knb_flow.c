/*
 * fuzz_knb_flow.c - libFuzzer target for knb's flow engine
 * (tools/knb/knb_flow.c): what one end of a knb connection does with
 * whatever the peer sends. Input: a role byte (bit 0: client; bit 1: the
 * meter is on; for a client the next four bytes give its flow kind,
 * message size and iodepth), then operations, one byte each with its
 * argument bytes: handshake bytes received (a length and those bytes),
 * handshake bytes sent, payload sent within the budget, payload received
 * (any amount: a hostile peer's), time passing.
 *
 * Invariants: a handshake call takes at most what it was given, and once
 * it refused (-1) the caller closes; the budget never lets a client send
 * more requests than its iodepth allows; responses never outnumber
 * requests; a server echoes no more than it received; only a handshake
 * that succeeded makes the flow ready, with a message size and iodepth
 * in range.
 */
#include <errno.h>
#include <string.h>

#include "fuzz_check.h"
#include "../../tools/knb/knb.h" /* knb_flow.c and knb_hist.c are compiled in */

/* The next input byte, or 0 past the end. */
static uint8_t next(const uint8_t *data, size_t size, size_t *at)
{
	return *at < size ? data[(*at)++] : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct knb_flow f; /* 8 KiB of issue times: off the stack */
	struct knb_meter m;
	size_t at = 0;
	uint64_t now = 1000000;
	bool client;

	if (size < 1)
		return 0;
	client = data[at] & 1;
	memset(&m, 0, sizeof(m));
	knb_hist_init(&m.hist);
	m.on = data[at++] & 2;
	if (client) {
		struct knb_flow_spec spec = {
		    .kind = (enum knb_flow_kind)(next(data, size, &at) % 3),
		    .msg_size = 1 + ((uint32_t)next(data, size, &at) << 8 | next(data, size, &at)),
		    .iodepth = 1 + next(data, size, &at) % 32};

		knb_flow_client(&f, &spec, 0, KNB_VERSION, &m);
	} else {
		knb_flow_server(&f, 0, 1, KNB_VERSION, &m);
	}
	while (at < size) {
		uint8_t op = next(data, size, &at);
		uint64_t budget, n;
		const uint8_t *p;
		int rc;

		switch (op % 5) {
		case 0: /* handshake bytes from the peer: a length, then that many */
			n = next(data, size, &at) % (KNB_HELLO_LEN + 8);
			if (n > size - at)
				n = size - at;
			rc = knb_flow_hs_received(&f, data + at, (uint32_t)n);
			FUZZ_CHECK(rc >= -1 && rc <= (int)n);
			if (rc < 0) {
				FUZZ_CHECK(f.error[0] != '\0');
				return 0; /* the caller closes the connection */
			}
			at += (size_t)rc;
			if (f.ready) {
				FUZZ_CHECK(f.msg_size >= 1 && f.msg_size <= KNB_MAX_MSG);
				FUZZ_CHECK(f.iodepth >= 1 && f.iodepth <= KNB_MAX_IODEPTH);
				FUZZ_CHECK(f.kind <= KNB_FLOW_DOWN);
			}
			break;
		case 1: /* handshake bytes go out, some of them */
			n = knb_flow_hs_pending(&f, &p);
			FUZZ_CHECK(n <= KNB_HELLO_LEN);
			n = n ? next(data, size, &at) % (n + 1) : 0;
			knb_flow_hs_sent(&f, (uint32_t)n);
			break;
		case 2: /* payload out, within the budget */
			budget = knb_flow_tx_budget(&f);
			n = (uint64_t)next(data, size, &at) * 97;
			if (n > budget)
				n = budget;
			if (n)
				knb_flow_on_tx(&f, n, now);
			break;
		case 3: /* payload in: any amount a peer sends */
			n = (uint64_t)next(data, size, &at) * 131;
			if (f.ready && n) {
				uint64_t before = f.rx_bytes;
				int got = knb_flow_on_rx(&f, n, now);

				/* refused only past what a client sent, counting nothing */
				FUZZ_CHECK(got == 0 ||
					   (got == -EPROTO && f.client && f.kind == KNB_FLOW_RPC &&
					    f.error[0] && f.rx_bytes == before));
			}
			break;
		default:
			now += (uint64_t)next(data, size, &at) * 1000;
			break;
		}
		if (f.ready && f.kind == KNB_FLOW_RPC) {
			if (f.client) {
				FUZZ_CHECK(f.responses <= f.requests);
				FUZZ_CHECK(f.requests <= f.responses + f.iodepth);
				FUZZ_CHECK(f.tx_bytes <= f.requests * (uint64_t)f.msg_size);
				FUZZ_CHECK(f.rx_bytes <= f.tx_bytes); /* no more back than sent */
			} else {
				FUZZ_CHECK(f.tx_bytes <= f.rx_bytes); /* an echo */
			}
		}
		FUZZ_CHECK(m.responses_total <= m.requests_total || !f.client);
		(void)knb_flow_drained(&f);
	}
	return 0;
}
