/*
 * stack_pair.h - test support for tests/unit/api: two whole lunar stacks
 * (fake port, netif, TCP) in one process, wired back to back: what one
 * transmits, the other receives at the next step. Virtual clock; Zbuf on
 * the DPDK backend without hugepages (EAL --no-huge), packet pool in Zbuf
 * memory, so received payload is Zbuf as in a real worker.
 *
 * Side a is 10.0.0.1, side b 10.0.0.2, each knowing the other's MAC.
 */
#ifndef LUNAR_TEST_STACK_PAIR_H
#define LUNAR_TEST_STACK_PAIR_H

#include <stdint.h>

#include "ctl/flow_plan.h"
#include "fake_port.h"
#include "net/netif.h"
#include "tcp/tcp_stack.h"

#define SP_IP_A 0x0a000001u
#define SP_IP_B 0x0a000002u

struct sp_side {
	struct fake_port fp;
	struct netif nif;
	struct tcp_stack *tcp;
};

struct stack_pair {
	struct sp_side a, b;
	struct flow_plan plan;
	uint64_t now;	       /* virtual ns */
	uint64_t zbuf_baseline; /* Zbuf objects in use before the pair existed */
};

/* cmocka fixtures: EAL, Zbuf and the packet pool once per binary; a fresh pair per test. */
int sp_group_setup(void **state);
int sp_group_teardown(void **state);
int sp_setup(void **state);
/** Free both stacks; asserts every Zbuf object and mbuf came back. */
int sp_teardown(void **state);

/** One step: 20 us pass; each side takes what the other sent, runs TCP, transmits. */
void sp_step(struct stack_pair *p);
/** @n steps. */
void sp_run(struct stack_pair *p, unsigned n);

#endif
