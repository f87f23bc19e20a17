/*
 * cli_snap.h - the snapshot verbs (docs/corral.1, docs/snapshots.md):
 * corral diff, corral revert, corral gc; the shell hooks' internal
 * corral __hook-mark; and the snapshot lines of corral doctor.
 */
#ifndef CORRAL_CLI_SNAP_H
#define CORRAL_CLI_SNAP_H

#include <stdio.h>

struct conf;

#define CLI_DIFF_USAGE                                                                                       \
    "diff [--name-status | --stat | --patch] [-w] [--color WHEN] SESSION [CMD | --since-start | --between I J " \
    "| --list]"
#define CLI_DIFF_HELP                                                                                        \
    "Show what a command of a session changed in its workspace: the diff between the\n"                    \
    "snapshots taken just before it started and just after it ended.  CMD is the\n"                      \
    "command's number in the session (1, 2, ...; default: last); --since-start shows\n"                  \
    "everything since the session started, --between I J from before command I to\n"                     \
    "after command J.  The output is git's (diff --git headers, mode and rename\n"                         \
    "lines, binary patches): corral diff S N | git apply -R undoes it, delta or less\n"                   \
    "read it.  Files that were not captured (too large, excluded) and risk marks (a\n"                    \
    "new git hook, .envrc, CI files, an executable bit, ...) are named on stderr.\n\n"                    \
    "      --patch        the patch (default)\n"                                                           \
    "      --stat         a diffstat\n"                                                                    \
    "      --name-status  status letter and path (A M D R T)\n"                                            \
    "  -w, --ignore-space-change  ignore whitespace\n"                                                     \
    "      --list         the session's commands with their counts and risk marks\n"                       \
    "      --color WHEN   always, never or auto (default: when stdout is a terminal)\n"
#define CLI_REVERT_USAGE "revert [--dry-run] SESSION CMD"
#define CLI_REVERT_HELP                                                                                      \
    "Undo exactly command CMD of a session: the files it created are removed, the\n"                       \
    "ones it modified or deleted are restored (content, mode, symlink target), and\n"                     \
    "nothing else is touched.  When a file changed again after the command, nothing\n"                    \
    "is done and the conflicts are listed (exit 1).  The revert is itself recorded as\n"                  \
    "a command of the session, with its own diff.\n\n"                                                     \
    "  -n, --dry-run  list what it would do, change nothing\n"
#define CLI_GIT_RESTORE_USAGE "git-restore SESSION CMD [--yes]"
#define CLI_GIT_RESTORE_HELP                                                                                 \
    "Put back what corral made inert in the git repositories command CMD created or\n"                   \
    "changed (docs/sandbox.md, \"Repositories a command makes\"): their config,\n"                      \
    "hooks, commondir or .git file, moved aside into the repository's\n"                                  \
    ".git/corral-quarantine/ when the command ended.  Without --yes, shows each one\n"                   \
    "and exactly what it would run again; with --yes, puts each back, unless it (or\n"                   \
    "what corral put in its place) changed since.  Needs no server.\n\n"                                 \
    "  -y, --yes  put them back\n"
#define CLI_GC_USAGE "gc [--dry-run] [--verbose]"
#define CLI_GC_HELP                                                                                          \
    "Apply retention now.  The directories of ended sessions (their events.jsonl\n"                        \
    "and output.cast) that were last written longer ago than [session] retention go\n"                  \
    "(default 30d), then the oldest while they take more than [session]\n"                                \
    "max-total-size in all (default 1G); a session the server has (running or in\n"                       \
    "its list) is never removed, nor one whose end cannot be proven.  Then every\n"                        \
    "snapshot store drops the snapshots of those sessions, and of sessions that\n"                        \
    "ended longer ago than [snapshots] retention (then the oldest while a store is\n"                     \
    "over [snapshots] max-store-size), and is repacked.  Each directory removed is\n"                     \
    "named with its size and why; each store with its size before and after.  The\n"                      \
    "server also does this on its own.\n\n"                                                               \
    "  -n, --dry-run  say what would be removed, remove nothing\n"                                         \
    "  -v, --verbose  also list every directory kept, and why\n"

int cli_diff(int argc, char **argv);
int cli_revert(int argc, char **argv);
int cli_gc(int argc, char **argv);
int cli_git_restore(int argc, char **argv);
/* corral __hook-mark [--status N] end (internal, for the shell hooks). */
int cli_hook_mark(int argc, char **argv);
/* corral doctor's lines about snapshot stores. */
void snap_doctor_report(FILE *out, const struct conf *conf);

/* The rows of cli.c's verb table. */
#define CLI_SNAP_VERBS                                         \
    {"diff", cli_diff, CLI_DIFF_USAGE, CLI_DIFF_HELP},         \
        {"revert", cli_revert, CLI_REVERT_USAGE, CLI_REVERT_HELP}, \
        {"gc", cli_gc, CLI_GC_USAGE, CLI_GC_HELP},                  \
        {"git-restore", cli_git_restore, CLI_GIT_RESTORE_USAGE, CLI_GIT_RESTORE_HELP},

#endif
