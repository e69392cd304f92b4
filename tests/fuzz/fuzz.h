/*
 * What every fuzz harness shares: the libFuzzer entry point, and the one
 * way a harness reports a bug it finds (a line naming the harness and
 * what broke, then abort(), which libFuzzer and the corpus replay both
 * count as a crash).
 *
 * Each harness is linked twice: with -fsanitize=fuzzer (clang, configure
 * --enable-fuzzers) and with replay_main.c, a plain main that feeds it the
 * files named on its command line (every build, for `make check`).
 */
#ifndef HL_FUZZ_H
#define HL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** Prints "fuzz: <harness>: <what>" and aborts. */
__attribute__((noreturn, format(printf, 2, 3))) void fuzz_bug(const char *harness, const char *fmt, ...);
#endif
