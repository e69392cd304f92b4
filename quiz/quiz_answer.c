/* An answer judged: the normal form answers are compared in, whether a
 * given answer is one of the question's, and the answer as it is shown. */
#include "config.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "quiz.h"

/** Drops a leading article ("the", "a", "an") and a trailing "bytes" after a
 *  number, so "the top chunk" matches "top chunk" and "24 bytes" matches 24. */
static void qz_trim_words(char *s)
{
	static const char *const lead[] = { "the ", "a ", "an " };
	for (size_t i = 0; i < sizeof lead / sizeof lead[0]; i++) {
		size_t n = strlen(lead[i]);
		if (!strncmp(s, lead[i], n) && s[n]) {
			memmove(s, s + n, strlen(s + n) + 1);
			break;
		}
	}
	size_t n = strlen(s);
	if (n > 6 && !strcmp(s + n - 6, " bytes") && isdigit((unsigned char)s[n - 7]))
		s[n - 6] = 0;
}

void qz_normalise(const char *in, char *out, size_t len)
{
	size_t o = 0;
	bool space = false;
	for (const char *p = in; *p && o + 2 < len; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == ',' && p > in && isdigit((unsigned char)p[-1]) &&
		    isdigit((unsigned char)p[1]))
			continue;
		if (isspace(c)) {
			space = o > 0;
			continue;
		}
		if (space)
			out[o++] = ' ';
		space = false;
		out[o++] = (char)tolower(c);
	}
	while (o && out[o - 1] == '.')
		o--;
	out[o] = 0;
	qz_trim_words(out);
	o = 0;
	for (char *p = out; *p; p++)
		if (*p != ' ')
			out[o++] = *p;
	out[o] = 0;
}

bool qz_is_right(const qz_question_t *q, const char *given)
{
	char g[QZ_LINE], alt[QZ_LINE];
	qz_normalise(given, g, sizeof g);
	if (!*g)
		return false;
	const char *p = q->a;
	while (p) {
		const char *bar = strstr(p, " | ");
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		char one[QZ_LINE];
		snprintf(one, sizeof one, "%.*s", (int)n, p);
		qz_normalise(one, alt, sizeof alt);
		if (!strcmp(g, alt))
			return true;
		if (q->nchoices && strlen(alt) == 1 && alt[0] >= 'a' &&
		    alt[0] < 'a' + q->nchoices) {
			char c[QZ_LINE];
			qz_normalise(q->choice[alt[0] - 'a'], c, sizeof c);
			if (!strcmp(g, c))
				return true;
		}
		p = bar ? bar + 3 : NULL;
	}
	return false;
}

void qz_show_answer(const qz_question_t *q, char *out, size_t len)
{
	size_t n = strcspn(q->a, "|");
	while (n && q->a[n - 1] == ' ')
		n--;
	int k = tolower((unsigned char)q->a[0]) - 'a';
	if (q->nchoices && n == 1 && k >= 0 && k < q->nchoices) {
		snprintf(out, len, "%c) %s", 'a' + k, q->choice[k]);
		return;
	}
	snprintf(out, len, "%.*s", (int)n, q->a);
}
