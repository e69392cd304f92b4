/*
 * Size classes of policy `slab`: jemalloc's ladder and its slab sizes.
 *
 * The ladder: 8, then 16-byte steps up to 128, then four classes in every
 * doubling [2^k, 2^(k+1)): 2^k + j * 2^(k-2) for j = 1..4.  A class is small
 * when it is below four pages (so 14336 is the last small class with 4 KiB
 * pages and 16384 the first large one).  A small class's slab is the least
 * common multiple of the page and the region size, so a slab wastes nothing
 * at its end.  Page size classes (for free extents) are the same ladder
 * counted in pages: 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20 ...
 *
 * The 8-byte class packs its regions 8 bytes apart, 512 to a 4 KiB slab,
 * as jemalloc's tiny class does (sc.h: SC_LG_TINY_MIN 3 below LG_QUANTUM
 * 4): a block of 8 bytes needs only 8-byte alignment (core/policy.h).
 * fidelity rows jemalloc.class8-distance and jemalloc.class8-regions-per-slab.
 */
#include "config.h"
#include <pthread.h>
#include <unistd.h>
#include "slab.h"

static sl_sc_t sl_sc_table;
static pthread_once_t sl_sc_once = PTHREAD_ONCE_INIT;

size_t sl_index2size(const sl_sc_t *sc, unsigned ind)
{
	(void)sc;
	if (ind == 0)
		return 8;
	if (ind <= 8)
		return (size_t)16 * ind;
	unsigned g = (ind - 9) / 4, j = (ind - 9) % 4 + 1;
	unsigned lg = 7 + g;
	return ((size_t)1 << lg) + ((size_t)j << (lg - 2));
}

unsigned sl_size2index(const sl_sc_t *sc, size_t n)
{
	(void)sc;
	if (n <= 8)
		return 0;
	if (n <= 128)
		return (unsigned)((n + 15) >> 4);
	unsigned lg = hl_log2(n - 1);           /* 2^lg < n <= 2^(lg+1) */
	size_t delta = (size_t)1 << (lg - 2);
	size_t j = (n - ((size_t)1 << lg) + delta - 1) / delta;   /* 1..4 */
	return 9 + (lg - 7) * 4 + (unsigned)(j - 1);
}

unsigned sl_psz_ceil(size_t pages)
{
	if (pages <= 4)
		return pages ? (unsigned)pages - 1 : 0;
	unsigned lg = hl_log2(pages - 1);
	size_t delta = (size_t)1 << (lg - 2);
	size_t j = (pages - ((size_t)1 << lg) + delta - 1) / delta;
	unsigned i = 4 + (lg - 2) * 4 + (unsigned)(j - 1);
	return i < SL_NPSZ ? i : SL_NPSZ - 1;
}

size_t sl_psz_pages(unsigned i)
{
	if (i < 4)
		return i + 1;
	unsigned g = (i - 4) / 4, j = (i - 4) % 4 + 1, lg = 2 + g;
	return ((size_t)1 << lg) + ((size_t)j << (lg - 2));
}

/* jemalloc 5.3's sz_psz_quantize_floor in pages, with its sz_large_pad of
 * one page: the largest page size class below @p pages, plus the pad (a
 * size of one page is its own). */
static size_t sl_quantize_floor(size_t pages)
{
	unsigned i = sl_psz_ceil(pages);
	return i ? sl_psz_pages(i - 1) + 1 : pages;
}

unsigned sl_eset_bucket(size_t pages)
{
	return sl_psz_ceil(sl_quantize_floor(pages));
}

unsigned sl_eset_first_bucket(size_t pages)
{
	size_t q = sl_quantize_floor(pages);
	if (q < pages)   /* sz_psz_quantize_ceil: the next quantum up */
		q = sl_psz_pages(sl_psz_ceil(q)) + 1;
	return sl_psz_ceil(q);
}

/* Smallest multiple of the page that is also a multiple of @p size. */
static size_t sl_slab_bytes(size_t page, size_t size)
{
	size_t bytes = page;
	while (bytes % size)
		bytes += page;
	return bytes;
}

static void sl_sc_build(void)
{
	sl_sc_t *sc = &sl_sc_table;
	long pg = sysconf(_SC_PAGESIZE);
	sc->page = pg > 0 ? (size_t)pg : 4096;
	sc->lg_page = hl_log2(sc->page);
	sc->large_min = sc->page << SL_LG_NGROUP;
	unsigned i = 0;
	for (; sl_index2size(sc, i) < sc->large_min && i < SL_NBINS_MAX; i++) {
		size_t size = sl_index2size(sc, i);
		size_t stride = size;
		sc->size[i] = (uint32_t)size;
		sc->stride[i] = (uint32_t)stride;
		sc->slab_size[i] = (uint32_t)sl_slab_bytes(sc->page, stride);
		sc->nregs[i] = (uint32_t)(sc->slab_size[i] / stride);
		hl_exact_div_init(stride, &sc->region_inv[i], &sc->region_shift[i]);
		sc->small_max = size;
	}
	sc->nbins = i;
	for (size_t k = 0; k <= 4096 / 8; k++)
		sc->lookup[k] = (uint8_t)sl_size2index(sc, k ? k * 8 : 1);
}

const sl_sc_t *sl_sc_get(void)
{
	pthread_once(&sl_sc_once, sl_sc_build);
	return &sl_sc_table;
}
