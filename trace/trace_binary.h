/**
 * @file trace_binary.h
 * @brief The binary form of a trace: what libheaplab-record.so writes by
 *        default, and every reader of traces accepts beside the text.
 *
 * The file opens with the 8 bytes HL_BIN_MAGIC; then records, each a tag
 * byte whose low 4 bits say its kind and whose high 4 bits hold a small
 * value, followed by varints (7 bits a byte, low bits first, the high bit
 * set on every byte but the last):
 *
 *   kind    fields after the tag                 the text line it stands for
 *   A       [id] size site                        a ID SIZE [@SITE]
 *   R       [id] size site                        r ID SIZE [@SITE]
 *   C       [id] count size site                  c ID COUNT SIZE [@SITE]
 *   M       [id] align size site                  m ID ALIGN SIZE [@SITE]
 *   F       [id]                                  f ID
 *   FNULL   -                                     f -1
 *   T       [tid]                                 t TID
 *   X       [tid]                                 #@exit TID
 *   TIME    us-delta                              #@t US
 *   TEXT    length, that many bytes (no newline)  the line itself
 *   END     -                                     (the recording ended)
 *
 * [id]: the block id as a difference from the previous op's id, zigzag
 * coded (0, -1, 1, -2, ... as 0, 1, 2, 3, ...); when that is below 15 it
 * is the tag's high nibble, else the nibble is 15 and a varint follows.
 * The recorder hands a freed id to the next new block, so a malloc after a
 * free is usually 0 there: the whole record is 3 bytes.  [tid]: the
 * nibble, or 15 and a varint.  site: 0 for none, else its number.  TIME:
 * microseconds since the last TIME record (the first: since 0).  TEXT
 * carries every other line of the text format ("#@site", "#@rss",
 * "#@touched", "#@module", "#@layers", comments, the header, "s LABEL",
 * and any op line the converter could not write back as it was), read as
 * that line.  END closes a whole recording: a file without it was cut
 * short (the recorder writes it at the program's exit, the converter at
 * the end of its input).
 *
 * Each record maps to one line and back, so a text trace made of lines as
 * the recorder writes them converts to binary and back byte for byte
 * (tests/programs/trace_binary.sh).  A record is at most HL_BIN_OP_MAX bytes
 * (TEXT: its line's bytes more), so a writer that flushes its buffer
 * before a record that does not fit leaves a file that ends on a record.
 */
#ifndef HL_TRACE_BINARY_H
#define HL_TRACE_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HL_BIN_MAGIC "\x89HLTRC1\n"
enum { HL_BIN_MAGIC_LEN = 8 };

typedef enum hl_bin_kind {
	HL_BIN_END = 0, HL_BIN_A, HL_BIN_R, HL_BIN_C, HL_BIN_M, HL_BIN_F, HL_BIN_FNULL,
	HL_BIN_T, HL_BIN_X, HL_BIN_TIME, HL_BIN_TEXT, HL_BIN_KINDS
} hl_bin_kind_t;

/** The bytes of an op record at most (tag and four 64-bit varints). */
enum { HL_BIN_OP_MAX = 1 + 4 * 10 };

/** What the records are coded against: the previous op's id, the last
 *  stamp.  Zero at the start of a file. */
typedef struct hl_bin_state {
	long id;
	uint64_t us;
} hl_bin_state_t;

/** One record, decoded. */
typedef struct hl_bin_record {
	hl_bin_kind_t kind;
	long id;               /**< A R C M F; the thread for T and X */
	size_t a, b;           /**< A R: size; C: count, size; M: align, size */
	unsigned site;         /**< 0: none */
	uint64_t us;           /**< TIME: the stamp (absolute) */
	const char *text;      /**< TEXT: the line, NUL-terminated */
	size_t len;
} hl_bin_record_t;

/** Encodes an op record into @p out (HL_BIN_OP_MAX bytes of room): @p kind
 *  is A, R, C, M (with @p a, @p b as in hl_bin_record_t), F (@p id -1:
 *  FNULL), T or X (@p id the thread).  Returns its length. */
size_t hl_bin_put_op(hl_bin_state_t *st, uint8_t *out, hl_bin_kind_t kind, long id, size_t a, size_t b, unsigned site);
/** A TIME record for the absolute stamp @p us (not before the last). */
size_t hl_bin_put_time(hl_bin_state_t *st, uint8_t *out, uint64_t us);
/** The head of a TEXT record of @p len bytes (at most 11 bytes): the line
 *  follows it. */
size_t hl_bin_put_text_head(uint8_t *out, size_t len);

/** Reading records from a stream positioned after the magic. */
typedef struct hl_bin_reader {
	FILE *f;
	hl_bin_state_t st;
	char *text;            /**< TEXT records' line */
	size_t text_cap;
	unsigned long records; /**< records read so far */
} hl_bin_reader_t;

/** The longest TEXT record read (a line of the text format is shorter). */
enum { HL_BIN_TEXT_MAX = 1 << 16 };

/** The reason hl_bin_next gives when the file ends inside a record. */
#define HL_BIN_CUT "the file ends in the middle of a record"

/** The next record into @p rec: 1, 0 at the end of the file (no byte of a
 *  record left), or -1 with @p why set (a record cut short, an unknown
 *  kind, a number too large, a read error, out of memory). */
int hl_bin_next(hl_bin_reader_t *r, hl_bin_record_t *rec, const char **why);
void hl_bin_reader_free(hl_bin_reader_t *r);

/** Does @p f start with the magic?  Reads the 8 bytes when it does, else
 *  leaves the stream where it was (it must be seekable or fresh). */
bool hl_bin_magic(FILE *f);

/** Which form the stream @p f (named @p name) holds: 1 binary (the magic
 *  read), 0 text (nothing read), -1 with hl_set_error when its first byte
 *  is the magic's and the rest is not (a damaged file, a newer version). */
int hl_bin_form(FILE *f, const char *name);

/** The op letter of the text form of an op record's @p kind (a r c m f t),
 *  0 for the others. */
char hl_bin_letter(hl_bin_kind_t kind);

/** Writes the text line of a non-TEXT record @p rec into @p out (with its
 *  newline; none for END); its length. */
size_t hl_bin_text_line(const hl_bin_record_t *rec, char *out, size_t len);

/** Converts the trace @p in (text or binary) to @p out in the other form
 *  when @p to_text says so (text to text and binary to binary copy the
 *  records as they are); 0, or -1 with hl_set_error ("FILE: ..."). */
int hl_trace_convert(const char *in, FILE *out, bool to_text);
#endif
