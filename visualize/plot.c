/*
 * Plots: live, committed and resident bytes over time, as a small SVG
 * drawn here (no dependency, the same bytes on every run).
 *
 *   bytes ▲
 *         │      ┌────────── committed
 *         │   ┌──┘ ┌─────── resident ("RSS never comes down")
 *         │ ┌─┘ ╱╲╱╲_____   live
 *         └──────────────────▶ op (trace) or ms (sampled run)
 *
 * The points come from a trace replay (plot_trace) or from the file a
 * `heaplab run --sample-ms N` run wrote (vis_samples_load).
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "vis.h"

enum { PLOT_W = 800, PLOT_H = 420, LEFT = 90, RIGHT = 150, TOP = 40, BOTTOM = 50 };

static const struct {
	const char *name, *color, *dash;
} series[] = {
	{ "live requested", "#f4a261", "none" },
	{ "committed", "#277da1", "none" },
	{ "resident", "#d62828", "6,4" }, /* dashed: it often lies on committed */
};

static double value(const vis_point_t *p, int s)
{
	return s == 0 ? p->live : s == 1 ? p->committed : p->resident;
}

/* A round tick step giving about @p want ticks over @p range. */
static double tick_step(double range, int want, bool binary)
{
	if (range <= 0)
		return 1;
	double base = binary ? 1024 : 10, raw = range / want;
	double unit = 1;
	if (binary) {
		while (unit * base <= raw)
			unit *= base;
	} else {
		unit = pow(10, floor(log10(raw)));
	}
	static const double nice[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500 };
	for (size_t i = 0; i < sizeof nice / sizeof nice[0]; i++)
		if (unit * nice[i] >= raw)
			return unit * nice[i];
	return unit * base;
}

typedef struct frame {
	double x0, x1, y1;   /* data ranges (y from 0) */
} frame_t;

static double px(const frame_t *f, double x)
{
	double w = PLOT_W - LEFT - RIGHT;
	return LEFT + (f->x1 > f->x0 ? (x - f->x0) / (f->x1 - f->x0) * w : 0);
}

static double py(const frame_t *f, double y)
{
	double h = PLOT_H - TOP - BOTTOM;
	return PLOT_H - BOTTOM - (f->y1 > 0 ? y / f->y1 * h : 0);
}

static void axes(FILE *out, const frame_t *f, const char *xlabel)
{
	double ys = tick_step(f->y1, 5, true), xs = tick_step(f->x1 - f->x0, 8, false);
	char b[32];
	fprintf(out, "<g font-size=\"11\" fill=\"#495057\">\n");
	for (double y = 0; y <= f->y1 + ys / 1000; y += ys)
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dee2e6\"/>"
			     "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			LEFT, py(f, y), PLOT_W - RIGHT, py(f, y), LEFT - 6, py(f, y) + 4, vis_bytes(y, b, sizeof b));
	for (double x = ceil(f->x0 / xs) * xs; x <= f->x1 + xs / 1000; x += xs)
		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#adb5bd\"/>"
			     "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>\n",
			px(f, x), PLOT_H - BOTTOM, px(f, x), PLOT_H - BOTTOM + 5, px(f, x), PLOT_H - BOTTOM + 18, x);
	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#212529\"/>\n", LEFT, PLOT_H - BOTTOM,
		PLOT_W - RIGHT, PLOT_H - BOTTOM);
	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#212529\"/>\n", LEFT, TOP, LEFT,
		PLOT_H - BOTTOM);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (LEFT + PLOT_W - RIGHT) / 2, PLOT_H - 12);
	vis_put_xml(out, xlabel);
	fprintf(out, "</text>\n</g>\n");
}

static void line(FILE *out, const frame_t *f, const vis_point_t *p, size_t n, int s)
{
	fprintf(out, "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" "
		     "stroke-dasharray=\"%s\" points=\"",
		series[s].name, series[s].color, s == 0 ? "2" : "1.5", series[s].dash);
	for (size_t i = 0; i < n; i++) {
		/* a step plot: a value holds until the next point */
		if (i > 0)
			fprintf(out, "%.1f,%.1f ", px(f, p[i].x), py(f, value(&p[i - 1], s)));
		fprintf(out, "%.1f,%.1f ", px(f, p[i].x), py(f, value(&p[i], s)));
	}
	fprintf(out, "\"/>\n");
}

static void key(FILE *out)
{
	for (size_t s = 0; s < sizeof series / sizeof series[0]; s++) {
		int y = TOP + 10 + 20 * (int)s;
		fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\" "
			     "stroke-dasharray=\"%s\"/><text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n",
			PLOT_W - RIGHT + 12, y, PLOT_W - RIGHT + 36, y, series[s].color, series[s].dash,
			PLOT_W - RIGHT + 42, y + 4, series[s].name);
	}
}

int vis_plot_svg(FILE *out, const vis_point_t *p, size_t n, const char *title, const char *xlabel)
{
	frame_t f = { n ? p[0].x : 0, n ? p[n - 1].x : 1, 0 };
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < 3; s++)
			f.y1 = fmax(f.y1, value(&p[i], s));
	f.y1 = f.y1 > 0 ? ceil(f.y1 / tick_step(f.y1, 5, true)) * tick_step(f.y1, 5, true) : 1024;
	if (f.x1 <= f.x0)
		f.x1 = f.x0 + 1;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		     "font-family=\"Helvetica, Arial, sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		     "<text x=\"%d\" y=\"24\" font-size=\"15\">",
		PLOT_W, PLOT_H, PLOT_W, PLOT_H, LEFT);
	vis_put_xml(out, title);
	fprintf(out, "</text>\n");
	axes(out, &f, xlabel);
	static const int order[] = { 1, 2, 0 }; /* live on top */
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		line(out, &f, p, n, order[i]);
	key(out);
	fprintf(out, "</svg>\n");
	return ferror(out) ? -1 : 0;
}

/* "file on POLICY, pid N: bytes over time" from the file's first comment. */
static void samples_title(const char *first, const char *path, long pid, size_t procs, char *title,
			  size_t len)
{
	const char *pol = strstr(first, "policy=");
	int n = pol ? (int)strcspn(pol + 7, " \t\n") : 0;
	snprintf(title, len, "%s%s%.*s, pid %ld%s: bytes over time", path, pol ? " on " : "", n, pol ? pol + 7 : "",
		 pid, procs > 1 ? " (the process with the most samples)" : "");
}

/* One line of the file: "pid ms live committed resident". */
typedef struct sample_line {
	long pid;
	vis_point_t p;
} sample_line_t;

static sample_line_t *read_samples(FILE *f, const char *path, size_t *n, char *first, size_t first_len)
{
	sample_line_t *v = NULL;
	size_t cap = 0, lineno = 0;
	char line[512];
	*n = 0;
	first[0] = 0;
	while (fgets(line, sizeof line, f)) {
		if (++lineno == 1) {
			size_t k = strcspn(line, "\n");
			k = k < first_len ? k : first_len - 1;
			memcpy(first, line, k);
			first[k] = 0;
		}
		if (line[0] == '#')
			continue;
		sample_line_t s;
		if (sscanf(line, "%ld %lf %lf %lf %lf", &s.pid, &s.p.x, &s.p.live, &s.p.committed, &s.p.resident) != 5) {
			vis_fail("%s:%zu: expected 'pid ms live committed resident'", path, lineno);
			free(v);
			return NULL;
		}
		if (*n == cap) {
			sample_line_t *nv = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof *nv);
			if (!nv) {
				free(v);
				vis_fail("out of memory");
				return NULL;
			}
			v = nv;
		}
		v[(*n)++] = s;
	}
	return v;
}

/* The pid with the most samples; *procs receives how many pids wrote. */
static long busiest_pid(const sample_line_t *v, size_t n, size_t *procs)
{
	long best = -1;
	size_t best_count = 0;
	*procs = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = v[j].pid == v[i].pid;
		if (seen)
			continue;
		size_t count = 0;
		for (size_t j = i; j < n; j++)
			count += v[j].pid == v[i].pid;
		++*procs;
		if (count > best_count) {
			best = v[i].pid;
			best_count = count;
		}
	}
	return best;
}

static int by_time(const void *a, const void *b)
{
	const vis_point_t *x = a, *y = b;
	return (x->x > y->x) - (x->x < y->x);
}

vis_point_t *vis_samples_load(const char *path, long pid, size_t *n, char *title, size_t title_len)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		vis_fail("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	char first[256];
	size_t nlines, procs = 1;
	sample_line_t *lines = read_samples(f, path, &nlines, first, sizeof first);
	fclose(f);
	if (!lines)
		return NULL;
	if (pid <= 0)
		pid = busiest_pid(lines, nlines, &procs);
	vis_point_t *p = malloc((nlines ? nlines : 1) * sizeof *p);
	*n = 0;
	for (size_t i = 0; p && i < nlines; i++)
		if (lines[i].pid == pid)
			p[(*n)++] = lines[i].p;
	free(lines);
	if (p && !*n) {
		free(p);
		vis_fail("%s: no samples%s (was the program run with 'heaplab run --sample-ms N'?)", path,
			  nlines ? " of that pid" : "");
		return NULL;
	}
	if (p)
		qsort(p, *n, sizeof *p, by_time);
	samples_title(first, path, pid, procs, title, title_len);
	return p;
}

/* ---- several series: stacked areas or lines (heaplab diagnose) ---------- */

static void svg_open(FILE *out, const char *id, const char *title)
{
	fprintf(out, "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		     "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\">\n"
		     "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n<text x=\"%d\" y=\"24\" font-size=\"15\">",
		id, PLOT_W, PLOT_H, PLOT_W, PLOT_H, LEFT);
	vis_put_xml(out, title);
	fprintf(out, "</text>\n");
}

static void series_key(FILE *out, const vis_series_t *s, size_t ns)
{
	for (size_t k = 0; k < ns; k++) {
		int y = TOP + 10 + 16 * (int)k;
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"10\" fill=\"%s\"/>"
			     "<text x=\"%d\" y=\"%d\" font-size=\"11\">",
			PLOT_W - RIGHT + 10, y - 5, s[k].color, PLOT_W - RIGHT + 32, y + 4);
		vis_put_xml(out, s[k].name);
		fprintf(out, "</text>\n");
	}
}

int vis_plot_series_svg(FILE *out, const char *id, const double *x, size_t n, const vis_series_t *s, size_t ns,
			bool stacked, const char *title, const char *xlabel)
{
	frame_t f = { n ? x[0] : 0, n ? x[n - 1] : 1, 0 };
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		for (size_t k = 0; k < ns; k++) {
			sum = stacked ? sum + s[k].y[i] : s[k].y[i];
			f.y1 = fmax(f.y1, sum);
		}
	}
	f.y1 = f.y1 > 0 ? ceil(f.y1 / tick_step(f.y1, 5, true)) * tick_step(f.y1, 5, true) : 1024;
	if (f.x1 <= f.x0)
		f.x1 = f.x0 + 1;
	svg_open(out, id, title);
	axes(out, &f, xlabel);
	double *base = calloc(n ? n : 1, sizeof *base);
	if (!base)
		return -1;
	for (size_t k = 0; k < ns; k++) {
		/* data-last: the series' value at the last point, in bytes */
		fprintf(out, "<%s class=\"series\" data-series=\"", stacked ? "polygon" : "polyline");
		vis_put_xml(out, s[k].name);
		fprintf(out, "\" data-last=\"%.0f\" data-peak=\"%.0f\" %s=\"%s\" %s points=\"",
			n ? s[k].y[n - 1] : 0, s[k].peak, stacked ? "fill" : "stroke", s[k].color,
			stacked ? "stroke=\"none\"" : "fill=\"none\" stroke-width=\"1.5\"");
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%.1f,%.1f ", px(&f, x[i]), py(&f, base[i] + s[k].y[i]));
		if (stacked)
			for (size_t i = n; i-- > 0;)
				fprintf(out, "%.1f,%.1f ", px(&f, x[i]), py(&f, base[i]));
		fprintf(out, "\"/>\n");
		if (stacked)
			for (size_t i = 0; i < n; i++)
				base[i] += s[k].y[i];
	}
	free(base);
	series_key(out, s, ns);
	fprintf(out, "</svg>\n");
	return ferror(out) ? -1 : 0;
}
