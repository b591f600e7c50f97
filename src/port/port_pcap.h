/*
 * port_pcap.h - a capture wrapper: every frame received or sent through the
 * wrapped port is written to a pcap file (libpcap format, readable by
 * tshark and wireshark), with the time it crossed the wrapper.
 */
#ifndef LUNAR_PORT_PORT_PCAP_H
#define LUNAR_PORT_PORT_PCAP_H

#include <stddef.h>

#include "port/port.h"

/**
 * Wrap @inner, writing to @path (truncated). @snaplen 0 means whole frames.
 * @return the wrapper, or NULL with a message in @err.
 */
struct port *port_pcap_wrap(struct port *inner, const char *path, unsigned snaplen, char *err,
			    size_t errlen);

#endif
