/*
 * Lab 3: free lists and fragmentation.
 *
 * Part 1 replays holes.rep's scenario through the API: four holes of 200,
 * 100, 400 and 160 bytes between live blocks, then requests of 150, 90 and
 * 120 bytes, under first, next, best and worst fit.  The hole each request
 * lands in is printed and, for first, best and worst fit, compared with
 * what the definition of the fit says (computed here from the hole sizes).
 *
 * Part 2 replays classic traces under each fit and prints utilization:
 * peak live requested bytes over peak committed bytes.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lab.h"

enum { NHOLES = 4, NREQ = 3, NFITS = 4 };
static const size_t hole_size[NHOLES] = { 200, 100, 400, 160 };
static const size_t request[NREQ] = { 150, 90, 120 };
static const char *const fits[NFITS] = { "first", "next", "best", "worst" };

typedef struct hole {
	char *at;     /* payload address of the freed block */
	size_t room;  /* bytes still free in it (shrinks as requests land) */
} hole_t;

/* Which hole the definition of `fit` picks for n bytes (-1: none fits). */
static int predict(const char *fit, const hole_t *h, size_t n)
{
	int pick = -1;
	for (int i = 0; i < NHOLES; i++) {
		if (h[i].room < n)
			continue;
		if (pick < 0 || (!strcmp(fit, "best") && h[i].room < h[pick].room) ||
		    (!strcmp(fit, "worst") && h[i].room > h[pick].room))
			pick = i;
	}
	return pick;
}

static int hole_of(const hole_t *h, const char *p)
{
	for (int i = 0; i < NHOLES; i++)
		if (p >= h[i].at && p < h[i].at + hole_size[i])
			return i;
	return -1;
}

/* Fills the free tail the last grow left, so the holes are the only free
 * blocks (else worst and next fit would rather take the tail). */
static void fill_tail(hl_heap_t *h)
{
	double tail = lab_stat(h, "policy_stats.free_bytes"), header = lab_stat(h, "policy_stats.header_bytes");
	if (tail > header)
		hl_malloc(h, (size_t)(tail - header));
}

/* Builds the four holes on a fresh heap and serves the three requests. */
static void scenario(const char *fit)
{
	char conf[64];
	snprintf(conf, sizeof conf, "fit:%s,order:address", fit);
	hl_heap_t *h = lab_heap("firstfit", conf);
	hole_t holes[NHOLES];
	for (int i = 0; i < NHOLES; i++) {
		holes[i].at = hl_malloc(h, hole_size[i]);
		holes[i].room = hole_size[i];
		hl_malloc(h, 16); /* a live block keeps the holes apart */
	}
	fill_tail(h);
	for (int i = 0; i < NHOLES; i++)
		hl_free(h, holes[i].at);
	lab_snapshot(h, "four-holes", "four holes, before the requests");
	int got[NREQ], want[NREQ];
	for (int r = 0; r < NREQ; r++) {
		want[r] = predict(fit, holes, request[r]);
		char *p = hl_malloc(h, request[r]);
		got[r] = hole_of(holes, p);
		if (got[r] >= 0)
			holes[got[r]].room = (size_t)(holes[got[r]].at + hole_size[got[r]] - (p + request[r]));
	}
	printf("%-5s fit:", fit);
	for (int r = 0; r < NREQ; r++)
		printf("  %zu -> %s%.0d", request[r], got[r] < 0 ? "new space" : "hole ", got[r] + 1);
	printf("\n");
	for (int r = 0; strcmp(fit, "next") && r < NREQ; r++)
		lab_expect(got[r] == want[r], "%s fit puts %zu bytes in hole %d", fit, request[r], want[r] + 1);
	hl_heap_destroy(h);
}

/* Mean utilization of one fit over the traces; *no_realloc gets the mean
 * over the traces that do not grow blocks with realloc. */
static double utilization(const char *fit, const char *const *traces, int ntraces, double *no_realloc)
{
	double sum_nr = 0;
	int n_nr = 0;
	char conf[64], path[4096];
	snprintf(conf, sizeof conf, "fit:%s,order:address", fit);
	const char *dir = getenv("srcdir") ? getenv("srcdir") : ".";
	double sum = 0;
	printf("%-6s", fit);
	for (int i = 0; i < ntraces; i++) {
		snprintf(path, sizeof path, "%s/traces/%s", dir, traces[i]);
		hl_trace_t *t = hl_trace_load(path);
		if (!t) {
			fprintf(stderr, "%s (set srcdir to the source tree)\n", hl_last_error());
			exit(2);
		}
		hl_heap_t *h = lab_heap("firstfit", conf);
		hl_replay_opts_t o = { .verify = true };
		hl_replay_result_t r;
		if (hl_replay(h, t, &o, &r) != 0)
			lab_expect(false, "%s fit replays %s (%s)", fit, traces[i], r.message);
		printf(" %9.1f%%", 100 * r.utilization);
		sum += r.utilization;
		if (strncmp(traces[i], "realloc", 7)) {
			sum_nr += r.utilization;
			n_nr++;
		}
		hl_heap_destroy(h);
		hl_trace_free(t);
	}
	printf(" %9.1f%%\n", 100 * sum / ntraces);
	*no_realloc = n_nr ? sum_nr / n_nr : 0;
	return sum / ntraces;
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 3: free lists and fragmentation");
	if (!lab_has("firstfit"))
		return lab_end();
	printf("holes 1..4 of %zu, %zu, %zu, %zu bytes; requests in order:\n", hole_size[0], hole_size[1],
	       hole_size[2], hole_size[3]);
	for (int f = 0; f < NFITS; f++)
		scenario(fits[f]);
	static const char *const quick[] = { "random-bal.rep", "random2-bal.rep", "binary-bal.rep", "amptjp-bal.rep" };
	static const char *const full[] = { "amptjp-bal.rep", "cccp-bal.rep", "cp-decl-bal.rep", "expr-bal.rep",
					    "coalescing-bal.rep", "random-bal.rep", "random2-bal.rep", "binary-bal.rep",
					    "binary2-bal.rep", "realloc-bal.rep", "realloc2-bal.rep" };
	const char *const *traces = lab_full() ? full : quick;
	int n = lab_full() ? 11 : 4;
	printf("\nutilization (peak requested / peak committed), address-ordered list:\n%-6s", "fit");
	for (int i = 0; i < n; i++)
		printf(" %10.10s", traces[i]);
	printf(" %10s\n", "mean");
	double u[NFITS];
	for (int f = 0; f < NFITS; f++)
		utilization(fits[f], traces, n, &u[f]);
	lab_expect(u[2] > u[3], "without realloc, best fit wastes less than worst fit (%.1f%% vs %.1f%%)", 100 * u[2],
		   100 * u[3]);
	lab_expect(u[0] > u[3], "without realloc, first fit wastes less than worst fit (%.1f%% vs %.1f%%)", 100 * u[0],
		   100 * u[3]);
	return lab_end();
}
