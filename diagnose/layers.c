/*
 * The layers of the recorded process's memory (diagnose.h): the two
 * "#@layers" lines libheaplab-record.so writes at the end of a recording
 * (shim/record_layers.c names each layer), read back from the file's tail.
 * The trace reader takes them for comments, so old readers still load
 * the recording.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "diagnose.h"

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

/* "#@layers WHEN MS RSS key=bytes ..." into @p out; false when malformed. */
static bool parse(char *line, dx_layers_t *out)
{
	char *save = NULL, *w = strtok_r(line, " \n", &save);
	memset(out, 0, sizeof *out);
	if (!w || strcmp(w, "#@layers") || !strtok_r(NULL, " \n", &save))
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

int dx_layers_read(const char *path, dx_layers_t *peak, dx_layers_t *final)
{
	memset(peak, 0, sizeof *peak);
	memset(final, 0, sizeof *final);
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	/* both lines are among the last few kilobytes (the modules follow the
	 * last op, then the last sample, then the layers) */
	enum { TAIL = 1 << 16 };
	static char buf[TAIL + 1];
	if (fseek(f, 0, SEEK_END) == 0) {
		long size = ftell(f);
		fseek(f, size > TAIL ? size - TAIL : 0, SEEK_SET);
	}
	size_t n = fread(buf, 1, TAIL, f);
	fclose(f);
	buf[n] = 0;
	for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(line, "#@layers peak ", 14))
			parse(line, peak);
		else if (!strncmp(line, "#@layers final ", 15))
			parse(line, final);
	}
	return peak->ok || final->ok ? 0 : -1;
}

size_t dx_layers_total(const dx_layers_t *l)
{
	size_t sum = 0;
	for (int k = 0; k < DX_NLAYERS; k++)
		sum += l->bytes[k];
	return sum;
}
