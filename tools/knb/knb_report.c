/*
 * knb_report.c - knb's results: the summary it prints and the JSON it
 * writes (schema 1, documented in docs/KNB.md; jansson).
 */
#include "knb.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CDF_POINTS 200

const char *const knb_cpu_category_names[KNB_CPU_CATEGORIES] = {
    "rx", "protocol", "app", "tx", "timers", "buffers", "copy", "idle",
};

struct totals {
	struct knb_hist hist;
	uint64_t responses, tx, rx, requests_total, responses_total;
};

static void sum(const struct knb_result *r, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	knb_hist_init(&t->hist);
	for (unsigned i = 0; i < r->nthreads; i++) {
		const struct knb_meter *m = &r->threads[i].meter;

		knb_hist_merge(&t->hist, &m->hist);
		t->responses += m->responses;
		t->tx += m->tx_bytes;
		t->rx += m->rx_bytes;
		t->requests_total += m->requests_total;
		t->responses_total += m->responses_total;
	}
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

/* One-way payload rate: RPC counts requests answered; bulk counts what moved. */
static double gbps(const struct knb_config *c, const struct knb_result *r, const struct totals *t)
{
	uint64_t bytes = c->pattern == KNB_PATTERN_RPC ? t->responses * c->msg_size
			 : t->tx > t->rx	       ? t->tx
						       : t->rx;

	return r->window_s > 0 ? (double)bytes * 8 / r->window_s / 1e9 : 0;
}

static json_t *config_json(const struct knb_config *c)
{
	char addr[INET_ADDRSTRLEN + 8];
	struct in_addr a = {.s_addr = htonl(c->addr)};
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	snprintf(addr, sizeof(addr), "%s:%u", ip, c->port);
	static const char *const api_names[] = {"batch", "inline", "copy", "dispatch"};

	return json_pack(
	    "{s:s, s:s?, s:s, s:i, s:i, s:s, s:i, s:i, s:i, s:f, s:f, s:s?, s:o?, s:b, "
	    "s:s?, s:s}",
	    "stack", knb_stack_name(c->stack), "port",
	    c->stack != KNB_STACK_KERNEL ? c->port_text : NULL, c->server ? "listen" : "connect",
	    addr, "threads", (int)c->threads, "server_threads",
	    (int)(c->server ? c->threads : c->server_threads), "pattern",
	    knb_pattern_name(c->pattern), "flows", (int)c->flows, "msg_size", (int)c->msg_size,
	    "iodepth", (int)c->iodepth, "duration_s", c->duration_s, "warmup_s", c->warmup_s,
	    "kernel_mode",
	    c->stack == KNB_STACK_KERNEL
		? (c->kernel_mode == KNB_KERNEL_BUSY_POLL ? "busy-poll" : "blocking")
		: NULL,
	    "core", c->core_given ? json_integer(c->lo.core) : NULL, "cpu_breakdown",
	    c->cpu_breakdown, "api", c->stack == KNB_STACK_LUNAR ? api_names[c->api] : NULL,
	    "command", c->command);
}

static int write_json(const struct knb_config *c, const struct knb_result *r,
		      const struct totals *t)
{
	struct knb_cdf_point pts[CDF_POINTS];
	size_t npts = knb_hist_cdf(&t->hist, pts, CDF_POINTS);
	json_t *root = json_object(), *cdf = json_array(), *threads = json_array(), *cpu;
	int rc;

	for (size_t i = 0; i < npts; i++)
		json_array_append_new(cdf,
				      json_pack("[f, f]", us(pts[i].value_ns), pts[i].fraction));
	for (unsigned i = 0; i < r->nthreads; i++) {
		const struct knb_thread_result *tr = &r->threads[i];

		json_array_append_new(
		    threads,
		    json_pack("{s:i, s:o, s:f, s:I, s:I, s:I}", "index", (int)tr->index, "core",
			      tr->core >= 0 ? json_integer(tr->core) : json_null(), "cpu_pct",
			      tr->cpu_pct, "requests", (json_int_t)tr->meter.requests_total,
			      "responses", (json_int_t)tr->meter.responses_total, "bytes",
			      (json_int_t)(tr->meter.tx_total + tr->meter.rx_total)));
	}
	if (r->have_cpu_breakdown) {
		cpu = json_object();
		for (unsigned i = 0; i < KNB_CPU_CATEGORIES; i++)
			json_object_set_new(cpu, knb_cpu_category_names[i],
					    json_real(r->cpu_breakdown_pct[i]));
	} else {
		cpu = json_null();
	}
	json_object_set_new(root, "knb_version", json_integer(KNB_VERSION));
	json_object_set_new(root, "schema", json_integer(1));
	json_object_set_new(root, "role", json_string(c->server ? "server" : "client"));
	json_object_set_new(root, "config", config_json(c));
	json_object_set_new(root, "window_s", json_real(r->window_s));
	json_object_set_new(root, "requests", json_integer((json_int_t)t->requests_total));
	json_object_set_new(root, "responses", json_integer((json_int_t)t->responses_total));
	json_object_set_new(root, "rpc_per_s",
			    json_real(r->window_s > 0 ? (double)t->responses / r->window_s : 0));
	json_object_set_new(root, "gbps", json_real(gbps(c, r, t)));
	json_object_set_new(root, "bytes_sent", json_integer((json_int_t)t->tx));
	json_object_set_new(root, "bytes_received", json_integer((json_int_t)t->rx));
	json_object_set_new(
	    root, "latency_us",
	    json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "count",
		      (json_int_t)knb_hist_count(&t->hist), "min", us(knb_hist_min(&t->hist)),
		      "mean", knb_hist_mean(&t->hist) / 1000.0, "p50",
		      us(knb_hist_percentile(&t->hist, 50)), "p90",
		      us(knb_hist_percentile(&t->hist, 90)), "p99",
		      us(knb_hist_percentile(&t->hist, 99)), "p999",
		      us(knb_hist_percentile(&t->hist, 99.9)), "max", us(knb_hist_max(&t->hist))));
	json_object_set_new(root, "cdf", cdf);
	json_object_set_new(root, "threads", threads);
	json_object_set_new(root, "cpu_breakdown_pct", cpu);
	rc = json_dump_file(root, c->json_path, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
	json_decref(root);
	if (rc) {
		fprintf(stderr, "knb: cannot write %s\n", c->json_path);
		return -1;
	}
	return 0;
}

int knb_report(const struct knb_config *c, const struct knb_result *r)
{
	struct totals *t = malloc(sizeof(*t));
	int rc = 0;

	if (!t)
		return -1;
	sum(r, t);
	if (c->server) {
		printf("knb server: requests %lu responses %lu bytes_in %lu bytes_out %lu\n",
		       (unsigned long)t->requests_total, (unsigned long)t->responses_total,
		       (unsigned long)r->threads[0].meter.rx_total,
		       (unsigned long)r->threads[0].meter.tx_total);
	} else {
		printf("knb client: %s stack, pattern %s, %u thread%s x %u server thread%s x %u "
		       "flow%s, "
		       "msg %u B, iodepth %u, %.2f s measured\n",
		       knb_stack_name(c->stack), knb_pattern_name(c->pattern), c->threads,
		       c->threads > 1 ? "s" : "", c->server_threads,
		       c->server_threads > 1 ? "s" : "", c->flows, c->flows > 1 ? "s" : "",
		       c->msg_size, c->iodepth, r->window_s);
		printf("requests %lu responses %lu\n", (unsigned long)t->requests_total,
		       (unsigned long)t->responses_total);
		printf("throughput %.3f Gbit/s, %.0f RPC/s\n", gbps(c, r, t),
		       r->window_s > 0 ? (double)t->responses / r->window_s : 0);
		if (knb_hist_count(&t->hist))
			printf("latency us: p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f (%lu "
			       "samples)\n",
			       us(knb_hist_percentile(&t->hist, 50)),
			       us(knb_hist_percentile(&t->hist, 90)),
			       us(knb_hist_percentile(&t->hist, 99)),
			       us(knb_hist_percentile(&t->hist, 99.9)), us(knb_hist_max(&t->hist)),
			       (unsigned long)knb_hist_count(&t->hist));
		for (unsigned i = 0; i < r->nthreads; i++)
			printf("thread %u: core %d cpu %.1f%%\n", i, r->threads[i].core,
			       r->threads[i].cpu_pct);
		if (r->have_cpu_breakdown) {
			printf("cpu breakdown %%:");
			for (unsigned i = 0; i < KNB_CPU_CATEGORIES; i++)
				printf(" %s %.1f", knb_cpu_category_names[i],
				       r->cpu_breakdown_pct[i]);
			printf("\n");
		}
	}
	if (c->json_path && write_json(c, r, t))
		rc = -1;
	free(t);
	return rc;
}
