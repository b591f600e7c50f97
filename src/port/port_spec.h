/*
 * port_spec.h - the one syntax every lunar program uses to name a port:
 *   af_xdp:<ifname>
 *   memif:<socket-path>[:server|client]
 *   tap:<name>
 * and the fault-injection and capture settings that can wrap any port.
 */
#ifndef LUNAR_PORT_PORT_SPEC_H
#define LUNAR_PORT_PORT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum port_kind { PORT_KIND_NONE, PORT_KIND_AF_XDP, PORT_KIND_MEMIF, PORT_KIND_TAP };

struct port_spec {
	enum port_kind kind;
	char ifname[32]; /**< af_xdp, tap: interface name */
	char path[108];	 /**< memif: socket path */
	bool memif_server;
	uint16_t mtu; /**< 0: the kind's default (1500; memif/tap may use up to 9000) */
	/**
	 * memif: a trusted link (--trust-link). Both ends are lunar processes on
	 * this host sharing memory, where no frame can be corrupted in transit,
	 * so no checksum is computed or verified, as the kernel does over veth
	 * (CHECKSUM_PARTIAL passes through unchecked). Both ends must say so:
	 * a trusting sender's frames fail a checking receiver's checksums.
	 */
	bool trusted;
};

/** Fault rates for one direction, each in [0, 1]. */
struct fault_dir {
	double drop, dup, reorder, corrupt;
	uint32_t delay_us; /**< added to every packet in this direction */
};

struct fault_spec {
	bool enabled;
	uint64_t seed;
	struct fault_dir rx, tx;
};

/**
 * Parse "kind:args" into @out.
 * @return 0, or -EINVAL with a message in @err that names the problem and
 *         shows the accepted forms.
 */
int port_spec_parse(const char *text, struct port_spec *out, char *err, size_t errlen);

/**
 * Parse a fault setting into @out (may be called several times to build up
 * both directions): "[rx:|tx:]drop=P,dup=P,reorder=P,corrupt=P,delay=USus"
 * or "seed=N". Without a direction prefix the rates apply to both.
 * Probabilities may be written as 0.05 or 5%.
 */
int fault_spec_parse(const char *text, struct fault_spec *out, char *err, size_t errlen);

/**
 * Whether a comma-separated option value has an empty field ("", ",x",
 * "x,", "x,,y"), which strtok() would skip in silence: a typo to refuse.
 */
bool spec_list_has_empty_field(const char *s);

/** Name of a port kind ("af_xdp", "memif", "tap"). */
const char *port_kind_name(enum port_kind kind);

#endif
