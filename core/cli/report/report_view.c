/*
 * numalot report --html / --svg: reports read into report_view.h's
 * structures, every field checked, and each thread's placement over time
 * rebuilt from events[] where it has no sampled CPUs (the rules:
 * docs/report-format.md, "Pictures").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "report_view.h"
#include "util.h"

struct json_object *rv_at(struct json_object *o, const char *path)
{
	char buf[128], *save, *k;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && o;
	     k = strtok_r(NULL, ".", &save))
		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, k, &o))
			return NULL;
	return o;
}

const char *rv_str(struct json_object *o, const char *path)
{
	struct json_object *v = rv_at(o, path);
	return json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

double rv_number(struct json_object *v)
{
	double d;

	if (!json_object_is_type(v, json_type_double) &&
	    !json_object_is_type(v, json_type_int))
		return NAN;
	d = json_object_get_double(v);
	return isfinite(d) ? d : NAN;
}

double rv_num(struct json_object *o, const char *path)
{
	return rv_number(rv_at(o, path));
}

int rv_bool(struct json_object *o, const char *path)
{
	struct json_object *v = rv_at(o, path);
	return json_object_is_type(v, json_type_boolean)
		       ? json_object_get_boolean(v)
		       : -1;
}

/* An int field in a sane range, else def. */
static int int_in(struct json_object *o, const char *path, int lo, int hi,
		  int def)
{
	double d = rv_num(o, path);
	return d >= lo && d <= hi && d == floor(d) ? (int)d : def;
}

static struct json_object *array_at(struct json_object *o, const char *path)
{
	struct json_object *a = rv_at(o, path);
	return json_object_is_type(a, json_type_array) ? a : NULL;
}

static size_t alen(struct json_object *a)
{
	return a ? json_object_array_length(a) : 0;
}

/* Every node's value of an array of numbers (absent ones 0); 0 if the
 * field is not such an array. */
static int node_values(struct json_object *o, const char *path, int nnodes,
		       double *out)
{
	struct json_object *a = array_at(o, path);
	int any = 0;

	memset(out, 0, sizeof(double) * RV_MAX_NODES);
	for (size_t k = 0; k < alen(a) && (int)k < nnodes; k++) {
		double v = rv_number(json_object_array_get_idx(a, k));
		if (v >= 0) {
			out[k] = v;
			any = 1;
		}
	}
	return a && any;
}

static const struct {
	const char *name;
	enum rv_kind kind;
} kinds[] = {{"migrate", RV_MIGRATE},	{"swap", RV_SWAP},
	     {"rollback", RV_ROLLBACK}, {"skip", RV_SKIP},
	     {"stay", RV_STAY},		{"release", RV_RELEASE},
	     {"pages", RV_PAGES}};

static enum rv_kind kind_of(const char *s)
{
	for (size_t i = 0; s && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(s, kinds[i].name))
			return kinds[i].kind;
	return RV_OTHER;
}

static int by_pid_tid(const void *a, const void *b)
{
	const struct rv_thread *x = a, *y = b;
	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	return (x->t0_s > y->t0_s) - (x->t0_s < y->t0_s);
}

static void read_processes(struct rv_report *r, struct rv_set *set)
{
	struct json_object *a = array_at(r->r, "processes");
	size_t n = alen(a);

	r->procs = calloc(n + 1, sizeof(*r->procs));
	if (!r->procs)
		return;
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(a, i);
		struct rv_process *q = &r->procs[r->nprocs];
		if (!json_object_is_type(p, json_type_object))
			continue;
		q->pid = int_in(p, "pid", 0, 1 << 30, -1);
		q->name = rv_str(p, "name");
		q->threads_seen = int_in(p, "threads", 0, 1 << 30, 0);
		q->start_s = rv_num(p, "start_s");
		q->end_s = rv_num(p, "completion_s"); /* NAN: running */
		q->have_pages = node_values(p, "pages_per_node_first",
					    r->nnodes, q->pages_first) &&
				node_values(p, "pages_per_node_last", r->nnodes,
					    q->pages_last);
		q->pages_first_s = rv_num(p, "pages_first_s");
		q->locality_before = rv_num(p, "pages.locality_before");
		q->locality_after = rv_num(p, "pages.locality_after");
		q->pages_last_s = rv_num(p, "pages_last_s");
		q->color = set->nprocs_total++;
		r->nprocs++;
	}
}

static int proc_index(const struct rv_report *r, int pid)
{
	for (int i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return i;
	return -1;
}

static int argmax_node(const struct rv_thread *t, int nnodes)
{
	int best = -1;
	double v = 0;

	for (int k = 0; k < nnodes; k++)
		if (t->time_on_node_s[k] > v) {
			v = t->time_on_node_s[k];
			best = k;
		}
	return best;
}

static void read_threads(struct rv_report *r)
{
	struct json_object *a = array_at(r->r, "threads");
	size_t n = alen(a);

	r->threads = calloc(n + 1, sizeof(*r->threads));
	if (!r->threads)
		return;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		struct rv_thread *t = &r->threads[r->nthreads];
		if (!json_object_is_type(o, json_type_object))
			continue;
		t->tid = int_in(o, "tid", 0, 1 << 30, -1);
		t->pid = int_in(o, "pid", 0, 1 << 30, -1);
		t->proc = proc_index(r, t->pid);
		node_values(o, "time_per_node_s", r->nnodes, t->time_on_node_s);
		for (int k = 0; k < r->nnodes; k++)
			t->time_total_s += t->time_on_node_s[k];
		t->migrations = int_in(o, "migrations", 0, 1 << 30, 0);
		t->periods = int_in(o, "periods", 0, 1 << 30, 0);
		t->ops_per_s = rv_num(o, "ops_per_s");
		t->oi = rv_num(o, "oi");
		t->latency_ns = rv_num(o, "latency_ns");
		t->t0_s = rv_num(o, "first_seen_s");
		t->t1_s = rv_num(o, "last_seen_s");
		t->first_node = t->last_node = -1;
		t->cpus = array_at(o, "cpus");
		r->nthreads++;
	}
	qsort(r->threads, (size_t)r->nthreads, sizeof(*r->threads), by_pid_tid);
	/* (Sorting moved threads: procs indexes stay valid.) */
}

/* The row of tid at time t: of a reused tid, the one alive then. */
static int row_of(const struct rv_report *r, const int *by_tid, int tid,
		  double t)
{
	int lo = 0, hi = r->nthreads, best = -1;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (r->threads[by_tid[mid]].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int i = lo; i < r->nthreads && r->threads[by_tid[i]].tid == tid;
	     i++) {
		const struct rv_thread *x = &r->threads[by_tid[i]];
		if (best < 0 || !(x->t0_s > t))
			best = by_tid[i];
	}
	return best;
}

static const struct rv_report *sort_ctx;

static int by_tid_cmp(const void *a, const void *b)
{
	const struct rv_thread *x = &sort_ctx->threads[*(const int *)a];
	const struct rv_thread *y = &sort_ctx->threads[*(const int *)b];
	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	return (x->t0_s > y->t0_s) - (x->t0_s < y->t0_s);
}

static int node_in(const struct rv_report *r, double v)
{
	return v >= 0 && v < r->nnodes && v == floor(v) ? (int)v : -1;
}

/* A page move's mark spans its process's rows (threads are by pid). */
static void process_rows(const struct rv_report *r, struct rv_event *e)
{
	e->row = -1;
	e->rows = 0;
	for (int i = 0; i < r->nthreads; i++)
		if (r->threads[i].pid == e->pid && e->pid >= 0) {
			if (e->row < 0)
				e->row = i;
			e->rows++;
		}
}

static void read_events(struct rv_report *r)
{
	struct json_object *a = array_at(r->r, "events");
	size_t n = alen(a);
	int *by_tid = malloc(sizeof(int) * ((size_t)r->nthreads + 1));

	r->events = calloc(n + 1, sizeof(*r->events));
	if (!r->events || !by_tid) {
		free(by_tid);
		return;
	}
	for (int i = 0; i < r->nthreads; i++)
		by_tid[i] = i;
	sort_ctx = r;
	qsort(by_tid, (size_t)r->nthreads, sizeof(int), by_tid_cmp);
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		struct rv_event *e = &r->events[r->nevents];
		if (!json_object_is_type(o, json_type_object))
			continue;
		e->t_s = rv_num(o, "t_s");
		e->kind_name = rv_str(o, "kind");
		e->kind = kind_of(e->kind_name);
		e->tid = int_in(o, "tid", 0, 1 << 30, -1);
		e->other_tid = int_in(o, "other_tid", 0, 1 << 30, -1);
		e->from_cpu = int_in(o, "from_cpu", 0, 1 << 30, -1);
		e->to_cpu = int_in(o, "to_cpu", 0, 1 << 30, -1);
		e->from_node = node_in(r, rv_num(o, "from_node"));
		e->to_node = node_in(r, rv_num(o, "to_node"));
		e->tickets = rv_num(o, "tickets");
		e->total_tickets = rv_num(o, "total_tickets");
		e->reason = rv_str(o, "reason");
		e->row = e->tid >= 0 ? row_of(r, by_tid, e->tid, e->t_s) : -1;
		e->other_row = e->other_tid >= 0 && e->kind == RV_SWAP
				       ? row_of(r, by_tid, e->other_tid, e->t_s)
				       : -1;
		e->pid = int_in(o, "pid", 0, 1 << 30, -1);
		e->bytes = rv_num(o, "bytes");
		if (e->kind == RV_PAGES)
			process_rows(r, e);
		if (isnan(e->t_s) || e->row < 0) {
			r->events_unplaced++;
			e->row = -1;
		}
		r->counts[e->kind]++;
		r->nevents++;
	}
	free(by_tid);
}

static void time_range(struct rv_report *r)
{
	double lo = INFINITY, hi = -INFINITY;
	double first = rv_num(r->r, "summary.duration_s");

	for (int i = 0; i < r->nprocs; i++) {
		lo = fmin(lo, r->procs[i].start_s); /* fmin skips NAN */
		hi = fmax(hi, r->procs[i].end_s);
	}
	for (int i = 0; i < r->nthreads; i++) {
		lo = fmin(lo, r->threads[i].t0_s);
		hi = fmax(hi, r->threads[i].t1_s);
	}
	for (int i = 0; i < r->nevents; i++) {
		lo = fmin(lo, r->events[i].t_s);
		hi = fmax(hi, r->events[i].t_s);
	}
	if (!isfinite(lo))
		lo = 0;
	/* The report was written duration_s after its domain began. */
	if (!isnan(first) && first > 0 && lo + first > hi)
		hi = lo + first;
	if (!isfinite(hi) || !(hi > lo))
		hi = lo + 1;
	r->t_lo_s = lo;
	r->t_hi_s = hi;
	/* The agent's clock started with the agent, not the step. */
	r->origin_s = rv_at(r->r, "slurm") ? lo : 0;
}

/* Each thread's drawn span (see the comment at the top). */
static void thread_spans(struct rv_report *r)
{
	for (int i = 0; i < r->nthreads; i++) {
		struct rv_thread *t = &r->threads[i];
		const struct rv_process *p =
			t->proc >= 0 ? &r->procs[t->proc] : NULL;
		double end = p && !isnan(p->end_s) ? p->end_s : r->t_hi_s;
		if (isnan(t->t0_s))
			t->t0_s = p && !isnan(p->start_s) ? p->start_s
							  : r->t_lo_s;
		if (isnan(t->t1_s))
			t->t1_s = end;
		else if (t->t1_s < end)
			t->t1_s = fmin(end, t->t1_s + r->period_s);
		t->t0_s = fmax(r->t_lo_s, fmin(t->t0_s, r->t_hi_s));
		t->t1_s = fmax(t->t0_s, fmin(t->t1_s, r->t_hi_s));
	}
}

int rv_add_segment(struct rv_thread *t, double t_s, int node)
{
	struct rv_segment *s;

	t_s = fmax(t->t0_s, fmin(t_s, t->t1_s));
	if (t->nseg && t->seg[t->nseg - 1].node == node)
		return 0;
	if (t->nseg)
		t->seg[t->nseg - 1].t1_s = t_s;
	s = realloc(t->seg, sizeof(*s) * ((size_t)t->nseg + 1));
	if (!s)
		return -1;
	t->seg = s;
	s[t->nseg++] = (struct rv_segment){t_s, t->t1_s, node};
	return 0;
}

/* Walk the events in order: where each thread was before and after. */
static int placements(struct rv_report *r)
{
	unsigned char *moved = calloc((size_t)r->nthreads + 1, 1);

	if (!moved)
		return -1;
	for (int i = r->nevents - 1; i >= 0; i--) {
		const struct rv_event *e = &r->events[i];
		if (e->row >= 0) {
			r->threads[e->row].first_node = e->from_node;
			moved[e->row] = 1;
		}
		if (e->other_row >= 0) {
			r->threads[e->other_row].first_node = e->to_node;
			moved[e->other_row] = 1;
		}
	}
	for (int i = 0; i < r->nthreads; i++)
		if (!moved[i])
			r->threads[i].first_node =
				argmax_node(&r->threads[i], r->nnodes);
	free(moved);
	for (int i = 0; i < r->nthreads; i++)
		if (rv_add_segment(&r->threads[i], r->threads[i].t0_s,
				   r->threads[i].first_node) < 0)
			return -1;
	for (int i = 0; i < r->nevents; i++) {
		const struct rv_event *e = &r->events[i];
		if (e->kind == RV_SKIP || e->kind == RV_STAY ||
		    e->kind == RV_PAGES || e->kind == RV_OTHER || e->row < 0)
			continue;
		if (rv_add_segment(&r->threads[e->row], e->t_s,
				   e->kind == RV_RELEASE ? -1 : e->to_node) < 0)
			return -1;
		if (e->other_row >= 0 &&
		    rv_add_segment(&r->threads[e->other_row], e->t_s,
				   e->from_node) < 0)
			return -1;
	}
	for (int i = 0; i < r->nthreads; i++) {
		struct rv_thread *t = &r->threads[i];
		/* Where samples found it, when the report says: truer than
		 * numalot's own moves, which miss the OS's. */
		if (rv_sampled_segments(r, t) < 0)
			return -1;
		t->last_node = t->nseg ? t->seg[t->nseg - 1].node : -1;
	}
	return 0;
}

static int read_report(struct rv_set *set, const char *file,
		       struct json_object *o)
{
	struct rv_report *r;
	struct rv_report *n =
		realloc(set->reports, sizeof(*n) * ((size_t)set->n + 1));

	if (!n)
		return -1;
	set->reports = n;
	r = &n[set->n++];
	memset(r, 0, sizeof(*r));
	r->file = file;
	r->r = o;
	r->error = rv_str(o, "error");
	r->nnodes = int_in(o, "machine.nodes", 1, RV_MAX_NODES, 1);
	r->period_s = rv_num(o, "policy.params.period");
	if (!(r->period_s > 0))
		r->period_s = 1;
	r->peak_ops_per_s = rv_num(o, "machine.ceilings.peak_ops_per_s");
	r->bandwidth_bytes_per_s =
		rv_num(o, "machine.ceilings.bandwidth_bytes_per_s");
	if (!(r->peak_ops_per_s > 0))
		r->peak_ops_per_s = NAN;
	if (!(r->bandwidth_bytes_per_s > 0))
		r->bandwidth_bytes_per_s = NAN;
	r->ceilings_source = rv_str(o, "machine.ceilings.source");
	read_processes(r, set);
	read_threads(r);
	read_events(r);
	if (!r->procs || !r->threads || !r->events)
		return -1;
	time_range(r);
	thread_spans(r);
	return placements(r);
}

static int problem(struct rv_set *set, const char *file, const char *why)
{
	char **n = realloc(set->problems,
			   sizeof(*n) * ((size_t)set->nproblems + 1));
	size_t len = strlen(file) + strlen(why) + 3;

	if (!n)
		return -1;
	set->problems = n;
	n[set->nproblems] = malloc(len);
	if (!n[set->nproblems])
		return -1;
	snprintf(n[set->nproblems++], len, "%s: %s", file, why);
	return 0;
}

struct json_object *rv_read(const char *path, char *err, size_t errlen)
{
	char *text;
	struct json_object *o;

	if (nl_read_file(path, RV_MAX_BYTES, &text, NULL, err, errlen) < 0)
		return NULL;
	o = json_tokener_parse(text);
	free(text);
	if (!o)
		snprintf(err, errlen, "not a numalot report (not JSON)");
	return o;
}

int rv_load(struct rv_set *set, char **files, int nfiles)
{
	memset(set, 0, sizeof(*set));
	set->roots = calloc((size_t)nfiles + 1, sizeof(*set->roots));
	if (!set->roots)
		return -1;
	for (int k = 0; k < nfiles; k++) {
		char err[128];
		struct json_object *o = rv_read(files[k], err, sizeof(err)), *l;
		int rc = 0;
		if (!json_object_is_type(o, json_type_object)) {
			json_object_put(o);
			if (problem(set, files[k],
				    o ? "not a numalot report" : err) < 0)
				return -1;
			continue;
		}
		set->roots[set->nroots++] = o;
		l = array_at(o, "reports");
		if (!l && !rv_at(o, "policy") && !rv_at(o, "error"))
			rc = problem(set, files[k],
				     "no policy, no error: not a numalot "
				     "report");
		else if (!l)
			rc = read_report(set, files[k], o);
		for (size_t j = 0; rc == 0 && j < alen(l); j++) {
			struct json_object *x = json_object_array_get_idx(l, j);
			if (json_object_is_type(x, json_type_object))
				rc = read_report(set, files[k], x);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

void rv_free(struct rv_set *set)
{
	for (int i = 0; i < set->n; i++) {
		struct rv_report *r = &set->reports[i];
		for (int k = 0; r->threads && k < r->nthreads; k++)
			free(r->threads[k].seg);
		free(r->threads);
		free(r->procs);
		free(r->events);
	}
	free(set->reports);
	for (int i = 0; i < set->nroots; i++)
		json_object_put(set->roots[i]);
	free(set->roots);
	for (int i = 0; i < set->nproblems; i++)
		free(set->problems[i]);
	free(set->problems);
	memset(set, 0, sizeof(*set));
}

static const char *const node_colors[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
	"#76b7b2", "#edc948", "#b07aa1", "#9c755f",
};
static const char *const proc_colors[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
	"#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
};

static const char *hue(int k, char *buf, size_t len, int lightness)
{
	snprintf(buf, len, "hsl(%d,55%%,%d%%)", (k * 137) % 360, lightness);
	return buf;
}

const char *rv_node_color(int k, char *buf, size_t len)
{
	if (k < 0)
		return "#c8c8c8";
	if (k < 8)
		return node_colors[k];
	return hue(k, buf, len, 52);
}

const char *rv_proc_color(int k, char *buf, size_t len)
{
	if (k >= 0 && k < 10)
		return proc_colors[k];
	return hue(k < 0 ? 0 : k, buf, len, 40);
}
