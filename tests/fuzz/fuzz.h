/*
 * What every fuzz harness shares: the libFuzzer entry point, the one
 * way a harness reports a bug it finds (a line naming the harness and
 * what broke, then abort(), which libFuzzer and the corpus replay both
 * count as a crash), and the way it names each heap it runs, which the
 * corpus replay prints when asked (`replay_HARNESS --say`): the policies
 * come from the registry, so a policy added is one the harnesses run.
 *
 * Each harness is linked twice: with -fsanitize=fuzzer (clang, configure
 * --enable-fuzzers) and with replay_main.c, a plain main that feeds it the
 * files named on its command line (every build, for `make check`).
 */
#ifndef HL_FUZZ_H
#define HL_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** Prints "fuzz: <harness>: <what>" and aborts. */
__attribute__((noreturn, format(printf, 2, 3))) void fuzz_bug(const char *harness, const char *fmt, ...);

/** True when each heap a harness runs is named (set by replay_main.c's
 *  --say; false under libFuzzer). */
extern bool fuzz_say;

/** With fuzz_say, prints "<harness>: ran <what>" on stdout: the policy of
 *  a heap the input runs on, and its configuration. */
__attribute__((format(printf, 2, 3))) void fuzz_ran(const char *harness, const char *fmt, ...);
#endif
