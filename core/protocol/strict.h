/* numalot: what json-c's strict mode lets through (docs/protocol.md). */
#ifndef NUMALOT_STRICT_H
#define NUMALOT_STRICT_H

#include <stddef.h>

/*
 * Check len bytes of JSON text for what json-c 0.16's strict mode takes
 * but RFC 8259 does not (a single-quoted name, NaN, Infinity, a number
 * such as 01, 1. or -.5, a raw control character in a string), and for
 * what it refuses with an unclear message (a comment, a trailing comma).
 * NULL if none, else what, with *at its byte. Reads no byte past len.
 */
const char *nl_json_not_strict(const char *b, size_t len, size_t *at);

#endif
