/*
 * cli_trust.c - `corral trust DIR | --list | --remove DIR` (trust.h): which
 * workspaces may add their own exec-policy rules, pinned to the rules files
 * as they are when the user trusts them.  No server: a running server
 * notices the change on its next request (it checks the list's
 * modification time).  Exit 0, 1 on errors, 2 on usage errors.  The verb
 * is one entry (cli_verb.h) that cli.c lists.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "base/exitcode.h"
#include "policy/rules.h"
#include "policy/rules_ws.h"
#include "policy/trust.h"
#include "base/util.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory that may be gone (for --remove): canonical when it exists,
 * else made absolute lexically. */
static char *remove_key(const char *dir)
{
    char buf[PATH_MAX];
    if (realpath(dir, buf))
        return xstrdup(buf);
    if (dir[0] == '/')
        return xstrdup(dir);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return xstrdup(dir);
    return xasprintf("%s/%s", cwd, dir);
}

/* After trusting: the files pinned, and which of them will not load yet
 * (broken ones, each with its error). */
static void show_workspace_rules(const char *dir, const trust_snapshot *snap)
{
    if (!snap->rules.n) {
        char *rdir = rules_workspace_dir(dir);
        printf("  (no rules yet: put them in %s/*.rules, then run corral trust %s again)\n", rdir, dir);
        free(rdir);
    }
    for (size_t i = 0; i < snap->rules.n; i++) {
        rules_t *r = rules_new();
        char err[1024];
        if (rules_load_buffer(r, snap->path[i], snap->text[i], snap->len[i], err, sizeof err) < 0)
            fprintf(stderr, "corral trust: %s\n  (this file is not loaded until it is fixed)\n", err);
        else
            printf("  %s\n", snap->path[i]);
        rules_free(r);
    }
}

/* The rules files of dir as they are now. */
static void read_workspace(const char *dir, trust_snapshot *snap)
{
    char *rdir = rules_workspace_dir(dir);
    char **files = rules_dir_list(rdir);
    trust_snapshot_read(files, snap);
    rules_dir_list_free(files);
    free(rdir);
}

/* --list: each directory with whether its rules are still the trusted ones. */
static int list_trusted(const char *file)
{
    trust_list l;
    char err[PATH_MAX + 256];
    if (trust_read(file, &l, err, sizeof err) < 0) {
        fprintf(stderr, "corral trust: %s\n", err);
        return 1;
    }
    for (size_t i = 0; i < l.n; i++) {
        const trust_entry *e = &l.v[i];
        struct stat st;
        if (stat(e->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
            printf("%-9s%s\n", "missing", e->dir);
            continue;
        }
        trust_snapshot snap;
        read_workspace(e->dir, &snap);
        buf_t why;
        buf_init(&why);
        if (trust_current(e, &snap.rules, &why))
            printf("%-9s%s\n", "current", e->dir);
        else
            printf("%-9s%s\n         %s\n", e->pinned ? "changed" : "unpinned", e->dir, why.data);
        buf_free(&why);
        trust_snapshot_free(&snap);
    }
    trust_list_free(&l);
    return 0;
}

static int verb_trust(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"list", no_argument, NULL, 'l'},
                                         {"remove", no_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    bool list = false, remove = false;
    int o;
    optind = 0;
    while ((o = getopt_long(argc, argv, "lrh", opts, NULL)) != -1) {
        switch (o) {
        case 'l': list = true; break;
        case 'r': remove = true; break;
        case 'h': return cli_print_help(v);
        default: return cli_option_usage(v);
        }
    }
    int rest = argc - optind;
    if (list && (remove || rest))
        return cli_usage_error(v, "--list takes no directory and no other option");
    if (!list && rest != 1)
        return cli_usage_error(v, rest ? "one directory at a time" : "which directory? (corral trust DIR)");
    char *file = trust_file(), err[PATH_MAX + 256];
    int rc = 1;
    if (list) {
        rc = list_trusted(file);
        free(file);
        return rc;
    }
    const char *arg = argv[optind];
    if (remove) {
        bool changed;
        char *key = remove_key(arg);
        if (trust_remove(file, key, &changed, err, sizeof err) < 0)
            fprintf(stderr, "corral trust: %s\n", err);
        else if (!changed)
            fprintf(stderr, "corral trust: %s is not trusted (corral trust --list shows what is)\n", key);
        else
            printf("no longer trusted: %s (its .corral/rules are ignored from the next command on)\n", key), rc = 0;
        free(key);
        free(file);
        return rc;
    }
    char *dir = trust_canonical(arg, err, sizeof err);
    if (!dir) {
        fprintf(stderr, "corral trust: %s\n", err);
        free(file);
        return 1;
    }
    trust_snapshot snap;
    read_workspace(dir, &snap);
    trust_change was;
    for (size_t i = 0; i < snap.rules.n; i++)
        if (snap.error[i])
            fprintf(stderr, "corral trust: %s\n", snap.error[i]);
    if (trust_add(file, dir, &snap.rules, &was, err, sizeof err) < 0) {
        fprintf(stderr, "corral trust: %s\n", err);
    } else {
        static const char *const said[] = {
            [TRUST_NEW] = "trusted %s: its .corral/rules/*.rules load after your own rules, as they are now:\n",
            [TRUST_REPINNED] = "trusted %s again: its .corral/rules/*.rules load as they are now:\n",
            [TRUST_SAME] = "%s was trusted already, with these same rules:\n",
        };
        printf(said[was], dir);
        show_workspace_rules(dir, &snap);
        printf("  (any change to them stops them loading until you review it and run corral trust %s again)\n", dir);
        rc = 0;
    }
    trust_snapshot_free(&snap);
    free(dir);
    free(file);
    return rc;
}

const cli_verb cli_verb_trust = {
    .name = "trust",
    .usage = "trust DIR | trust --list | trust --remove DIR",
    .help = "Trust a workspace: commands run in DIR (exactly; not its subdirectories) are\n"
            "also judged by the rules in DIR/.corral/rules/*.rules, loaded after your own.\n"
            "Trust only a directory whose rules you have read.  Trust is pinned to\n"
            "DIR/.corral/rules as they are now: any change stops them loading until you\n"
            "run corral trust DIR again.  The list is kept in ~/.config/corral/trusted;\n"
            "a running server picks changes up at once.\n\n"
            "  -l, --list      print each trusted directory and whether its rules are\n"
            "                  still the ones trusted\n"
            "  -r, --remove    stop trusting DIR\n",
    .run = verb_trust,
};
