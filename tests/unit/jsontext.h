/* Test helper: JSON written with ' for " (readable in C strings). */
#ifndef NUMALOT_TEST_JSONTEXT_H
#define NUMALOT_TEST_JSONTEXT_H

#include <stddef.h>

/* The text with every ' turned into "; a static buffer, reused. */
static inline char *json(const char *s)
{
	static char buf[4096];
	size_t i;

	for (i = 0; s[i] && i < sizeof(buf) - 1; i++)
		buf[i] = s[i] == '\'' ? '"' : s[i];
	buf[i] = 0;
	return buf;
}

#endif
