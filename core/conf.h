/**
 * @file conf.h
 * @brief Configuration strings: `key:value,key:value`, checked against the
 *        option table each policy declares.
 *
 * Parsing never allocates (the malloc shim parses HEAPLAB_CONF while it is
 * still becoming malloc), so values live in a fixed table inside hl_conf_t.
 * Sizes accept K, M and G suffixes (powers of 1024); booleans accept
 * on/off, true/false, yes/no, 1/0.  A text value is kept as written, except
 * that ',' (which ends an option) is written ';' inside it and read back as
 * ',': so a text value can be a configuration string of its own, e.g.
 * pools' `fallback_conf:tcache_count=0;arena_max=1` (core/host.h).
 */
#ifndef HL_CONF_H
#define HL_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum hl_opt_type {
	HL_OPT_BOOL,   /**< on|off */
	HL_OPT_INT,    /**< signed integer within [min, max] */
	HL_OPT_SIZE,   /**< bytes, with optional K/M/G, within [min, max] */
	HL_OPT_ENUM,   /**< one of `choices` ("first|next|best") */
	HL_OPT_TEXT,   /**< words of at most `max` bytes (';' reads as ',') */
} hl_opt_type_t;

/** One option a policy accepts. */
typedef struct hl_option {
	const char *key;      /**< NULL ends the table */
	hl_opt_type_t type;
	const char *def;      /**< default, written as a user would write it */
	int64_t min, max;     /**< range for INT and SIZE; TEXT: longest value */
	const char *choices;  /**< for ENUM: "a|b|c" */
	const char *help;     /**< one line */
} hl_option_t;

#define HL_CONF_MAX 40
/** Bytes for all the text values of one configuration, with their NULs. */
#define HL_CONF_TEXT 256

/** Parsed options: every key of the table, with its value. */
typedef struct hl_conf {
	const hl_option_t *table[2];  /**< core table, policy table */
	int count;
	struct {
		const hl_option_t *opt;
		int64_t value;     /**< INT/SIZE value, BOOL 0/1, ENUM index,
				        TEXT offset in `text` */
		bool given;        /**< set explicitly by the user */
	} entry[HL_CONF_MAX];
	char text[HL_CONF_TEXT];  /**< the text values, NUL-terminated */
	size_t text_used;         /**< bytes of `text` in use */
} hl_conf_t;

/** Options every heap understands, whatever its policy. */
extern const hl_option_t hl_core_options[];

/**
 * Parses @p text against the core table and @p policy_options.
 * @return 0, or -1 with a one-line message (naming the valid keys on an
 *         unknown key) in @p err.
 */
int hl_conf_parse(hl_conf_t *c, const hl_option_t *policy_options, const char *text,
		  char *err, size_t errlen);

int64_t hl_conf_int(const hl_conf_t *c, const char *key);
size_t hl_conf_size(const hl_conf_t *c, const char *key);
bool hl_conf_bool(const hl_conf_t *c, const char *key);
/** Index of the chosen ENUM value within its choices. */
int hl_conf_enum(const hl_conf_t *c, const char *key);
/** The value of TEXT option @p key (lives as long as @p c). */
const char *hl_conf_text(const hl_conf_t *c, const char *key);
/** True when the user gave @p key explicitly. */
bool hl_conf_given(const hl_conf_t *c, const char *key);

/** Prints an option table, one option per line (for `heaplab policies -v`). */
void hl_conf_describe(const hl_option_t *opts, FILE *out);
/** Prints an option table as Markdown table rows, one per option:
 *  | `key` | `default` | accepted values | help | (the header is the
 *  caller's). */
void hl_conf_markdown(const hl_option_t *opts, FILE *out);
#endif
