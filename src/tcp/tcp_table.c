/*
 * tcp_table.c - the per-worker connection table (see tcp_table.h). It owns:
 *
 *  - the 4-tuple -> connection map: a DPDK rte_hash (bucketised cuckoo
 *    hashing, O(1) lookup) with the extendable bucket table, so an insert
 *    only fails when the table holds max_conns keys, never early because
 *    two buckets are full;
 *  - the listener table, indexed by local port;
 *  - ephemeral port selection, RFC 6056 3.3.3 (algorithm 3, "Simple
 *    Hash-Based Port Selection");
 *  - initial sequence numbers, RFC 6528 section 3 (and RFC 9293 3.4.1).
 *
 * The two secrets (one for port offsets, one for ISNs) are drawn from
 * libsodium's CSPRNG when the table is created and never leave it; the keyed
 * function F of both RFCs is SipHash-2-4 (libsodium crypto_shorthash).
 *
 * One table per worker core, used only by that core: no locks, and the
 * rte_hash is created single-writer without reader/writer concurrency.
 */
#include "tcp/tcp_table.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#define TCP_TABLE_NPORTS 65536u

/*
 * The hash key. It mirrors struct tcp_4tuple but is built field by field
 * into a zeroed object, so the bytes rte_hash hashes and compares never
 * include indeterminate padding, whatever the caller's struct holds; the
 * static assertion proves there is no padding to begin with.
 */
struct tcp_table_key {
	uint32_t laddr;
	uint32_t raddr;
	uint16_t lport;
	uint16_t rport;
};
_Static_assert(sizeof(struct tcp_table_key) == 12, "tcp_table_key must have no padding");

struct tcp_table {
	struct rte_hash *conns;
	/*
	 * RFC 6056 3.3.3 "next_ephemeral": one counter per table, advanced
	 * once per port probed, so that successive connections to the same
	 * destination get successive offsets from their hashed start.
	 */
	uint32_t next_ephemeral;
	unsigned char port_key[crypto_shorthash_KEYBYTES]; /* RFC 6056 secret_key */
	unsigned char isn_key[crypto_shorthash_KEYBYTES];  /* RFC 6528 secretkey */
	/*
	 * Listeners: a flat array of 65536 pointers (512 KiB per table)
	 * indexed by local port. Chosen over a small hash because it is the
	 * simplest O(1) structure: a lookup is one indexed load with no
	 * hashing, probing or collision case, listen/unlisten cannot fail for
	 * lack of space, and only the cache lines of ports actually in use are
	 * ever touched. 512 KiB per worker is small next to the connection
	 * hash itself (about 6 MiB at 100 000 connections).
	 */
	void *listeners[TCP_TABLE_NPORTS];
};

static inline void tcp_table_key_make(struct tcp_table_key *key, const struct tcp_4tuple *k)
{
	memset(key, 0, sizeof(*key));
	key->laddr = k->laddr;
	key->raddr = k->raddr;
	key->lport = k->lport;
	key->rport = k->rport;
}

/* SipHash-2-4 of @len bytes under @key, as a host integer. */
static inline uint64_t tcp_table_siphash(const unsigned char *key, const void *in, size_t len)
{
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t h;

	_Static_assert(crypto_shorthash_BYTES == sizeof(h), "SipHash-2-4 yields 64 bits");
	crypto_shorthash(out, in, len, key);
	memcpy(&h, out, sizeof(h));
	return h;
}

struct tcp_table *tcp_table_create(const char *name, unsigned max_conns)
{
	struct rte_hash_parameters params;
	struct tcp_table *t;
	uint32_t seed;

	if (name == NULL || max_conns == 0 || max_conns > RTE_HASH_ENTRIES_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (strlen(name) > TCP_TABLE_NAME_MAX) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	/* Idempotent and thread-safe: returns 1 once libsodium is ready. */
	if (sodium_init() < 0) {
		errno = EIO;
		return NULL;
	}

	/* SOCKET_ID_ANY: DPDK's heap tries the calling lcore's socket first. */
	t = rte_zmalloc_socket("tcp_table", sizeof(*t), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	randombytes_buf(t->port_key, sizeof(t->port_key));
	randombytes_buf(t->isn_key, sizeof(t->isn_key));
	t->next_ephemeral = randombytes_random();
	seed = randombytes_random();

	/*
	 * rte_jhash with a random seed rather than rte_hash_crc: CRC is linear,
	 * so a remote peer choosing its port (and perhaps its address) could
	 * aim many tuples at one bucket whatever the seed; the extendable
	 * buckets keep such inserts from failing, but lookups there degrade to
	 * a list walk. jhash is not a PRF, yet with an unknown seed it is not
	 * trivially steerable, and on a 12-byte key it costs about as much.
	 * rte_hash needs at least one bucket's worth of entries.
	 */
	memset(&params, 0, sizeof(params));
	params.name = name;
	params.entries = max_conns < 8 ? 8 : max_conns;
	params.key_len = sizeof(struct tcp_table_key);
	params.hash_func = rte_jhash;
	params.hash_func_init_val = seed;
	params.socket_id = SOCKET_ID_ANY;
	params.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
	t->conns = rte_hash_create(&params);
	if (t->conns == NULL) {
		int err = rte_errno ? rte_errno : ENOMEM;

		sodium_memzero(t, sizeof(*t));
		rte_free(t);
		errno = err;
		return NULL;
	}
	return t;
}

void tcp_table_free(struct tcp_table *t)
{
	if (t == NULL)
		return;
	rte_hash_free(t->conns);
	/* The secrets (and every pointer) must not outlive the table. */
	sodium_memzero(t, sizeof(*t));
	rte_free(t);
}

int tcp_table_insert(struct tcp_table *t, const struct tcp_4tuple *k, void *conn)
{
	struct tcp_table_key key;
	hash_sig_t sig;
	int ret;

	if (conn == NULL)
		return -EINVAL; /* NULL is lookup's "not found" */
	tcp_table_key_make(&key, k);
	sig = rte_hash_hash(t->conns, &key);
	/* rte_hash_add_key_data silently replaces an existing key's data. */
	if (rte_hash_lookup_with_hash(t->conns, &key, sig) >= 0)
		return -EEXIST;
	ret = rte_hash_add_key_with_hash_data(t->conns, &key, sig, conn);
	return ret < 0 ? ret : 0;
}

void *tcp_table_lookup(const struct tcp_table *t, const struct tcp_4tuple *k)
{
	struct tcp_table_key key;
	void *conn;

	tcp_table_key_make(&key, k);
	if (rte_hash_lookup_data(t->conns, &key, &conn) < 0)
		return NULL;
	return conn;
}

int tcp_table_remove(struct tcp_table *t, const struct tcp_4tuple *k)
{
	struct tcp_table_key key;
	int ret;

	tcp_table_key_make(&key, k);
	/* Without NO_FREE_ON_DEL / RW_CONCURRENCY_LF the slot is freed here. */
	ret = rte_hash_del_key(t->conns, &key);
	return ret < 0 ? ret : 0;
}

unsigned tcp_table_count(const struct tcp_table *t)
{
	int32_t n = rte_hash_count(t->conns);

	return n < 0 ? 0 : (unsigned)n;
}

int tcp_table_listen(struct tcp_table *t, uint16_t lport, void *listener)
{
	if (lport == 0 || listener == NULL)
		return -EINVAL;
	if (t->listeners[lport] != NULL)
		return -EADDRINUSE;
	t->listeners[lport] = listener;
	return 0;
}

void tcp_table_unlisten(struct tcp_table *t, uint16_t lport)
{
	t->listeners[lport] = NULL;
}

void *tcp_table_listener(const struct tcp_table *t, uint16_t lport)
{
	return t->listeners[lport];
}

/*
 * RFC 6056 3.3.3, algorithm 3:
 *
 *	num_ephemeral = max_ephemeral - min_ephemeral + 1;
 *	offset = F(local_IP, remote_IP, remote_port, secret_key);
 *	count = num_ephemeral;
 *	do {
 *		port = min_ephemeral + (next_ephemeral + offset) % num_ephemeral;
 *		next_ephemeral++;
 *		if (check_suitable_port(port))
 *			return port;
 *		count--;
 *	} while (count > 0);
 *
 * A port is suitable when (laddr, port, raddr, rport) is not in the table
 * and no listener is bound to it (as Linux skips bound ports: a port that
 * accepts connections is not handed out as a client port). Port 0 is never
 * returned.
 */
int tcp_table_pick_port(struct tcp_table *t, uint32_t laddr, uint32_t raddr, uint16_t rport,
			uint16_t lo, uint16_t hi, uint16_t *port)
{
	return tcp_table_pick_port_in(t, laddr, raddr, rport, lo, hi, 1, 0, port);
}

int tcp_table_pick_port_in(struct tcp_table *t, uint32_t laddr, uint32_t raddr, uint16_t rport,
			   uint16_t lo, uint16_t hi, uint16_t mod, uint16_t rem, uint16_t *port)
{
	unsigned char in[10]; /* laddr, raddr, rport: no padding to zero */
	struct tcp_table_key key;
	uint32_t first, num, count, idx;
	uint64_t offset;

	if (lo > hi || mod == 0 || rem >= mod)
		return -EINVAL;
	/* The candidates: first, first + mod, ... up to hi. */
	first = lo + (uint32_t)((rem + mod - lo % mod) % mod);
	if (first > hi)
		return -EADDRNOTAVAIL;
	num = (hi - first) / mod + 1;
	memcpy(in, &laddr, 4);
	memcpy(in + 4, &raddr, 4);
	memcpy(in + 8, &rport, 2);
	offset = tcp_table_siphash(t->port_key, in, sizeof(in));
	/* (next_ephemeral + offset) % num, without 64-bit wrap-around. */
	idx = (uint32_t)((offset % num + t->next_ephemeral % num) % num);

	memset(&key, 0, sizeof(key));
	key.laddr = laddr;
	key.raddr = raddr;
	key.rport = rport;
	for (count = num; count > 0; count--) {
		uint16_t p = (uint16_t)(first + idx * mod);

		t->next_ephemeral++;
		if (++idx == num)
			idx = 0;
		if (p == 0 || t->listeners[p] != NULL)
			continue;
		key.lport = p;
		if (rte_hash_lookup(t->conns, &key) == -ENOENT) {
			*port = p;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

/*
 * RFC 6528 section 3:  ISN = M + F(localip, localport, remoteip, remoteport,
 * secretkey), M a timer ticking every 4 microseconds, F a keyed PRF
 * (SipHash-2-4 here) truncated to 32 bits. The key is fixed for the table's
 * life, so for one 4-tuple the ISN advances exactly with M, as RFC 9293
 * 3.4.1 expects of the ISN clock; across tuples the offsets are unrelated
 * and unknowable without the key.
 */
uint32_t tcp_isn(const struct tcp_table *t, const struct tcp_4tuple *k, uint64_t now_ns)
{
	struct tcp_table_key key;
	uint64_t m = now_ns / 4000;
	uint32_t f;

	tcp_table_key_make(&key, k);
	f = (uint32_t)tcp_table_siphash(t->isn_key, &key, sizeof(key));
	return (uint32_t)m + f;
}
