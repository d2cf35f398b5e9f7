/*
 * numalot: the policies' names and who may choose them, from the one list
 * (policy_list.h). Needs nothing but util.c: the plugin links it too.
 */
#ifndef NUMALOT_POLICY_NAMES_H
#define NUMALOT_POLICY_NAMES_H

enum nl_policy_kind {
#define NL_POLICY(id, name, where, about, hooks) NL_POLICY_##id,
#include "policy_list.h"
#undef NL_POLICY
	NL_POLICY_COUNT
};

/* Who may choose a policy (policy_list.h). */
enum {
	NL_POLICY_JOBS = 1u << 0,  /* Slurm jobs and numalotd */
	NL_POLICY_PAPER = 1u << 1, /* a <name>-paper run in bench and sim */
};

const char *nl_policy_name(enum nl_policy_kind k);
/* Returns 0 and sets *k, or -EINVAL for an unknown name. */
int nl_policy_from_name(const char *name, enum nl_policy_kind *k);
/* Every name, sorted: "imar2, lbma, monitor, static" */
const char *nl_policy_names(void);
/* Its NL_POLICY_* flags (0 for an unknown kind). */
unsigned nl_policy_where(enum nl_policy_kind k);
/* Its line in --numalot=help. */
const char *nl_policy_about(enum nl_policy_kind k);
/* The names jobs may choose, sorted: "imar2, lbma, monitor" */
const char *nl_policy_job_names(void);

#endif
