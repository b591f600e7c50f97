/*
 * port_fault.h - a fault-injection wrapper that can sit on any port.
 *
 * Seeded and reproducible: the same seed and the same packet sequence give
 * the same decisions. Per direction: drop, duplicate, reorder (hold a packet
 * back behind the next one), corrupt (flip one bit of the frame) and delay.
 * Reordering and delay keep packets in the wrapper; they are released from
 * rx_burst and tx_burst calls, so the caller must keep polling (lunar's loop
 * always does).
 */
#ifndef LUNAR_PORT_PORT_FAULT_H
#define LUNAR_PORT_PORT_FAULT_H

#include "port/port.h"
#include "port/port_spec.h"

struct fault_counters {
	uint64_t seen, dropped, duplicated, reordered, corrupted, delayed;
};

/** Wrap @inner. On failure returns NULL and @inner is untouched. */
struct port *port_fault_wrap(struct port *inner, const struct fault_spec *spec);

/** Counters of one direction (rx = 0, tx = 1). */
void port_fault_counters(struct port *p, int tx, struct fault_counters *out);

#endif
