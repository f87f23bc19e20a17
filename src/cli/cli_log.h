/*
 * cli_log.h - corral log (docs/corral.1): a session's timeline from its
 * events.jsonl, as a table or JSON lines, filtered by kind, time and
 * text; without a session, the sessions recorded in the state directory,
 * live and ended, one line each.  Reads files only: works with no server
 * running (one that runs is asked which sessions are live).
 */
#ifndef CORRAL_CLI_LOG_H
#define CORRAL_CLI_LOG_H

#define CLI_LOG_USAGE                                                                                       \
    "log [--json] [--since TIME] [--grep TEXT [-i]] [--kind KIND[,KIND...]] [--color WHEN] [-n N | --all] " \
    "[SESSION]"
#define CLI_LOG_HELP                                                                                        \
    "Show what happened in a session, in time order: its start, every command (its\n"                      \
    "number as corral diff numbers it, exit status, duration, files added, modified\n"                     \
    "and deleted, RISK when its changes carry risk marks), approvals (the request,\n"                      \
    "the answer, who gave it, the key, the note), network connections (host, port,\n"                      \
    "decision, bytes), escalations, refusals, sandbox denials, resizes and its end.\n"                     \
    "SESSION is a session id (7; an older session that had the same id: 7.1, 7.2),\n"                      \
    "or a session's directory.  Without SESSION: the sessions recorded, live and\n"                        \
    "ended, most recent first, each with its client, commands, approvals, hosts and\n"                     \
    "summed changes (+A ~M -D).  Only files are read: no server needs to run.\n\n"                          \
    "  -j, --json         one JSON object per line (docs/formats.md)\n"                                   \
    "  -s, --since TIME   only what began at or after TIME: ISO 8601 (2026-11-29,\n"                      \
    "                     2026-11-29T07:41:25Z; local time without a zone) or an\n"                       \
    "                     age (45s, 10m, 2h, 3d, 1w); sessions active since TIME\n"                       \
    "  -g, --grep TEXT    only entries (or sessions) whose text contains TEXT\n"                           \
    "  -i, --ignore-case  --grep ignores case\n"                                                           \
    "  -k, --kind KINDS   only these kinds (repeatable, or commas): session, command,\n"                   \
    "                     approval, network, escalation, refused, denial, resize,\n"                       \
    "                     exit, warning, other\n"                                                          \
    "      --color WHEN   always, never or auto (default: on a terminal, unless\n"                         \
    "                     NO_COLOR is set)\n"                                                             \
    "  -n, --limit N      list at most N sessions (default 20)\n"                                          \
    "  -a, --all          list every session recorded\n"                                                   \
    "A line of the log that cannot be read (one cut short by a crash) is skipped\n"                        \
    "with a warning naming the file and line.\n"

int cli_log(int argc, char **argv);

/* The row of cli.c's verb table. */
#define CLI_LOG_VERBS {"log", cli_log, CLI_LOG_USAGE, CLI_LOG_HELP},

#endif
