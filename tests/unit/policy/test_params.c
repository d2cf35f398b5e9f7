/*
 * Unit tests of the policy parameters' one description (core/policy/params.c):
 * parsing and the profiles come from it, and docs/algorithms.md's tables
 * say what it says (a row that differs fails here).
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

#include "policy.h"

#define DOC "docs/algorithms.md"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;

	assert_non_null(f);
	assert_non_null(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

static char *rendered(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	nl_policy_params_markdown(m);
	fclose(m);
	return buf;
}

/* The generated table is in the document, whole; else the first row that
 * differs is told. */
static void doc_has_the_table(void **state)
{
	char *doc = slurp(DOC), *table = rendered();

	(void)state;
	if (!strstr(doc, table)) {
		char *line = table, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			if (!strstr(doc, line)) {
				fprintf(stderr,
					"%s lacks the row (numalot help "
					"params):\n%s\n",
					DOC, line);
				break;
			}
			line = nl + 1;
		}
		fail_msg("%s: the parameter table differs from "
			 "core/policy/params.c",
			 DOC);
	}
	free(doc);
	free(table);
}

static const struct nl_policy_param *find(const char *name)
{
	for (size_t i = 0; i < nl_policy_nparams; i++)
		if (!strcmp(nl_policy_params_table[i].name, name))
			return &nl_policy_params_table[i];
	return NULL;
}

/* A default as the document writes it: the value, maybe "(why)" after. */
static int says(const char *cell, const struct nl_policy_param *d, double v)
{
	char want[64];
	size_t n;

	if (d->type == NL_PP_NAME)
		snprintf(want, sizeof(want), "`%s`", d->names[(int)v]);
	else
		snprintf(want, sizeof(want), "%g", v);
	n = strlen(want);
	return !strncmp(cell, want, n) && (!cell[n] || cell[n] == ' ');
}

/* "What numalot changes": each row's two defaults are the table's, and
 * every parameter the profile changes has its row. */
static void doc_changes_are_the_profile(void **state)
{
	char *doc = slurp(DOC), *p, *end;
	char *seen = calloc(nl_policy_nparams, 1);

	(void)state;
	assert_non_null(seen);
	p = strstr(doc, "| parameter | numalot | paper | what it changes |");
	assert_non_null(p);
	p = strchr(p, '\n') + 1;
	p = strchr(p, '\n') + 1; /* the | --- | line */
	for (; *p == '|'; p = end + 1) {
		char name[64], a[128], b[128];
		end = strchr(p, '\n');
		assert_non_null(end);
		*end = 0;
		assert_int_equal(sscanf(p, "| `%63[^`]` | %127[^|]| %127[^|]|",
					name, a, b),
				 3);
		a[strcspn(a, "|")] = 0;
		b[strcspn(b, "|")] = 0;
		a[strlen(a) - 1] = b[strlen(b) - 1] = 0; /* the space */
		const struct nl_policy_param *d = find(name);
		if (!d)
			fail_msg("%s: no parameter %s", DOC, name);
		if (!says(a, d, d->def) || !says(b, d, d->paper))
			fail_msg("%s: %s is \"%s\" / \"%s\" in the document",
				 DOC, name, a, b);
		seen[d - nl_policy_params_table] = 1;
	}
	for (size_t i = 0; i < nl_policy_nparams; i++) {
		const struct nl_policy_param *d = &nl_policy_params_table[i];
		if (d->def == d->paper || !strcmp(d->name, "profile"))
			continue;
		if (!seen[i])
			fail_msg("%s: \"What numalot changes\" lacks %s", DOC,
				 d->name);
	}
	free(seen);
	free(doc);
}

/* Each default, written as the table writes it, parses back to itself;
 * the paper profile sets exactly the paper column. */
static void defaults_and_profiles(void **state)
{
	struct nl_policy_params def, p, paper;
	char err[512], v[64];

	(void)state;
	nl_policy_params_default(&def);
	nl_policy_params_default(&paper);
	assert_int_equal(nl_policy_param_set(&paper, "profile", "paper", err,
					     sizeof(err)),
			 0);
	for (size_t i = 0; i < nl_policy_nparams; i++) {
		const struct nl_policy_param *d = &nl_policy_params_table[i];
		p = def;
		if (d->type == NL_PP_NAME)
			snprintf(v, sizeof(v), "%s", d->names[(int)d->paper]);
		else
			snprintf(v, sizeof(v), "%.17g", d->paper);
		if (strcmp(d->name, "profile")) {
			assert_int_equal(nl_policy_param_set(&p, d->name, v,
							     err, sizeof(err)),
					 0);
			/* the paper's value, as the paper profile has it */
			assert_memory_equal(
				(char *)&p + d->off, (char *)&paper + d->off,
				d->type == NL_PP_DOUBLE ? sizeof(double)
							: sizeof(int));
		}
		if (d->type == NL_PP_NAME)
			snprintf(v, sizeof(v), "%s", d->names[(int)d->def]);
		else
			snprintf(v, sizeof(v), "%.17g", d->def);
		assert_int_equal(
			nl_policy_param_set(&p, d->name, v, err, sizeof(err)),
			0);
		assert_memory_equal(&p, &def, sizeof(p));
	}
	/* Out of its range: refused, naming the range. */
	p = def;
	assert_int_equal(nl_policy_param_set(&p, "undo_threshold", "2", err,
					     sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "from 0 to 1"));
	assert_int_equal(nl_policy_param_set(&p, "nope", "1", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "tickets.stay"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(doc_has_the_table),
		cmocka_unit_test(doc_changes_are_the_profile),
		cmocka_unit_test(defaults_and_profiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
