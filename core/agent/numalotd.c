/* numalotd: the per-node agent. A thin main over nl_agent_run. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent.h"
#include "agent_args.h"

extern char **environ;

/* The agent binds by the live machine: no HWLOC_FSROOT, HWLOC_XMLFILE...
 * from whoever started it (docs/real-node.md, "Saved trees"). */
static void drop_hwloc_env(void)
{
	for (char **e = environ; e && *e;) {
		char name[64];
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
		if (strncmp(*e, "HWLOC_", 6) != 0 || n >= sizeof(name)) {
			e++;
			continue;
		}
		memcpy(name, *e, n);
		name[n] = 0;
		unsetenv(name); /* environ shifts down: look at *e again */
	}
}

int main(int argc, char **argv)
{
	struct nl_agent_config c;
	int rc;

	/* Every period builds and frees the same arrays: keep the memory. */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	drop_hwloc_env();
	nl_agent_config_default(&c);
	rc = nl_agent_args(&c, argc, argv, stdout, stderr);
	if (rc)
		return rc == 1 ? 0 : 2;
	json_c_set_serialization_double_format("%.10g", JSON_C_OPTION_GLOBAL);
	nl_log_setup(c.log_level, c.use_syslog);
	return nl_agent_run(&c);
}
