/* numalot SPANK plugin: site policy from numalot.conf and plugstack.conf. */
#include "site.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siteconf.h"
#include "util.h"

static int is_choice(int c)
{
	return c == NL_CHOICE_OFF ||
	       (c > 0 && c < NL_CHOICE_COUNT &&
		(nl_policy_where((enum nl_policy_kind)(c - 1)) &
		 NL_POLICY_JOBS));
}

const char *nl_choice_name(enum nl_choice c)
{
	if (!is_choice(c))
		return "?";
	return c == NL_CHOICE_OFF
		       ? "off"
		       : nl_policy_name((enum nl_policy_kind)(c - 1));
}

int nl_choice_from_name(const char *name, enum nl_choice *c)
{
	enum nl_policy_kind k;

	if (name && !strcmp(name, "off")) {
		*c = NL_CHOICE_OFF;
		return 0;
	}
	if (nl_policy_from_name(name, &k) < 0 || !is_choice(1 + k))
		return -1;
	*c = (enum nl_choice)(1 + k);
	return 0;
}

/* Every choice's bit. */
static unsigned all_choices(void)
{
	unsigned bits = 0;
	for (int c = 0; c < NL_CHOICE_COUNT; c++)
		bits |= is_choice(c) ? 1u << c : 0;
	return bits;
}

void nl_site_default(struct nl_site *s, const char *agent_path)
{
	memset(s, 0, sizeof(*s));
	s->default_choice = NL_CHOICE_OFF;
	s->allow = all_choices();
	s->force = -1;
	snprintf(s->agent, sizeof(s->agent), "%s", agent_path);
	snprintf(s->socket, sizeof(s->socket), "/run/numalot/numalotd.sock");
	snprintf(s->counters, sizeof(s->counters), "auto");
	s->period_s = 1.0;
	s->min_period_s = 0.1;
	s->max_period_s = 60;
	s->idle_exit_s = 60;
	s->wait_s = 1;
}

static int number(const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(x) || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

/* "imar2,monitor" (or '+' or ':' between) into a bit set. */
static int parse_allow(const char *v, unsigned *out)
{
	char buf[128], *save, *tok;
	unsigned bits = 0;
	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	for (tok = strtok_r(buf, ",+:", &save); tok;
	     tok = strtok_r(NULL, ",+:", &save)) {
		enum nl_choice c;
		if (nl_choice_from_name(tok, &c) < 0)
			return -1;
		bits |= 1u << c;
	}
	if (!bits)
		return -1;
	*out = bits | 1u << NL_CHOICE_OFF; /* a user may always opt out */
	return 0;
}

static int copy(char *dst, size_t size, const char *v, int absolute)
{
	if (!*v || strlen(v) >= size || (absolute && v[0] != '/'))
		return -1;
	strcpy(dst, v);
	return 0;
}

static int apply(struct nl_site *s, const char *key, const char *v)
{
	enum nl_choice c;
	if (!strcmp(key, "default")) {
		if (nl_choice_from_name(v, &c) < 0)
			return -1;
		s->default_choice = c;
		return 0;
	}
	if (!strcmp(key, "force")) {
		if (nl_choice_from_name(v, &c) < 0)
			return -1;
		s->force = (int)c;
		return 0;
	}
	if (!strcmp(key, "allow"))
		return parse_allow(v, &s->allow);
	if (!strcmp(key, "report_dir"))
		return copy(s->report_dir, sizeof(s->report_dir), v, 1);
	if (!strcmp(key, "agent"))
		return copy(s->agent, sizeof(s->agent), v, 1);
	if (!strcmp(key, "socket"))
		return copy(s->socket, sizeof(s->socket), v, 1);
	if (!strcmp(key, "log"))
		return copy(s->log, sizeof(s->log), v, 1);
	if (!strcmp(key, "topology")) {
		/* plugstack.conf splits at spaces: "numa:2,core:4,pu:1". */
		if (copy(s->topology, sizeof(s->topology), v, 0) < 0)
			return -1;
		for (char *p = s->topology; *p; p++)
			if (*p == ',')
				*p = ' ';
		return 0;
	}
	if (!strcmp(key, "counters")) {
		if (strcmp(v, "auto") && strcmp(v, "papi") &&
		    strcmp(v, "perf") && strcmp(v, "software"))
			return -1;
		return copy(s->counters, sizeof(s->counters), v, 0);
	}
	if (!strcmp(key, "period"))
		return number(v, 0.001, 86400, &s->period_s);
	if (!strcmp(key, "min_period"))
		return number(v, 0.001, 86400, &s->min_period_s);
	if (!strcmp(key, "max_period"))
		return number(v, 0.001, 86400, &s->max_period_s);
	if (!strcmp(key, "idle_exit"))
		return number(v, 0, 86400, &s->idle_exit_s);
	if (!strcmp(key, "agent_nice")) {
		double x;
		if (number(v, -20, 19, &x) < 0 || x != (int)x)
			return -1;
		s->agent_nice = x;
		s->agent_nice_set = 1;
		return 0;
	}
	if (!strcmp(key, "wait"))
		return number(v, 0.05, 30, &s->wait_s);
	if (!strcmp(key, "user_reports")) {
		static const char *const names[] = {"request", "always",
						    "never"};
		for (int i = 0; i < 3; i++)
			if (!strcmp(v, names[i])) {
				s->user_reports = (enum nl_user_reports)i;
				return 0;
			}
		return -1;
	}
	if (!strcmp(key, "site_log"))
		return copy(s->site_log, sizeof(s->site_log), v, 1);
	if (!strcmp(key, "bindings")) {
		if (strcmp(v, "keep") && strcmp(v, "free"))
			return -1;
		s->keep_bindings = !strcmp(v, "keep");
		return 0;
	}
	return -2;
}

/* What a key takes, for the message about a bad value. */
static const char *valid_values(const char *key)
{
	static char one[128], list[140];
	const char *const hints[][2] = {
		{"default", one},
		{"force", one},
		{"allow", list},
		{"counters", "auto, papi, perf or software"},
		{"bindings", "keep or free"},
		{"user_reports", "always, request or never"},
		{"wait", "seconds from 0.05 to 30"},
		{"idle_exit", "seconds from 0 to 86400"},
		{"agent_nice", "a whole number from -20 to 19"},
		{"topology", "an hwloc synthetic description"}};

	if (!one[0]) {
		snprintf(one, sizeof(one), "%s or off", nl_policy_job_names());
		snprintf(list, sizeof(list), "a list of %s, off",
			 nl_policy_job_names());
	}
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (!strcmp(key, hints[i][0]))
			return hints[i][1];
	return strstr(key, "period") ? "seconds from 0.001 to 86400"
				     : "an absolute path";
}

/* One "key=value" word from source: 0, or 1 when it is bad (told). */
static int parse_word(struct nl_site *s, const char *source, const char *word,
		      void (*complain)(const char *msg))
{
	char msg[900], key[32] = "";
	const char *eq = strchr(word, '=');
	int rc = -2;

	if (eq && eq != word && (size_t)(eq - word) < sizeof(key)) {
		memcpy(key, word, (size_t)(eq - word));
		key[eq - word] = 0;
		rc = apply(s, key, eq + 1);
	}
	if (rc == 0)
		return 0;
	if (rc == -1 && (!strcmp(key, "allow") || !strcmp(key, "force")))
		s->closed = 1;
	if (rc == -2)
		snprintf(msg, sizeof(msg),
			 "numalot: invalid option \"%.300s\" in %s (valid: "
			 "%s); ignored",
			 word, source, nl_siteconf_keys());
	else
		snprintf(msg, sizeof(msg),
			 "numalot: invalid value in \"%.300s\" in %s (%s); %s",
			 word, source, valid_values(key),
			 rc == -1 && (!strcmp(key, "allow") ||
				      !strcmp(key, "force"))
				 ? "numalot fails closed"
				 : "the default stays");
	if (complain)
		complain(msg);
	return 1;
}

/* The checks between keys, once every word is in: how many failed. */
static int finish(struct nl_site *s, void (*complain)(const char *msg))
{
	int bad = 0;
	if (s->min_period_s > s->max_period_s) {
		bad++;
		if (complain)
			complain("numalot: min_period is above max_period; "
				 "using 0.1 and 60");
		s->min_period_s = 0.1;
		s->max_period_s = 60;
	}
	if (s->period_s < s->min_period_s || s->period_s > s->max_period_s) {
		bad++;
		if (complain)
			complain("numalot: period= is outside [min_period, "
				 "max_period]; using min_period");
		s->period_s = s->min_period_s;
	}
	if (s->closed) {
		/* What the site meant to allow is not known: nothing. */
		if (complain)
			complain("numalot: allow= or force= is invalid, or the "
				 "site's configuration cannot be used: every "
				 "--numalot but off is refused until it is "
				 "fixed");
		s->allow = 1u << NL_CHOICE_OFF;
		s->force = -1;
		s->default_choice = NL_CHOICE_OFF;
	}
	if (!(s->allow & (1u << s->default_choice))) {
		bad++;
		if (complain)
			complain("numalot: default= is not in allow=; the "
				 "default is off");
		s->default_choice = NL_CHOICE_OFF;
	}
	return bad;
}

int nl_site_parse(struct nl_site *s, int ac, char **av,
		  void (*complain)(const char *msg))
{
	int bad = 0;
	for (int i = 0; i < ac; i++)
		bad += parse_word(s, "plugstack.conf", av[i], complain);
	bad += finish(s, complain);
	s->bad_args = bad;
	return bad;
}

/* A plugstack word the agent would enforce (not socket= or idle_exit=, a
 * service's own): noted for the warning where the agent is a service's. */
static void note_agent_key(struct nl_site *s, const char *word)
{
	char key[32], seen[40];
	const char *eq = strchr(word, '='), *opt;
	size_t n = strlen(s->line_agent_keys);

	if (!eq || (size_t)(eq - word) >= sizeof(key))
		return;
	memcpy(key, word, (size_t)(eq - word));
	key[eq - word] = 0;
	opt = nl_siteconf_agent_option(key);
	snprintf(seen, sizeof(seen), " %s=", key);
	if (!opt || !*opt || !strcmp(key, "socket") ||
	    !strcmp(key, "idle_exit") ||
	    !strncmp(s->line_agent_keys, seen + 1, strlen(seen + 1)) ||
	    strstr(s->line_agent_keys, seen))
		return;
	snprintf(s->line_agent_keys + n, sizeof(s->line_agent_keys) - n,
		 "%s%s=", n ? ", " : "", key);
}

int nl_site_load(struct nl_site *s, const char *conf, int ac, char **av,
		 void (*complain)(const char *msg))
{
	static struct nl_siteconf c; /* 16 KiB: not on slurmstepd's stack */
	char msg[900], source[600];
	int bad = 0;

	/* config= on the plugstack line names another file, or none. */
	for (int i = 0; i < ac; i++)
		if (!strncmp(av[i], "config=", 7))
			conf = av[i] + 7;
	if (conf[0] && strcmp(conf, "none") && conf[0] != '/') {
		snprintf(msg, sizeof(msg),
			 "numalot: invalid value in \"config=%.300s\" in "
			 "plugstack.conf (an absolute path, or none); numalot "
			 "fails closed",
			 conf);
		if (complain)
			complain(msg);
		s->closed = 1;
		bad++;
	} else if (conf[0] && strcmp(conf, "none")) {
		snprintf(s->conf, sizeof(s->conf), "%s", conf);
		if (nl_siteconf_read(conf, &c, msg + 9, sizeof(msg) - 9) < 0) {
			/* What it would have allowed is not known. */
			memcpy(msg, "numalot: ", 9);
			if (complain)
				complain(msg);
			s->closed = 1;
			bad++;
			c.n = 0;
		}
		for (int i = 0; i < c.n; i++) {
			snprintf(source, sizeof(source), "%.500s line %d", conf,
				 c.line[i]);
			bad += parse_word(s, source, c.word[i], complain);
		}
	}
	for (int i = 0; i < ac; i++)
		if (strncmp(av[i], "config=", 7)) {
			bad += parse_word(s, "plugstack.conf", av[i], complain);
			note_agent_key(s, av[i]);
		}
	bad += finish(s, complain);
	s->bad_args = bad;
	return bad;
}

void nl_site_misconfigured(const struct nl_site *s, char *buf, size_t len)
{
	if (!s->bad_args)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len,
			 "numalot: numalot is misconfigured on this cluster "
			 "(plugstack.conf or numalot.conf; slurmd's log says "
			 "how)%s",
			 s->closed ? ": only --numalot=off until it is fixed"
				   : "");
}

void nl_site_allowed_list(const struct nl_site *s, char *buf, size_t len)
{
	const char *names[NL_CHOICE_COUNT] = {NULL};
	size_t n;

	/* The policies sorted, then off. */
	for (int c = 1; c < NL_CHOICE_COUNT; c++)
		if (is_choice(c) && (s->allow & (1u << c)))
			names[c] = nl_choice_name((enum nl_choice)c);
	nl_names_join(names, NL_CHOICE_COUNT, 1, buf, len);
	n = strlen(buf);
	if ((s->allow & (1u << NL_CHOICE_OFF)) && n < len)
		snprintf(buf + n, len - n, "%s%s", n ? ", " : "", "off");
}

int nl_site_check_repeat(char *first, size_t len, const char *option,
			 const char *value, char *msg, size_t msglen)
{
	if (!value)
		value = "";
	if (!first[0]) {
		snprintf(first, len, "%s", value);
		return 0;
	}
	if (!strncmp(first, value, len - 1))
		return 0;
	snprintf(msg, msglen,
		 "numalot: --%s given twice, as \"%s\" and \"%s\": give it "
		 "once",
		 option, first, value);
	return -1;
}

int nl_site_check_choice(const struct nl_site *s, const char *value,
			 enum nl_choice *out, char *msg, size_t len)
{
	char list[64];
	nl_site_allowed_list(s, list, sizeof(list));
	if (nl_choice_from_name(value, out) < 0) {
		snprintf(msg, len,
			 "numalot: invalid --numalot value \"%.64s\" (valid: "
			 "%s; --numalot=help says more)",
			 value ? value : "", list);
		return -1;
	}
	if (!(s->allow & (1u << *out)) && s->closed) {
		nl_site_misconfigured(s, msg, len);
		return -1;
	}
	if (!(s->allow & (1u << *out))) {
		snprintf(msg, len,
			 "numalot: policy \"%s\" is not allowed on this "
			 "cluster (allowed: %s)",
			 value, list);
		return -1;
	}
	return 0;
}

int nl_site_step_choice(const struct nl_site *s, int user_choice,
			int report_asked, enum nl_choice *out, int *implied,
			char *msg, size_t len)
{
	char list[64];
	enum nl_choice c = user_choice >= 0 ? (enum nl_choice)user_choice
					    : s->default_choice;

	*implied = 0;
	if (len)
		msg[0] = 0;
	if (user_choice < 0 && report_asked && c == NL_CHOICE_OFF &&
	    s->user_reports != NL_USER_REPORTS_NEVER && s->force < 0) {
		if (s->allow & (1u << NL_CHOICE_MONITOR)) {
			c = NL_CHOICE_MONITOR;
			*implied = 1;
		} else {
			nl_site_allowed_list(s, list, sizeof(list));
			snprintf(msg, len,
				 "numalot: --numalot-report needs numalot on "
				 "for the step; alone it asks for monitor, "
				 "which this cluster does not allow (allowed: "
				 "%s): add --numalot=POLICY",
				 list);
			*out = NL_CHOICE_OFF;
			return -1;
		}
	}
	if (user_choice < 0 && report_asked && s->force == NL_CHOICE_OFF &&
	    s->user_reports != NL_USER_REPORTS_NEVER) {
		snprintf(msg, len,
			 "numalot: --numalot-report needs numalot on for the "
			 "step, and this cluster forces --numalot=off");
		*out = NL_CHOICE_OFF;
		return -1;
	}
	*out = s->force >= 0 ? (enum nl_choice)s->force : c;
	return 0;
}

int nl_site_check_period(const struct nl_site *s, const char *value,
			 double *out, char *msg, size_t len)
{
	if (!value ||
	    number(value, s->min_period_s, s->max_period_s, out) < 0) {
		snprintf(msg, len,
			 "numalot: invalid --numalot-period \"%.64s\" (seconds "
			 "from %g to %g on this cluster)",
			 value ? value : "", s->min_period_s, s->max_period_s);
		return -1;
	}
	return 0;
}
