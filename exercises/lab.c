/* The helpers every lab program shares (see lab.h). */
#include "config.h"
#include "lab.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The allocator models, compiled in or not (policies/policies.list). */
const char *const lab_policies[] = {
#define X(name) #name,
	HL_MODEL_POLICY_XLIST
#undef X
	NULL
};

static struct {
	const char *title;
	const char *pictures;  /* directory for snapshots, or NULL */
	bool full;
	int passed, failed, skipped;
	char missing[256];     /* policies already reported missing */
} lab;

void lab_begin(int argc, char **argv, const char *title)
{
	lab.title = title;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--pictures=", 11))
			lab.pictures = argv[i] + 11;
		else if (!strcmp(argv[i], "--pictures") && i + 1 < argc)
			lab.pictures = argv[++i];
		else if (!strcmp(argv[i], "--full"))
			lab.full = true;
		else {
			fprintf(stderr, "usage: %s [--full] [--pictures DIR]\n", argv[0]);
			exit(2);
		}
	}
	if (lab.pictures && mkdir(lab.pictures, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "cannot make %s: %s\n", lab.pictures, strerror(errno));
		exit(2);
	}
	printf("== %s ==\n", title);
}

bool lab_full(void) { return lab.full; }

bool lab_has(const char *policy)
{
	if (hl_policy_summary(policy))
		return true;
	char key[40];
	snprintf(key, sizeof key, " %s ", policy);
	if (!strstr(lab.missing, key)) {
		printf("(policy %s is not compiled in: configure --with-policy=all to see it)\n", policy);
		strncat(lab.missing, key, sizeof lab.missing - strlen(lab.missing) - 1);
	}
	return false;
}

/* Labs measure memory and order, so their heaps run without the debug
 * checker and junk fills of an --enable-debug build, unless the lab asks:
 * the checker after every call makes a 500,000-block lab quadratic, and
 * junk fills would touch pages the policy leaves alone. */
hl_heap_t *lab_heap(const char *policy, const char *conf)
{
	if (!lab_has(policy))
		return NULL;
	char full[512];
	if (!conf || !strstr(conf, "debug:")) {
		snprintf(full, sizeof full, "%s%sdebug:off", conf ? conf : "", conf && *conf ? "," : "");
		conf = full;
	}
	hl_heap_t *h = hl_heap_new(policy, conf);
	if (!h) {
		fprintf(stderr, "%s\n", hl_last_error());
		exit(2);
	}
	return h;
}

double lab_stat(hl_heap_t *h, const char *path)
{
	double v = 0;
	if (hl_stat(h, path, &v) != 0) {
		fprintf(stderr, "policy %s has no statistic %s\n", hl_heap_policy(h), path);
		exit(2);
	}
	return v;
}

double lab_resident_mib(hl_heap_t *h) { return lab_stat(h, "resident_bytes") / (1 << 20); }

bool lab_expect(bool cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("check: ");
	vprintf(fmt, ap);
	printf(": %s\n", cond ? "ok" : "FAILED");
	va_end(ap);
	if (cond)
		lab.passed++;
	else
		lab.failed++;
	return cond;
}

void lab_skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("check: ");
	vprintf(fmt, ap);
	printf(": skipped\n");
	va_end(ap);
	lab.skipped++;
}

void lab_snapshot(hl_heap_t *h, const char *name, const char *title)
{
	if (!lab.pictures)
		return;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.dot", lab.pictures, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	hl_snapshot_dot(h, f, title);
	fclose(f);
	printf("(picture: %s)\n", path);
}

void lab_bar(const char *label, double value, double max, const char *unit)
{
	int n = max > 0 ? (int)(40 * value / max + 0.5) : 0;
	if (n > 40)
		n = 40;
	printf("  %-28s %10.1f %-5s |", label, value, unit);
	for (int i = 0; i < n; i++)
		putchar('#');
	putchar('\n');
}

int lab_end(void)
{
	printf("== %s: %d check(s) ok, %d failed, %d skipped ==\n", lab.title, lab.passed, lab.failed, lab.skipped);
	fflush(stdout);
	if (lab.failed)
		return 1;
	return lab.passed ? 0 : 77;
}
