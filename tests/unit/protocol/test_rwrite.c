/*
 * Unit tests of the report writer (issue 14, case 9): a write that fails
 * part way (a full disk, stood in for by a file size limit) leaves the old
 * file whole and says so; a report with data is not replaced by one
 * without; a symbolic link or someone else's file is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/securebits.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rwrite.h"
#include "util.h"

static char dir[] = "/tmp/numalot-rwrite.XXXXXX";

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	if (f) {
		size_t n = fread(buf, 1, (1 << 20) - 1, f);
		buf[n] = 0;
		fclose(f);
	}
	return buf;
}

static int files_in_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1", dir);
	return system(cmd) == 0;
}

static void full_disk_keeps_old_file(void **state)
{
	char path[128];
	(void)state;
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(
		nl_write_report_here(path, "{\"numalot\": \"0\", \"old\": 1}\n",
				     0644, geteuid(), 0, 0, 0),
		0);
	char *big = malloc(20000);
	memset(big, 'x', 19999);
	big[19999] = 0;
	pid_t pid = fork();
	if (pid == 0) {
		/* A file size limit: writes past 4,096 bytes fail (EFBIG). */
		struct rlimit rl = {4096, 4096};
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		int rc = nl_write_report_here(path, big, 0644, geteuid(), 0, 0,
					      0);
		_exit(rc == EFBIG ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char *now = slurp(path);
	assert_string_equal(now, "{\"numalot\": \"0\", \"old\": 1}\n");
	assert_true(files_in_dir()); /* no temporary file left */
	free(now);
	free(big);
}

static void data_is_not_replaced_by_a_stub(void **state)
{
	char path[128];
	(void)state;
	snprintf(path, sizeof(path), "%s/r.json", dir);
	const char *full = "{\"numalot\": \"0\", \"threads\": [], "
			   "\"slurm\": {\"job\": 7, \"step\": 0}}";
	assert_int_equal(
		nl_write_report_here(path, full, 0644, geteuid(), 1, 7, 0), 0);
	assert_int_equal(nl_write_report_here(path, "{\"error\": \"lost\"}",
					      0644, geteuid(), 1, 7, 0),
			 EALREADY);
	char *now = slurp(path);
	assert_string_equal(now, full);
	free(now);
	/* Another step's stub may replace it. */
	assert_int_equal(nl_write_report_here(path, "{\"error\": \"lost\"}",
					      0644, geteuid(), 1, 7, 1),
			 0);
}

/* A report root writes (a job of root's, whose --numalot-report may come
 * from a user's environment root ran srun in) replaces a file of root's
 * only when that file is a numalot report: never /etc/passwd. A user's own
 * file is the user's to replace (the writer runs as the user). */
static void root_replaces_only_a_report(void **state)
{
	char path[128];
	const char *passwd = "root:x:0:0:root:/root:/bin/bash\n";
	const char *report = "{\"numalot\": \"0\", \"error\": \"lost\"}";
	int fd;
	(void)state;
	snprintf(path, sizeof(path), "%s/passwd", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, passwd, strlen(passwd)),
			 (ssize_t)strlen(passwd));
	close(fd);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(
		nl_write_report_here(path, report, 0644, sb.st_uid, 0, 0, 0),
		sb.st_uid == 0 ? EEXIST : 0);
	char *now = slurp(path);
	if (sb.st_uid == 0) {
		assert_string_equal(now, passwd);
		/* Empty is not a report either. */
		assert_int_equal(truncate(path, 0), 0);
		assert_int_equal(
			nl_write_report_here(path, report, 0644, 0, 0, 0, 0),
			EEXIST);
		/* A report: replaced. */
		assert_int_equal(unlink(path), 0);
		assert_int_equal(
			nl_write_report_here(path, report, 0644, 0, 0, 0, 0),
			0);
		assert_int_equal(nl_write_report_here(path, "{\"numalot\": 1}",
						      0644, 0, 0, 0, 0),
				 0);
		free(now);
		now = slurp(path);
		assert_string_equal(now, "{\"numalot\": 1}");
	}
	free(now);
	unlink(path);
}

static void links_and_others_files_are_refused(void **state)
{
	char path[128], link[128];
	(void)state;
	snprintf(path, sizeof(path), "%s/r.json", dir);
	snprintf(link, sizeof(link), "%s/l.json", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(
		nl_write_report_here(link, "{}", 0644, geteuid(), 0, 0, 0),
		EEXIST);
	unlink(link);
	/* A file of uid 0 is not uid 12345's. */
	assert_int_equal(nl_write_report_here(path, "{}", 0644, 12345, 0, 0, 0),
			 EEXIST);
}

/* A FIFO at the report's name is refused without being opened: a writer
 * waiting on it is not let through (an open would wake it). */
static void a_fifo_is_never_opened(void **state)
{
	char path[128];
	int status;
	(void)state;
	snprintf(path, sizeof(path), "%s/f.json", dir);
	assert_int_equal(mkfifo(path, 0666), 0);
	pid_t w = fork();
	assert_true(w >= 0);
	if (w == 0) {
		int fd = open(path, O_WRONLY); /* waits for a reader */
		_exit(fd >= 0 ? 0 : 1);
	}
	usleep(100000); /* the writer on its way into open */
	assert_int_equal(
		nl_write_report_here(path, "{}", 0644, geteuid(), 0, 0, 0),
		EEXIST);
	usleep(200000);
	assert_int_equal(waitpid(w, &status, WNOHANG), 0); /* still waiting */
	int fd = open(path, O_RDONLY | O_NONBLOCK);	   /* let it go */
	assert_int_equal(waitpid(w, &status, 0), w);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* A site log: lines appended whole; never through a link or into
 * another's file; the folders leading to a report made, with a mode. */
static void appends_and_folders(void **state)
{
	char path[160], link[160];
	struct stat sb;
	(void)state;
	snprintf(path, sizeof(path), "%s/log/a/steps.jsonl", dir);
	assert_int_equal(nl_make_parents(path, 0750), 0);
	snprintf(link, sizeof(link), "%s/log/a", dir);
	assert_int_equal(stat(link, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0750);
	assert_int_equal(nl_append_here(path, "one\n", 0640, geteuid()), 0);
	assert_int_equal(nl_append_here(path, "two\n", 0640, geteuid()), 0);
	char *now = slurp(path);
	assert_string_equal(now, "one\ntwo\n");
	free(now);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
	assert_int_equal(nl_append_here(path, "x\n", 0640, 12345), EEXIST);
	snprintf(link, sizeof(link), "%s/log/link.jsonl", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(nl_append_here(link, "x\n", 0640, geteuid()), EEXIST);
	/* A file where a folder should be. */
	snprintf(link, sizeof(link), "%s/log/a/steps.jsonl/r.json", dir);
	assert_int_equal(nl_make_parents(link, 0750), ENOTDIR);
	/* Through the writer's child, as a report with its folder. */
	struct nl_write_as o = {.uid = geteuid(),
				.mode = 0640,
				.dir_mode = 0755,
				.timeout_ms = 5000};
	snprintf(link, sizeof(link), "%s/job-7/0.n1.json", dir);
	assert_int_equal(nl_write_report_as(link, "{}\n", &o), 0);
	o.append = 1;
	assert_int_equal(nl_write_report_as(path, "three\n", &o), 0);
	now = slurp(path);
	assert_string_equal(now, "one\ntwo\nthree\n");
	free(now);
	/* What is written is valid UTF-8, whatever a job put in the text. */
	assert_int_equal(nl_write_report_as(path, "f\xff\xc3(\xe2\x82\n", &o),
			 0);
	now = slurp(path);
	assert_string_equal(now, "one\ntwo\nthree\nf?"
				 "?(?"
				 "?\n");
	free(now);
}

/*
 * A site log appended to is a file with no other name: a hard link to
 * root's file (a user's, made where fs.protected_hardlinks is 0 or in a
 * folder that let them) would have the line written into that file.
 * Before, nl_append_here looked at the owner only.
 */
static void append_refuses_a_hard_link(void **state)
{
	char path[160], hard[160];
	(void)state;
	snprintf(path, sizeof(path), "%s/only.jsonl", dir);
	snprintf(hard, sizeof(hard), "%s/hard.jsonl", dir);
	assert_int_equal(nl_append_here(path, "one\n", 0640, geteuid()), 0);
	assert_int_equal(link(path, hard), 0);
	assert_int_equal(nl_append_here(hard, "x\n", 0640, geteuid()), EEXIST);
	assert_int_equal(nl_append_here(path, "x\n", 0640, geteuid()), EEXIST);
	/* Root's site log, through the writer's child. */
	struct nl_write_as o = {.mode = 0640, .append = 1, .timeout_ms = 5000};
	if (geteuid() == 0)
		assert_int_equal(nl_write_report_as(hard, "x\n", &o), EEXIST);
	char *now = slurp(path);
	assert_string_equal(now, "one\n");
	free(now);
	/* Its only name again: appended to. */
	assert_int_equal(unlink(hard), 0);
	assert_int_equal(nl_append_here(path, "two\n", 0640, geteuid()), 0);
	now = slurp(path);
	assert_string_equal(now, "one\ntwo\n");
	free(now);
}

/* Whether the folder at path holds nothing. */
static int empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return d && n == 0;
}

/*
 * The report of a job of root's (uid 0) is written by root, at the path
 * made from the job's working folder: only where no user can choose
 * where it goes (docs/slurm.md, "Security"). Its folder must be root's
 * all along its path, or a shared sticky one such as /tmp; the missing
 * ones are made by root inside checked ones. A user's link numalot-JOB in
 * a shared working folder, a folder of a user's, a folder others may
 * write that is not sticky: refused, nothing made or written through
 * them. Before, root made and followed the folders by name (mkdir, stat):
 * the user's link had root write the report in the folder it pointed at.
 */
static void root_job_report_only_in_roots_folders(void **state)
{
	char base[160], p[240], q[240];
	struct stat sb;
	struct nl_write_as o = {
		.mode = 0644, .dir_mode = 0755, .timeout_ms = 5000};
	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(base, sizeof(base), "%s/rootjob", dir);
	assert_int_equal(mkdir(base, 0755), 0);
	snprintf(q, sizeof(q), "%s/rootonly", base);
	assert_int_equal(mkdir(q, 0700), 0);
	/* A shared working folder like /tmp, one others may write that is
	 * not sticky, and a user's own. */
	snprintf(p, sizeof(p), "%s/sticky", base);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 01777), 0);
	snprintf(p, sizeof(p), "%s/open", base);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 0777), 0);
	snprintf(p, sizeof(p), "%s/theirs", base);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chown(p, 65534, 65534), 0);

	/* The user's link where the job's folder goes, in either. */
	const char *planted[] = {"sticky/numalot-4242", "open/numalot-4243"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%s", base, planted[i]);
		assert_int_equal(symlink(q, p), 0);
		assert_int_equal(lchown(p, 65534, 65534), 0);
		snprintf(p, sizeof(p), "%s/%s/0.node1.json", base, planted[i]);
		assert_int_equal(nl_write_report_as(p, "{}\n", &o), EPERM);
		assert_true(empty_dir(q));
	}
	/* A folder of the user's (made in the shared one, or theirs), and
	 * one missing in a folder others may write: nothing made there. */
	snprintf(p, sizeof(p), "%s/sticky/numalot-4244", base);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chown(p, 65534, 65534), 0);
	snprintf(p, sizeof(p), "%s/sticky/numalot-4244/0.node1.json", base);
	assert_int_equal(nl_write_report_as(p, "{}\n", &o), EPERM);
	snprintf(p, sizeof(p), "%s/sticky/numalot-4244", base);
	assert_true(empty_dir(p));
	snprintf(p, sizeof(p), "%s/theirs/numalot-4245/0.node1.json", base);
	assert_int_equal(nl_write_report_as(p, "{}\n", &o), EPERM);
	snprintf(p, sizeof(p), "%s/theirs", base);
	assert_true(empty_dir(p));
	snprintf(p, sizeof(p), "%s/open/numalot-4246/0.node1.json", base);
	assert_int_equal(nl_write_report_as(p, "{}\n", &o), EPERM);
	snprintf(p, sizeof(p), "%s/open/numalot-4246", base);
	assert_int_equal(lstat(p, &sb), -1);

	/* Root's folders: made (0755, root's) and written, under root's
	 * temporary folder and in the shared sticky one; a file straight in
	 * the shared one too (made anew and renamed). */
	const char *fine[] = {
		"numalot-77/0.node1.json", "deep/er/numalot-78/0.node1.json",
		"sticky/numalot-79/0.node1.json", "sticky/report.json"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", base, fine[i]);
		assert_int_equal(nl_write_report_as(p, "{\"ok\": 1}\n", &o), 0);
		char *now = slurp(p);
		assert_string_equal(now, "{\"ok\": 1}\n");
		free(now);
		assert_int_equal(lstat(p, &sb), 0);
		assert_true(S_ISREG(sb.st_mode) && sb.st_uid == 0);
		*strrchr(p, '/') = 0;
		assert_int_equal(lstat(p, &sb), 0);
		assert_true(S_ISDIR(sb.st_mode) && sb.st_uid == 0);
		if (i < 3)
			assert_int_equal(sb.st_mode & 07777, 0755);
	}
	assert_true(empty_dir(q));
}

/* The status line of pid that starts with key ("Uid:"), its value. */
static const char *status_of(pid_t pid, const char *key)
{
	static char line[512];
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	const char *v = NULL;
	while (f && !v && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			line[strcspn(line, "\n")] = 0;
			v = line + strlen(key) +
			    strspn(line + strlen(key), " \t");
		}
	if (f)
		fclose(f);
	return v ? v : "";
}

/*
 * The writer's child, as the user, keeps nothing of its caller's: its
 * uid, gid and groups are the user's and root's cannot come back (no
 * capability left, even where the caller's securebits would keep them),
 * no descriptor of the caller's (a root-only file opened without
 * close-on-exec) is open in it, and it cannot be traced by the user.
 * Looked at from outside while it waits on a lock we hold.
 */
static void writer_child_keeps_nothing_of_roots(void **state)
{
	char secret[160], folder[160], log[160], path[200], link[200],
		target[200];
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(chmod(dir, 0755), 0); /* the user goes through */
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	snprintf(folder, sizeof(folder), "%s/u", dir);
	snprintf(log, sizeof(log), "%s/u/log", dir);
	int sfd = open(secret, O_RDWR | O_CREAT, 0600); /* not CLOEXEC */
	assert_true(sfd >= 0);
	assert_int_equal(mkdir(folder, 0755), 0);
	assert_int_equal(chown(folder, 65534, 65534), 0);
	int lfd = open(log, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(lfd >= 0);
	assert_int_equal(fchown(lfd, 65534, 65534), 0);
	assert_int_equal(flock(lfd, LOCK_EX), 0);
	pid_t h = fork();
	assert_true(h >= 0);
	if (h == 0) {
		close(lfd); /* the lock is ours alone */
		/* A caller whose capabilities a uid change would keep. */
		prctl(PR_SET_SECUREBITS, SECBIT_KEEP_CAPS);
		struct nl_write_as o = {.uid = 65534,
					.gid = 65534,
					.mode = 0644,
					.append = 1,
					.timeout_ms = 10000};
		_exit(nl_write_report_as(log, "x\n", &o));
	}
	/* The writer: h's child, once it waits in flock (73). */
	pid_t w = 0;
	char sc[64] = "";
	for (int i = 0; i < 500 && strncmp(sc, "73 ", 3); i++) {
		usleep(10000);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
			 (int)h, (int)h);
		FILE *f = fopen(path, "r");
		if (f && fscanf(f, "%d", &w) != 1)
			w = 0;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/syscall", (int)w);
		f = w > 0 ? fopen(path, "r") : NULL;
		if (!f || !fgets(sc, sizeof(sc), f))
			sc[0] = 0;
		if (f)
			fclose(f);
	}
	assert_string_equal(sc, sc[0] == '7' ? sc : "73 (flock)");
	assert_string_equal(status_of(w, "Uid:"), "65534\t65534\t65534\t65534");
	assert_string_equal(status_of(w, "Gid:"), "65534\t65534\t65534\t65534");
	assert_string_equal(status_of(w, "Groups:"), "");
	assert_string_equal(status_of(w, "CapPrm:"), "0000000000000000");
	assert_string_equal(status_of(w, "CapEff:"), "0000000000000000");
	assert_string_equal(status_of(w, "CapAmb:"), "0000000000000000");
	/* Not dumpable: its /proc files stay root's, out of its user's
	 * reach (ptrace, /proc/PID/fd). */
	struct stat sb;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)w);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_uid, 0);
	/* None of its caller's descriptors. */
	for (int fd = 0; fd < 1024; fd++) {
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)w, fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		assert_string_not_equal(target, secret);
	}
	close(lfd); /* the lock: it appends and ends */
	int st;
	assert_int_equal(waitpid(h, &st, 0), h);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	char *now = slurp(log);
	assert_string_equal(now, "x\n");
	free(now);
	close(sfd);
}

static int make_dir(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* In a child: 0 when nl_own_nice raises only when told to, sets what it
 * is given, and nl_own_nice_undo (what a report writer calls before it
 * takes its user's identity) goes back to the starting nice from a raised
 * one, and keeps a lower one (asked for). */
static int nice_steps(void)
{
	int start = getpriority(PRIO_PROCESS, 0), now = 99, rc;
	if (start > 16 || start < -18)
		return 0; /* no room to step either way */
	if (nl_own_nice(start + 2, 1, &now) != 0 || now != start ||
	    getpriority(PRIO_PROCESS, 0) != start)
		return 1; /* raise only: not lowered */
	/* Raised (where it may: CAP_SYS_NICE), then undone. */
	rc = nl_own_nice(start - 2, 0, &now);
	if (rc == 0) {
		if (now != start - 2 ||
		    getpriority(PRIO_PROCESS, 0) != start - 2)
			return 2;
		nl_own_nice_undo();
		if (getpriority(PRIO_PROCESS, 0) != start)
			return 3;
	} else if (rc != -EACCES && rc != -EPERM) {
		return 4;
	}
	/* Set lower than it started: not undone (asked for). */
	if (nl_own_nice(start + 3, 0, &now) != 0 || now != start + 3)
		return 5;
	nl_own_nice_undo();
	if (getpriority(PRIO_PROCESS, 0) != start + 3)
		return 6;
	return 0;
}

static void own_nice_and_back(void **state)
{
	(void)state;
	int st;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(nice_steps());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_disk_keeps_old_file),
		cmocka_unit_test(data_is_not_replaced_by_a_stub),
		cmocka_unit_test(root_replaces_only_a_report),
		cmocka_unit_test(links_and_others_files_are_refused),
		cmocka_unit_test(a_fifo_is_never_opened),
		cmocka_unit_test(appends_and_folders),
		cmocka_unit_test(append_refuses_a_hard_link),
		cmocka_unit_test(root_job_report_only_in_roots_folders),
		cmocka_unit_test(own_nice_and_back),
		cmocka_unit_test(writer_child_keeps_nothing_of_roots),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
