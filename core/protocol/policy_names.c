/* numalot: the policies' names, from policy_list.h (policy_names.h). */
#include "policy_names.h"

#include <errno.h>
#include <string.h>

#include "util.h"

static const struct {
	const char *name;
	unsigned where;
	const char *about;
} rows[NL_POLICY_COUNT] = {
#define NL_POLICY(id, n, w, a, hooks) [NL_POLICY_##id] = {n, w, a},
#include "policy_list.h"
#undef NL_POLICY
};

const char *nl_policy_name(enum nl_policy_kind k)
{
	return (unsigned)k < NL_POLICY_COUNT ? rows[k].name : "?";
}

int nl_policy_from_name(const char *name, enum nl_policy_kind *k)
{
	for (int i = 0; i < NL_POLICY_COUNT; i++)
		if (name && strcmp(name, rows[i].name) == 0) {
			*k = (enum nl_policy_kind)i;
			return 0;
		}
	return -EINVAL;
}

unsigned nl_policy_where(enum nl_policy_kind k)
{
	return (unsigned)k < NL_POLICY_COUNT ? rows[k].where : 0;
}

const char *nl_policy_about(enum nl_policy_kind k)
{
	return (unsigned)k < NL_POLICY_COUNT ? rows[k].about : "?";
}

/* The names with all of the flags want, sorted, into buf. */
static const char *names_with(unsigned want, char *buf, size_t len)
{
	const char *v[NL_POLICY_COUNT];

	for (int i = 0; i < NL_POLICY_COUNT; i++)
		v[i] = (rows[i].where & want) == want ? rows[i].name : NULL;
	return nl_names_join(v, NL_POLICY_COUNT, 1, buf, len);
}

const char *nl_policy_names(void)
{
	static char buf[32 * NL_POLICY_COUNT];

	return buf[0] ? buf : names_with(0, buf, sizeof(buf));
}

const char *nl_policy_job_names(void)
{
	static char buf[32 * NL_POLICY_COUNT];

	return buf[0] ? buf : names_with(NL_POLICY_JOBS, buf, sizeof(buf));
}
