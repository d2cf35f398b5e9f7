/* numalotd: the per-node agent. A thin main over nl_agent_run. */
#include <malloc.h>
#include <stdio.h>

#include <json-c/json.h>

#include "agent.h"
#include "agent_args.h"

int main(int argc, char **argv)
{
	struct nl_agent_config c;
	int rc;

	/* Every period builds and frees the same arrays: keep the memory. */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	nl_agent_config_default(&c);
	rc = nl_agent_args(&c, argc, argv, stdout, stderr);
	if (rc)
		return rc == 1 ? 0 : 2;
	json_c_set_serialization_double_format("%.10g", JSON_C_OPTION_GLOBAL);
	nl_log_setup(c.log_level, c.use_syslog);
	return nl_agent_run(&c);
}
