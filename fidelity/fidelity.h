/* heaplab fidelity: the rows (fidelity/<family>.rows), how one is run on the
 * real allocator and on its model, and the verdict.  The row format is
 * described in fidelity/README.md; the heaplab command (cli/cmd_fidelity.c) prints the table. */
#ifndef HL_FIDELITY_H
#define HL_FIDELITY_H

#include <stdbool.h>
#include <stddef.h>

/** How a row compares the two values. */
typedef enum fid_compare {
	FID_EQUAL,      /**< the two values as strings */
	FID_WITHIN_PCT, /**< |model - real| <= tol% of |real| */
	FID_WITHIN_ABS, /**< |model - real| <= tol */
	FID_DEVIATION,  /**< a named departure: both shown, `why` says why */
} fid_compare_t;

/** One row, as read from its file. */
typedef struct fid_row {
	char *file;         /**< the rows file it came from */
	unsigned line;      /**< the line of its `row` field */
	char *family;       /**< the file's family (glibc, jemalloc, ...) */
	char *id;           /**< `row`: <family>.<name> */
	char *claim;        /**< `claim`: one line a student can read */
	char *probe;        /**< `probe`: program and arguments */
	char *key;          /**< `key`: the key=value line compared */
	char *compare_text; /**< `compare`, as written */
	fid_compare_t compare;
	double tolerance;   /**< for within N% / within N */
	char *model;        /**< `model`: policy, then its conf (optional) */
	char *real_env;     /**< `real_env`: NAME=value words (optional) */
	char *model_env;    /**< `model_env`: NAME=value words (optional) */
	char *why;          /**< `why`: shown under the row (optional) */
	char *real_version; /**< `real_version`: the version the row's values
				 are for; elsewhere SKIP (glibc rows only) */
	double timeout;     /**< `timeout`: seconds per side (optional, default 20) */
	char *real_preload; /**< `real_preload`: the real side's library, an
				 absolute path, or `none` (the C library's own
				 malloc); from the row, else from its file's
				 family stanza; NULL: the library heaplab knows
				 for the family (fid_real_preload) */
	char *model_by;     /**< `model_by replay`: the model side records the
				 probe on glibc and replays the recording under
				 the model on its clock; the value is the heap's
				 resident MiB, metadata included, at the end
				 (optional) */
} fid_row_t;

/** A row's outcome. */
typedef enum fid_status { FID_PASS, FID_FAIL, FID_SKIP } fid_status_t;

typedef struct fid_result {
	fid_status_t status;
	char real[128];     /**< the real side's value ("" when not run) */
	char model[128];    /**< the model side's value */
	char verdict[256];  /**< "equal", "within 5%", "deviation", or the reason */
} fid_result_t;

/** The families heaplab knows the real allocators of, in table order;
 *  NULL-terminated.  A rows file of any other family says its real side in
 *  its family stanza (`real_preload`). */
extern const char *const fid_families[];

/** The real library to preload for a row of @p family: @p declared (its
 *  `real_preload`) when not NULL, else the one heaplab knows for the
 *  family; "" for none (the C library's own malloc), NULL if unknown.
 *  $HEAPLAB_FIDELITY_<FAMILY> overrides a library. */
const char *fid_real_preload(const char *family, const char *declared);

/** Reads @p path, appending its rows to *rows (count *n).  Returns 0, or 2
 *  after printing "file:line: message" to stderr. */
int fid_rows_read(const char *path, const char *family, fid_row_t **rows, size_t *n);

/** Frees what @p row holds and zeroes it. */
void fid_row_clear(fid_row_t *row);

/** Frees @p n rows from fid_rows_read and the array itself. */
void fid_rows_free(fid_row_t *rows, size_t n);

/** Where a row's programs and libraries are. */
typedef struct fid_paths {
	const char *probes_dir; /**< the probe programs */
	const char *preload;    /**< heaplab's preload library */
	const char *recorder;   /**< heaplab's recorder library (`model_by replay`) */
} fid_paths_t;

/** Runs one row on both sides and compares. */
void fid_row_run(const fid_row_t *row, const fid_paths_t *paths, fid_result_t *out);

/** Compares two values as @p row says; fills out->status and out->verdict. */
void fid_compare(const fid_row_t *row, fid_result_t *out);

/** One trace's placement on a real allocator and on its model
 *  (fidelity_placement.c). */
typedef struct fid_placement {
	fid_status_t status; /**< PASS: equal; FAIL: they part, or a side failed */
	size_t ops;          /**< the trace's block ops */
	size_t placed;       /**< ops placed alike before the first parting */
	size_t parted_at;    /**< the op (from 1) where they part; 0 when equal */
	char text[1024];     /**< "equal (...)", or where and how they part */
} fid_placement_t;

/** True when --placement compares @p family (glibc, jemalloc, mimalloc,
 *  tcmalloc). */
bool fid_placement_family(const char *family);

/** The policy that models @p family in the placement comparison. */
const char *fid_placement_model(const char *family);

/** Runs the trace at @p trace_path through the placement driver on the real
 *  allocator of @p family and on its model, and compares where every block
 *  goes. */
void fid_placement_run(const char *family, const char *trace_path, const fid_paths_t *paths, fid_placement_t *out);

#endif
