/*
 * numalot: the site's configuration file, /etc/numalot/numalot.conf, read
 * by the SPANK plugin and by numalotd however it is started (docs/slurm.md,
 * "Site policy"). It holds the plugstack line's key=value words, any
 * number a line, '#' to the end of a line a comment.
 */
#ifndef NUMALOT_SITECONF_H
#define NUMALOT_SITECONF_H

#include <stddef.h>

#ifndef NUMALOT_CONF
#define NUMALOT_CONF "/etc/numalot/numalot.conf"
#endif

#define NL_SITECONF_WORDS 64
#define NL_SITECONF_BYTES 16384

struct nl_siteconf {
	int n;			       /* words read */
	char *word[NL_SITECONF_WORDS]; /* "key=value", in buf */
	int line[NL_SITECONF_WORDS];   /* the line each is on */
	char buf[NL_SITECONF_BYTES];
};

/*
 * Read path into c. 0 with its words (none when the file does not
 * exist: every setting keeps its default); or a negative errno with why
 * naming the file: it cannot be read, it is not a regular file, it is not
 * root's (or the reader's) or others may write it (root acts on what it
 * says), or it is too long.
 */
int nl_siteconf_read(const char *path, struct nl_siteconf *c, char *why,
		     size_t len);

/*
 * The numalotd option a key stands for ("allow" -> "allow", "report_dir"
 * -> "report-dir", "agent_nice" -> "nice"); "" for a key only the plugin
 * uses (default=, wait=, ...); NULL for no key numalot knows.
 */
const char *nl_siteconf_agent_option(const char *key);

/* Every key, ", " between, for messages. */
const char *nl_siteconf_keys(void);

#endif
