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
#include "../cli/cli.h"
#include "vis.h"

enum { PLOT_W = 800, PLOT_H = 420, LEFT = 90, RIGHT = 150, TOP = 40, BOTTOM = 50 };

static const struct {
	const char *name, *color;
} series[] = {
	{ "live requested", "#f4a261" },
	{ "committed", "#277da1" },
	{ "resident", "#d62828" },
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
		     "points=\"",
		series[s].name, series[s].color, s == 0 ? "2" : "1.5");
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
		fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>"
			     "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n",
			PLOT_W - RIGHT + 12, y, PLOT_W - RIGHT + 36, y, series[s].color, PLOT_W - RIGHT + 42, y + 4,
			series[s].name);
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
	for (int s = 2; s >= 0; s--)
		line(out, &f, p, n, s);
	key(out);
	fprintf(out, "</svg>\n");
	return ferror(out) ? -1 : 0;
}

/* Parses "policy=NAME" out of the file's first comment into @p title. */
static void samples_title(const char *line, const char *path, char *title, size_t len)
{
	const char *pol = strstr(line, "policy=");
	int n = pol ? (int)strcspn(pol + 7, " \t\n") : 0;
	snprintf(title, len, "%s%s%.*s: bytes over time", path, pol ? " on " : "", n, pol ? pol + 7 : "");
}

vis_point_t *vis_samples_load(const char *path, size_t *n, char *title, size_t title_len)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		cli_error("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	vis_point_t *v = NULL;
	size_t cap = 0, lineno = 0;
	char line[512];
	*n = 0;
	snprintf(title, title_len, "%s: bytes over time", path);
	while (fgets(line, sizeof line, f)) {
		lineno++;
		if (line[0] == '#') {
			if (lineno == 1)
				samples_title(line, path, title, title_len);
			continue;
		}
		vis_point_t p;
		if (sscanf(line, "%lf %lf %lf %lf", &p.x, &p.live, &p.committed, &p.resident) != 4) {
			cli_error("%s:%zu: expected 'ms live committed resident'", path, lineno);
			free(v);
			fclose(f);
			return NULL;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			vis_point_t *nv = realloc(v, cap * sizeof *nv);
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = p;
	}
	fclose(f);
	if (!*n) {
		free(v);
		cli_error("%s: no samples (was the program run with 'heaplab run --sample-ms N'?)", path);
		return NULL;
	}
	return v;
}
