/* Helpers shared by the Check suites (see testlib.h). */
#include "testlib.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

hl_heap_t *tl_heap(const char *policy, const char *conf)
{
	hl_heap_t *h = hl_heap_new(policy, conf);
	ck_assert_msg(h != NULL, "hl_heap_new(%s, %s): %s", policy, conf ? conf : "", hl_last_error());
	return h;
}

double tl_stat(hl_heap_t *h, const char *path)
{
	double v = 0;
	ck_assert_msg(hl_stat(h, path, &v) == 0, "no statistic %s in policy %s", path, hl_heap_policy(h));
	return v;
}

void tl_check_clean(hl_heap_t *h)
{
	int n = hl_check(h, stderr);
	ck_assert_msg(n == 0, "hl_check found %d problem(s) in %s", n, hl_heap_policy(h));
}

void tl_check_finds(hl_heap_t *h, const char *want)
{
	char text[2048] = "";
	FILE *f = fmemopen(text, sizeof text - 1, "w");
	ck_assert_ptr_nonnull(f);
	int n = hl_check(h, f);
	fclose(f);
	ck_assert_msg(n >= 1 && strstr(text, want), "%d problem(s), report \"%s\", wanted \"%s\"", n, text, want);
}

void tl_stay_on_this_cpu(void)
{
	int cpu = sched_getcpu();
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof set, &set), 0);
}

int tl_has_policy(const char *name)
{
	return hl_policy_summary(name) != NULL;
}

int tl_pick_policies(const char **out, int max, const char *leave_out)
{
	const char *env = getenv("HL_TEST_POLICIES");
	static char buf[256];
	int n = 0;
	if (env && *env) {
		snprintf(buf, sizeof buf, "%s", env);
		for (char *save, *tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
			if (tl_has_policy(tok))
				out[n++] = tok;
		return n;
	}
	for (size_t i = 0; i < hl_policy_count() && n < max; i++)
		if (!leave_out || strcmp(hl_policy_name(i), leave_out) != 0)
			out[n++] = hl_policy_name(i);
	return n;
}

void tl_fill(void *p, size_t n, unsigned seed)
{
	unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 31u + i * 7u + (i >> 8));
}

int tl_intact(const void *p, size_t n, unsigned seed)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)(seed * 31u + i * 7u + (i >> 8)))
			return 0;
	return 1;
}

int tl_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

size_t tl_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

const char *tl_trace_path(const char *name, char *buf, size_t len)
{
	const char *src = getenv("srcdir");
	snprintf(buf, len, "%s/traces/%s", src ? src : ".", name);
	return buf;
}

void tl_expect_abort(void (*fn)(const void *arg), const void *arg, const char *text)
{
	int fd[2];
	ck_assert_int_eq(pipe(fd), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		signal(SIGABRT, SIG_DFL);
		fn(arg);
		_exit(0);
	}
	close(fd[1]);
	char buf[1024] = "";
	size_t got = 0;
	ssize_t k;
	while (got < sizeof buf - 1 && (k = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)k;
	close(fd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "the child did not abort (status %d); stderr: %s",
		      status, buf);
	ck_assert_msg(strstr(buf, text) != NULL, "stderr was \"%s\", wanted \"%s\"", buf, text);
}

void *tl_thread_touch(void *heap)
{
	hl_heap_t *h = heap;
	hl_free(h, hl_malloc(h, 64));
	return NULL;
}
