/* heaplab fidelity: each model against the real allocator it claims to
 * model, row by row (fidelity/README.md).  Finds the rows files and probes,
 * runs the chosen rows (fidelity_run.c), prints one table. */
#include "config.h"
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "../fidelity/fidelity.h"

#ifndef HL_FIDELITY_DIR
#define HL_FIDELITY_DIR "fidelity"
#endif
#ifndef HL_PKGDATADIR
#define HL_PKGDATADIR "/usr/local/share/heaplab"
#endif
#ifndef HL_PKGLIBEXECDIR
#define HL_PKGLIBEXECDIR "/usr/local/libexec/heaplab"
#endif

enum { MAX_FAMILIES = 16, VALUE_COLUMN = 20 };
typedef enum format { FMT_TABLE, FMT_BRIEF, FMT_JSON, FMT_MARKDOWN, FMT_LIST } format_t;

static int usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab fidelity [--family F[,F...]]... [--row GLOB] [--check]\n"
		"                        [--json | --markdown | --brief | --list]\n"
		"       heaplab fidelity --placement [--family F[,F...]]... [--check] TRACE...\n"
		"Runs each row's probe on the real allocator and on the heaplab policy that\n"
		"models it, and prints claim | real | model | verdict.  Families: glibc,\n"
		"jemalloc, mimalloc, tcmalloc, pymalloc, and any other whose rows file a\n"
		"policy's folder brings (default: every family with a rows file).  --row keeps the rows whose id matches GLOB; --check exits 1 when a\n"
		"row fails; --brief prints one PASS/FAIL/SKIP line per row, --markdown the\n"
		"table of bench/FIDELITY.md, --json one object; --list prints the rows\n"
		"without running them.  Rows come from $HEAPLAB_FIDELITY_DIR, the source\n"
		"tree (the folder of the policy that models each family) or\n"
		"%s/fidelity; probes from $HEAPLAB_FIDELITY_PROBES, the\n"
		"build tree or %s.  The row format: fidelity/README.md.\n"
		"--placement runs each TRACE through a driver program on the real allocator\n"
		"and on the policy that models it (glibc, jemalloc, mimalloc, tcmalloc;\n"
		"default: all four; `heaplab policies --verbose` names each family's\n"
		"model), reads every address as (region, offset) with regions numbered in\n"
		"order of first use, and prints per trace \"equal\" or the first op where\n"
		"the two part, with both addresses and what each allocator did; then per\n"
		"family \"placement F: N of M traces equal\".\n"
		"--check exits 1 when a trace is not equal.\n",
		HL_PKGDATADIR, HL_PKGLIBEXECDIR);
	return out == stdout ? 0 : 2;
}

static bool is_dir_with(const char *dir, const char *entry)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, entry);
	return access(path, F_OK) == 0;
}

static const char *rows_dir(void)
{
	const char *env = getenv("HEAPLAB_FIDELITY_DIR");
	if (env && *env)
		return env;
	if (is_dir_with(HL_FIDELITY_DIR, "README.md"))
		return HL_FIDELITY_DIR;
	return HL_PKGDATADIR "/fidelity";
}

/* The probes: beside the heaplab binary in a build tree, else installed. */
static const char *probes_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("HEAPLAB_FIDELITY_PROBES");
	if (env && *env)
		return env;
	char exe[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(dir, sizeof dir, "%s/fidelity/probes", exe);
			if (access(dir, F_OK) == 0)
				return dir;
		}
	}
	return HL_PKGLIBEXECDIR;
}

/* Adds to @p fams the family of every rows file @p pattern matches that
 * is not there yet (its file name without ".rows"). */
static void glob_families(const char *pattern, const char **fams, size_t *n)
{
	glob_t g;
	if (glob(pattern, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc && *n < MAX_FAMILIES; i++) {
			const char *base = strrchr(g.gl_pathv[i], '/') ? strrchr(g.gl_pathv[i], '/') + 1 : g.gl_pathv[i];
			char *fam = strndup(base, strlen(base) - strlen(".rows"));
			bool seen = !fam;
			for (size_t k = 0; k < *n && !seen; k++)
				seen = !strcmp(fams[k], fam);
			if (seen)
				free(fam);
			else
				fams[(*n)++] = fam;
		}
	globfree(&g);
}

/* The families there are: heaplab's own (fid_families, in table order),
 * then any other a rows file brings, by its name, in name order: in DIR,
 * or in the source tree the folder of the policy that models it
 * (policies/NAME/FAMILY.rows beside DIR).  Found once. */
static const char *const *families(const char *dir)
{
	static const char *fams[MAX_FAMILIES + 1];
	static size_t n;
	if (n)
		return fams;
	for (size_t i = 0; fid_families[i]; i++)
		fams[n++] = fid_families[i];
	char pattern[PATH_MAX];
	snprintf(pattern, sizeof pattern, "%s/*.rows", dir);
	glob_families(pattern, fams, &n);
	snprintf(pattern, sizeof pattern, "%s/../policies/*/*.rows", dir);
	glob_families(pattern, fams, &n);
	return fams;
}

static bool known_family(const char *dir, const char *name)
{
	for (const char *const *f = families(dir); *f; f++)
		if (!strcmp(*f, name))
			return true;
	return false;
}

/* Adds the families of "a,b" to the list; 2 after a message when one is unknown. */
static int add_families(const char *dir, const char *arg, const char **fams, size_t *n)
{
	static char buf[512];
	static size_t used;
	size_t len = strlen(arg) + 1;
	if (used + len > sizeof buf)
		return cli_error("fidelity: too many --family options");
	char *copy = memcpy(buf + used, arg, len);
	used += len;
	for (char *save = NULL, *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		if (!known_family(dir, f)) {
			char names[512] = "";
			for (const char *const *k = families(dir); *k; k++)
				snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", *names ? ", " : "", *k);
			return cli_error("fidelity: unknown family '%s' (%s)", f, names);
		}
		if (*n < MAX_FAMILIES)
			fams[(*n)++] = f;
	}
	return 0;
}

/* Where family @p fam's rows are: DIR/FAMILY.rows (installed, or a
 * folder of rows given by HEAPLAB_FIDELITY_DIR); in the source tree, the
 * folder of the policy that models the family, policies/NAME/FAMILY.rows
 * beside DIR.  @p path gets the first that exists, else the first. */
static void rows_path(const char *dir, const char *fam, char *path, size_t len)
{
	snprintf(path, len, "%s/%s.rows", dir, fam);
	if (access(path, F_OK) == 0)
		return;
	char pattern[PATH_MAX];
	glob_t g;
	snprintf(pattern, sizeof pattern, "%s/../policies/*/%s.rows", dir, fam);
	if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
		snprintf(path, len, "%s", g.gl_pathv[0]);
	globfree(&g);
}

/* Reads the rows of the chosen families (every family with a file when
 * none was chosen), keeping those whose id matches @p glob. */
static int load_rows(const char *dir, const char **fams, size_t nfams, const char *glob, fid_row_t **rows, size_t *n)
{
	bool chosen = nfams > 0;
	if (!chosen)
		for (const char *const *f = families(dir); *f; f++)
			fams[nfams++] = *f;
	for (size_t i = 0; i < nfams; i++) {
		char path[PATH_MAX];
		rows_path(dir, fams[i], path, sizeof path);
		if (access(path, F_OK) != 0) {
			if (chosen)
				return cli_error("fidelity: no rows for %s (%s)", fams[i], path);
			continue;
		}
		if (fid_rows_read(path, fams[i], rows, n))
			return 2;
	}
	size_t kept = 0;
	for (size_t i = 0; i < *n; i++)
		if (!glob || fnmatch(glob, (*rows)[i].id, 0) == 0)
			(*rows)[kept++] = (*rows)[i];
		else
			fid_row_clear(&(*rows)[i]);
	if (glob && !kept)
		return cli_error("fidelity: no row matches '%s'", glob);
	*n = kept;
	return 0;
}

static void progress(size_t i, size_t n, const char *id)
{
	if (isatty(2))
		fprintf(stderr, "\r[%zu/%zu] %s ...\033[K", i + 1, n, id);
}

static void progress_clear(void)
{
	if (isatty(2))
		fputs("\r\033[K", stderr);
}

static const char *status_word(fid_status_t s)
{
	return s == FID_PASS ? "PASS" : s == FID_FAIL ? "FAIL" : "SKIP";
}

/* The verdict column: PASS verdicts as they are, others with their status. */
static const char *verdict_text(const fid_result_t *r, char *buf, size_t len)
{
	if (r->status == FID_PASS)
		return r->verdict;
	snprintf(buf, len, "%s: %s", status_word(r->status), r->verdict);
	return buf;
}

static int width(const char *s, int w)
{
	int n = (int)strlen(s);
	return n > w ? n : w;
}

/* A value cut to the table's column (--json and --markdown show it whole). */
static const char *cut(const char *v, char *buf, size_t len)
{
	if (strlen(v) <= VALUE_COLUMN)
		return v;
	snprintf(buf, len, "%.*s...", VALUE_COLUMN - 3, v);
	return buf;
}

static void print_table(const fid_row_t *rows, const fid_result_t *res, size_t n)
{
	int wid = 3, wclaim = 5, wreal = 4, wmodel = 5;
	char rbuf[VALUE_COLUMN + 1], mbuf[VALUE_COLUMN + 1];
	for (size_t i = 0; i < n; i++) {
		wid = width(rows[i].id, wid);
		wclaim = width(rows[i].claim, wclaim);
		wreal = width(cut(res[i].real, rbuf, sizeof rbuf), wreal);
		wmodel = width(cut(res[i].model, mbuf, sizeof mbuf), wmodel);
	}
	printf("%-*s  %-*s  %-*s  %-*s  %s\n", wid, "row", wclaim, "claim", wreal, "real", wmodel, "model", "verdict");
	for (size_t i = 0; i < n; i++) {
		char buf[300];
		printf("%-*s  %-*s  %-*s  %-*s  %s\n", wid, rows[i].id, wclaim, rows[i].claim, wreal,
		       cut(res[i].real, rbuf, sizeof rbuf), wmodel, cut(res[i].model, mbuf, sizeof mbuf),
		       verdict_text(&res[i], buf, sizeof buf));
		if (rows[i].why)
			printf("%-*s  why: %s\n", wid, "", rows[i].why);
	}
}

/* A markdown cell: '|' escaped, so a claim cannot break the table. */
static void md_cell(const char *s)
{
	fputs("| ", stdout);
	for (; *s; s++)
		fputs(*s == '|' ? "\\|" : (char[2]){ *s, 0 }, stdout);
	fputc(' ', stdout);
}

static void print_markdown(const fid_row_t *rows, const fid_result_t *res, size_t n)
{
	printf("| row | claim | real | model | verdict | why |\n| --- | --- | --- | --- | --- | --- |\n");
	for (size_t i = 0; i < n; i++) {
		char buf[300];
		md_cell(rows[i].id);
		md_cell(rows[i].claim);
		md_cell(res[i].real);
		md_cell(res[i].model);
		md_cell(verdict_text(&res[i], buf, sizeof buf));
		md_cell(rows[i].why ? rows[i].why : "");
		puts("|");
	}
}

static void print_json(const fid_row_t *rows, const fid_result_t *res, size_t n, const size_t counts[3])
{
	printf("{\"rows\":[");
	for (size_t i = 0; i < n; i++) {
		printf("%s{", i ? "," : "");
		cli_json_str("row", rows[i].id, true);
		cli_json_str("family", rows[i].family, true);
		cli_json_str("claim", rows[i].claim, true);
		cli_json_str("compare", rows[i].compare_text, true);
		cli_json_str("real", res[i].real, true);
		cli_json_str("model", res[i].model, true);
		cli_json_str("status", status_word(res[i].status), true);
		cli_json_str("verdict", res[i].verdict, true);
		cli_json_str("why", rows[i].why, false);
		putchar('}');
	}
	printf("],\"passed\":%zu,\"failed\":%zu,\"skipped\":%zu}\n", counts[FID_PASS], counts[FID_FAIL],
	       counts[FID_SKIP]);
}

static void print_brief(const fid_row_t *rows, const fid_result_t *res, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		printf("%s %s", status_word(res[i].status), rows[i].id);
		if (res[i].status == FID_FAIL)
			printf(": %s (real '%s', model '%s')", res[i].verdict, res[i].real, res[i].model);
		else if (res[i].status == FID_SKIP)
			printf(": %s", res[i].verdict);
		putchar('\n');
	}
}

/* --placement: every trace on every chosen family (all four when none). */
static int run_placement(const char **fams, size_t nfams, char **traces, size_t ntraces, bool check)
{
	const fid_paths_t paths = { probes_dir(), cli_preload_path(), cli_record_path() };
	const char *all[MAX_FAMILIES];
	size_t nall = 0, unequal = 0;
	for (size_t i = 0; i < nfams; i++)
		if (!fid_placement_family(fams[i]))
			return cli_error("fidelity: --placement compares glibc, jemalloc, mimalloc and tcmalloc, not %s", fams[i]);
	if (!nfams)
		for (size_t i = 0; fid_families[i]; i++)
			if (fid_placement_family(fid_families[i]))
				all[nall++] = fid_families[i];
	if (!nfams) {
		fams = all;
		nfams = nall;
	}
	/* every trace is read and checked before the first line is printed */
	for (size_t i = 0; i < ntraces; i++) {
		hl_trace_t *t = cli_load_trace(traces[i], false);
		if (!t)
			return 2;
		hl_trace_free(t);
	}
	fid_placement_t *res = malloc(sizeof *res);
	if (!res)
		return cli_error("fidelity: out of memory");
	for (size_t f = 0; f < nfams; f++) {
		size_t equal = 0, run = 0;
		for (size_t i = 0; i < ntraces; i++) {
			progress(i, ntraces, traces[i]);
			fid_placement_run(fams[f], traces[i], &paths, res);
			progress_clear();
			const char *base = strrchr(traces[i], '/') ? strrchr(traces[i], '/') + 1 : traces[i];
			printf("%s %s: %s%s\n", fams[f], base, res->status == FID_SKIP ? "SKIP: " : "", res->text);
			equal += res->status == FID_PASS;
			run += res->status != FID_SKIP;
		}
		printf("placement %s (%s): %zu of %zu traces equal\n", fams[f], fid_placement_model(fams[f]), equal, run);
		unequal += run - equal;
	}
	fflush(stdout);
	free(res);
	return check && unequal ? 1 : 0;
}

static int run_rows(const fid_row_t *rows, size_t n, format_t fmt, bool check)
{
	fid_result_t *res = calloc(n ? n : 1, sizeof *res);
	if (!res)
		return cli_error("fidelity: out of memory");
	const fid_paths_t paths = { probes_dir(), cli_preload_path(), cli_record_path() };
	size_t counts[3] = { 0 };
	for (size_t i = 0; i < n; i++) {
		progress(i, n, rows[i].id);
		fid_row_run(&rows[i], &paths, &res[i]);
		counts[res[i].status]++;
	}
	progress_clear();
	if (fmt == FMT_JSON)
		print_json(rows, res, n, counts);
	else if (fmt == FMT_MARKDOWN)
		print_markdown(rows, res, n);
	else if (fmt == FMT_BRIEF)
		print_brief(rows, res, n);
	else
		print_table(rows, res, n);
	if (fmt != FMT_JSON)
		printf("%sfidelity: %zu passed, %zu failed, %zu skipped\n", fmt == FMT_TABLE || fmt == FMT_MARKDOWN ? "\n" : "",
		       counts[FID_PASS], counts[FID_FAIL], counts[FID_SKIP]);
	free(res);
	return check && counts[FID_FAIL] ? 1 : 0;
}

int cmd_fidelity(int argc, char **argv)
{
	const char *fams[MAX_FAMILIES], *glob = NULL, *value;
	size_t nfams = 0;
	format_t fmt = FMT_TABLE;
	bool check = false, placement = false;
	char *traces[argc];
	size_t ntraces = 0;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--family", &value))) {
			if (r < 0 || add_families(rows_dir(), value, fams, &nfams))
				return 2;
		} else if ((r = cli_opt(argc, argv, &i, "--row", &glob))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--json"))
			fmt = FMT_JSON;
		else if (!strcmp(argv[i], "--markdown"))
			fmt = FMT_MARKDOWN;
		else if (!strcmp(argv[i], "--brief"))
			fmt = FMT_BRIEF;
		else if (!strcmp(argv[i], "--list"))
			fmt = FMT_LIST;
		else if (!strcmp(argv[i], "--check"))
			check = true;
		else if (!strcmp(argv[i], "--placement"))
			placement = true;
		else if (!strcmp(argv[i], "--help"))
			return usage(stdout);
		else if (argv[i][0] != '-')
			traces[ntraces++] = argv[i];
		else
			return cli_error("fidelity: unknown argument '%s' (try --help)", argv[i]);
	}
	if (placement && (glob || fmt != FMT_TABLE))
		return cli_error("fidelity: --placement takes --family, --check and traces only");
	if (placement && !ntraces)
		return cli_error("fidelity: --placement needs at least one trace (e.g. traces/*.rep)");
	if (ntraces && !placement)
		return cli_error("fidelity: unknown argument '%s' (try --help)", traces[0]);
	if (placement)
		return run_placement(fams, nfams, traces, ntraces, check);
	fid_row_t *rows = NULL;
	size_t n = 0;
	int rc = 2;
	if (load_rows(rows_dir(), fams, nfams, glob, &rows, &n) == 0) {
		rc = 0;
		if (fmt == FMT_LIST)
			for (size_t i = 0; i < n; i++)
				printf("%s\t%s\n", rows[i].id, rows[i].claim);
		else
			rc = run_rows(rows, n, fmt, check);
	}
	fid_rows_free(rows, n);
	return rc;
}
