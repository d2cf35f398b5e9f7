/* numalot: other placement daemons on the node (docs/real-node.md,
 * "Other placers"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"
#include "real.h"

int nl_numad_pid_from(const char *pidfile)
{
	char path[64], *text = NULL;
	long pid;
	int rc = 0;

	if (nl_proc_slurp(pidfile, &text, NULL) < 0)
		return 0;
	pid = strtol(text, NULL, 10);
	free(text);
	if (pid <= 0 || pid > 4194304)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (nl_proc_slurp(path, &text, NULL) < 0)
		return 0; /* a pid file left behind */
	if (!strcmp(text, "numad\n"))
		rc = (int)pid;
	free(text);
	return rc;
}

int nl_numad_pid(void)
{
	return nl_numad_pid_from(NL_NUMAD_PIDFILE);
}
