/*
 * The diagnose library running the program (diagnose/record_program.c,
 * diagnose/measure.c), without the command around it:
 *  - the recordability checks: a missing program, a file that is not
 *    executable, a statically linked ELF (no program interpreter: the
 *    recorder, an LD_PRELOAD library, cannot go into it) and one with an
 *    interpreter, a shell wrapper, a missing recorder; each refusal is one
 *    line in hl_last_error(), and nothing is printed;
 *  - a program that cannot be started: its errno comes back to the
 *    library, which says it and leaves no recording folder behind; one
 *    that exits with 127 at once was told already;
 *  - the measured run: the setting's variables reach the program, a
 *    program that cannot be run and one killed by a signal say so in
 *    their status, and the kernel's high-water mark catches a peak too
 *    short for the sampling (dd's 32 MiB buffer);
 *  - a line of /proc/PID/statm read as resident bytes.
 */
#include "config.h"
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testlib.h"
#include "../../diagnose/diagnose.h"

static char dir[256];

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "%s/diagnose-program.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A file @p name in the test's folder with @p n bytes of @p data and
 * mode @p mode; its path into @p path. */
static const char *put(const char *name, const void *data, size_t n, mode_t mode, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
	close(fd);
	return path;
}

/* An ELF64 executable of one program header of type @p type (PT_INTERP:
 * dynamically linked; PT_LOAD alone: statically). */
static const char *elf(const char *name, unsigned type, char *path, size_t len)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
	} f = { 0 };
	memcpy(f.eh.e_ident, ELFMAG, SELFMAG);
	f.eh.e_ident[EI_CLASS] = ELFCLASS64;
	f.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	f.eh.e_ident[EI_VERSION] = EV_CURRENT;
	f.eh.e_type = ET_EXEC;
	f.eh.e_phoff = sizeof f.eh;
	f.eh.e_ehsize = sizeof f.eh;
	f.eh.e_phentsize = sizeof f.ph;
	f.eh.e_phnum = 1;
	f.ph.p_type = type;
	return put(name, &f, sizeof f, 0755, path, len);
}

/* Points the standard error at a file of the test's folder; returns it. */
static FILE *catch_stderr(void)
{
	char path[512];
	snprintf(path, sizeof path, "%s/stderr", dir);
	FILE *f = fopen(path, "w+");
	ck_assert_ptr_nonnull(f);
	fflush(stderr);
	dup2(fileno(f), 2);
	return f;
}

static long size_of(FILE *f)
{
	fflush(f);
	struct stat sb;
	ck_assert_int_eq(fstat(fileno(f), &sb), 0);
	return (long)sb.st_size;
}

static void says(const char *want)
{
	ck_assert_msg(!strcmp(hl_last_error(), want), "said '%s', expected '%s'", hl_last_error(), want);
}

START_TEST(refusals_are_one_line_each)
{
	make_dir();
	FILE *err = catch_stderr();
	char path[512], want[1024];
	ck_assert_int_eq(dx_recordable("no-such-program-xyz", "/dev/null"), 2);
	says("diagnose: cannot run no-such-program-xyz: no such program");
	put("plain", "#!/bin/sh\n", 10, 0644, path, sizeof path);
	ck_assert_int_eq(dx_recordable(path, "/dev/null"), 2);
	snprintf(want, sizeof want, "diagnose: cannot run %s: no such program", path);
	says(want);
	elf("static", PT_LOAD, path, sizeof path);
	ck_assert_int_eq(dx_recordable(path, "/dev/null"), 2);
	snprintf(want, sizeof want, "diagnose: %s is statically linked: the recorder (an LD_PRELOAD library) cannot go into it",
		 path);
	says(want);
	/* past the ELF check: refused for what comes after it, if anything */
	const char *later = *HL_SANITIZERS_BUILD ? "diagnose: this heaplab is built with -fsanitize"
						: "diagnose: cannot find /nonexistent/libheaplab-record.so";
	elf("dynamic", PT_INTERP, path, sizeof path);
	ck_assert_int_eq(dx_recordable(path, "/nonexistent/libheaplab-record.so"), 2);
	ck_assert_msg(!strncmp(hl_last_error(), later, strlen(later)), "said '%s'", hl_last_error());
	put("wrapper.sh", "#!/bin/sh\nexec true\n", 20, 0755, path, sizeof path);
	ck_assert_int_eq(dx_recordable(path, "/nonexistent/libheaplab-record.so"), 2);
	ck_assert_msg(!strncmp(hl_last_error(), later, strlen(later)), "said '%s'", hl_last_error());
	if (!*HL_SANITIZERS_BUILD) {
		ck_assert_int_eq(dx_recordable(path, "/dev/null"), 0);
		ck_assert_int_eq(dx_recordable("sh", "/dev/null"), 0);
	}
	ck_assert_int_eq(size_of(err), 0);
	fclose(err);
	remove_dir();
}
END_TEST

static hl_trace_t *no_load(const char *path)
{
	ck_abort_msg("nothing to read: %s", path);
	return NULL;
}

START_TEST(a_program_that_cannot_start)
{
	make_dir();
	char path[512], notes_path[512], want[1024];
	put("bad.sh", "#!/nonexistent/sh\n", 18, 0755, path, sizeof path);
	setenv("TMPDIR", dir, 1);
	snprintf(notes_path, sizeof notes_path, "%s/notes", dir);
	FILE *notes = fopen(notes_path, "w+");
	ck_assert_ptr_nonnull(notes);
	FILE *err = catch_stderr();
	const dx_program_opts_t o = { .recorder = "/dev/null", .sample_ms = 10, .notes = notes, .load = no_load };
	char *argv[] = { path, NULL };
	dx_recorded_t rec;
	ck_assert_int_eq(dx_record_program(argv, &o, &rec), 2);
	snprintf(want, sizeof want, "diagnose: cannot run %s: No such file or directory", path);
	says(want);
	ck_assert_ptr_null(rec.trace);
	ck_assert_int_eq(size_of(err), 0);
	rewind(notes);
	char line[1024] = "";
	ck_assert_ptr_nonnull(fgets(line, sizeof line, notes));
	snprintf(want, sizeof want, "heaplab diagnose: recording %s ...\n", path);
	ck_assert_str_eq(line, want);
	/* the recording's folder is gone with the recording */
	ck_assert_int_ne(rec.dir[0], 0);
	ck_assert_int_eq(access(rec.dir, F_OK), 0);
	dx_recorded_free(&rec);
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d));)
		ck_assert_msg(strncmp(e->d_name, "heaplab-diagnose.", 17), "left behind: %s", e->d_name);
	closedir(d);
	/* a program that exits with 127 at once said why itself */
	char *exits[] = { "sh", "-c", "exit 127", NULL };
	ck_assert_int_eq(dx_record_program(exits, &o, &rec), 1);
	dx_recorded_free(&rec);
	fclose(notes);
	fclose(err);
	remove_dir();
}
END_TEST

START_TEST(measured_runs)
{
	const dx_program_opts_t o = { .recorder = "/dev/null", .sample_ms = 10 };
	dx_measured_t m;
	char *both[] = { "sh", "-c", "test \"$DX_A\" = one && test \"$DX_B\" = two", NULL };
	ck_assert_int_eq(dx_run_measured(both, "DX_A=one DX_B=two", false, &o, &m), 0);
	ck_assert_int_eq(m.status, 0);
	ck_assert_int_eq(dx_run_measured(both, "DX_A=one", false, &o, &m), 0);
	ck_assert_int_eq(m.status, 1);
	char *missing[] = { "no-such-program-xyz", NULL };
	ck_assert_int_eq(dx_run_measured(missing, "", false, &o, &m), 2);
	ck_assert_int_eq(m.status, 127);
	/* a signal the program gets while traced still ends it */
	char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
	ck_assert_int_eq(dx_run_measured(killed, "", false, &o, &m), 0);
	ck_assert_int_eq(m.status, 128 + SIGTERM);
	char *dd[] = { "dd", "if=/dev/zero", "of=/dev/null", "bs=32M", "count=1", "status=none", NULL };
	ck_assert_int_eq(dx_run_measured(dd, "", true, &o, &m), 0);
	ck_assert_int_eq(m.status, 0);
	ck_assert_uint_ge(m.peak, (size_t)32 << 20);
}
END_TEST

START_TEST(statm_lines)
{
	ck_assert_uint_eq(dx_statm_bytes("1000 25 3 1 0 40 0\n"), 25 * (size_t)sysconf(_SC_PAGESIZE));
	ck_assert_uint_eq(dx_statm_bytes("junk"), 0);
	ck_assert_uint_eq(dx_statm_bytes("1000"), 0);
}
END_TEST

static Suite *diagnose_program_suite(void)
{
	Suite *s = suite_create("diagnose_program");
	TCase *tc = tcase_create("program");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, refusals_are_one_line_each);
	tcase_add_test(tc, a_program_that_cannot_start);
	tcase_add_test(tc, measured_runs);
	tcase_add_test(tc, statm_lines);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(diagnose_program_suite)
