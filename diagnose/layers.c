/*
 * The layers of the recorded process's memory (diagnose.h): the two
 * "#@layers" lines libheaplab-record.so writes at the end of a recording
 * (shim/record_layers.c names each layer), kept by the trace reader as
 * they are (an older reader takes them for comments).  And the recording
 * itself: its form, and the conversion between text and binary.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diagnose.h"
#include "../trace/trace.h"          /* the "#@layers" lines a trace keeps */
#include "../trace/trace_binary.h"   /* hl_trace_convert */

static const struct {
	const char *key, *words;
} layers[DX_NLAYERS] = {
	[DX_L_HEAP] = { "heap", "the C allocator's heap (the break)" },
	[DX_L_MAPPED] = { "mapped", "unnamed anonymous mappings: the C allocator's (large blocks, thread arenas) and the loader's" },
	[DX_L_MMAP] = { "mmap", "anonymous mappings the program made with mmap, outside malloc (CPython's pymalloc arenas)" },
	[DX_L_STACK] = { "stack", "stacks (the main thread's and each thread's)" },
	[DX_L_EXE] = { "exe", "the program's own file (code and data)" },
	[DX_L_ALLOC] = { "alloc", "the allocator's library (libc, jemalloc, ...: code and data)" },
	[DX_L_LIBS] = { "libs", "other shared libraries (code and data)" },
	[DX_L_FILES] = { "files", "other mapped files (locale archive, data files)" },
	[DX_L_RECORDER] = { "recorder", "the recorder's library and tables (not there when the program runs alone)" },
	[DX_L_OTHER] = { "other", "the rest ([vdso], [vvar], ...)" },
};

const char *dx_layer_key(dx_layer_t l) { return l < DX_NLAYERS ? layers[l].key : "?"; }
const char *dx_layer_words(dx_layer_t l) { return l < DX_NLAYERS ? layers[l].words : "?"; }

/* "WHEN MS RSS key=bytes ..." (a "#@layers" line after its word) into
 * @p out; false when malformed. */
static bool parse(const char *text, dx_layers_t *out)
{
	char line[1024];
	snprintf(line, sizeof line, "%s", text);
	char *save = NULL, *w = strtok_r(line, " \n", &save);
	memset(out, 0, sizeof *out);
	if (!w)
		return false;
	char *ms = strtok_r(NULL, " \n", &save), *rss = ms ? strtok_r(NULL, " \n", &save) : NULL;
	if (!rss)
		return false;
	out->ms = strtod(ms, NULL);
	out->rss = strtoull(rss, NULL, 10);
	while ((w = strtok_r(NULL, " \n", &save))) {
		char *eq = strchr(w, '=');
		if (!eq)
			return false;
		*eq = 0;
		for (int l = 0; l < DX_NLAYERS; l++)
			if (!strcmp(w, layers[l].key))
				out->bytes[l] = strtoull(eq + 1, NULL, 10);
	}
	out->ok = true;
	return true;
}

int dx_layers_read(const hl_trace_t *t, dx_layers_t *peak, dx_layers_t *final)
{
	memset(peak, 0, sizeof *peak);
	memset(final, 0, sizeof *final);
	if (t->layers[0])
		parse(t->labels + t->layers[0] - 1, peak);
	if (t->layers[1])
		parse(t->labels + t->layers[1] - 1, final);
	return peak->ok || final->ok ? 0 : -1;
}

bool dx_recording_binary(const hl_trace_t *t) { return t->binary; }

int dx_recording_convert(const char *path, FILE *out, bool to_text)
{
	return hl_trace_convert(path, out, to_text);
}

size_t dx_layers_total(const dx_layers_t *l)
{
	size_t sum = 0;
	for (int k = 0; k < DX_NLAYERS; k++)
		sum += l->bytes[k];
	return sum;
}
