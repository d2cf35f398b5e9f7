/*
 * The saved /proc tree of the replay tests (tests/data/proc-replay/README.md):
 * copied, named after this process and its idle threads, the real node
 * pointed at it (docs/real-node.md, "Saved trees"). For test_replay*.c.
 */
#ifndef NUMALOT_TESTS_REPLAY_TREE_H
#define NUMALOT_TESTS_REPLAY_TREE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "procfs.h"
#include "real.h"

#ifndef DATA_DIR
#define DATA_DIR "tests/data"
#endif

/* The tree's tids 101-103 become live threads 0-2; 3-5 are spares, added
 * to the tree as threads that start. */
#define NLIVE 6
#define INTREE 3

struct replay {
	char root[NL_FS_ROOT_MAX];
	int pid;
	int tid[NLIVE];
	pthread_t th[NLIVE];
	int block[2];
	struct nl_topology *topo;
	struct nl_machine *m;
};

static pthread_barrier_t started;
static int live_tid[NLIVE];
/* The topology the machine decides on (nl_topology_load's spec): NULL,
 * this node's; a test may describe this node's CPUs as more nodes. */
static const char *replay_topology;

/* Blocked on a pipe: alive, and never running. */
static void *blocked(void *arg)
{
	int *fd = arg;
	char c;
	live_tid[fd[2]] = (int)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	while (read(fd[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* The saved tree's name for a live one: the pid, tids 101-103. */
static inline void live_name(const struct replay *rp, const char *name,
			     char *out, size_t len)
{
	int v = atoi(name);
	if (v == 100)
		snprintf(out, len, "%d", rp->pid);
	else if (v >= 101 && v < 101 + INTREE)
		snprintf(out, len, "%d", rp->tid[v - 101]);
	else
		snprintf(out, len, "%s", name);
}

/* A saved file, the test's uid written for @UID@. */
static inline void copy_file(const char *from, const char *to, const char *uid)
{
	char buf[4096], *p = buf, *at;
	FILE *f = fopen(from, "r"), *g = fopen(to, "w");
	assert_non_null(f);
	assert_non_null(g);
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
	while ((at = strstr(p, "@UID@"))) {
		fwrite(p, 1, (size_t)(at - p), g);
		fputs(uid, g);
		p = at + 5;
	}
	fputs(p, g);
	fclose(f);
	fclose(g);
}

static inline void copy_tree(const struct replay *rp, const char *from,
			     const char *to)
{
	DIR *d = opendir(from);
	struct dirent *e;
	char uid[16];
	assert_non_null(d);
	assert_int_equal(mkdir(to, 0755), 0);
	snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
	while ((e = readdir(d))) {
		char a[512], b[512], name[NAME_MAX + 1];
		struct stat st;
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
			continue;
		live_name(rp, e->d_name, name, sizeof(name));
		snprintf(a, sizeof(a), "%s/%s", from, e->d_name);
		snprintf(b, sizeof(b), "%s/%s", to, name);
		assert_int_equal(stat(a, &st), 0);
		if (S_ISDIR(st.st_mode))
			copy_tree(rp, a, b);
		else
			copy_file(a, b, uid);
	}
	closedir(d);
}

static inline void task_path(const struct replay *rp, int tid, const char *file,
			     char *out, size_t len)
{
	snprintf(out, len, "%s/proc/%d/task/%d%s%s", rp->root, rp->pid, tid,
		 file ? "/" : "", file ? file : "");
}

/* tid's stat file; tid 0: the process's (/proc/PID/stat). */
static inline void stat_path(const struct replay *rp, int tid, char *out,
			     size_t len)
{
	if (tid)
		task_path(rp, tid, "stat", out, len);
	else
		snprintf(out, len, "%s/proc/%d/stat", rp->root, rp->pid);
}

/* Set field (1-based, as proc(5) counts) of tid's stat to v. */
static inline void set_field(const struct replay *rp, int tid, int field,
			     const char *v)
{
	char path[512], buf[1024], out[1100];
	FILE *f;
	size_t n, o;
	stat_path(rp, tid, path, sizeof(path));
	assert_non_null(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')') + 2; /* field 3 */
	o = (size_t)(p - buf);
	memcpy(out, buf, o);
	for (int k = 3; *p; k++) {
		size_t w = strcspn(p, " \n");
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s%s",
				      k == field ? (int)strlen(v) : (int)w,
				      k == field ? v : p, p[w] ? " " : "");
		p += w + (p[w] != 0);
	}
	assert_non_null(f = fopen(path, "w"));
	fputs(out, f);
	fputc('\n', f);
	fclose(f);
}

/* Add d to field (a number) of tid's stat. */
static inline void add_field(const struct replay *rp, int tid, int field,
			     long long d)
{
	char path[512], buf[1024], v[24];
	FILE *f;
	stat_path(rp, tid, path, sizeof(path));
	assert_non_null(f = fopen(path, "r"));
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
	fclose(f);
	char *p = strrchr(buf, ')') + 2;
	for (int k = 3; k < field; k++)
		p = strchr(p, ' ') + 1;
	snprintf(v, sizeof(v), "%lld", strtoll(p, NULL, 10) + d);
	set_field(rp, tid, field, v);
}

/* tid ran ticks more (utime, field 14). */
static inline void add_ticks(const struct replay *rp, int tid, int ticks)
{
	add_field(rp, tid, 14, ticks);
}

/* A thread's task directory: removed (it ended) or made from the saved
 * tid 101's (it started). */
static inline void task_dir(const struct replay *rp, int tid, int present)
{
	char dir[512], to[512];
	task_path(rp, tid, NULL, dir, sizeof(dir));
	if (!present) {
		task_path(rp, tid, "stat", to, sizeof(to));
		unlink(to);
		task_path(rp, tid, "children", to, sizeof(to));
		unlink(to);
		assert_int_equal(rmdir(dir), 0);
		return;
	}
	assert_int_equal(mkdir(dir, 0755), 0);
	task_path(rp, tid, "stat", to, sizeof(to));
	copy_file(DATA_DIR "/proc-replay/proc/100/task/101/stat", to, "");
	task_path(rp, tid, "children", to, sizeof(to));
	copy_file(DATA_DIR "/proc-replay/proc/100/task/100/children", to, "");
}

static int fds[NLIVE][3];

/* The tree copied and named, the real node on it (options o, clock mono
 * unless NULL), the process managed, past the counter budget (its threads
 * measured from their stat files). */
static inline int replay_setup(void **state, const struct nl_real_options *o,
			       double (*mono)(void))
{
	struct replay *rp = calloc(1, sizeof(*rp));
	char err[256];

	assert_non_null(rp);
	rp->pid = getpid();
	assert_int_equal(pipe(rp->block), 0);
	pthread_barrier_init(&started, NULL, NLIVE + 1);
	for (int i = 0; i < NLIVE; i++) {
		fds[i][0] = rp->block[0];
		fds[i][2] = i;
		assert_int_equal(
			pthread_create(&rp->th[i], NULL, blocked, fds[i]), 0);
	}
	pthread_barrier_wait(&started);
	memcpy(rp->tid, live_tid, sizeof(rp->tid));
	snprintf(rp->root, sizeof(rp->root), "/tmp/numalot-replay-XXXXXX");
	assert_non_null(mkdtemp(rp->root));
	assert_int_equal(rmdir(rp->root), 0);
	copy_tree(rp, DATA_DIR "/proc-replay", rp->root);
	assert_int_equal(nl_fs_set_root(rp->root), 0);
	assert_int_equal(
		nl_topology_load(replay_topology, &rp->topo, err, sizeof(err)),
		0);
	assert_int_equal(nl_real_create(rp->topo, o, &rp->m, err, sizeof(err)),
			 0);
	nl_real_set_budget(rp->m, 0, 0);
	if (mono)
		nl_real_set_clock(rp->m, mono);
	struct nl_proc_opts po = {.job = 1};
	assert_int_equal(
		rp->m->ops->add_process(rp->m, rp->pid, &po, err, sizeof(err)),
		0);
	*state = rp;
	return 0;
}

static inline int setup(void **state)
{
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	return replay_setup(state, &o, NULL);
}

static void rm_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		char sub[1024];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		rm_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

static inline int teardown(void **state)
{
	struct replay *rp = *state;
	nl_machine_destroy(rp->m);
	nl_topology_free(rp->topo);
	nl_fs_set_root(NULL);
	close(rp->block[1]); /* every blocked thread reads its end */
	for (int i = 0; i < NLIVE; i++)
		pthread_join(rp->th[i], NULL);
	close(rp->block[0]);
	pthread_barrier_destroy(&started);
	rm_tree(rp->root);
	free(rp);
	return 0;
}

#endif
