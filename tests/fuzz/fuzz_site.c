/* libFuzzer target: plugstack.conf arguments and option values. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_path.h"
#include "site.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(const char *msg)
{
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *av[32], msg[256];
	int ac = 0;
	struct nl_site s;
	enum nl_choice c;
	double p;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	/* Arguments as Slurm hands them: split at white space. */
	for (char *save, *t = strtok_r(text, " \t\n", &save); t && ac < 32;
	     t = strtok_r(NULL, " \t\n", &save))
		av[ac++] = t;
	nl_site_default(&s, "/usr/sbin/numalotd");
	nl_site_parse(&s, ac, av, quiet);
	/* Whatever was parsed, the site stays coherent. */
	if (s.min_period_s > s.max_period_s ||
	    !(s.allow & (1u << s.default_choice)))
		abort();
	for (int i = 0; i < ac; i++) {
		nl_site_check_choice(&s, av[i], &c, msg, sizeof(msg));
		nl_site_check_period(&s, av[i], &p, msg, sizeof(msg));
		/* ...and as a --numalot-report pattern. */
		struct nl_path_ids ids = {.job = 1,
					  .node = av[i],
					  .user = "u",
					  .job_name = av[i]};
		char out[64], more[64];
		int ok = nl_path_check(av[i], msg, sizeof(msg)) == 0;
		if (nl_path_expand(av[i], "/w", &ids, out, sizeof(out)) == -2 &&
		    ok)
			abort(); /* checked good, expanded bad */
		if (nl_path_add_node(av[i], more, sizeof(more)) == 0 && ok &&
		    !nl_path_per_node(more) && !strchr(av[i], '\\'))
			abort(); /* %N added, yet not one file per node */
	}
	free(text);
	return 0;
}
