/*
 * stack_pair.c - two lunar stacks back to back in one process (see
 * stack_pair.h).
 */
#include "stack_pair.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "mem/zbuf.h"

#define STEP_NS 20000ull
#define POOL_MBUFS 2048

static struct rte_mempool *sp_pool;
static const struct rte_ether_addr mac_a = {{0x02, 0, 0, 0, 0, 0xa}};
static const struct rte_ether_addr mac_b = {{0x02, 0, 0, 0, 0, 0xb}};

int sp_group_setup(void **state)
{
	static const struct zbuf_config zc = {.backend = ZBUF_BACKEND_DPDK,
					      .zones = {1, 1, 1, 1},
					      .mbuf_zones = 6,
					      .socket_id = SOCKET_ID_ANY};
	uint16_t room;
	unsigned zones;

	(void)state;
	if (test_eal_init()) {
		print_error("stack_pair: the EAL did not start\n");
		return -1;
	}
	if (zbuf_init(&zc)) {
		print_error("stack_pair: zbuf_init failed\n");
		return -1;
	}
	if (zbuf_pktpool_geometry(POOL_MBUFS, 2048, &room, &zones) || zones > zc.mbuf_zones) {
		print_error("stack_pair: %u mbufs need %u zones\n", POOL_MBUFS, zones);
		return -1;
	}
	sp_pool = zbuf_pktpool_create("sp_pool", POOL_MBUFS, room);
	if (!sp_pool)
		print_error("stack_pair: no packet pool\n");
	return sp_pool ? 0 : -1;
}

int sp_group_teardown(void **state)
{
	(void)state;
	zbuf_fini();
	return 0;
}

static void side_init(struct stack_pair *p, struct sp_side *s, const char *name,
		      const struct rte_ether_addr *mac, uint32_t ip, uint32_t peer_ip,
		      const struct rte_ether_addr *peer_mac)
{
	struct netif_config cfg = {.ip = ip, .prefix_len = 24, .neigh_mode = NEIGH_MODE_ARP};
	struct tcp_config tc;

	fake_port_init(&s->fp, sp_pool, name, mac);
	cfg.port = &s->fp.base;
	assert_int_equal(netif_init(&s->nif, &cfg), 0);
	s->nif.now_ns = p->now;
	netif_neigh_update(&s->nif, peer_ip, peer_mac, true);
	tcp_config_default(&tc);
	tc.nodelay = true;
	s->tcp = tcp_stack_create(&s->nif, &tc, 256, &p->plan, 0);
	assert_non_null(s->tcp);
}

int sp_setup(void **state)
{
	struct stack_pair *p = calloc(1, sizeof(*p));
	char err[200];

	if (!p)
		return -1;
	p->now = 1000000000ull;
	p->zbuf_baseline = zbuf_in_use();
	assert_int_equal(flow_plan_init(&p->plan, 1, 40000, 40999, err, sizeof(err)), 0);
	side_init(p, &p->a, "sp_a", &mac_a, SP_IP_A, SP_IP_B, &mac_b);
	side_init(p, &p->b, "sp_b", &mac_b, SP_IP_B, SP_IP_A, &mac_a);
	*state = p;
	return 0;
}

static void side_fini(struct sp_side *s)
{
	tcp_stack_free(s->tcp);
	netif_fini(&s->nif);
	fake_port_release(&s->fp);
}

int sp_teardown(void **state)
{
	struct stack_pair *p = *state;

	side_fini(&p->a);
	side_fini(&p->b);
	assert_int_equal(zbuf_in_use(), p->zbuf_baseline);
	free(p);
	return 0;
}

/* What @from transmitted last step, received by @to. */
static void carry(struct stack_pair *p, struct sp_side *from, struct sp_side *to)
{
	unsigned n = from->fp.n_tx;

	from->fp.n_tx = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = from->fp.tx[i];

		if (!m)
			continue;
		m->ol_flags = 0; /* transmit flags mean nothing on receive */
		m->packet_type = 0;
		netif_input(&to->nif, &m, 1, p->now);
	}
}

void sp_step(struct stack_pair *p)
{
	p->now += STEP_NS;
	carry(p, &p->a, &p->b);
	carry(p, &p->b, &p->a);
	tcp_stack_poll(p->a.tcp, p->now);
	tcp_stack_poll(p->b.tcp, p->now);
	netif_flush(&p->a.nif);
	netif_flush(&p->b.nif);
}

void sp_run(struct stack_pair *p, unsigned n)
{
	while (n--)
		sp_step(p);
}
