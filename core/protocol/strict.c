/* numalot: what json-c's strict mode lets through (strict.h). */
#include "strict.h"

static int digit(const char *b, size_t i, size_t len)
{
	return i < len && b[i] >= '0' && b[i] <= '9';
}

static size_t digits(const char *b, size_t i, size_t len)
{
	while (digit(b, i, len))
		i++;
	return i;
}

/* Length of the number at b as RFC 8259 writes it, 0 if it is not one. */
static size_t number_len(const char *b, size_t len)
{
	size_t i = b[0] == '-';

	if (i < len && b[i] == '0')
		i++;
	else if (digit(b, i, len))
		i = digits(b, i, len);
	else
		return 0;
	if (i < len && b[i] == '.') {
		if (!digit(b, i + 1, len))
			return 0;
		i = digits(b, i + 1, len);
	}
	if (i < len && (b[i] == 'e' || b[i] == 'E')) {
		i += i + 1 < len && (b[i + 1] == '+' || b[i + 1] == '-');
		if (!digit(b, i + 1, len))
			return 0;
		i = digits(b, i + 1, len);
	}
	return digit(b, i, len) || (i < len && b[i] == '.') ? 0 : i;
}

/* Space as JSON has it (not \f or \v). */
static int space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* What is wrong at a byte outside strings, or NULL. */
static const char *outside(const char *b, size_t len, size_t *at)
{
	char c = b[*at];
	size_t j = *at + 1, n;

	if (c == '\'')
		return "a single quote; strings and names take \"";
	if (c == '/')
		return "a comment";
	if (c == 'N' || c == 'I' || (c == '-' && j < len && b[j] == 'I'))
		return "NaN or Infinity (not JSON numbers)";
	if (c == '-' || (c >= '0' && c <= '9')) {
		if (!(n = number_len(b + *at, len - *at)))
			return "a malformed number (JSON has no 01, 1. or -.5)";
		*at += n - 1;
	} else if (c == ',') {
		while (j < len && space(b[j]))
			j++;
		if (j < len && (b[j] == '}' || b[j] == ']'))
			return "a trailing comma";
	}
	return NULL;
}

const char *nl_json_not_strict(const char *b, size_t len, size_t *at)
{
	int in_str = 0;
	const char *why;

	for (*at = 0; *at < len; (*at)++) {
		char c = b[*at];
		if (!in_str && c == '"')
			in_str = 1;
		else if (!in_str && (why = outside(b, len, at)))
			return why;
		else if (in_str && c == '\\')
			(*at)++;
		else if (in_str && c == '"')
			in_str = 0;
		else if (in_str && (unsigned char)c < 0x20)
			return "a control character in a string (it must be "
			       "escaped)";
	}
	return NULL;
}
