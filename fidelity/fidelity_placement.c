/* heaplab fidelity --placement: where each block goes, on the real
 * allocator and on its model, trace by trace.
 *
 * The trace is read here and written in a flat form (probes/placement_ops.h)
 * to a file that the placement driver (probes/placement.c) maps and
 * performs with the C library's malloc family, once with the real
 * allocator preloaded (nothing for glibc) and once with heaplab's preload
 * library and the family's model: the same program, the same calls, the
 * same kernel placing the mappings, so the only thing that differs is the
 * allocator.  (An in-process replay on a heaplab heap would compare the
 * model's own replay path, not what a program gets through malloc.)
 *
 * Absolute addresses differ between two processes, so each address is
 * read as (region, offset): the region is the aligned stretch of the
 * family's unit that holds it — the allocator's own grain: a 4 KiB page
 * for glibc's heap and jemalloc's slabs, an 8 KiB page for gperftools'
 * spans, a 64 KiB slice for mimalloc's pages — numbered in the order the
 * trace first uses it, and the offset is the address within it.  Two runs
 * are equal when every op returns the same (region, offset): then every
 * malloc gets the same freed block, the blocks of a class lie as far apart,
 * and a new region is opened at the same op.  Where they part, both
 * addresses are shown with what each allocator did: reused the place of
 * which freed block, opened a region, or took a fresh place in one (and how
 * far from the previous block of the same size). */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "heaplab.h"
#include "fidelity.h"
#include "fidelity_spawn.h"
#include "probes/placement_ops.h"

/* The families compared, their model, the region unit, and the blocks
 * whose offset within their first unit the real allocator draws at random:
 * requests above random_above start at a random multiple of random_grain
 * there, so for them only the region is compared (the tolerance). */
/* gperftools 2.10 allocates through its own malloc while its library loads,
 * before main: TCMallocGuard's constructor calls tc_free(tc_malloc(1))
 * before and after ThreadCache::InitTSD, then keeps
 * `new TCMallocImplementation` (a vtable and one size_t: 16 bytes) and,
 * through MallocExtension::Register's InitModule, `new MallocExtension` (a
 * vtable: 8 bytes), both for the life of the process (tcmalloc.cc,
 * malloc_extension.cc).  Those are calls of the library's own C++ code, not
 * of its allocator, so heaplab's preload library does not make them: the
 * model side makes them first (ids after the trace's), and they are not
 * compared.  Without them the first 8- and 16-byte blocks of every trace
 * sit one object lower under the model.  Before them comes libstdc++'s,
 * which libtcmalloc_minimal.so.4 links and whose initialisers run first:
 * the emergency pool for exceptions (eh_alloc.cc), 72,704 bytes on
 * x86-64 with Debian 12's libstdc++ (GCC 12), kept for the process; it
 * takes 9 of the page heap's first 128 pages, and without it the model's
 * free top of the heap is 9 pages longer (seen with a breakpoint on
 * tc_malloc in an empty program run with the library preloaded). */
static const pl_op_t gperftools_load[] = {
	{ 'a', 3, 72704, 0, 1 },
	{ 'a', 0, 1, 0, 1 }, { 'f', 0, 0, 0, 1 }, { 'a', 0, 1, 0, 1 }, { 'f', 0, 0, 0, 1 },
	{ 'a', 1, 16, 0, 1 }, { 'a', 2, 8, 0, 1 },
};

/* libjemalloc.so.2 (Debian 12) links libstdc++.so.6, whose start-up code
 * allocates its emergency exception-handling pool through malloc before
 * main: malloc(72704), kept for the process (eh_alloc.cc; seen on this
 * machine with an interposer preloaded ahead of jemalloc).  That call is
 * the first the allocator serves, so jemalloc's first extent holds that
 * block and its first GC step (the block's 80 KiB pass the 64 KiB its
 * allocation counter waits for) comes before the trace; heaplab's preload
 * library links no libstdc++, so the model side makes the call first. */
static const pl_op_t jemalloc_load[] = { { 'a', 0, 72704, 0, 1 } };

static const struct pl_family {
	const char *family;
	uintptr_t unit;
	size_t random_above;
	uintptr_t random_grain;
	const pl_op_t *load;  /* the real library's own calls at load */
	size_t nload;
} families[] = {
	{ "glibc", 4096, 0, 0, NULL, 0 },
	/* jemalloc 5.3's cache_oblivious (on by default): a large extent
	 * (above SC_SMALL_MAXCLASS, 14 KiB with 4 KiB pages) is a page longer
	 * than its size class, and the block starts at a random cache line of
	 * that first page (extent_addr_randomize, from a PRNG seeded with the
	 * arena's address, so it changes from run to run) */
	{ "jemalloc", 4096, 14336, 64, jemalloc_load, sizeof jemalloc_load / sizeof jemalloc_load[0] },
	{ "mimalloc", 65536, 0, 0, NULL, 0 },
	{ "tcmalloc", 8192, 0, 0, gperftools_load,
	  sizeof gperftools_load / sizeof gperftools_load[0] },
};

static const struct pl_family *find_family(const char *name)
{
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
		if (!strcmp(families[i].family, name))
			return &families[i];
	return NULL;
}

bool fid_placement_family(const char *family)
{
	return find_family(family) != NULL;
}

const char *fid_placement_model(const char *family)
{
	return find_family(family) ? hl_policy_of_family(family) : NULL;
}

#define say(out, st, ...) fid_say((out)->text, sizeof (out)->text, &(out)->status, (st), __VA_ARGS__)

/* The trace's block ops in flat form, after the family's load-time ops
 * (their ids after the trace's), with the trace op each came from. */
static pl_ops_t *flatten(const hl_trace_t *t, const struct pl_family *fam, size_t **origin)
{
	size_t n = hl_trace_ops(t) + fam->nload, kept = 0;
	pl_ops_t *ops = calloc(1, sizeof *ops + n * sizeof(pl_op_t));
	*origin = calloc(n ? n : 1, sizeof **origin);
	if (!ops || !*origin) {
		free(ops);
		free(*origin);
		return NULL;
	}
	ops->magic = PL_MAGIC;
	long base = hl_trace_max_id(t);
	for (size_t i = 0; i < fam->nload; i++) {
		ops->op[kept] = fam->load[i];
		ops->op[kept].id += base;
		if (ops->op[kept].id >= ops->nids)
			ops->nids = ops->op[kept].id + 1;
		(*origin)[kept++] = SIZE_MAX;
	}
	for (size_t i = 0; i < hl_trace_ops(t); i++) {
		char kind = hl_trace_op_kind(t, i);
		long id = hl_trace_op_id(t, i);
		if (!strchr("acmrf", kind) || id < 0)
			continue; /* thread switch, snapshot, exit, free(NULL) */
		pl_op_t *op = &ops->op[kept];
		*op = (pl_op_t){ .kind = kind, .id = id, .size = hl_trace_op_size(t, i) };
		if (kind == 'c' || kind == 'm') {
			/* the API gives c's total and not m's alignment: read both
			 * from the op's text, "c ID COUNT SIZE" / "m ID ALIGN SIZE" */
			char text[96], k;
			long tid;
			if (sscanf(hl_trace_op_text(t, i, text, sizeof text), "%c %ld %zu %zu", &k, &tid, &op->aux,
				   &op->size) != 4)
				continue;
		}
		if (id >= ops->nids)
			ops->nids = id + 1;
		(*origin)[kept++] = i;
	}
	ops->nops = kept;
	return ops;
}

static bool write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && write(fd, data, len) == (ssize_t)len;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Runs the driver on one side; the addresses (nops words), or NULL with
 * out->text saying why. */
static uintptr_t *run_driver(const fid_side_t *side, const char *driver, const char *ops_path, const char *addr_path,
			     size_t nops, fid_outcome_t *o, fid_placement_t *out)
{
	size_t len = (nops ? nops : 1) * sizeof(uintptr_t);
	uintptr_t *zero = calloc(1, len);
	if (!zero || !write_file(addr_path, zero, len)) {
		free(zero);
		say(out, FID_FAIL, "cannot write %s: %s", addr_path, strerror(errno));
		return NULL;
	}
	fid_words_t argv = { 0 };
	fid_words_add(&argv, driver);
	fid_words_add(&argv, ops_path);
	fid_words_add(&argv, addr_path);
	bool started = fid_side_run(side, &argv, o);
	fid_words_free(&argv);
	const char *why = fid_outcome_last_line(o);
	if (!started)
		say(out, FID_FAIL, "%s side: %s", side->name, o->err);
	else if (o->timed_out)
		say(out, FID_FAIL, "%s side timed out after %g s", side->name, side->timeout);
	else if (WIFSIGNALED(o->status))
		say(out, FID_FAIL, "%s side killed by signal %d%s%s", side->name, WTERMSIG(o->status), *why ? ": " : "", why);
	else if (WEXITSTATUS(o->status))
		say(out, FID_FAIL, "%s side exited %d%s%s", side->name, WEXITSTATUS(o->status), *why ? ": " : "", why);
	int fd = out->status == FID_FAIL ? -1 : open(addr_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && read(fd, zero, len) != (ssize_t)len)
		say(out, FID_FAIL, "%s side: the addresses file is short", side->name);
	if (fd >= 0)
		close(fd);
	if (out->status == FID_FAIL) {
		free(zero);
		return NULL;
	}
	return zero;
}

/* ---- reading the addresses ------------------------------------------------ */

/* One side's addresses read as places. */
typedef struct side_places {
	const uintptr_t *addr;  /* per op: what it returned (0 after a free) */
	uintptr_t *before;      /* per op: the block's address before it (f, r) */
	size_t *region;         /* per op: the region's number, from 1 (0: none) */
	size_t regions;
} side_places_t;

/* An open-addressing map from a region's first address to its number. */
typedef struct region_map {
	uintptr_t *key;
	size_t *val, cap;
} region_map_t;

static size_t region_of(region_map_t *m, uintptr_t base, size_t *count)
{
	size_t i = (size_t)((base >> 12) * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
	while (m->key[i] && m->key[i] != base + 1)
		i = (i + 1) & (m->cap - 1);
	if (!m->key[i]) {
		m->key[i] = base + 1;
		m->val[i] = ++*count;
	}
	return m->val[i];
}

static bool read_places(const pl_ops_t *ops, const uintptr_t *addr, uintptr_t unit, side_places_t *s)
{
	size_t n = ops->nops, cap = 64;
	while (cap < 2 * n)
		cap *= 2;
	region_map_t m = { calloc(cap, sizeof *m.key), calloc(cap, sizeof *m.val), cap };
	uintptr_t *last = calloc((size_t)ops->nids + 1, sizeof *last);
	*s = (side_places_t){ addr, calloc(n + 1, sizeof *s->before), calloc(n + 1, sizeof *s->region), 0 };
	bool ok = m.key && m.val && last && s->before && s->region;
	for (size_t i = 0; ok && i < n; i++) {
		const pl_op_t *op = &ops->op[i];
		s->before[i] = last[op->id];
		last[op->id] = addr[i];
		if (addr[i] && !op->model_only)
			s->region[i] = region_of(&m, addr[i] & ~(unit - 1), &s->regions);
	}
	free(m.key);
	free(m.val);
	free(last);
	return ok;
}

static void places_free(side_places_t *s)
{
	free(s->before);
	free(s->region);
}

/* What the allocator did at op @p i, in words. */
static void describe(const pl_ops_t *ops, const side_places_t *s, const struct pl_family *fam, size_t i, char *buf,
		     size_t len)
{
	uintptr_t unit = fam->unit;
	size_t skip = fam->nload; /* ops are numbered from the trace's first */
	const pl_op_t *op = &ops->op[i];
	uintptr_t a = s->addr[i];
	if (!a) {
		snprintf(buf, len, "NULL");
		return;
	}
	int w = snprintf(buf, len, "%#lx = region %zu +%#lx: ", (unsigned long)a, s->region[i],
			 (unsigned long)(a & (unit - 1)));
	buf += w;
	len -= (size_t)w;
	if (op->kind == 'r' && s->before[i] == a) {
		snprintf(buf, len, "kept block %ld in place", op->id);
		return;
	}
	for (size_t j = i; j-- > 0;) {
		const pl_op_t *o = &ops->op[j];
		bool left = (o->kind == 'f' || (o->kind == 'r' && s->addr[j] != s->before[j])) && s->before[j] == a;
		if (left && o->model_only) {
			snprintf(buf, len, "reused the place of a block the library freed at load");
			return;
		}
		if (left) {
			snprintf(buf, len, "reused the place of block %ld (freed at op %zu)", o->id, j + 1 - skip);
			return;
		}
		if (s->addr[j] == a)
			break;
	}
	bool opened = true;
	for (size_t j = 0; j < i && opened; j++)
		opened = s->region[j] != s->region[i];
	w = snprintf(buf, len, opened ? "opened region %zu" : "a fresh place in region %zu", s->region[i]);
	buf += w;
	len -= (size_t)w;
	for (size_t j = i; j-- > 0;)
		if (ops->op[j].kind != 'f' && !ops->op[j].model_only && ops->op[j].size == op->size && s->addr[j]) {
			snprintf(buf, len, ", %+ld bytes from block %ld (the last of %zu bytes, op %zu)",
				 (long)(a - s->addr[j]), ops->op[j].id, op->size, j + 1 - skip);
			return;
		}
}

/* Compares the two sides op by op; fills @p out. */
/* The op's request in bytes. */
static size_t request(const pl_op_t *op)
{
	return op->kind == 'c' ? op->aux * op->size : op->size;
}

/* True when the two offsets within the region count as the same: equal, or,
 * for a block the real allocator places at random, both on the grain. */
static bool same_offset(const struct pl_family *fam, const pl_op_t *op, uintptr_t ra, uintptr_t ma)
{
	uintptr_t ro = ra & (fam->unit - 1), mo = ma & (fam->unit - 1);
	if (ro == mo)
		return true;
	return fam->random_above && request(op) > fam->random_above && ro % fam->random_grain == 0 &&
	       mo % fam->random_grain == 0;
}

static void compare(const hl_trace_t *t, const pl_ops_t *ops, const size_t *origin, const side_places_t *real,
		    const side_places_t *model, const struct pl_family *fam, fid_placement_t *out)
{
	size_t placed = 0;
	for (size_t i = 0; i < ops->nops; i++) {
		if (ops->op[i].kind == 'f' || ops->op[i].model_only)
			continue;
		uintptr_t ra = real->addr[i], ma = model->addr[i];
		bool same = (!ra == !ma) && real->region[i] == model->region[i] && (!ra || same_offset(fam, &ops->op[i], ra, ma));
		if (same) {
			placed++;
			continue;
		}
		char text[96], rd[256], md[256];
		describe(ops, real, fam, i, rd, sizeof rd);
		describe(ops, model, fam, i, md, sizeof md);
		out->parted_at = i + 1 - fam->nload;
		say(out, FID_FAIL, "part at op %zu (line %u: %s), after %zu equal placements; real %s; model %s", out->parted_at,
		    hl_trace_op_line(t, origin[i]), hl_trace_op_text(t, origin[i], text, sizeof text), placed, rd, md);
		out->placed = placed;
		return;
	}
	out->placed = placed;
	say(out, FID_PASS, "equal (%zu placements, %zu regions)", placed, real->regions);
}

void fid_placement_run(const char *family, const char *trace_path, const fid_paths_t *paths, fid_placement_t *out)
{
	memset(out, 0, sizeof *out);
	const struct pl_family *fam = find_family(family);
	const char *real_lib = fam ? fid_real_preload(family, NULL) : NULL;
	char driver[4096];
	snprintf(driver, sizeof driver, "%s/placement", paths->probes_dir);
	if (!fam) {
		say(out, FID_SKIP, "no placement comparison for family %s", family);
		return;
	}
	if (*HL_SANITIZERS_BUILD) {
		say(out, FID_SKIP, "this heaplab is built with -fsanitize=%s, which owns malloc: nothing can be preloaded",
		    HL_SANITIZERS_BUILD);
		return;
	}
	if (*real_lib && access(real_lib, R_OK) != 0) {
		say(out, FID_SKIP, "%s is not installed", real_lib);
		return;
	}
	const char *policy = hl_policy_of_family(fam->family);
	if (!policy) {
		say(out, FID_SKIP, "no compiled-in policy models %s", fam->family);
		return;
	}
	if (access(driver, X_OK) != 0) {
		say(out, FID_SKIP, "the driver %s was not built", driver);
		return;
	}
	hl_trace_t *t = hl_trace_load(trace_path);
	if (!t) {
		say(out, FID_FAIL, "%s", hl_last_error());
		return;
	}
	size_t *origin = NULL;
	pl_ops_t *ops = flatten(t, fam, &origin);
	char dir[] = "/tmp/heaplab-placement-XXXXXX", ops_path[64], real_path[64], model_path[64];
	fid_outcome_t *o = calloc(1, sizeof *o);
	if (!ops || !o || !mkdtemp(dir)) {
		say(out, FID_FAIL, "cannot set up the run: %s", strerror(errno ? errno : ENOMEM));
	} else {
		snprintf(ops_path, sizeof ops_path, "%s/ops", dir);
		snprintf(real_path, sizeof real_path, "%s/real", dir);
		snprintf(model_path, sizeof model_path, "%s/model", dir);
		out->ops = ops->nops - fam->nload;
		const double timeout = 60;
		fid_side_t real = { "real", real_lib, NULL, NULL, NULL, timeout };
		fid_side_t model = { "model", paths->preload, policy, hl_policy_family_conf(policy), NULL, timeout };
		uintptr_t *ra = NULL, *ma = NULL;
		side_places_t rp = { 0 }, mp = { 0 };
		if (!write_file(ops_path, ops, sizeof *ops + ops->nops * sizeof(pl_op_t)))
			say(out, FID_FAIL, "cannot write %s: %s", ops_path, strerror(errno));
		else if ((ra = run_driver(&real, driver, ops_path, real_path, ops->nops, o, out)) &&
			 (ma = run_driver(&model, driver, ops_path, model_path, ops->nops, o, out))) {
			if (read_places(ops, ra, fam->unit, &rp) && read_places(ops, ma, fam->unit, &mp))
				compare(t, ops, origin, &rp, &mp, fam, out);
			else
				say(out, FID_FAIL, "out of memory");
		}
		places_free(&rp);
		places_free(&mp);
		free(ra);
		free(ma);
		unlink(ops_path);
		unlink(real_path);
		unlink(model_path);
		rmdir(dir);
	}
	free(o);
	free(ops);
	free(origin);
	hl_trace_free(t);
}
