/* numalot SPANK plugin: the user's report checked before the program
 * (early.h). */
#include "early.h"

#include <stdio.h>
#include <sys/mman.h>

#include "writable.h"

/* What slurmstepd and its tasks share: written before a task is released,
 * read after. */
struct early {
	volatile int noted;
	volatile int refused;
	char path[4096];
};

static struct early *shared;

int nl_early_setup(void)
{
	if (shared)
		return 0;
	void *p = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	shared = p;
	return 0;
}

void nl_early_note(const char *path)
{
	if (!shared || shared->noted || !path || !*path)
		return;
	snprintf(shared->path, sizeof(shared->path), "%s", path);
	shared->noted = 1;
}

int nl_early_check(const char *asked, char *msg, size_t len)
{
	char why[512];
	if (!shared || !shared->noted)
		return 0;
	/* As the report will be written: missing folders made, a file of
	 * the user's own replaced by a rename (rwrite.h). */
	if (nl_writable(shared->path,
			NL_WRITABLE_MAKE_DIRS | NL_WRITABLE_OWN_FILE, why,
			sizeof(why)) == 0)
		return 0;
	shared->refused = 1;
	snprintf(msg, len,
		 "numalot: cannot write report %s: %s; the program was not "
		 "started (--numalot-report=%s)",
		 shared->path, why, asked);
	return -1;
}

int nl_early_refused(void)
{
	return shared && shared->refused;
}
