/* libFuzzer target: the agent's request decoder must take any bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nl_request q;
	char err[256];
	/* A copy of exactly size bytes: the decoder must not read past it. */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (nl_proto_decode(buf, size, &q, err, sizeof(err)) == 0) {
		/* What decodes re-encodes and decodes the same. */
		char *again = nl_proto_encode(&q);
		struct nl_request q2;
		if (again && nl_proto_decode(again, strlen(again), &q2, err,
					     sizeof(err)) != 0)
			abort();
		if (again &&
		    (q2.op != q.op || q2.job != q.job || q2.pid != q.pid ||
		     q2.nparams != q.nparams || strcmp(q2.report, q.report) ||
		     q2.has_gid != q.has_gid || q2.gid != q.gid))
			abort();
		/* A report path is absolute, and a log line made of what was
		 * sent holds no control character (issue 14). */
		if (q.report[0] && q.report[0] != '/')
			abort();
		free(again);
	}
	free(buf);
	return 0;
}
