/*
 * cli_export.h - corral export (docs/corral.1, docs/formats.md "corral
 * export"): a session's record as one .tar.gz to share a review.
 */
#ifndef CORRAL_CLI_EXPORT_H
#define CORRAL_CLI_EXPORT_H

#define CLI_EXPORT_USAGE "export [-o FILE] [--force] SESSION"
#define CLI_EXPORT_HELP                                                                                      \
    "Write a session's record to one gzip'd tar archive, to share a review: one\n"                        \
    "directory corral-SESSION/ with its events.jsonl and output.cast as they were\n"                      \
    "recorded, the records of approvals.jsonl about it, one cmd-N.patch per command\n"                    \
    "(what corral diff SESSION N --patch prints: git apply -R undoes it) and a\n"                         \
    "SUMMARY.md (the session, its commands with their counts and risk marks,\n"                           \
    "approvals, network hosts).  SESSION is the id corral ls shows, also after the\n"                    \
    "session ended or the server restarted (ID.N: an older session that had the\n"                      \
    "same id).  A running session is exported as far as it got.  corral replay\n"                         \
    "plays the archive.\n\n"                                                                               \
    "  -o, --output FILE  the archive (default: corral-SESSION.tar.gz)\n"                                 \
    "  -f, --force        replace FILE if it exists\n"

int cli_export(int argc, char **argv);

/* The row of cli.c's verb table. */
#define CLI_EXPORT_VERBS {"export", cli_export, CLI_EXPORT_USAGE, CLI_EXPORT_HELP},

#endif
