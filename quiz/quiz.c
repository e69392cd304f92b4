/* The bank's command: the bank found and read, then verified (`heaplab
 * quiz --verify`) or drilled. */
#include "config.h"
#include "quiz.h"

int qz_run(const qz_opts_t *o)
{
	char buf[PATH_MAX];
	qz_bank_t b = { 0 };
	int rc = qz_load(&b, qz_find_bank(o->bank, buf, sizeof buf)) ? 2
		 : o->verify && b.answerless ? qz_error("quiz: --verify: %s has no answers to verify (the student's edition)", b.path)
		 : o->verify ? qz_verify(&b)
		 : qz_drill(&b, o->chapter, o->seed, o->count);
	qz_free(&b);
	return rc;
}
