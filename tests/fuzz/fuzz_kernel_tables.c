/*
 * fuzz_kernel_tables.c - libFuzzer target for the parsers of the kernel's
 * own tables that af_xdp's start-up checks read (src/ctl/flow_plan.c):
 * /proc/net/tcp and /proc/net/tcp6 (flow_plan_kernel_listener(): a kernel
 * listener inside the reserved range) and ip_local_reserved_ports
 * (flow_plan_check_kernel_ports()). The kernel writes them, but a parser
 * of text must still never read past it, whatever it holds.
 *
 * Input: byte 0 bit 0 picks the table's family (tcp6 if set); bytes 1-2
 * and 3-4 the reserved range's ends, 5-8 lunar's address, 9-10 and 11-12
 * the kernel's ip_local_port_range; the rest is the text, up to a NUL:
 * read through fmemopen() as the listener check reads the /proc file, and
 * given to the port check as a heap copy of exactly its size plus the NUL,
 * so AddressSanitizer catches any read past it.
 *
 * Checks: a listener found lies in the range (and none is found in an
 * empty range, or in a text of one line: the header); another header in
 * place of the text's first line gives the same answer (the header is
 * skipped, never parsed); the port check returns 0 or -EINVAL with a non-empty,
 * NUL-terminated message, and 0 whenever the ranges do not overlap.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ctl/flow_plan.h"
#include "fuzz_check.h"

static uint16_t u16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* flow_plan_kernel_listener() over @text (@n bytes) as if it were the file. */
static unsigned listener_in(const char *text, size_t n, bool v6, uint16_t lo, uint16_t hi,
			    uint32_t ip)
{
	FILE *f = fmemopen((void *)text, n, "r");
	unsigned port;

	FUZZ_CHECK(f != NULL);
	port = flow_plan_kernel_listener(f, v6, lo, hi, ip);
	fclose(f);
	return port;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char header[] = "  sl  local_address rem_address   st\n";
	uint16_t lo, hi, klo, khi;
	bool v6;
	uint32_t ip;
	size_t n;
	char *text, *with_header, *rest, err[160];
	unsigned port;
	int rc;

	if (size < 13)
		return 0;
	v6 = data[0] & 1;
	lo = u16_at(data + 1);
	hi = u16_at(data + 3);
	ip = (uint32_t)data[5] << 24 | (uint32_t)data[6] << 16 | (uint32_t)data[7] << 8 | data[8];
	klo = u16_at(data + 9);
	khi = u16_at(data + 11);
	n = size - 13;
	text = malloc(n + 1);
	with_header = malloc(sizeof(header) - 1 + n + 1);
	FUZZ_CHECK(text && with_header);
	memcpy(text, data + 13, n);
	text[n] = '\0';
	n = strlen(text); /* a NUL in the input ends the text, as it ends a C string */

	port = listener_in(text, n, v6, lo, hi, ip);
	FUZZ_CHECK(port == 0 || (port >= lo && port <= hi));
	if (!memchr(text, '\n', n))
		FUZZ_CHECK(port == 0); /* a header alone */
	/* Another header in place of the text's first line: the same answer. */
	rest = memchr(text, '\n', n);
	rest = rest ? rest + 1 : text + n;
	memcpy(with_header, header, sizeof(header) - 1);
	strcpy(with_header + sizeof(header) - 1, rest);
	FUZZ_CHECK(listener_in(with_header, strlen(with_header), v6, lo, hi, ip) == port);

	memset(err, 'X', sizeof(err));
	rc = flow_plan_check_kernel_ports(lo, hi, klo, khi, text, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc)
		FUZZ_CHECK(memchr(err, '\0', sizeof(err)) && err[0] != '\0' && err[0] != 'X');
	if (lo > khi || hi < klo || lo > hi || klo > khi)
		FUZZ_CHECK(rc == 0);
	free(text);
	free(with_header);
	return 0;
}
