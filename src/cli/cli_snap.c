/*
 * cli_snap.c - the snapshot verbs (docs/corral.1, docs/snapshots.md):
 * corral diff, corral revert, corral gc, corral git-restore; the shell
 * hooks' internal corral __hook-mark; and the snapshot lines of corral
 * doctor (cli_snap.h).  Each verb is one entry (cli_verb.h) that cli.c
 * lists (__hook-mark among the verbs it never shows).
 */
#include "config.h"

#include "cli/cli_snap.h"

#include "cli/cli_verb.h"
#include "protocol/client.h"
#include "config/conf.h"
#include "base/exitcode.h"
#include "snap/git_quarantine.h"
#include "base/paths.h"
#include "base/quote.h"
#include "protocol/uexec.h"
#include "sandbox/netns.h"
#include "record/sessfiles.h"
#include "record/timeline.h"
#include "snap/snap_store.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The snapshot verbs' usage errors: "corral: MESSAGE", then the usage line. */
static int usage(const cli_verb *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage(const cli_verb *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "corral: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return cli_usage_line(v);
}


static bool use_color(const char *when)
{
    if (strcmp(when, "always") == 0)
        return true;
    if (strcmp(when, "never") == 0)
        return false;
    const char *nc = getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) && !(nc && *nc);
}

/* ---- output ----------------------------------------------------------------------- */

/* git's default colours: meta bold, frag cyan, old red, new green. */
#define C_META "\033[1m"
#define C_FRAG "\033[36m"
#define C_OLD "\033[31m"
#define C_NEW "\033[32m"
#define C_OFF "\033[m"

/* The server's text to stdout.  A patch to a pipe is its exact bytes (it
 * is for git apply); on a terminal, or in colour (for a terminal through a
 * pager), its control characters, carriage returns too, are shown as cat
 * -v shows them (a file's escape sequences must not act on the terminal,
 * nor a line overwrite itself), and with colour, lines are coloured as git
 * colours them.  Other text (a diffstat, whose names git does not quote)
 * is for a person wherever it goes: each line made visible (quote.h). */
static void print_text(const char *text, size_t len, bool color, bool patch)
{
    bool tty = isatty(STDOUT_FILENO);
    if (!tty && !color && patch) {
        fwrite(text, 1, len, stdout);
        return;
    }
    quote_catv st;
    memset(&st, 0, sizeof st);
    st.show_cr = true;
    buf_t out;
    buf_init(&out);
    bool in_header = false;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        const char *line = text + i;
        const char *c = NULL;
        if (color && patch) {
            if (strncmp(line, "diff --git ", 11) == 0)
                in_header = true;
            else if (n >= 2 && line[0] == '@' && line[1] == '@')
                in_header = false;
            if (in_header)
                c = C_META;
            else if (n && line[0] == '@')
                c = C_FRAG;
            else if (n && line[0] == '-')
                c = C_OLD;
            else if (n && line[0] == '+')
                c = C_NEW;
        }
        if (c)
            buf_puts(&out, c);
        if (!patch) {
            char *v = quote_text_visible(line, n);
            buf_puts(&out, v);
            free(v);
        } else if (tty || color) {
            quote_catv_write(&st, &out, line, n, true);
        } else {
            buf_append(&out, line, n);
        }
        if (c)
            buf_puts(&out, C_OFF);
        if (nl)
            buf_putc(&out, '\n');
        i += n + (nl ? 1 : 0);
        if (out.len > 65536) {
            fwrite(out.data, 1, out.len, stdout);
            buf_reset(&out);
        }
    }
    fwrite(out.data ? out.data : "", 1, out.len, stdout);
    buf_free(&out);
}

static const char *arrow(void)
{
    const char *l = getenv("LC_ALL");
    if (!l || !*l)
        l = getenv("LC_CTYPE");
    if (!l || !*l)
        l = getenv("LANG");
    return l && (strstr(l, "UTF-8") || strstr(l, "utf8") || strstr(l, "UTF8")) ? "\xe2\x86\x92" : ">";
}

static void print_counts(FILE *f, json_t *rec)
{
    json_t *c = json_object_get(rec, "counts"), *l = json_object_get(rec, "lines");
    fprintf(f, "+%lld ~%lld -%lld %s%lld", (long long)json_integer_value(json_object_get(c, "added")),
            (long long)json_integer_value(json_object_get(c, "modified")) +
                (long long)json_integer_value(json_object_get(c, "typechanged")),
            (long long)json_integer_value(json_object_get(c, "deleted")), arrow(),
            (long long)json_integer_value(json_object_get(c, "renamed")));
    fprintf(f, "  lines +%lld -%lld", (long long)json_integer_value(json_object_get(l, "added")),
            (long long)json_integer_value(json_object_get(l, "removed")));
    size_t missed = json_array_size(json_object_get(rec, "not_captured"));
    if (missed)
        fprintf(f, "  (%zu not captured)", missed);
}

/* Text of the server's reply for a person: paths, reasons, errors and
 * command lines name what a session made or typed.  NULL is "". */
static char *visible(const char *s)
{
    return quote_text_visible(s ? s : "", s ? strlen(s) : 0);
}

/* What a reviewer must see first, and what was not captured: on stderr,
 * so that stdout stays a patch. */
static void print_notes(json_t *rec)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(rec, "risk"), i, r) {
        char *p = visible(json_string_value(json_object_get(r, "path")));
        buf_t marks;
        buf_init(&marks);
        size_t k;
        json_t *m;
        json_array_foreach(json_object_get(r, "marks"), k, m) {
            char *v = visible(json_string_value(m));
            buf_printf(&marks, "%s%s", k ? ", " : "", v);
            free(v);
        }
        const char *detail = json_string_value(json_object_get(r, "detail"));
        char *d = detail ? visible(detail) : NULL;
        fprintf(stderr, "corral: risk [%s] %s%s%s\n", marks.data ? marks.data : "", p, d ? ": " : "", d ? d : "");
        free(d);
        free(p);
        buf_free(&marks);
    }
    json_array_foreach(json_object_get(rec, "not_captured"), i, r) {
        char *p = visible(json_string_value(json_object_get(r, "path")));
        char *why = visible(json_string_value(json_object_get(r, "reason")));
        json_int_t size = json_integer_value(json_object_get(r, "size"));
        json_int_t files = json_integer_value(json_object_get(r, "files"));
        if (size)
            fprintf(stderr, "corral: not captured: %s (%s: %lld bytes; size and time only)\n", p, why, (long long)size);
        else if (files)
            fprintf(stderr, "corral: not captured: %s (%s: %lld new files)\n", p, why, (long long)files);
        else
            fprintf(stderr, "corral: not captured: %s (%s)\n", p, why);
        free(why);
        free(p);
    }
    const char *err = json_string_value(json_object_get(rec, "error"));
    if (err) {
        char *v = visible(err);
        fprintf(stderr, "corral: %s\n", v);
        free(v);
    }
    if (json_is_true(json_object_get(rec, "late")))
        fprintf(stderr, "corral: this command started before its \"before\" snapshot was taken (the first "
                        "snapshot of the workspace was still running): changes it made early may be missing\n");
}

/* A long snapshot running in the workspace (its first one): say so, with
 * its progress, on stderr. */
static void print_progress(json_t *commands_reply)
{
    json_t *snap = json_object_get(commands_reply, "snapshots");
    const char *phase = json_string_value(json_object_get(snap, "phase"));
    if (!phase || strcmp(phase, "idle") == 0 || strcmp(phase, "maintaining") == 0)
        return;
    char *ws = visible(json_string_value(json_object_get(commands_reply, "workspace")));
    char *ph = visible(phase);
    fprintf(stderr, "corral: a snapshot of %s is running (%s: %lld of %lld files); the diff waits for it\n", ws,
            ph, (long long)json_integer_value(json_object_get(snap, "done")),
            (long long)json_integer_value(json_object_get(snap, "total")));
    free(ph);
    free(ws);
}

static void print_list(json_t *r)
{
    json_t *snap = json_object_get(r, "snapshots");
    const char *msg = json_string_value(json_object_get(snap, "message"));
    if (msg) {
        char *v = visible(msg);
        printf("%s\n", v);
        free(v);
    }
    print_progress(r);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "commands"), i, c) {
        const char *state = json_string_value(json_object_get(c, "state"));
        char *line = visible(json_string_value(json_object_get(c, "line")));
        printf("%3lld  ", (long long)json_integer_value(json_object_get(c, "command")));
        if (json_object_get(c, "counts")) {
            print_counts(stdout, c);
        } else {
            char *v = visible(state);
            printf("(%s)", json_object_get(c, "error") ? "no diff" : v);
            free(v);
        }
        json_t *risk = json_object_get(c, "risk");
        if (json_array_size(risk))
            printf("  RISK");
        json_t *with = json_object_get(c, "shared_with");
        if (json_array_size(with)) {
            printf("  shared with");
            size_t k;
            json_t *w;
            json_array_foreach(with, k, w) {
                json_t *n = json_object_get(w, "command");
                if (json_is_integer(n))
                    printf(" %lld:%lld", (long long)json_integer_value(json_object_get(w, "session")),
                           (long long)json_integer_value(n));
                else
                    printf(" %lld", (long long)json_integer_value(json_object_get(w, "session")));
            }
        }
        const char *by = json_string_value(json_object_get(c, "by"));
        if (by) { /* an action on the session (a revert), not one of its commands */
            char *v = visible(by);
            printf("  by %s: %s\n", v, line);
            free(v);
        } else {
            printf("  %s\n", line);
        }
        free(line);
    }
}

/* ---- sessions the server no longer has ------------------------------------------- */

/* Whether the server has session sid in its list (running or ended):
 * then its commands are the server's.  A session that left the list, or
 * ended before the server restarted, has only its records on disk.  1, 0,
 * or -1 when no server answers (said on stderr). */
static int server_has(long sid)
{
    json_t *r = cli_request(json_pack("{s:s}", "cmd", "ls"));
    if (!r)
        return -1;
    int found = 0;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(r, "sessions"), i, x)
        if (json_integer_value(json_object_get(x, "id")) == sid)
            found = 1;
    json_decref(r);
    return found;
}

/* An ended session's commands, from its events.jsonl as corral log and the
 * screen's review read it (timeline.h): each command's entry, its record's
 * fields included (workspace, before, after, counts, risk, ...), in order.
 * NULL after saying on stderr why there is none and what to do. */
static json_t *ended_commands(const char *name)
{
    sessfiles f;
    sessfiles_for(name, &f);
    json_t *list = NULL;
    struct stat st;
    if (stat(f.events, &st) < 0 && errno == ENOENT) {
        char *dir = visible(f.state);
        fprintf(stderr,
                "corral: no session %s: the server has none, and none is recorded in %s/sessions (an id that "
                "never existed, or a session whose records [session] retention or corral gc removed; corral ls "
                "lists the server's sessions, corral log the recorded ones)\n",
                name, dir);
        free(dir);
        sessfiles_free(&f);
        return NULL;
    }
    timeline_t tl;
    char err[PATH_MAX + 200];
    if (tl_load(&tl, f.events, NULL, err, sizeof err) < 0) {
        char *v = visible(err);
        fprintf(stderr, "corral: session %s: %s\n", name, v);
        free(v);
    } else {
        list = json_array();
        for (size_t i = 0; i < tl.n; i++)
            if (tl.entries[i].kind == TL_COMMAND)
                json_array_append_new(list, tl_entry_json(&tl.entries[i]));
    }
    tl_free(&tl);
    sessfiles_free(&f);
    return list;
}

/* Command n of an ended session's list (0: the last), or NULL after
 * saying so. */
static json_t *ended_command(json_t *list, const char *name, long n)
{
    size_t i;
    json_t *c, *found = NULL;
    json_array_foreach(list, i, c)
        if (!n || json_integer_value(json_object_get(c, "command")) == n)
            found = c;
    if (!found && !n)
        fprintf(stderr, "corral: session %s ran no command that was recorded (corral log %s shows its record)\n",
                name, name);
    else if (!found)
        fprintf(stderr, "corral: session %s has no command %ld (corral diff %s --list lists them)\n", name, n, name);
    return found;
}

/* The snapshots of a command's record, or false after saying why there are
 * none ("WHAT command N of session S: why", as the screen says it of an
 * ended session's command). */
static bool record_snapshots(json_t *rec, const char *name, const char *what, const char **ws,
                             const char **before, const char **after)
{
    *ws = json_string_value(json_object_get(rec, "workspace"));
    *before = json_string_value(json_object_get(rec, "before"));
    *after = json_string_value(json_object_get(rec, "after"));
    if (*ws && *before && *after)
        return true;
    const char *why = json_string_value(json_object_get(rec, "error"));
    char *v = visible(why ? why : "its log has no snapshots of it (it had not ended, or snapshots were off)");
    fprintf(stderr, "corral: %s command %lld of session %s: %s\n", what,
            (long long)json_integer_value(json_object_get(rec, "command")), name, v);
    free(v);
    return false;
}

/* After the server refused a diff or revert by a record's snapshot ids:
 * what the person can still do. */
static void ended_hint(const char *name)
{
    fprintf(stderr,
            "corral: session %s has ended and left the server: its commands are read from its record, whose "
            "snapshots [snapshots] retention or corral gc may have removed since; corral log %s still shows "
            "the record\n",
            name, name);
}

/* How a verb reaches session arg's records: 1 the server's (it has the
 * session), 0 the files' (it ended and left the server, or arg is ID.N,
 * an older session whose id was drawn again), -1 on an error said (under
 * -H, a session that server does not have: its files are not ours). */
static int by_server(const char *verb, const char *arg, long *sid)
{
    int live = 0;
    if (!strchr(arg, '.')) {
        if (cli_parse_int(arg, 0, INT32_MAX, sid) < 0)
            return -1;
        live = server_has(*sid);
    }
    if (live == 0 && cli_remote()) {
        /* Its records are files of the other machine, which only a verb
         * run there reads. */
        fprintf(stderr, "corral -H: %s: session %s is not in that machine's server (an ended session that left "
                        "it is read from that machine's files); run corral %s there (ssh HOST corral %s ...)\n",
                verb, arg, verb, verb);
        return -1;
    }
    return live;
}

/* ---- corral diff ------------------------------------------------------------------ */

/* The server's diff reply printed: the text to stdout, the notes of
 * record (NULL: none) to stderr. */
static void print_diff(json_t *r, json_t *rec, const char *when, const char *format)
{
    const char *text = json_string_value(json_object_get(r, "text"));
    const char *b64 = json_string_value(json_object_get(r, "text_b64"));
    size_t len = text ? strlen(text) : 0;
    char *raw = NULL;
    if (b64)
        raw = base64_decode(b64, strlen(b64), &len);
    print_text(raw ? raw : text ? text : "", len, use_color(when), strcmp(format, "patch") == 0);
    free(raw);
    fflush(stdout);
    if (rec)
        print_notes(rec);
}

/* corral diff of a session the server no longer has: its commands from
 * its records, each diff by the two snapshot ids its record names (as
 * corral export and the screen's review make it).  --since-start is from
 * before its first recorded command to after its last. */
static int diff_ended(const char *name, const char *format, const char *when, bool ignore_space, bool since,
                      bool list, long a, long b)
{
    json_t *cmds = ended_commands(name);
    if (!cmds)
        return 1;
    int rc = 1;
    if (list) {
        json_t *o = json_pack("{s:O}", "commands", cmds);
        print_list(o);
        json_decref(o);
        json_decref(cmds);
        return 0;
    }
    json_t *from, *to;
    if (since) {
        to = ended_command(cmds, name, 0);
        from = to ? json_array_get(cmds, 0) : NULL;
    } else {
        from = ended_command(cmds, name, a);
        to = from ? (b ? ended_command(cmds, name, b) : from) : NULL;
    }
    if (b && a > b) {
        fprintf(stderr, "corral: --between goes from the earlier command to the later\n");
        to = NULL;
    }
    /* From the first's "before" to the last's "after", in the session's
     * workspace (the first's). */
    const char *ws, *before, *after, *unused_ws, *unused_before;
    if (to && record_snapshots(from, name, "no diff of", &ws, &before, &after) &&
        record_snapshots(to, name, "no diff of", &unused_ws, &unused_before, &after)) {
        json_t *r = cli_request(json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "cmd", "diff", "workspace", ws, "before",
                                          before, "after", after, "format", format, "ignore_space", ignore_space));
        if (r) {
            print_diff(r, from == to && !since ? from : NULL, when, format);
            json_decref(r);
            rc = 0;
        } else {
            ended_hint(name);
        }
    }
    json_decref(cmds);
    return rc;
}


static int verb_diff(const cli_verb *v, int argc, char **argv)
{
    enum { O_NAME_STATUS = 1, O_STAT, O_PATCH, O_SINCE, O_BETWEEN, O_LIST, O_COLOR };
    static const struct option opts[] = {{"name-status", no_argument, NULL, O_NAME_STATUS},
                                         {"stat", no_argument, NULL, O_STAT},
                                         {"patch", no_argument, NULL, O_PATCH},
                                         {"since-start", no_argument, NULL, O_SINCE},
                                         {"between", no_argument, NULL, O_BETWEEN},
                                         {"list", no_argument, NULL, O_LIST},
                                         {"color", required_argument, NULL, O_COLOR},
                                         {"ignore-space-change", no_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *format = "patch", *when = "auto";
    bool since = false, between = false, list = false, ignore_space = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "wh", opts, NULL)) != -1) {
        switch (ch) {
        case O_NAME_STATUS: format = "name-status"; break;
        case O_STAT: format = "stat"; break;
        case O_PATCH: format = "patch"; break;
        case O_SINCE: since = true; break;
        case O_BETWEEN: between = true; break;
        case O_LIST: list = true; break;
        case O_COLOR: when = optarg; break;
        case 'w': ignore_space = true; break;
        case 'h': return cli_print_help(v);
        default: return cli_usage_line(v);
        }
    }
    if (strcmp(when, "always") != 0 && strcmp(when, "never") != 0 && strcmp(when, "auto") != 0)
        return usage(v, "--color takes always, never or auto, not '%s'", when);
    int rest = argc - optind;
    long sid = 0, a = 0, b = 0;
    if (rest < 1)
        return usage(v, "which session? (corral ls lists them)");
    if (!sessfiles_name_ok(argv[optind]) || (!strchr(argv[optind], '.') &&
                                             cli_parse_int(argv[optind], 0, INT32_MAX, &sid) < 0))
        return usage(v, "'%s' is not a session id (a number, see corral ls; ID.N for an older session that had "
                        "the same id)", argv[optind]);
    if (since + between + list > 1)
        return usage(v, "give one of --since-start, --between and --list");
    if (between) {
        if (rest != 3 || cli_parse_int(argv[optind + 1], 1, INT32_MAX, &a) < 0 ||
            cli_parse_int(argv[optind + 2], 1, INT32_MAX, &b) < 0)
            return usage(v, "--between takes two command numbers: I J");
    } else if ((since || list) && rest != 1) {
        return usage(v, "unexpected argument '%s'", argv[optind + 1]);
    } else if (rest > 2) {
        return usage(v, "unexpected argument '%s'", argv[optind + 2]);
    } else if (rest == 2 && strcmp(argv[optind + 1], "last") != 0 &&
               cli_parse_int(argv[optind + 1], 1, INT32_MAX, &a) < 0) {
        return usage(v, "'%s' is not a command number (1, 2, ... or last; --list lists them)", argv[optind + 1]);
    }
    int live = by_server("diff", argv[optind], &sid);
    if (live < 0)
        return 1;
    if (!live)
        return diff_ended(argv[optind], format, when, ignore_space, since, list, a, between ? b : 0);
    if (list) {
        json_t *r = cli_request(json_pack("{s:s, s:i}", "cmd", "commands", "session", (int)sid));
        if (!r)
            return 1;
        print_list(r);
        json_decref(r);
        return 0;
    }
    json_t *state = cli_request(json_pack("{s:s, s:i}", "cmd", "commands", "session", (int)sid));
    if (!state)
        return 1;
    print_progress(state);
    json_decref(state);
    json_t *req = json_pack("{s:s, s:i, s:s, s:b}", "cmd", "diff", "session", (int)sid, "format", format,
                            "ignore_space", ignore_space);
    if (since)
        json_object_set_new(req, "since_start", json_true());
    else if (between)
        json_object_set_new(req, "between", json_pack("[i, i]", (int)a, (int)b));
    else if (a)
        json_object_set_new(req, "command", json_integer(a));
    json_t *r = cli_request(req);
    if (!r)
        return 1;
    print_diff(r, since || between ? NULL : json_object_get(r, "record"), when, format);
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_diff = {
    .name = "diff",
    .usage = "diff [--name-status | --stat | --patch] [-w] [--color WHEN] SESSION [CMD | --since-start | --between I J "
             "| --list]",
    .help = "Show what a command of a session changed in its workspace: the diff between the\n"
            "snapshots taken just before it started and just after it ended.  CMD is the\n"
            "command's number in the session (1, 2, ...; default: last); --since-start shows\n"
            "everything since the session started, --between I J from before command I to\n"
            "after command J.  The output is git's (diff --git headers, mode and rename\n"
            "lines, binary patches): corral diff S N | git apply -R undoes it, delta or less\n"
            "read it.  Files that were not captured (too large, excluded) and risk marks (a\n"
            "new git hook, .envrc, CI files, an executable bit, ...) are named on stderr.\n"
            "SESSION may have ended and left the server (ID.N: an older session that had the\n"
            "same id): its commands are read from its record, as corral log reads them.\n\n"
            "      --patch        the patch (default)\n"
            "      --stat         a diffstat\n"
            "      --name-status  status letter and path (A M D R T)\n"
            "  -w, --ignore-space-change  ignore whitespace\n"
            "      --list         the session's commands with their counts and risk marks\n"
            "      --color WHEN   always, never or auto (default: when stdout is a terminal)\n",
    .run = verb_diff,
    .where = CLI_REMOTE,
};

/* ---- corral revert ----------------------------------------------------------------- */

static void print_notes_list(const char *title, json_t *list, FILE *f)
{
    size_t i;
    json_t *n;
    json_array_foreach(list, i, n) {
        char *p = visible(json_string_value(json_object_get(n, "path")));
        char *why = visible(json_string_value(json_object_get(n, "reason")));
        fprintf(f, "%s: %s: %s\n", title, p, why);
        free(why);
        free(p);
    }
}

/* The revert request for command n (0: the last) of a session the server
 * no longer has: by the workspace and the two snapshot ids of its record,
 * as its diff is asked for.  NULL after saying why there is none. */
static json_t *ended_revert_request(const char *name, long n, bool dry)
{
    json_t *cmds = ended_commands(name);
    json_t *rec = cmds ? ended_command(cmds, name, n) : NULL;
    const char *ws, *before, *after;
    json_t *req = NULL;
    if (rec && record_snapshots(rec, name, "cannot revert", &ws, &before, &after))
        req = json_pack("{s:s, s:s, s:s, s:s, s:O, s:b}", "cmd", "revert", "workspace", ws, "before", before, "after",
                        after, "command", json_object_get(rec, "command"), "dry_run", dry);
    json_decref(cmds);
    return req;
}

static int verb_revert(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {
        {"dry-run", no_argument, NULL, 'n'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool dry = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "nh", opts, NULL)) != -1) {
        if (ch == 'n')
            dry = true;
        else if (ch == 'h')
            return cli_print_help(v);
        else
            return cli_usage_line(v);
    }
    long sid = 0, n = 0;
    if (argc - optind != 2)
        return usage(v, "give the session and the command's number");
    const char *name = argv[optind];
    if (!sessfiles_name_ok(name) || (!strchr(name, '.') && cli_parse_int(name, 0, INT32_MAX, &sid) < 0))
        return usage(v, "'%s' is not a session id (a number, see corral ls; ID.N for an older session that had "
                        "the same id)", name);
    bool last = strcmp(argv[optind + 1], "last") == 0;
    if (!last && cli_parse_int(argv[optind + 1], 1, INT32_MAX, &n) < 0)
        return usage(v, "'%s' is not a command number (corral diff SESSION --list lists them)",
                     argv[optind + 1]);
    int live = by_server("revert", name, &sid);
    if (live < 0)
        return 1;
    json_t *req;
    if (live) {
        req = json_pack("{s:s, s:i, s:b}", "cmd", "revert", "session", (int)sid, "dry_run", dry);
        json_object_set_new(req, "command", last ? json_string("last") : json_integer(n));
    } else if (!(req = ended_revert_request(name, n, dry))) {
        return 1;
    }
    json_t *r = cli_request(req);
    if (!r) {
        if (!live)
            ended_hint(name);
        return 1;
    }
    size_t i;
    json_t *a;
    int cmd = (int)json_integer_value(json_object_get(r, "command"));
    json_t *conflicts = json_object_get(r, "conflicts");
    if (json_array_size(conflicts)) {
        print_notes_list("conflict", conflicts, stderr);
        char *shown = visible(json_string_value(json_object_get(r, "message")));
        fprintf(stderr, "corral: %s\n", shown);
        free(shown);
        json_decref(r);
        return 1;
    }
    json_array_foreach(json_object_get(r, "actions"), i, a) {
        char *p = visible(json_string_value(json_object_get(a, "path")));
        char *act = visible(json_string_value(json_object_get(a, "action")));
        printf("%s%s %s\n", dry ? "would " : "", act, p);
        free(act);
        free(p);
    }
    print_notes_list("left as it is", json_object_get(r, "skipped"), stdout);
    json_t *failed = json_object_get(r, "failed");
    print_notes_list("failed", failed, stderr);
    const char *msg = json_string_value(json_object_get(r, "message"));
    if (msg && !json_is_true(json_object_get(r, "reverted"))) {
        char *shown = visible(msg);
        fprintf(stderr, "corral: %s\n", shown);
        free(shown);
    }
    int rc = json_is_true(json_object_get(r, "reverted")) || dry ? 0 : 1;
    const char *but = json_array_size(failed) ? ", but not every file: see above" : "";
    if (json_is_true(json_object_get(r, "reverted")) && live)
        printf("reverted command %d of session %s (recorded as command %lld)%s\n", cmd, name,
               (long long)json_integer_value(json_object_get(r, "revert_command")), but);
    else if (json_is_true(json_object_get(r, "reverted")))
        printf("reverted command %d of session %s (it has ended: the revert is not recorded as a command)%s\n", cmd,
               name, but);
    if (json_array_size(failed))
        rc = 1;
    json_decref(r);
    return rc;
}

const cli_verb cli_verb_revert = {
    .name = "revert",
    .usage = "revert [--dry-run] SESSION CMD",
    .help = "Undo exactly command CMD of a session: the files it created are removed, the\n"
            "ones it modified or deleted are restored (content, mode, symlink target), and\n"
            "nothing else is touched.  When a file changed again after the command, nothing\n"
            "is done and the conflicts are listed (exit 1).  The revert is itself recorded as\n"
            "a command of the session, with its own diff.  A command of a session that has\n"
            "ended and left the server is reverted by its record's snapshots, with the same\n"
            "checks, and not recorded as a command.\n\n"
            "  -n, --dry-run  list what it would do, change nothing\n",
    .run = verb_revert,
    .where = CLI_REMOTE,
};

/* ---- corral git-restore --------------------------------------------------------------- */

/* The last "changes" record of command cmd in a session's events.jsonl. */
static json_t *changes_record(const char *events, long cmd)
{
    FILE *f = fopen(events, "re");
    if (!f)
        return NULL;
    json_t *found = NULL;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (!strstr(line, "\"changes\""))
            continue;
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
        if (o && json_is_string(json_object_get(o, "event")) &&
            strcmp(json_string_value(json_object_get(o, "event")), "changes") == 0 &&
            json_integer_value(json_object_get(o, "command")) == cmd) {
            json_decref(found);
            found = o;
        } else {
            json_decref(o);
        }
    }
    free(line);
    fclose(f);
    return found;
}

static int verb_git_restore(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {
        {"yes", no_argument, NULL, 'y'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool yes = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "yh", opts, NULL)) != -1) {
        if (ch == 'y')
            yes = true;
        else if (ch == 'h')
            return cli_print_help(v);
        else
            return cli_usage_line(v);
    }
    long cmd;
    if (argc - optind != 2)
        return usage(v, "give the session and the command's number");
    if (!sessfiles_name_ok(argv[optind]))
        return usage(v, "'%s' is not a session id (a number, see corral ls or corral log)", argv[optind]);
    if (cli_parse_int(argv[optind + 1], 1, INT32_MAX, &cmd) < 0)
        return usage(v, "'%s' is not a command number (corral diff SESSION --list lists them)",
                     argv[optind + 1]);
    sessfiles sf;
    sessfiles_for(argv[optind], &sf);
    json_t *rec = changes_record(sf.events, cmd);
    if (!rec) {
        fprintf(stderr, "corral: session %s has no record of command %ld (%s)\n", argv[optind], cmd, sf.events);
        sessfiles_free(&sf);
        return 1;
    }
    gq_result items, errors;
    memset(&items, 0, sizeof items);
    memset(&errors, 0, sizeof errors);
    const char *ws = json_string_value(json_object_get(rec, "workspace"));
    json_t *q = json_object_get(rec, "quarantined");
    int rc = 0;
    if (!ws || (q && gq_items_from_json(q, &items) < 0)) {
        fprintf(stderr, "corral: the record of command %ld in %s is malformed\n", cmd, sf.events);
        rc = 1;
    } else if (!items.n) {
        printf("nothing of command %ld of session %s was made inert\n", cmd, argv[optind]);
    } else if (!yes) {
        /* What would run again, for the user to read first. */
        char *w = visible(ws);
        for (size_t i = 0; i < items.n; i++) {
            char *p = visible(items.items[i].path), *m = visible(items.items[i].moved_to);
            printf("%s was made inert after command %ld (it is now %s); put back, it would run:\n", p, cmd, m);
            const char *runs = items.items[i].runs ? items.items[i].runs : "";
            for (const char *l = runs; *l;) {
                size_t n = strcspn(l, "\n");
                char *shown = quote_text_visible(l, n);
                printf("    %s\n", shown);
                free(shown);
                l += n + (l[n] == '\n');
            }
            free(p);
            free(m);
        }
        printf("in %s.  Read them (and the files themselves) first; then put them back with\n"
               "    corral git-restore %s %ld --yes\n", w, argv[optind], cmd);
        free(w);
    } else {
        int wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (wsfd < 0) {
            char *w = visible(ws);
            fprintf(stderr, "corral: cannot open the workspace %s: %s\n", w, strerror(errno));
            free(w);
            rc = 1;
        } else {
            size_t n = gq_restore(wsfd, items.items, items.n, &errors);
            close(wsfd);
            for (size_t i = 0; i < errors.n_errors; i++) {
                char *e = visible(errors.errors[i]);
                fprintf(stderr, "corral: %s\n", e);
                free(e);
            }
            printf("put back %zu of %zu\n", n, items.n);
            rc = errors.n_errors ? 1 : 0;
        }
    }
    gq_result_free(&items);
    gq_result_free(&errors);
    json_decref(rec);
    sessfiles_free(&sf);
    return rc;
}

const cli_verb cli_verb_git_restore = {
    .name = "git-restore",
    .usage = "git-restore SESSION CMD [--yes]",
    .help = "Put back what corral made inert in the git repositories command CMD created or\n"
            "changed (docs/sandbox.md, \"Repositories a command makes\"): their config,\n"
            "hooks, commondir or .git file, moved aside into the repository's\n"
            ".git/corral-quarantine/ when the command ended.  Without --yes, shows each one\n"
            "and exactly what it would run again; with --yes, puts each back, unless it (or\n"
            "what corral put in its place) changed since.  Needs no server.\n\n"
            "  -y, --yes  put them back\n",
    .run = verb_git_restore,
};

/* ---- corral gc ------------------------------------------------------------------------ */


static void duration_text(long long seconds, char *out, size_t len)
{
    if (seconds % 86400 == 0)
        snprintf(out, len, "%lldd", seconds / 86400);
    else if (seconds % 3600 == 0)
        snprintf(out, len, "%lldh", seconds / 3600);
    else
        snprintf(out, len, "%llds", seconds);
}

/* One session directory of the gc reply: name, size, last change. */
static void print_sessdir(const char *verb, json_t *e, const char *tail)
{
    char size[32];
    format_bytes((double)(uint64_t)json_integer_value(json_object_get(e, "bytes")), false, size, sizeof size);
    char *when = visible(json_string_value(json_object_get(e, "last_change")));
    char *name = visible(json_string_value(json_object_get(e, "name")));
    char *why = visible(tail);
    printf("  %-12s %-12s %10s  last written %.10s  %s\n", verb, name, size, *when ? when : "?", why);
    free(why);
    free(name);
    free(when);
}

/* The sessions part of the gc reply: each directory removed, and what was
 * kept (every one with --verbose; else counts, and the ones kept although
 * they are old, with why). */
static int print_sessions(json_t *s, bool verbose)
{
    int rc = 0;
    bool dry = json_is_true(json_object_get(s, "dry_run"));
    long long keep = (long long)json_integer_value(json_object_get(s, "retention_seconds"));
    uint64_t cap = (uint64_t)json_integer_value(json_object_get(s, "max_total_size"));
    char keep_h[32], cap_h[32], after[32];
    duration_text(keep, keep_h, sizeof keep_h);
    format_bytes((double)cap, false, cap_h, sizeof cap_h);
    format_bytes((double)(uint64_t)json_integer_value(json_object_get(s, "bytes_after")), false, after, sizeof after);
    char *dir = visible(json_string_value(json_object_get(s, "dir")));
    printf("sessions in %s (kept %s%s after they end, %s%s in all):\n", dir, keep ? "" : "forever: ",
           keep ? keep_h : "[session] retention = 0", cap ? "at most " : "no cap: ",
           cap ? cap_h : "[session] max-total-size = 0");
    const char *err = json_string_value(json_object_get(s, "error"));
    if (err) {
        char *v = visible(err);
        fprintf(stderr, "corral: %s\n", v);
        free(v);
        rc = 1;
    }
    size_t i;
    json_t *e;
    json_t *removed = json_object_get(s, "removed"), *kept = json_object_get(s, "kept");
    json_array_foreach(removed, i, e) {
        const char *reason = json_string_value(json_object_get(e, "reason"));
        char tail[300];
        snprintf(tail, sizeof tail, "%s; %s",
                 reason && strcmp(reason, "retention") == 0 ? "older than [session] retention"
                                                            : "oldest, over [session] max-total-size",
                 json_string_value(json_object_get(e, "proof")));
        print_sessdir(dry ? "would remove" : "removed", e, tail);
    }
    json_array_foreach(json_object_get(s, "failed"), i, e) {
        char *msg = visible(json_string_value(json_object_get(e, "error")));
        char *name = visible(json_string_value(json_object_get(e, "name")));
        fprintf(stderr, "corral: %s/%s: not removed: %s\n", dir, name, msg);
        free(name);
        free(msg);
        rc = 1;
    }
    json_array_foreach(kept, i, e) {
        const char *when = json_string_value(json_object_get(e, "last_change"));
        bool old = false;
        if (keep && when) {
            struct tm tm;
            memset(&tm, 0, sizeof tm);
            if (strptime(when, "%Y-%m-%dT%H:%M:%S", &tm))
                old = (double)time(NULL) - (double)timegm(&tm) > (double)keep;
        }
        char *why = visible(json_string_value(json_object_get(e, "why")));
        if (verbose || old) {
            print_sessdir("kept", e, why);
        }
        free(why);
    }
    uint64_t b0 = (uint64_t)json_integer_value(json_object_get(s, "bytes_before")),
             b1 = (uint64_t)json_integer_value(json_object_get(s, "bytes_after"));
    char freed[32];
    format_bytes((double)(b0 > b1 ? b0 - b1 : 0), false, freed, sizeof freed);
    printf("  %s %zu session director%s, %s; kept %zu, %s\n", dry ? "would remove" : "removed",
           json_array_size(removed), json_array_size(removed) == 1 ? "y" : "ies", freed, json_array_size(kept), after);
    free(dir);
    return rc;
}

static int verb_gc(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"dry-run", no_argument, NULL, 'n'},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool dry = false, verbose = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "nvh", opts, NULL)) != -1) {
        if (ch == 'n')
            dry = true;
        else if (ch == 'v')
            verbose = true;
        else if (ch == 'h')
            return cli_print_help(v);
        else
            return cli_usage_line(v);
    }
    if (optind < argc)
        return usage(v, "unexpected argument '%s'", argv[optind]);
    json_t *r = cli_request(json_pack("{s:s, s:b}", "cmd", "gc", "dry_run", dry));
    if (!r)
        return 1;
    int rc = print_sessions(json_object_get(r, "sessions"), verbose);
    size_t i;
    json_t *s;
    json_t *stores = json_object_get(r, "stores");
    const char *off = json_string_value(json_object_get(r, "snapshots"));
    if (off) {
        char *shown = visible(off);
        printf("snapshot stores: %s\n", shown);
        free(shown);
    } else if (!json_array_size(stores)) {
        printf("no snapshot stores\n");
    } else {
        printf("snapshot stores:\n");
    }
    json_array_foreach(stores, i, s) {
        char before[32], after[32];
        format_bytes((double)(uint64_t)json_integer_value(json_object_get(s, "bytes_before")), false, before,
                     sizeof before);
        format_bytes((double)(uint64_t)json_integer_value(json_object_get(s, "bytes_after")), false, after,
                     sizeof after);
        char *ws = visible(json_string_value(json_object_get(s, "workspace")));
        long long dropped = (long long)json_integer_value(json_object_get(s, "sessions_dropped"));
        printf("  %s: %s -> %s", ws, before, after);
        if (dropped)
            printf(" (%lld session%s dropped)", dropped, dropped == 1 ? "" : "s");
        printf("\n");
        const char *err = json_string_value(json_object_get(s, "error"));
        if (err) {
            char *shown = visible(err);
            fprintf(stderr, "corral: %s: %s\n", ws, shown);
            free(shown);
            rc = 1;
        }
        free(ws);
    }
    json_decref(r);
    return rc;
}

const cli_verb cli_verb_gc = {
    .name = "gc",
    .usage = "gc [--dry-run] [--verbose]",
    .help = "Apply retention now.  The directories of ended sessions (their events.jsonl\n"
            "and output.cast) that were last written longer ago than [session] retention go\n"
            "(default 30d), then the oldest while they take more than [session]\n"
            "max-total-size in all (default 1G); a session the server has (running or in\n"
            "its list) is never removed, nor one whose end cannot be proven.  Then every\n"
            "snapshot store drops the snapshots of those sessions, and of sessions that\n"
            "ended longer ago than [snapshots] retention (then the oldest while a store is\n"
            "over [snapshots] max-store-size), and is repacked.  Each directory removed is\n"
            "named with its size and why; each store with its size before and after.  The\n"
            "server also does this on its own.\n\n"
            "  -n, --dry-run  say what would be removed, remove nothing\n"
            "  -v, --verbose  also list every directory kept, and why\n",
    .run = verb_gc,
};

/* ---- corral doctor --------------------------------------------------------------------- */

void snap_doctor_report(FILE *out, const conf_t *conf)
{
    char *state = paths_state_dir();
    char *dir = xasprintf("%s/snapshots", state);
    free(state);
    char cap[32], total_h[32];
    format_bytes((double)conf->snap.max_store_size, false, cap, sizeof cap);
    fprintf(out, "\nsnapshots: %s (stores in %s; at most %s a workspace, kept %llu days after a session ends)\n",
            conf->snap.enabled ? "on" : "off ([snapshots] enabled = false)", dir, cap,
            (unsigned long long)(conf->snap.retention_ms / (24ull * 3600 * 1000)));
    DIR *d = opendir(dir);
    uint64_t total = 0;
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *store = xasprintf("%s/%s", dir, e->d_name), *wsfile = xasprintf("%s/workspace", store);
        FILE *f = fopen(wsfile, "re");
        char ws[PATH_MAX + 2] = "?";
        if (f) {
            if (!fgets(ws, sizeof ws, f))
                snprintf(ws, sizeof ws, "?");
            ws[strcspn(ws, "\n")] = '\0';
            fclose(f);
        }
        uint64_t size = snap_disk_usage(store);
        char h[32];
        format_bytes((double)size, false, h, sizeof h);
        char *shown = visible(ws);
        fprintf(out, "  %-10s %s%s\n", h, shown, size > conf->snap.max_store_size ? "  (over the cap: corral gc)" : "");
        free(shown);
        total += size;
        n++;
        free(store);
        free(wsfile);
    }
    if (d)
        closedir(d);
    format_bytes((double)total, false, total_h, sizeof total_h);
    fprintf(out, "  %s in %d store%s\n", total_h, n, n == 1 ? "" : "s");
    free(dir);
}

/* ---- corral __hook-mark ------------------------------------------------------------------- */

/* The session channel, as corral __hook-check finds it (cli_escalate.c). */
static int channel(void)
{
    const char *v = getenv("CORRAL_SESSION_FD");
    char *end = NULL;
    long fd = v ? strtol(v, &end, 10) : -1;
    struct stat st;
    if (!v || !*v || *end || fd < 0 || fd > INT_MAX || fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode))
        return -1;
    /* A descriptor of that number a program opened itself after closing
     * the channel (a connection of an agent's) is not written to. */
    int type = 0, domain = 0;
    socklen_t len = sizeof type;
    if (getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET)
        return -1;
    len = sizeof domain;
    if (getsockopt((int)fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 || domain != AF_UNIX)
        return -1;
    return (int)fd;
}

/* The longest command line a start mark sends (the server cuts it shorter,
 * marked): the message stays far below the channel's limit. */
#define MARK_LINE_MAX 16384

/* A start's reply (got bytes of buf, which has room for a NUL): the
 * command's number, printed for the end mark. */
static void print_command(bool start, char *buf, ssize_t got)
{
    if (!start || got <= 0)
        return;
    buf[got] = '\0';
    json_t *r = json_loads(buf, 0, NULL);
    json_int_t k = json_integer_value(json_object_get(r, "command"));
    json_decref(r);
    if (k > 0 && k <= INT_MAX)
        printf("%d\n", (int)k);
}

/* One message through the marks' door of the sandbox (sesschan.h): sent,
 * our side shut, the reply read to the end (at most len - 1 bytes).  The
 * bytes read, or -1. */
static ssize_t door_call(const char *text, char *reply, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(SB_MARK_PORT)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    size_t n = strlen(text), off = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    while (off < n) {
        ssize_t w = send(fd, text + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    size_t got = 0;
    for (;;) {
        ssize_t r = recv(fd, reply + got, len - 1 - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || (got += (size_t)r) == len - 1)
            break;
    }
    close(fd);
    return (ssize_t)got;
}

static int verb_hook_mark(const cli_verb *v, int argc, char **argv)
{
    long status = -1, command = -1;
    const char *line = NULL;
    int i = 1;
    for (;;) {
        if (i + 1 < argc && strcmp(argv[i], "--status") == 0) {
            if (cli_parse_int(argv[i + 1], 0, 255, &status) < 0)
                status = -1;
            i += 2;
        } else if (i + 1 < argc && strcmp(argv[i], "--command") == 0) {
            if (cli_parse_int(argv[i + 1], 0, INT_MAX, &command) < 0)
                command = -1;
            i += 2;
        } else
            break;
    }
    bool start = i < argc && strcmp(argv[i], "start") == 0;
    if (start && i + 2 < argc && strcmp(argv[i + 1], "--") == 0)
        line = argv[i + 2], i += 3;
    else if (start && i + 1 < argc)
        line = argv[i + 1], i += 2;
    else if (!start && i + 1 == argc && strcmp(argv[i], "end") == 0)
        i++;
    if (i != argc || (start && (status >= 0 || command >= 0))) {
        cli_usage_line(v);
        fputs(v->help, stderr);
        return EXIT_USAGE;
    }
    /* Outside a session there is nobody to tell; never disturb the shell.
     * A program whose parent closed fd 3 (an agent's command) marks
     * through the door of a proxy-mode sandbox instead. */
    int chan = channel();
    bool door = false;
    if (chan < 0) {
        const char *net = getenv("CORRAL_NETWORK");
        if (!getenv("CORRAL_SESSION") || !net || strcmp(net, "proxy") != 0)
            return 0;
        door = true;
    }
    /* An agent command's number (end: the one its start printed; 0, as
     * from a session where commands are not marked, is none). */
    if (!start && command == 0)
        return 0;
    char cwd[PATH_MAX];
    json_t *req = json_pack("{s:s, s:s, s:s}", "verb", "mark", "what", start ? "start" : "end", "cwd",
                            getcwd(cwd, sizeof cwd) ? cwd : "/");
    if (start) {
        /* Valid UTF-8 (the message is JSON), and not without bound. */
        size_t len = strlen(line), n;
        char *valid = uexec_lossy_utf8(line, len, &n);
        char *cut = quote_shorten(valid, MARK_LINE_MAX);
        json_object_set_new(req, "line", json_string(cut));
        free(cut);
        free(valid);
    }
    if (status >= 0)
        json_object_set_new(req, "status", json_integer(status));
    if (command > 0)
        json_object_set_new(req, "command", json_integer(command));
    char *text = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    if (door) {
        char reply[256];
        ssize_t got = text ? door_call(text, reply, sizeof reply) : -1;
        free(text);
        print_command(start, reply, got);
        return 0;
    }
    int sp[2];
    if (!text || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
        free(text);
        return 0;
    }
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = text, .iov_len = strlen(text)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &sp[1], sizeof(int));
    ssize_t n;
    do
        n = sendmsg(chan, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    free(text);
    close(sp[1]);
    /* The reply says the mark is in: the next line's snapshot comes after
     * it.  A start's reply comes once the snapshot before the command is
     * taken, with the command's number, printed for the end mark. */
    char buf[256];
    ssize_t got = -1;
    if (n >= 0)
        while ((got = recv(sp[0], buf, sizeof buf - 1, 0)) < 0 && errno == EINTR)
            ;
    close(sp[0]);
    print_command(start, buf, got);
    return 0;
}

/* Internal: cli.c never lists it. */
const cli_verb cli_verb_hook_mark = {
    .name = "__hook-mark",
    .usage = "__hook-mark [--status N] [--command N] end | __hook-mark start [--] LINE",
    .help = "(internal: corral's shell hooks mark where a command line ended; path.bash marks where an "
            "agent's bash command starts (its number printed) and ends)\n",
    .run = verb_hook_mark,
    .where = CLI_LOCAL,
};
