/*
 * numalot: the PAPI counter backend (docs/real-node.md, "Counters"): the
 * software group, plus PAPI presets attached to the thread (FP ops too),
 * and memory latency where the PMU samples it (as perf does).
 */
#include "counters_priv.h"

#include <errno.h>
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PAPI_TOT_INS, PAPI_FP_OPS, LLC misses: those this CPU has. */
struct papi_state {
	int set;
	int n;
	int code[3];
	long long prev[3];
};

static int papi_ready(void)
{
	static int state; /* 0 untried, 1 ready, -1 failed */
	if (state == 0) {
		int v = PAPI_library_init(PAPI_VER_CURRENT);
		state = v == PAPI_VER_CURRENT ? 1 : -1;
		/* PAPI_set_multiplex needs this first, once. */
		if (state == 1 && PAPI_multiplex_init() != PAPI_OK)
			state = -1;
	}
	return state == 1;
}

/* The LLC-miss preset this CPU has, or 0. */
static int papi_llc_code(void)
{
	const int codes[] = {PAPI_L3_TCM, PAPI_L3_DCM, PAPI_L2_TCM};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (PAPI_query_event(codes[i]) == PAPI_OK)
			return codes[i];
	return 0;
}

static int hw_papi_open(struct papi_state *h, pid_t tid)
{
	int set = PAPI_NULL,
	    want[3] = {PAPI_TOT_INS, PAPI_FP_OPS, papi_llc_code()};
	if (!papi_ready())
		return -ENOENT;
	if (PAPI_create_eventset(&set) != PAPI_OK)
		return -ENOENT;
	if (PAPI_assign_eventset_component(set, 0) != PAPI_OK ||
	    PAPI_attach(set, (unsigned long)tid) != PAPI_OK)
		goto fail;
	h->n = 0;
	for (int i = 0; i < 3; i++) {
		if (!want[i] || PAPI_add_event(set, want[i]) != PAPI_OK) {
			/* Too many for the hardware at once: multiplex. */
			if (want[i] && PAPI_set_multiplex(set) == PAPI_OK &&
			    PAPI_add_event(set, want[i]) == PAPI_OK)
				h->code[h->n++] = want[i];
			continue;
		}
		h->code[h->n++] = want[i];
	}
	if (h->n == 0 || h->code[0] != PAPI_TOT_INS ||
	    PAPI_start(set) != PAPI_OK)
		goto fail;
	h->set = set;
	return 0;
fail:
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	return -ENOENT;
}

static int papi_open(struct nl_tcounters *c)
{
	struct papi_state *h;
	int rc = nl_sw_open(c);

	if (rc < 0)
		return rc;
	if (!(h = calloc(1, sizeof(*h))))
		return -ENOMEM;
	h->set = PAPI_NULL;
	c->be_state = h;
	return hw_papi_open(h, c->tid);
}

static int papi_read(struct nl_tcounters *c, struct nl_sample *s)
{
	struct papi_state *h = c->be_state;
	long long v[3] = {0};
	int rc = nl_sw_read(c, s);

	if (rc < 0)
		return rc;
	if (PAPI_read(h->set, v) != PAPI_OK)
		return -EIO;
	for (int i = 0; i < h->n; i++) {
		double d = (double)(v[i] - h->prev[i]);
		if (h->code[i] == PAPI_TOT_INS) {
			s->instructions = d;
			s->measured |= NL_M_INSTRUCTIONS;
		} else if (h->code[i] == PAPI_FP_OPS) {
			s->fp_ops = d;
			s->measured |= NL_M_FP_OPS;
		} else {
			s->llc_misses = d;
			s->measured |= NL_M_LLC_MISSES;
		}
		h->prev[i] = v[i];
	}
	return 0;
}

static void papi_close(struct nl_tcounters *c)
{
	struct papi_state *h = c->be_state;

	nl_sw_close(c);
	if (!h)
		return;
	if (h->set != PAPI_NULL) {
		long long v[3];
		PAPI_stop(h->set, v);
		PAPI_cleanup_eventset(h->set);
		PAPI_destroy_eventset(&h->set);
	}
	free(h);
	c->be_state = NULL;
}

void nl_probe_papi_reason(char *buf, size_t len, const char *event, int hwctrs)
{
	if (hwctrs <= 0)
		snprintf(buf, len,
			 "missing: PAPI finds no hardware counters here, so "
			 "no %s",
			 event);
	else
		snprintf(buf, len,
			 "missing: %s is no preset of this CPU (PAPI finds %d "
			 "hardware counter%s, none of them for %s)",
			 event, hwctrs, hwctrs == 1 ? "" : "s", event);
}

/* Listed is not usable: attach a preset to a thread and start it. */
static int papi_try(int code, pid_t tid)
{
	int set = PAPI_NULL, rc = PAPI_create_eventset(&set);
	long long val;

	if (rc == PAPI_OK)
		rc = PAPI_assign_eventset_component(set, 0);
	if (rc == PAPI_OK)
		rc = PAPI_attach(set, (unsigned long)tid);
	if (rc == PAPI_OK)
		rc = PAPI_add_event(set, code);
	if (rc == PAPI_OK)
		rc = PAPI_start(set);
	if (rc == PAPI_OK)
		PAPI_stop(set, &val);
	if (set != PAPI_NULL) {
		PAPI_cleanup_eventset(set);
		PAPI_destroy_eventset(&set);
	}
	return rc;
}

/* After probe_perf: papi samples latency the way perf does (tried there). */
static void probe_papi(struct nl_probe *p, pid_t tid)
{
	struct nl_probe_backend *b = &p->backend[NL_BACKEND_PAPI];
	static const struct {
		const char *name;
		int code;
	} presets[] = {{"PAPI_TOT_INS", PAPI_TOT_INS},
		       {"PAPI_TOT_CYC", PAPI_TOT_CYC},
		       {"PAPI_FP_OPS", PAPI_FP_OPS},
		       {"PAPI_L3_TCM", PAPI_L3_TCM},
		       {"PAPI_L3_DCM", PAPI_L3_DCM}};
	int v = PAPI_library_init(PAPI_VER_CURRENT);

	if (v != PAPI_VER_CURRENT && v != PAPI_EINVAL /* already done */) {
		snprintf(b->reason, sizeof(b->reason),
			 "PAPI_library_init failed: %s",
			 v > 0 ? "version mismatch" : PAPI_strerror(v));
		return;
	}
	const PAPI_component_info_t *ci = PAPI_get_component_info(0);
	if (ci && ci->disabled) {
		snprintf(b->reason, sizeof(b->reason),
			 "PAPI CPU component %.40s "
			 "disabled: %.180s",
			 ci->name, ci->disabled_reason);
	}
	int present = 0;
	char missing[96] = ""; /* the presets this CPU lacks */
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		struct nl_probe_event *e = &b->events[b->nevents++];
		e->name = presets[i].name;
		if (PAPI_query_event(presets[i].code) != PAPI_OK) {
			nl_probe_papi_reason(e->reason, sizeof(e->reason),
					     e->name, PAPI_num_cmp_hwctrs(0));
			snprintf(missing + strlen(missing),
				 sizeof(missing) - strlen(missing), "%s%s",
				 missing[0] ? ", " : "", e->name);
			continue;
		}
		int rc = papi_try(presets[i].code, tid);
		if (rc == PAPI_OK) {
			e->available = 1;
			present++;
			snprintf(e->reason, sizeof(e->reason),
				 "started on a thread");
		} else {
			snprintf(e->reason, sizeof(e->reason),
				 "listed but unusable: %s", PAPI_strerror(rc));
		}
	}
	b->events[b->nevents++] = p->backend[NL_BACKEND_PERF].events[3];
	b->available = b->events[0].available;
	if (b->available)
		snprintf(b->reason, sizeof(b->reason),
			 "%d of %d presets usable per thread%s%s%s; %s",
			 present, (int)(sizeof(presets) / sizeof(presets[0])),
			 missing[0] ? " (missing: " : "", missing,
			 missing[0] ? ")" : "",
			 b->events[b->nevents - 1].available
				 ? "latency by node from load sampling"
				 : "no latency term");
	else if (!b->reason[0])
		snprintf(b->reason, sizeof(b->reason), "%s",
			 b->events[0].reason);
}

const struct nl_counter_backend nl_counters_papi = {
	.id = NL_BACKEND_PAPI,
	.measured = NL_M_TASK_CLOCK | NL_M_CPU | NL_M_SW_EVENTS |
		    NL_M_INSTRUCTIONS | NL_M_FP_OPS | NL_M_LLC_MISSES,
	.samples_latency = 1,
	/* As perf's budget: the software group's 4, and 4 for PAPI's
	 * events and the latency sampler. */
	.fds_per_thread = 8,
	.probe = probe_papi,
	.open = papi_open,
	.read = papi_read,
	.close = papi_close,
};
