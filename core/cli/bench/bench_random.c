/*
 * numalot bench --random=N [--seed=S] [--save=DIR] [--perturb=F]: N
 * seeded random scenarios (core/sim/random.h) after the files given, each
 * saved as DIR/NAME.json when asked (docs/scenarios.md, "Random
 * scenarios").
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli_out.h"
#include "random.h"
#include "scenario.h"
#include "util.h"

#define CMD "bench"

int nl_bench_random_option(struct nl_bench_random *r, int opt, const char *arg)
{
	char *end;

	errno = 0;
	switch (opt) {
	case NL_BENCH_OPT_RANDOM: {
		long v;
		if (nl_cli_whole(CMD, "--random", arg, 1, NL_BENCH_MAX_RANDOM,
				 &v) < 0)
			return -1;
		r->n = (int)v;
		return 0;
	}
	case NL_BENCH_OPT_SEED:
		if (nl_cli_seed(CMD, "--seed", arg, &r->seed) < 0)
			return -1;
		r->seed_set = 1;
		return 0;
	case NL_BENCH_OPT_PERTURB: {
		double v = strtod(arg, &end);
		if (!*arg || *end || errno || !isfinite(v) || v < 0 ||
		    v > NL_RANDOM_MAX_PERTURB) {
			nl_cli_error(CMD,
				     "--perturb wants a number from 0 to %g, "
				     "not \"%s\"",
				     NL_RANDOM_MAX_PERTURB, arg);
			return -1;
		}
		r->perturb = v;
		return 0;
	}
	case NL_BENCH_OPT_SAVE:
		if (!*arg) {
			nl_cli_error(CMD, "--save wants a folder");
			return -1;
		}
		r->save = arg;
		return 0;
	}
	return -1;
}

int nl_bench_random_check(const struct nl_bench_random *r)
{
	const char *opt = r->seed_set	   ? "--seed"
			  : r->save	   ? "--save"
			  : r->perturb > 0 ? "--perturb"
					   : NULL;

	if (r->n == 0 && opt) {
		nl_cli_error(CMD,
			     "%s applies to random scenarios only: give "
			     "--random=N too",
			     opt);
		return -1;
	}
	return 0;
}

/* A seed nobody chose: the clock and the pid, mixed. */
static uint64_t fresh_seed(void)
{
	struct timespec ts;
	uint64_t z;

	clock_gettime(CLOCK_REALTIME, &ts);
	z = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	z ^= (uint64_t)getpid() << 32;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* DIR and any missing parent, as mkdir -p. */
static int make_dir(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	size_t n = strlen(dir);

	if (n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != 0)
			continue;
		char c = path[i];
		path[i] = 0;
		if (mkdir(path, 0777) < 0 && errno != EEXIST)
			return -1;
		path[i] = c;
	}
	if (stat(dir, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

static int fill_text(FILE *f, const void *text)
{
	fputs(text, f);
	fputc('\n', f);
	return 0;
}

static int save_one(const char *dir, const char *name, const char *text,
		    char **path)
{
	size_t n = strlen(dir) + strlen(name) + 8;

	*path = malloc(n);
	if (!*path)
		return -ENOMEM;
	snprintf(*path, n, "%s/%s.json", dir, name);
	return nl_cli_write_file(CMD, *path, fill_text, text) < 0 ? -EIO : 0;
}

int nl_bench_random_load(struct nl_bench_random *r, struct nl_bench *b)
{
	char err[1024];

	if (r->n == 0)
		return 0;
	if (!r->seed_set) {
		r->seed = fresh_seed();
		nl_cli_error(CMD, "random scenarios from --seed=%" PRIu64,
			     r->seed);
	}
	if (r->save) {
		/* As root, the folder checked (cli_out.h) and its checked path.
		 */
		static char checked[PATH_MAX];
		if (nl_cli_root_dir(r->save, checked, sizeof(checked), err,
				    sizeof(err)) < 0) {
			nl_cli_error(CMD, "--save=%s: %s", r->save, err);
			return -EINVAL;
		}
		r->save = checked;
	}
	if (r->save && make_dir(r->save) < 0) {
		nl_cli_error(CMD, "--save=%s: cannot make that folder: %m",
			     r->save);
		return -EINVAL;
	}
	r->names = calloc((size_t)r->n, sizeof(*r->names));
	if (!r->names)
		return -ENOMEM;
	for (int i = 0; i < r->n; i++) {
		struct nl_scenario *sc;
		char *text;
		int rc = nl_random_load(r->seed, i, r->perturb, &sc, &text, err,
					sizeof(err));
		if (rc < 0) {
			nl_cli_error(CMD, "%s", err);
			return rc;
		}
		b->sc[b->nscen] = sc;
		if (r->save)
			rc = save_one(r->save, nl_scenario_name(sc), text,
				      &r->names[i]);
		else if (asprintf(&r->names[i], "random:%" PRIu64 ":%d",
				  r->seed, i) < 0) {
			r->names[i] = NULL;
			rc = -ENOMEM;
		}
		free(text);
		/* The scenario is the bench's now: it frees it. */
		b->nscen++;
		if (rc < 0)
			return rc;
		b->files[b->nscen - 1] = r->names[i];
	}
	return 0;
}

void nl_bench_random_free(struct nl_bench_random *r)
{
	for (int i = 0; r->names && i < r->n; i++)
		free(r->names[i]);
	free(r->names);
	r->names = NULL;
}
