/*
 * trust.h - trusted workspaces (corral trust, docs/corral.rules.5): the
 * directories whose .corral/rules/ files the user has agreed to load, pinned
 * to the exact content the user agreed to.
 *
 * A workspace is usually writable from inside its sandboxes, so its rules
 * are too: trust that followed the directory would let code in a sandbox
 * write itself an allow rule and run outside it unasked.  So `corral trust
 * DIR` records, with DIR, a SHA-256 digest of the DIR/.corral/rules/NAME.rules
 * files as they are then; they load only while they still hash to it, and any
 * change (a file added, changed or removed) loads none of them until the
 * user reviews them and runs `corral trust DIR` again.
 *
 * The list is $XDG_CONFIG_HOME/corral/trusted, rewritten whole (temporary
 * file, fsync, rename) under an advisory lock so concurrent `corral trust`
 * calls lose nothing.  Its lines:
 *
 *   # a comment
 *   sha256:HEX /canonical/dir          a trusted directory and its digest
 *     sha256:HEX NAME.rules            each of its files then (two spaces)
 *   /canonical/dir                     trusted before digests: loads nothing
 *
 * (file names escape a backslash as \\ and control characters as \xHH).
 * Trust is exact: a trusted directory's subdirectories are not trusted.
 *
 * No server: the CLI, the server's rule cache and doctor share this.
 *
 * Included by src/policy/ and src/cli/.
 */
#ifndef CORRAL_TRUST_H
#define CORRAL_TRUST_H

#include "base/sha256.h"
#include "base/util.h"

#include <stdbool.h>
#include <stddef.h>

/* One rules file of a workspace: its name in .corral/rules and the digest of
 * its content (all zero and readable false when it could not be read). */
typedef struct trust_rulefile {
    char *name;
    unsigned char sha[SHA256_LEN];
    bool readable;
} trust_rulefile;

/* A workspace's rules files in name order and their digest: SHA-256 over,
 * for each file, its name, a NUL byte and the SHA-256 of its content. */
typedef struct trust_rules {
    trust_rulefile *files;
    size_t n;
    unsigned char digest[SHA256_LEN];
} trust_rules;

/* The rules files of a workspace as read once: what was hashed is what
 * loads (nothing can change a file between the two).  text[i] is NULL and
 * error[i] says why when file i could not be read. */
typedef struct trust_snapshot {
    trust_rules rules;
    char **path;
    char **text;
    size_t *len;
    char **error;
} trust_snapshot;

typedef struct trust_entry {
    char *dir;         /* canonical, absolute */
    bool pinned;       /* false: a line written before digests */
    bool damaged;      /* pinned, but its file lines do not add up to its digest */
    trust_rules rules; /* what the user trusted (when pinned) */
} trust_entry;

typedef struct trust_list {
    trust_entry *v;
    size_t n;
} trust_list;

/* $XDG_CONFIG_HOME/corral/trusted.  Caller frees. */
char *trust_file(void);

/* dir as an existing directory's canonical absolute path (symlinks
 * resolved).  NULL with "cannot trust DIR: why" in err. */
char *trust_canonical(const char *dir, char *err, size_t errlen);

/* Read each of paths (NULL-terminated: a workspace's rules files in name
 * order, rules_dir_list), regular files only, symlinks refused: every
 * file's name, bytes and digest. */
void trust_snapshot_read(char *const *paths, trust_snapshot *s);
void trust_snapshot_free(trust_snapshot *s);
void trust_rules_free(trust_rules *r);

/* The list (empty when the file does not exist); 0, or -1 with err when it
 * cannot be read.  Free with trust_list_free. */
int trust_read(const char *file, trust_list *out, char *err, size_t errlen);
void trust_list_free(trust_list *l);
/* The entry of canonical dir, or NULL. */
const trust_entry *trust_find(const trust_list *l, const char *dir);

/* Whether the rules now are the ones e pins.  If not and why is not NULL,
 * a message that says what changed and what to do goes there. */
bool trust_current(const trust_entry *e, const trust_rules *now, buf_t *why);

/* Trust canonical dir with its rules as they are now (replacing an earlier
 * record).  *was (may be NULL): TRUST_NEW, TRUST_REPINNED (it was trusted
 * with other rules, or before digests), TRUST_SAME.  0, or -1 with err. */
typedef enum trust_change { TRUST_NEW, TRUST_REPINNED, TRUST_SAME } trust_change;
int trust_add(const char *file, const char *dir, const trust_rules *rules, trust_change *was, char *err,
              size_t errlen);
/* Remove canonical dir (*changed false when it was not there).  0, or -1. */
int trust_remove(const char *file, const char *dir, bool *changed, char *err, size_t errlen);

/* The file-format pieces, for the tests. */
void trust_rules_digest(trust_rules *r); /* sets r->digest from r->files */
void trust_format(buf_t *b, const trust_list *l);
void trust_parse(const char *text, size_t len, trust_list *out);

#endif
