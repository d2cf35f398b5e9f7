/*
 * Unit tests of report file names (docs/slurm.md, "Where reports go"):
 * srun's tokens %A %a %J %j %N %n %s %t %u %x %%, zero padding, the
 * backslash that turns them off, an unknown token named, the steps that
 * are not srun's, and %N added for a step on several nodes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "report_path.h"

static const struct nl_path_ids ids = {.job = 4242,
				       .step = 3,
				       .array_job = 4240,
				       .array_task = 2,
				       .node_index = 1,
				       .first_task = 8,
				       .node = "nla",
				       .user = "alice",
				       .job_name = "sim/run"};

static const char *expand(const char *pattern, const char *cwd)
{
	static char out[256];
	assert_int_equal(nl_path_expand(pattern, cwd, &ids, out, sizeof(out)),
			 0);
	return out;
}

static void every_token(void **state)
{
	(void)state;
	assert_string_equal(expand("%A-%a-%J-%j-%N-%n-%s-%t-%u-%%", NULL),
			    "4240-2-4242.3-4242-nla-1-3-8-alice-%");
	/* A '/' in a name stays inside one path component. */
	assert_string_equal(expand("%x.json", ""), "sim_run.json");
	assert_string_equal(expand("r.json", "/home/a"), "/home/a/r.json");
	assert_string_equal(expand("/abs/%j", "/home/a"), "/abs/4242");
	assert_string_equal(expand(NL_REPORT_PATTERN, "/w"),
			    "/w/numalot-4242/3.nla.json");
}

static void padding_and_backslash(void **state)
{
	(void)state;
	assert_string_equal(expand("%6j.%3s.%2t.%4N", NULL),
			    "004242.003.08.nla");
	/* srun: a backslash turns the tokens off (and goes). */
	assert_string_equal(expand("\\%j-%N", NULL), "%j-%N");
	assert_int_equal(nl_path_per_node("\\%N"), 0);
}

static void special_steps(void **state)
{
	(void)state;
	struct nl_path_ids b = ids;
	char out[64];
	b.step = 0xfffffffbu;
	assert_int_equal(nl_path_expand("%s|%J", NULL, &b, out, 64), 0);
	assert_string_equal(out, "batch|4242.batch");
	b.step = 0xfffffffau;
	assert_int_equal(nl_path_expand("%s", NULL, &b, out, 64), 0);
	assert_string_equal(out, "interactive");
	b.step = 0xfffffffcu;
	assert_int_equal(nl_path_expand("%s", NULL, &b, out, 64), 0);
	assert_string_equal(out, "extern");
}

static void bad_patterns(void **state)
{
	(void)state;
	char msg[160], out[32];
	assert_int_equal(nl_path_check("r-%q.json", msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "\"%q\""));
	assert_non_null(strstr(msg, "%A %a %J %j %N %n %s %t %u %x %%"));
	assert_int_equal(nl_path_check("r-%3y", msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "\"%3y\""));
	assert_int_equal(nl_path_check("r-%", msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "at the end"));
	assert_int_equal(nl_path_check("%99j", msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "width"));
	assert_int_equal(nl_path_check("", msg, sizeof(msg)), -1);
	assert_int_equal(nl_path_expand("%q", NULL, &ids, out, sizeof(out)),
			 -2);
	/* Too long for out: refused, not cut. */
	assert_int_equal(nl_path_expand("%N%N%N%N%N%N%N%N%N%N%N", NULL, &ids,
					out, sizeof(out)),
			 -1);
	assert_int_equal(nl_path_check("%x%A%a%J%n%t%u%%", msg, sizeof(msg)),
			 0);
}

/* A step on several nodes never writes two nodes to one file. */
static void one_file_per_node(void **state)
{
	(void)state;
	char out[64];
	assert_int_equal(nl_path_per_node("r-%j.json"), 0);
	assert_int_equal(nl_path_per_node("r-%N.json"), 1);
	assert_int_equal(nl_path_per_node("r-%2n.json"), 1);
	assert_int_equal(nl_path_per_node("r-%t.json"), 1);
	assert_int_equal(nl_path_per_node("r-%%N.json"), 0);
	assert_int_equal(nl_path_add_node("dir.d/r-%j.json", out, 64), 0);
	assert_string_equal(out, "dir.d/r-%j.%N.json");
	assert_int_equal(nl_path_add_node("dir.d/out", out, 64), 0);
	assert_string_equal(out, "dir.d/out.%N");
	assert_int_equal(nl_path_add_node(".report", out, 64), 0);
	assert_string_equal(out, ".report.%N");
	assert_int_equal(nl_path_per_node(out), 1);
	assert_int_equal(nl_path_add_node("r.json", out, 8), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_token),
		cmocka_unit_test(padding_and_backslash),
		cmocka_unit_test(special_steps),
		cmocka_unit_test(bad_patterns),
		cmocka_unit_test(one_file_per_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
