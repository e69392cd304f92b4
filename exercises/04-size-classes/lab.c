/*
 * Lab 4: size classes and the rounding tax.
 *
 * For every policy: the request -> usable ladder (where the usable size
 * steps up), the mean waste over requests uniform in 1..1024, and the
 * request in 129..4096 that wastes the largest share of its block.
 * `heaplab sizes --policy=NAME` prints the same ladder from the command line.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "../lab.h"

enum { MAX = 4096 };

static size_t usable[MAX + 1];

static void measure(hl_heap_t *h)
{
	for (size_t n = 1; n <= MAX; n++) {
		void *p = hl_malloc(h, n);
		usable[n] = hl_usable_size(h, p);
		hl_free(h, p);
	}
}

static void print_ladder(size_t upto)
{
	printf("  ladder:");
	int col = 0;
	for (size_t n = 1; n <= upto; n++)
		if (n == 1 || usable[n] != usable[n - 1])
			printf("%s%zu->%zu", col++ % 8 ? "  " : "\n    ", n, usable[n]);
	printf("\n");
}

static double mean_waste(size_t lo, size_t hi)
{
	double sum = 0;
	for (size_t n = lo; n <= hi; n++)
		sum += (double)(usable[n] - n);
	return sum / (double)(hi - lo + 1);
}

/* The request of [lo, hi] whose block is wasted the most, as a share. */
static size_t worst_request(size_t lo, size_t hi)
{
	size_t worst = lo;
	for (size_t n = lo; n <= hi; n++)
		if ((double)(usable[n] - n) / (double)usable[n] > (double)(usable[worst] - worst) / (double)usable[worst])
			worst = n;
	return worst;
}

static bool power_of_two_plus_one(size_t n) { return n > 1 && ((n - 1) & (n - 2)) == 0; }

static void facts(const char *policy, double waste)
{
	size_t w = worst_request(129, MAX);
	if (!strcmp(policy, "bins"))
		lab_expect(usable[1] == 24 && usable[24] == 24 && usable[25] == 40,
			   "bins: malloc(1) and malloc(24) get 24 usable bytes, malloc(25) gets 40 (32- and 48-byte chunks)");
	if (!strcmp(policy, "pools")) {
		bool ok = true;
		for (size_t n = 1; n <= 512; n++)
			ok &= usable[n] == ((n + 15) & ~(size_t)15);
		lab_expect(ok, "pools: every request up to 512 is rounded up to a multiple of 16");
	}
	if (!strcmp(policy, "slab") || !strcmp(policy, "sharded")) {
		lab_expect(usable[1024] == 1024 && usable[1025] == 1280, "%s: 1024 fits exactly, 1025 gets 1280", policy);
		lab_expect(power_of_two_plus_one(w), "%s: the most wasteful request above 128 is a power of two plus one (%zu)",
			   policy, w);
		lab_expect(waste / 512.5 < 0.15, "%s: the quarter-power ladder costs under 15%% of the mean request (%.1f%%)",
			   policy, 100 * waste / 512.5);
	}
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 4: size classes and the rounding tax");
	double waste[8] = { 0 };
	const char *names[8];
	int k = 0;
	for (int i = 0; lab_policies[i]; i++) {
		hl_heap_t *h = lab_heap(lab_policies[i], NULL);
		if (!h)
			continue;
		measure(h);
		hl_heap_destroy(h);
		names[k] = lab_policies[i];
		waste[k] = mean_waste(1, 1024);
		size_t w = worst_request(129, MAX);
		printf("\n%s: mean waste over 1..1024 = %.1f bytes (%.1f%% of the mean request); worst above 128: "
		       "%zu -> %zu\n", names[k], waste[k], 100 * waste[k] / 512.5, w, usable[w]);
		print_ladder(lab_full() ? MAX : 1100);
		facts(names[k], waste[k]);
		k++;
	}
	printf("\nmean waste per request, uniform 1..1024:\n");
	for (int i = 0; i < k; i++)
		lab_bar(names[i], waste[i], 64, "bytes");
	int bins = -1, slab = -1;
	for (int i = 0; i < k; i++) {
		bins = strcmp(names[i], "bins") ? bins : i;
		slab = strcmp(names[i], "slab") ? slab : i;
	}
	if (bins >= 0 && slab >= 0)
		lab_expect(waste[bins] < waste[slab], "the 16-byte ladder of bins wastes less than slab's classes below 1 KiB");
	return lab_end();
}
