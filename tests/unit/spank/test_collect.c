/*
 * Unit tests of site collection (docs/slurm.md, "Site collection";
 * docs/report-format.md, "Digest and site log"): a report's digest, a
 * job's totals, the site log's line, and the site's files: report_dir
 * made 0750, files 0640, one line appended per step, failures named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <json-c/json.h>

#include "collect.h"
#include "digest.h"
#include "nodename.h"
#include "rootdir.h"
#include "util.h"

/* A step of two processes on a two-node machine: one whose pages were
 * read (8 pages, locality 0.5 then 1), one never read. */
static const char *report_text =
	"{\"numalot\": \"x\", \"policy\": {\"name\": \"lbma\"},"
	" \"machine\": {\"nodes\": 2},"
	" \"slurm\": {\"job\": 42, \"step\": 1, \"uid\": 1000,"
	" \"node\": \"nla\", \"tasks\": 2},"
	" \"processes\": ["
	"  {\"pid\": 1, \"name\": \"a\", \"threads\": 2,"
	"   \"pages\": {\"moves\": 3, \"moved_bytes\": 4096,"
	"    \"locality_before\": 0.5, \"locality_after\": 1},"
	"   \"pages_per_node_last\": [6, 2]},"
	"  {\"pid\": 2, \"name\": null, \"threads\": 0,"
	"   \"taken_over\": false}],"
	" \"threads\": ["
	"  {\"tid\": 1, \"time_per_node_s\": [3, 1]},"
	"  {\"tid\": 2, \"time_per_node_s\": [1, 3]}],"
	" \"summary\": {\"periods\": 9, \"migrations\": 4, \"swaps\": 1,"
	"  \"rollbacks\": 0, \"duration_s\": 9.5}}";

static char dir[] = "/tmp/numalot-collect.XXXXXX";

static double num(struct json_object *o, const char *key)
{
	struct json_object *v;
	assert_true(json_object_object_get_ex(o, key, &v));
	assert_non_null(v);
	return json_object_get_double(v);
}

static double at(struct json_object *o, const char *key, size_t i)
{
	struct json_object *v;
	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_double(json_object_array_get_idx(v, i));
}

static int is_null(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) && v == NULL;
}

static void digest_of_a_step(void **state)
{
	(void)state;
	struct json_object *r = json_tokener_parse(report_text);
	struct json_object *d = nl_digest(r), *v;
	assert_true(json_object_object_get_ex(d, "node", &v));
	assert_string_equal(json_object_get_string(v), "nla");
	assert_true(json_object_object_get_ex(d, "policy", &v));
	assert_string_equal(json_object_get_string(v), "lbma");
	assert_true(num(d, "job") == 42 && num(d, "step") == 1);
	assert_true(num(d, "processes") == 2 && num(d, "threads") == 2);
	assert_true(num(d, "periods") == 9 && num(d, "migrations") == 4);
	assert_true(num(d, "page_moves") == 3);
	assert_true(num(d, "pages_moved_bytes") == 4096);
	assert_true(at(d, "cpu_s_per_numa_node", 0) == 4);
	assert_true(at(d, "cpu_share_per_numa_node", 1) == 0.5);
	/* The process never read weighs 1 page, with no locality. */
	assert_true(num(d, "locality_first") == 0.5);
	assert_true(num(d, "locality_last") == 1);
	assert_true(num(d, "pages") == 8);
	json_object_put(d);

	/* A report holding only an error: nothing made up. */
	struct json_object *e = json_tokener_parse(
		"{\"numalot\": \"x\", \"error\": \"no agent\","
		" \"slurm\": {\"job\": 42, \"step\": 1, \"node\": \"nlb\"}}");
	d = nl_digest(e);
	assert_true(json_object_object_get_ex(d, "error", &v));
	assert_true(is_null(d, "periods") && is_null(d, "policy"));
	assert_true(is_null(d, "cpu_share_per_numa_node"));
	assert_true(is_null(d, "locality_last") && is_null(d, "pages"));
	assert_true(num(d, "threads") == 0);

	/* A job's totals over its two nodes. */
	struct json_object *all = json_object_new_array();
	json_object_array_add(all, nl_digest(r));
	json_object_array_add(all, d);
	struct json_object *t = nl_digest_totals(all);
	assert_true(num(t, "job") == 42 && num(t, "reports") == 2);
	assert_true(num(t, "nodes") == 2 && num(t, "steps") == 1);
	assert_true(num(t, "errors") == 1 && num(t, "migrations") == 4);
	assert_true(at(t, "cpu_s_per_numa_node", 1) == 4);
	assert_true(num(t, "locality_last") == 1);
	json_object_put(t);
	json_object_put(all);
	json_object_put(e);
	json_object_put(r);
}

static void site_line(void **state)
{
	(void)state;
	struct json_object *r = json_tokener_parse(report_text), *v;
	struct nl_collect_ids id = {.job = 42,
				    .step = 1,
				    .uid = 1000,
				    .node = "nla",
				    .user = "alice",
				    .cluster = "c1"};
	char *line = nl_site_line(r, &id, 86400);
	assert_non_null(line);
	/* One line, ending the line. */
	assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
	struct json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "time", &v));
	assert_string_equal(json_object_get_string(v), "1970-01-02T00:00:00Z");
	assert_true(json_object_object_get_ex(o, "user", &v));
	assert_string_equal(json_object_get_string(v), "alice");
	assert_true(json_object_object_get_ex(o, "cluster", &v));
	assert_string_equal(json_object_get_string(v), "c1");
	assert_true(num(o, "job") == 42 && num(o, "migrations") == 4);
	assert_true(at(o, "cpu_share_per_numa_node", 0) == 0.5);
	assert_true(num(o, "locality_last") == 1);
	/* Who and where first, for a person reading the log. */
	assert_ptr_equal(strstr(line, "{\"time\":"), line);
	json_object_put(o);
	free(line);
	json_object_put(r);
}

/* What a user can put in a line (the cluster srun passed, a program's
 * name in a warning): the line stays one line of valid UTF-8 JSON, with
 * no key of the user's making. */
static void site_line_of_hostile_strings(void **state)
{
	(void)state;
	struct json_object *r = json_tokener_parse(report_text), *v;
	struct nl_collect_ids id = {
		.job = 42,
		.step = 1,
		.uid = 1000,
		.node = "nla",
		.user = "alice",
		.cluster = "c1\",\"uid\":0,\"x\":\"\n{\"job\":1}\xff\xfe\x80"};
	json_object_object_add(
		r, "warning",
		json_object_new_string(
			"task \xc3(\x01\x7f\xed\xa0\x80 refused"));
	char *line = nl_site_line(r, &id, 86400);
	assert_non_null(line);
	assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
	/* Valid UTF-8: nothing left to scrub. */
	char *copy = strdup(line);
	assert_int_equal(nl_utf8_scrub(copy), 0);
	free(copy);
	struct json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	assert_true(num(o, "uid") == 1000);
	assert_false(json_object_object_get_ex(o, "x", &v));
	assert_true(json_object_object_get_ex(o, "cluster", &v));
	assert_non_null(strstr(json_object_get_string(v), "{\"job\":1}"));
	json_object_put(o);
	free(line);
	json_object_put(r);
}

static int mode_of(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
}

static int lines_of(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;
	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

static int complaints;
static char last[1500];
static void complain(const char *msg)
{
	complaints++;
	snprintf(last, sizeof(last), "%s", msg);
}

static void site_files(void **state)
{
	(void)state;
	struct json_object *r = json_tokener_parse(report_text);
	struct nl_collect_ids id = {
		.job = 42, .step = 1, .node = "nla", .user = "alice"};
	struct nl_site s;
	char path[600];

	if (geteuid() != 0)
		skip(); /* the site's files are root's */
	assert_non_null(mkdtemp(dir));
	nl_site_default(&s, "/usr/sbin/numalotd");
	/* report_dir and the log's folder do not exist yet. */
	snprintf(s.report_dir, sizeof(s.report_dir), "%s/site/reports", dir);
	snprintf(s.site_log, sizeof(s.site_log), "%s/log/steps.jsonl", dir);
	complaints = 0;
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 0);
	id.step = 2;
	id.node = "nlb";
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 0);
	assert_int_equal(complaints, 0);
	assert_int_equal(mode_of(s.report_dir), 0750);
	snprintf(path, sizeof(path), "%s/site", dir);
	assert_int_equal(mode_of(path), 0750);
	snprintf(path, sizeof(path), "%s/numalot-42.1.nla.json", s.report_dir);
	assert_int_equal(mode_of(path), 0640);
	assert_int_equal(mode_of(s.site_log), 0640);
	assert_int_equal(lines_of(s.site_log), 2);

	/* A site log that cannot be written is named, and so is the copy. */
	snprintf(s.site_log, sizeof(s.site_log), "%.400s/x", path);
	snprintf(s.report_dir, sizeof(s.report_dir), "%.400s", path);
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 2);
	assert_int_equal(complaints, 2);
	assert_non_null(strstr(last, "cannot append to the site log"));
	assert_non_null(strstr(last, "numalot-42.1.nla.json/x"));
	json_object_put(r);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

/* A file of path's with text, made by hand. */
static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

/* A node's name goes into root's file names: a name that could climb
 * folders, or hide a file, gets no site copy, and nothing is written. */
static void site_copy_refuses_bad_node_names(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"/../../rootonly/pwn", "a/b", "..", ".hidden", "", "x y"};
	struct json_object *r = json_tokener_parse(report_text);
	struct nl_site s;
	char d[] = "/tmp/numalot-names.XXXXXX", cmd[200], out[700];

	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(d));
	nl_site_default(&s, "/usr/sbin/numalotd");
	snprintf(s.report_dir, sizeof(s.report_dir), "%s/reports", d);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct nl_collect_ids id = {
			.job = 7, .step = 0, .node = bad[i]};
		complaints = 0;
		assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 1);
		assert_non_null(strstr(last, "cannot stand in a file name"));
		assert_int_equal(
			nl_site_copy_path(s.report_dir, &id, out, sizeof(out)),
			-1);
	}
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s/reports)\"", d);
	assert_int_equal(system(cmd), 0);
	json_object_put(r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	assert_int_equal(system(cmd), 0);
}

/* report_dir under a sticky world-writable folder that a user reached
 * first: their link, their folder and a group-writable folder are
 * refused, named, and root writes nothing; root's own link is followed. */
static void site_dir_refuses_what_a_user_planted(void **state)
{
	(void)state;
	struct json_object *r = json_tokener_parse(report_text);
	struct nl_collect_ids id = {.job = 9, .step = 0, .node = "nla"};
	struct nl_site s;
	char d[] = "/tmp/numalot-planted.XXXXXX", p[300], q[300], why[700];

	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(d));
	snprintf(p, sizeof(p), "%s/rootonly", d);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/rootonly/config.json", d);
	put(p, "root's\n");
	snprintf(p, sizeof(p), "%s/sticky", d);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 01777), 0);
	nl_site_default(&s, "/usr/sbin/numalotd");
	snprintf(s.report_dir, sizeof(s.report_dir), "%s/sticky/reports", d);

	/* A user's link to the root-only folder. */
	snprintf(q, sizeof(q), "%s/rootonly", d);
	assert_int_equal(symlink(q, s.report_dir), 0);
	assert_int_equal(lchown(s.report_dir, 65534, 65534), 0);
	complaints = 0;
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 1);
	assert_non_null(strstr(last, "is a symbolic link of uid 65534"));
	snprintf(p, sizeof(p), "%s/rootonly/numalot-9.0.nla.json", d);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/rootonly/config.json", d);
	assert_string_equal(slurp(p), "root's\n");

	/* A user's folder, with a file planted as the site's copy. */
	assert_int_equal(unlink(s.report_dir), 0);
	assert_int_equal(mkdir(s.report_dir, 0755), 0);
	assert_int_equal(chown(s.report_dir, 65534, 65534), 0);
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 1);
	assert_non_null(strstr(last, "belongs to uid 65534"));

	/* Root's folder, but others may write in it. */
	assert_int_equal(chown(s.report_dir, 0, 0), 0);
	assert_int_equal(chmod(s.report_dir, 0775), 0);
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 1);
	assert_non_null(strstr(last, "writable by others"));
	assert_int_equal(nl_owned_dir(s.report_dir, 0750, 0, why, sizeof(why)),
			 -EPERM);

	/* A link of root's in the shared folder is not followed: any
	 * user may hard-link one of root's links there where the kernel
	 * lets users hard-link what they do not own. */
	assert_int_equal(rmdir(s.report_dir), 0);
	snprintf(q, sizeof(q), "%s/site", d);
	assert_int_equal(mkdir(q, 0750), 0);
	assert_int_equal(symlink(q, s.report_dir), 0);
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 1);
	assert_non_null(strstr(last, "in a folder others may write"));
	snprintf(p, sizeof(p), "%s/site/numalot-9.0.nla.json", d);
	assert_int_equal(access(p, F_OK), -1);

	/* Root's own link, in root's folder, to root's folder stands. */
	assert_int_equal(unlink(s.report_dir), 0);
	snprintf(s.report_dir, sizeof(s.report_dir), "%s/links", d);
	assert_int_equal(mkdir(s.report_dir, 0755), 0);
	snprintf(s.report_dir, sizeof(s.report_dir), "%s/links/reports", d);
	assert_int_equal(symlink(q, s.report_dir), 0);
	complaints = 0;
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 0);
	assert_int_equal(complaints, 0);
	snprintf(p, sizeof(p), "%s/site/numalot-9.0.nla.json", d);
	assert_int_equal(access(p, F_OK), 0);
	/* "..", a relative path and a file on the way. */
	snprintf(p, sizeof(p), "%s/site/../rootonly", d);
	assert_true(nl_owned_dir(p, 0750, 0, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "\"..\""));
	assert_int_equal(nl_owned_dir("var/x", 0750, 0, why, sizeof(why)),
			 -EINVAL);
	snprintf(p, sizeof(p), "%s/site/numalot-9.0.nla.json/x", d);
	assert_int_equal(nl_owned_dir(p, 0750, 0, why, sizeof(why)), -ENOTDIR);
	json_object_put(r);
	snprintf(p, sizeof(p), "rm -rf %s", d);
	assert_int_equal(system(p), 0);
}

/* A socket of this process's bound at in/name, listening: its fd. */
static int bound_at(const char *in, const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_true(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", in,
			     name) < (int)sizeof(sa.sun_path));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 1), 0);
	return fd;
}

/* The name comes from the socket of this step that this process holds,
 * never from another socket of the same form. */
static void stepd_node_name_from_its_socket(void **state)
{
	(void)state;
	char d[] = "/tmp/numalot-sock.XXXXXX", p[300], out[64];
	int fd, other;

	assert_non_null(mkdtemp(d));
	/* Another process's socket of this step's form names nothing. */
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		bound_at(d, "evil_12.0");
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(ready[0], p, 1), 1);
	close(ready[0]);
	close(ready[1]);
	assert_int_equal(nl_stepd_node_name(12, 0, out, sizeof(out)), -1);
	assert_string_equal(out, "");
	fd = bound_at(d, "node-07_12.0");
	other = bound_at(d, "node-07_12.3");
	assert_int_equal(nl_stepd_node_name(12, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "node-07");
	/* Another step's socket names nothing. */
	assert_int_equal(nl_stepd_node_name(12, 1, out, sizeof(out)), -1);
	assert_string_equal(out, "");
	close(fd);
	close(other);
	/* A heterogeneous step's component, and a name not safe in a path. */
	fd = bound_at(d, "nlb_12.0.1");
	assert_int_equal(nl_stepd_node_name(12, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "nlb");
	close(fd);
	fd = bound_at(d, ".x_12.0");
	assert_int_equal(nl_stepd_node_name(12, 0, out, sizeof(out)), -1);
	close(fd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	snprintf(p, sizeof(p), "rm -rf %s", d);
	assert_int_equal(system(p), 0);
}

/*
 * The kernel prints a socket's name in /proc/net/unix as it is, newlines
 * too: any local user can bind a socket whose name adds a line naming
 * slurmstepd's own socket's inode with a name of the user's choosing
 * (docs/slurm.md, "Security"). The node's name must not come from there.
 */
static void stepd_node_name_not_from_a_forged_line(void **state)
{
	(void)state;
	char d[] = "/tmp/numalot-stepd.XXXXXX", out[64];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat sb;
	int fd, forged[300];

	assert_non_null(mkdtemp(d));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/node-07_12.0", d);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	/* Bound in a folder of the user's: the kernel lists such sockets by
	 * their inode's hash, the newest first in a bucket, so some of many
	 * come before the real one. */
	for (int i = 0; i < 300; i++) {
		struct sockaddr_un f = {.sun_family = AF_UNIX};
		char fake[80];
		snprintf(fake, sizeof(fake), "%s/%d\n0: 2 0 10000 1 1 %lu ", d,
			 i, (unsigned long)sb.st_ino);
		assert_int_equal(mkdir(fake, 0755), 0);
		strcat(fake, "/x");
		assert_int_equal(mkdir(fake, 0755), 0);
		snprintf(f.sun_path, sizeof(f.sun_path), "%s/evil_12.0", fake);
		forged[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_true(forged[i] >= 0);
		assert_int_equal(
			bind(forged[i], (struct sockaddr *)&f, sizeof(f)), 0);
	}
	assert_int_equal(nl_stepd_node_name(12, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "node-07");
	for (int i = 0; i < 300; i++)
		close(forged[i]);
	close(fd);
	snprintf(out, sizeof(out), "rm -rf %s", d);
	assert_int_equal(system(out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(digest_of_a_step),
		cmocka_unit_test(site_line),
		cmocka_unit_test(site_line_of_hostile_strings),
		cmocka_unit_test(site_files),
		cmocka_unit_test(site_copy_refuses_bad_node_names),
		cmocka_unit_test(site_dir_refuses_what_a_user_planted),
		cmocka_unit_test(stepd_node_name_from_its_socket),
		cmocka_unit_test(stepd_node_name_not_from_a_forged_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
