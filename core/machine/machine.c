/* numalot: helpers over the machine interface (machine.h). */
#include "machine.h"

size_t nl_process_jobs(const struct nl_process_info *p, size_t n, int *jobs)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int known = 0;

		for (size_t j = 0; j < k && !known; j++)
			known = jobs[j] == p[i].job;
		if (!known)
			jobs[k++] = p[i].job;
	}
	return k;
}
