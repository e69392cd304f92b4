/*
 * percpu_size.c — the two size-class tables of `percpu`.
 *
 * front:percpu uses TCMalloc's own table: google/tcmalloc, file
 * tcmalloc/size_classes.cc at commit 078e62ee47a8 (2024), the table for
 * 8 KiB pages (TCMALLOC_PAGE_SHIFT 13) and 16-byte default new alignment:
 * 85 classes from 8 bytes to 256 KiB, each with its pages per span and
 * its batch (objects moved at once between the tiers).  The rows below
 * were written out by hand from it, in this file's own format.
 *
 * front:thread uses the classes gperftools 2.10 (Debian's
 * libtcmalloc_minimal.so.4) computes at start-up in SizeMap::Init
 * (src/common.cc), rebuilt here from its rule: sizes step by their
 * alignment (8 up to 16, 16 up to 128, then an eighth of the power of two
 * below), each gets the fewest pages that waste at most 1/8 of the span
 * and hold a quarter of a batch, and a size whose span holds as many
 * objects as the previous class's replaces it.  A batch is 64 KiB / size,
 * between 2 and 32 objects: the source read (a later gperftools) caps it
 * at 512, but only the cap of 32 gives Debian's 2.10 library's ladder
 * (with 512 a class of 832 bytes appears that 2.10 does not have).
 * policies/percpu/percpu_tcmalloc.sh compares every usable size from 1 to 70,000
 * bytes with the real library.
 */
#include "config.h"
#include <string.h>
#include "percpu.h"

/* TCMalloc, 8 KiB pages, 16-byte alignment: bytes, pages, batch. */
static const uint32_t pc_tcmalloc_rows[][3] = {
	{ 8, 1, 32 },      { 16, 1, 32 },     { 32, 1, 32 },     { 48, 1, 32 },
	{ 64, 1, 32 },     { 80, 1, 32 },     { 96, 1, 32 },     { 112, 1, 32 },
	{ 128, 1, 32 },    { 144, 1, 32 },    { 160, 1, 32 },    { 176, 1, 32 },
	{ 192, 1, 32 },    { 208, 1, 32 },    { 224, 1, 32 },    { 240, 1, 32 },
	{ 256, 1, 32 },    { 272, 1, 32 },    { 288, 1, 32 },    { 304, 1, 32 },
	{ 320, 1, 32 },    { 336, 1, 32 },    { 352, 1, 32 },    { 368, 1, 32 },
	{ 384, 1, 32 },    { 400, 1, 32 },    { 416, 1, 32 },    { 448, 1, 32 },
	{ 480, 1, 32 },    { 512, 1, 32 },    { 576, 1, 32 },    { 640, 1, 32 },
	{ 704, 1, 32 },    { 768, 1, 32 },    { 896, 1, 32 },    { 1024, 1, 32 },
	{ 1152, 2, 32 },   { 1280, 2, 32 },   { 1408, 2, 32 },   { 1536, 2, 32 },
	{ 1792, 2, 32 },   { 2048, 2, 32 },   { 2304, 2, 28 },   { 2688, 2, 24 },
	{ 2816, 3, 23 },   { 3200, 2, 20 },   { 3456, 3, 18 },   { 3584, 4, 18 },
	{ 4096, 1, 16 },   { 4736, 3, 13 },   { 5376, 2, 12 },   { 6144, 3, 10 },
	{ 6528, 4, 10 },   { 6784, 5, 9 },    { 7168, 7, 9 },    { 8192, 1, 8 },
	{ 9472, 5, 6 },    { 10240, 4, 6 },   { 12288, 3, 5 },   { 13568, 5, 4 },
	{ 14336, 7, 4 },   { 16384, 2, 4 },   { 20480, 5, 3 },   { 24576, 3, 2 },
	{ 28672, 7, 2 },   { 32768, 4, 2 },   { 40960, 5, 2 },   { 49152, 6, 2 },
	{ 57344, 7, 2 },   { 65536, 8, 2 },   { 73728, 9, 2 },   { 81920, 10, 2 },
	{ 90112, 11, 2 },  { 98304, 12, 2 },  { 106496, 13, 2 }, { 122880, 15, 2 },
	{ 131072, 16, 2 }, { 139264, 17, 2 }, { 155648, 19, 2 }, { 163840, 20, 2 },
	{ 180224, 22, 2 }, { 204800, 25, 2 }, { 221184, 27, 2 }, { 237568, 29, 2 },
	{ 262144, 32, 2 },
};

/** @cond HL_COMPILE_CHECKS */
_Static_assert(sizeof pc_tcmalloc_rows / sizeof *pc_tcmalloc_rows == 85, "TCMalloc has 85 classes");
/** @endcond */

/* Fills the derived columns and the request -> class lookup. */
static void pc_classes_finish(pc_classes_t *c)
{
	for (unsigned k = 1; k < c->n; k++) {
		c->stride[k] = c->size[k];
		hl_exact_div_init(c->stride[k], &c->inv[k], &c->tz[k]);
		size_t objs = ((size_t)c->pages[k] << PC_PAGE_SHIFT) / c->stride[k];
		c->nobjs[k] = (uint16_t)(objs > PC_MAX_OBJS ? PC_MAX_OBJS : objs);
	}
	unsigned k = 1;
	for (size_t i = 0; i < sizeof c->lookup; i++) {
		/* the largest request pc_class_of sends to index i */
		size_t n = i <= 128 ? i << 3 : (i - 120) << 7;
		while (k + 1 < c->n && c->size[k] < n)
			k++;
		c->lookup[i] = (uint8_t)(c->size[k] >= n ? k : 0);
	}
}

void pc_classes_tcmalloc(pc_classes_t *c)
{
	memset(c, 0, sizeof *c);
	c->source = "tcmalloc size_classes.cc (078e62ee47a8), 8 KiB pages";
	c->n = 1;
	for (size_t r = 0; r < sizeof pc_tcmalloc_rows / sizeof *pc_tcmalloc_rows; r++, c->n++) {
		c->size[c->n] = pc_tcmalloc_rows[r][0];
		c->pages[c->n] = (uint16_t)pc_tcmalloc_rows[r][1];
		c->batch[c->n] = (uint16_t)pc_tcmalloc_rows[r][2];
	}
	pc_classes_finish(c);
}

/* gperftools' NumMoveSize: about 64 KiB a batch, 2 .. 32 objects. */
static unsigned pc_gperf_batch(size_t size)
{
	int num = (int)(64.0 * 1024.0 / (double)size);
	return num < 2 ? 2 : num > 32 ? 32 : (unsigned)num;
}

/* gperftools' AlignmentForSize (kAlignment 8, kMinAlign 16). */
static size_t pc_gperf_alignment(size_t size)
{
	size_t a = 8;
	if (size >= 128)
		a = ((size_t)1 << hl_log2(size)) / 8;
	else if (size >= 16)
		a = 16;
	return a > PC_PAGE ? PC_PAGE : a;
}

/* Fewest pages that waste at most 1/8 and hold a quarter of a batch. */
static size_t pc_gperf_pages(size_t size)
{
	size_t want = pc_gperf_batch(size) / 4, psize = 0;
	do {
		psize += PC_PAGE;
		while (psize % size > (psize >> 3))
			psize += PC_PAGE;
	} while (psize / size < want);
	return psize >> PC_PAGE_SHIFT;
}

void pc_classes_gperftools(pc_classes_t *c)
{
	memset(c, 0, sizeof *c);
	c->source = "gperftools 2.10 SizeMap::Init rule, 8 KiB pages";
	c->n = 1;
	size_t align = 8;
	for (size_t size = 8; size <= PC_MAX_SMALL && c->n < PC_MAX_CLASSES; size += align) {
		align = pc_gperf_alignment(size);
		size_t pages = pc_gperf_pages(size);
		unsigned prev = c->n - 1;
		if (prev >= 1 && pages == c->pages[prev] &&
		    (pages << PC_PAGE_SHIFT) / size == (pages << PC_PAGE_SHIFT) / c->size[prev]) {
			c->size[prev] = (uint32_t)size; /* same objects per span: widen */
			continue;
		}
		c->size[c->n] = (uint32_t)size;
		c->pages[c->n] = (uint16_t)pages;
		c->n++;
	}
	for (unsigned k = 1; k < c->n; k++)
		c->batch[k] = (uint16_t)pc_gperf_batch(c->size[k]);
	pc_classes_finish(c);
}
