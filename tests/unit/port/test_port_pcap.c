/*
 * test_port_pcap.c - the capture wrapper (port/port_pcap.c) over the fake
 * port: frames received and sent are written to a pcap file that libpcap
 * reads back with the same count, lengths and bytes; frames the inner tx
 * refuses are not captured and stay the caller's (refcnt back to 1);
 * frames the device frees at once are still captured intact; snaplen
 * truncates. Every test ends with the pool's in-use count back to 0.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fake_port.h"
#include "port/port_pcap.h"

#define POOL_SIZE 1023

static struct rte_mempool *pool;
static struct fake_port fake;
static char path[64];
static const struct rte_ether_addr fake_mac = {{0x02, 0, 0, 0, 0, 0x22}};

static int group_setup(void **state)
{
	(void)state;
	if (test_eal_init() != 0)
		return -1;
	pool = test_pool_create("pcap_pool", POOL_SIZE);
	return pool ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	rte_mempool_free(pool);
	return 0;
}

static int setup(void **state)
{
	int fd;

	(void)state;
	fake_port_init(&fake, pool, "fake0", &fake_mac);
	snprintf(path, sizeof(path), "/tmp/lunar_pcap_test_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	fake_port_release(&fake);
	assert_int_equal(test_pool_in_use(pool), 0);
	return 0;
}

/* Frame @i: length 60 + 13 * i, bytes derived from i. */
static size_t frame_bytes(unsigned i, uint8_t *b)
{
	size_t len = 60 + 13 * (size_t)i;

	for (size_t k = 0; k < len; k++)
		b[k] = (uint8_t)(i * 31 + k);
	return len;
}

static struct rte_mbuf *frame(unsigned i)
{
	uint8_t b[2048];
	size_t len = frame_bytes(i, b);

	return test_mbuf(pool, b, len);
}

static struct port *wrap(unsigned snaplen)
{
	char err[256] = "";
	struct port *p = port_pcap_wrap(&fake.base, path, snaplen, err, sizeof(err));

	assert_non_null(p);
	return p;
}

struct rec {
	struct timeval ts;
	uint32_t caplen, len;
	uint8_t data[2048];
};

/* Read the capture back with libpcap; @return the number of records. */
static unsigned read_back(struct rec *out, unsigned cap)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, errbuf);
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned n = 0;

	assert_non_null(pc);
	assert_int_equal(pcap_datalink(pc), DLT_EN10MB);
	while (pcap_next_ex(pc, &h, &d) == 1) {
		assert_true(n < cap);
		assert_true(h->ts.tv_sec > 0);
		out[n].ts = h->ts;
		out[n].caplen = h->caplen;
		out[n].len = h->len;
		memcpy(out[n].data, d,
		       h->caplen < sizeof(out[n].data) ? h->caplen : sizeof(out[n].data));
		n++;
	}
	pcap_close(pc);
	return n;
}

static void assert_rec_is_frame(const struct rec *r, unsigned i)
{
	uint8_t b[2048];
	size_t len = frame_bytes(i, b);

	assert_int_equal(r->len, len);
	assert_int_equal(r->caplen, len);
	assert_memory_equal(r->data, b, len);
}

/* N frames sent then N received: 2N records, same lengths and bytes, in order. */
static void test_capture_tx_and_rx(void **state)
{
	enum { N = 20 };
	static struct rec recs[2 * N + 1];
	struct rte_mbuf *b[N];
	struct port *p = wrap(0);
	struct port_stats st;
	unsigned n;

	(void)state;
	assert_string_equal(p->name, "pcap(fake0)");
	assert_true(port_link_up(p));
	for (unsigned i = 0; i < N; i++)
		b[i] = frame(i);
	assert_int_equal(port_tx_burst(p, b, N), N);
	assert_int_equal(fake.n_tx, N);
	for (unsigned i = 0; i < N; i++) {
		assert_ptr_equal(fake.tx[i], b[i]);
		assert_int_equal(rte_mbuf_refcnt_read(b[i]), 1); /* the wrapper's ref is gone */
	}
	fake_port_clear_tx(&fake);

	for (unsigned i = 0; i < N; i++)
		fake_port_inject(&fake, frame(N + i));
	assert_int_equal(port_rx_burst(p, b, N), N);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(rte_mbuf_refcnt_read(b[i]), 1);
		rte_pktmbuf_free(b[i]);
	}
	port_stats(p, &st);
	assert_int_equal(st.tx_packets, N);
	assert_int_equal(st.rx_packets, N);
	port_close(p);
	assert_int_equal(fake.closed, 1);

	n = read_back(recs, 2 * N + 1);
	assert_int_equal(n, 2 * N);
	for (unsigned i = 0; i < 2 * N; i++)
		assert_rec_is_frame(&recs[i], i);
}

/*
 * port.h: tx_burst takes the first n returned, the caller keeps the rest.
 * Refused frames are not captured and come back with refcnt 1.
 */
static void test_refused_not_captured(void **state)
{
	static struct rec recs[8];
	struct rte_mbuf *b[5];
	struct port *p = wrap(0);

	(void)state;
	for (unsigned i = 0; i < 5; i++)
		b[i] = frame(i);
	fake.accept = 2;
	assert_int_equal(port_tx_burst(p, b, 5), 2);
	for (unsigned i = 2; i < 5; i++) {
		assert_int_equal(rte_mbuf_refcnt_read(b[i]), 1);
		rte_pktmbuf_free(b[i]);
	}
	fake.accept = 0;
	b[0] = frame(7);
	assert_int_equal(port_tx_burst(p, b, 1), 0);
	assert_int_equal(rte_mbuf_refcnt_read(b[0]), 1);
	rte_pktmbuf_free(b[0]);
	fake_port_clear_tx(&fake);
	port_close(p);

	assert_int_equal(read_back(recs, 8), 2);
	assert_rec_is_frame(&recs[0], 0);
	assert_rec_is_frame(&recs[1], 1);
}

/* A device that frees frames as soon as it takes them: the capture is still intact. */
static void test_inner_frees_at_once(void **state)
{
	static struct rec recs[8];
	struct rte_mbuf *b[4];
	struct port *p = wrap(0);

	(void)state;
	fake.free_on_tx = true;
	for (unsigned i = 0; i < 4; i++)
		b[i] = frame(i);
	assert_int_equal(port_tx_burst(p, b, 4), 4);
	assert_int_equal(test_pool_in_use(pool), 0);
	port_close(p);
	assert_int_equal(read_back(recs, 8), 4);
	for (unsigned i = 0; i < 4; i++)
		assert_rec_is_frame(&recs[i], i);
}

/* A 3-segment frame (first segment @seglen bytes); fills @flat with its bytes. */
static struct rte_mbuf *chain3(size_t seglen, uint8_t *flat)
{
	struct rte_mbuf *head = NULL;

	for (unsigned s = 0; s < 3; s++) {
		uint8_t b[2048];
		struct rte_mbuf *m;

		for (size_t k = 0; k < seglen; k++)
			b[k] = flat[s * seglen + k] = (uint8_t)(s * 100 + k);
		m = test_mbuf(pool, b, seglen);
		if (!head)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
	}
	return head;
}

/* Chained mbufs are captured whole (linearised). */
static void test_chained_frame(void **state)
{
	static struct rec recs[2];
	uint8_t flat[3 * 500];
	struct rte_mbuf *m = chain3(500, flat);
	struct port *p = wrap(0);

	(void)state;
	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	fake_port_clear_tx(&fake);
	port_close(p);
	assert_int_equal(read_back(recs, 2), 1);
	assert_int_equal(recs[0].len, sizeof(flat));
	assert_int_equal(recs[0].caplen, sizeof(flat));
	assert_memory_equal(recs[0].data, flat, sizeof(flat));
}

/*
 * Chained frame on a device that frees at once: the wrapper's extra
 * reference must cover every segment, or the device's free returns
 * segments 2..n to the pool while the wrapper still reads them, and the
 * wrapper's own free returns them a second time. The fake detects the
 * uneven reference (head shared, a later segment not) and then frees only
 * the head reference, so the test fails cleanly instead of corrupting the
 * pool.
 */
static void test_chained_frame_inner_frees(void **state)
{
	static struct rec recs[2];
	uint8_t flat[3 * 500];
	struct rte_mbuf *m;
	struct port *p = wrap(0);
	unsigned unsafe;

	(void)state;
	fake.free_on_tx = true;
	m = chain3(500, flat);
	assert_int_equal(port_tx_burst(p, &m, 1), 1);
	unsafe = fake.unsafe_chain_frees;
	port_close(p);
	assert_int_equal(test_pool_in_use(pool), 0);
	assert_int_equal(read_back(recs, 2), 1);
	assert_int_equal(recs[0].caplen, sizeof(flat));
	assert_memory_equal(recs[0].data, flat, sizeof(flat));
	assert_int_equal(unsafe, 0);
}

/* snaplen truncates each record but keeps the original length. */
static void test_snaplen(void **state)
{
	static struct rec recs[4];
	struct rte_mbuf *b[2];
	uint8_t want[2048];
	struct port *p = wrap(64);

	(void)state;
	b[0] = frame(10); /* 190 bytes */
	b[1] = frame(0);  /* 60 bytes, under the snaplen */
	assert_int_equal(port_tx_burst(p, b, 2), 2);
	fake_port_clear_tx(&fake);
	port_close(p);
	assert_int_equal(read_back(recs, 4), 2);
	assert_int_equal(recs[0].len, 190);
	assert_int_equal(recs[0].caplen, 64);
	frame_bytes(10, want);
	assert_memory_equal(recs[0].data, want, 64);
	assert_rec_is_frame(&recs[1], 0);
}

/*
 * snaplen 0 means whole frames (port_pcap.h), e.g. a 20000-byte TSO frame.
 */
static void test_snaplen0_big_frame(void **state)
{
	enum { SEGS = 10, SEG = 2000 };
	char errbuf[PCAP_ERRBUF_SIZE];
	static uint8_t flat[SEGS * SEG];
	struct rte_mbuf *head = NULL;
	struct pcap_pkthdr *h;
	const u_char *d;
	struct port *p = wrap(0);
	uint32_t len = 0, caplen = 0;
	bool same = false;
	pcap_t *pc;
	int rc;

	(void)state;
	for (unsigned s = 0; s < SEGS; s++) {
		struct rte_mbuf *m;

		for (unsigned k = 0; k < SEG; k++)
			flat[s * SEG + k] = (uint8_t)(s + k * 3);
		m = test_mbuf(pool, flat + s * SEG, SEG);
		if (!head)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
	}
	assert_int_equal(port_tx_burst(p, &head, 1), 1);
	fake_port_clear_tx(&fake);
	port_close(p);

	pc = pcap_open_offline(path, errbuf);
	assert_non_null(pc);
	rc = pcap_next_ex(pc, &h, &d);
	if (rc == 1) {
		len = h->len;
		caplen = h->caplen;
		same = caplen == sizeof(flat) && memcmp(d, flat, sizeof(flat)) == 0;
	}
	pcap_close(pc);
	assert_int_equal(rc, 1);
	assert_int_equal(len, sizeof(flat));
	assert_int_equal(caplen, sizeof(flat));
	assert_true(same);
}

/* An unwritable path: NULL, a message naming it, the inner port untouched. */
static void test_bad_path(void **state)
{
	char err[256] = "";
	struct port *p;

	(void)state;
	p = port_pcap_wrap(&fake.base, "/nonexistent-dir/x.pcap", 0, err, sizeof(err));
	assert_null(p);
	assert_non_null(strstr(err, "/nonexistent-dir/x.pcap"));
	assert_int_equal(fake.closed, 0);
	assert_ptr_equal(fake.base.inner, NULL);
}

/* port_dump reports the frames and bytes captured so far. */
static void test_dump(void **state)
{
	struct rte_mbuf *b[2];
	struct port *p = wrap(0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	b[0] = frame(0);
	b[1] = frame(1);
	assert_int_equal(port_tx_burst(p, b, 2), 2);
	f = open_memstream(&buf, &len);
	port_dump(p, f);
	fclose(f);
	assert_non_null(strstr(buf, "pcap: 2 frames, 133 bytes"));
	free(buf);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/* The wrapper presents the inner port's identity: MAC, MTU, offloads, pool, queue. */
static void test_wrapper_copies_inner_fields(void **state)
{
	struct port *p;

	(void)state;
	fake.base.mtu = 9000;
	fake.base.offloads = PORT_OFFLOAD_RX_L4_CKSUM | PORT_OFFLOAD_TX_MULTISEG;
	fake.base.queue = 3;
	fake.base.n_queues = 4;
	p = wrap(0);
	assert_memory_equal(&p->mac, &fake_mac, sizeof(fake_mac));
	assert_int_equal(p->mtu, 9000);
	assert_int_equal(p->offloads, PORT_OFFLOAD_RX_L4_CKSUM | PORT_OFFLOAD_TX_MULTISEG);
	assert_ptr_equal(p->pool, pool);
	assert_int_equal(p->queue, 3);
	assert_int_equal(p->n_queues, 4);
	assert_ptr_equal(p->inner, &fake.base);
	port_close(p);
}

/* Each record carries the wall-clock time it was captured at (not a fixed stamp). */
static void test_timestamps(void **state)
{
	static struct rec recs[4];
	struct timeval before, after;
	struct rte_mbuf *b[2];
	struct port *p = wrap(0);

	(void)state;
	b[0] = frame(0);
	b[1] = frame(1);
	gettimeofday(&before, NULL);
	assert_int_equal(port_tx_burst(p, b, 2), 2);
	gettimeofday(&after, NULL);
	fake_port_clear_tx(&fake);
	port_close(p);
	assert_int_equal(read_back(recs, 4), 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_true(recs[i].ts.tv_sec >= before.tv_sec);
		assert_true(recs[i].ts.tv_sec <= after.tv_sec);
	}
}

/*
 * rx_burst asked for more frames than the device had: only the frames
 * received are captured, not whatever the caller's array held past them.
 */
static void test_short_receive(void **state)
{
	static struct rec recs[8];
	struct rte_mbuf *b[8], *mine[8];
	struct port *p = wrap(0);

	(void)state;
	for (unsigned i = 0; i < 8; i++)
		b[i] = frame(i); /* the caller's own frames, left in its array */
	memcpy(mine, b, sizeof(mine));
	fake_port_inject(&fake, frame(9));
	assert_int_equal(port_rx_burst(p, b, 8), 1);
	rte_pktmbuf_free(b[0]);
	rte_pktmbuf_free(mine[0]);
	for (unsigned i = 1; i < 8; i++) {
		assert_ptr_equal(b[i], mine[i]);
		rte_pktmbuf_free(b[i]);
	}
	port_close(p);
	assert_int_equal(read_back(recs, 8), 1);
	assert_rec_is_frame(&recs[0], 9);
}

/* The byte count is of bytes written to the file: truncated at the snaplen. */
static void test_dump_counts_captured_bytes(void **state)
{
	struct rte_mbuf *b[2];
	struct port *p = wrap(64);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	b[0] = frame(10); /* 190 bytes, 64 captured */
	b[1] = frame(0);  /* 60 bytes */
	assert_int_equal(port_tx_burst(p, b, 2), 2);
	f = open_memstream(&buf, &len);
	port_dump(p, f);
	fclose(f);
	assert_non_null(strstr(buf, "pcap: 2 frames, 124 bytes"));
	free(buf);
	fake_port_clear_tx(&fake);
	port_close(p);
}

/* port_dump flushes the capture: the file is readable to there while the port runs. */
static void test_dump_flushes_file(void **state)
{
	static struct rec recs[4];
	struct rte_mbuf *b[3];
	struct port *p = wrap(0);
	FILE *f = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(f);
	for (unsigned i = 0; i < 3; i++)
		b[i] = frame(i);
	assert_int_equal(port_tx_burst(p, b, 3), 3);
	port_dump(p, f);
	fclose(f);
	assert_int_equal(read_back(recs, 4), 3);
	for (unsigned i = 0; i < 3; i++)
		assert_rec_is_frame(&recs[i], i);
	fake_port_clear_tx(&fake);
	port_close(p);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_capture_tx_and_rx),
	    T(test_refused_not_captured),
	    T(test_inner_frees_at_once),
	    T(test_chained_frame),
	    T(test_chained_frame_inner_frees),
	    T(test_snaplen),
	    T(test_snaplen0_big_frame),
	    T(test_bad_path),
	    T(test_dump),
	    T(test_wrapper_copies_inner_fields),
	    T(test_timestamps),
	    T(test_short_receive),
	    T(test_dump_counts_captured_bytes),
	    T(test_dump_flushes_file),
	};
#undef T

	return cmocka_run_group_tests_name("port/pcap", tests, group_setup, group_teardown);
}
