/*
 * cli_trust.c - `corral trust DIR | --list | --remove DIR` (trust.h): which
 * workspaces may add their own exec-policy rules.  No server: a running
 * server notices the change on its next request (it checks the list's
 * modification time).  Exit 0, 1 on errors, 2 on usage errors.
 */
#include "config.h"

#include "cli.h"
#include "rules.h"
#include "rules_ws.h"
#include "trust.h"
#include "util.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int trust_usage(const char *usage, const char *msg)
{
    fprintf(stderr, "corral trust: %s\nusage: corral %s\nTry 'corral trust --help'.\n", msg, usage);
    return 2;
}

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

/* After trusting: say which files will load, and which will not yet. */
static void show_workspace_rules(const char *dir)
{
    char *rdir = rules_workspace_dir(dir);
    char **files = rules_dir_list(rdir);
    if (!files[0])
        printf("  (no rules yet: put them in %s/*.rules)\n", rdir);
    for (char **f = files; *f; f++) {
        rules_t *r = rules_new();
        char err[1024];
        if (rules_load_file(r, *f, err, sizeof err) < 0)
            fprintf(stderr, "corral trust: %s\n  (this file is not loaded until it is fixed)\n", err);
        else
            printf("  %s\n", *f);
        rules_free(r);
    }
    rules_dir_list_free(files);
    free(rdir);
}

int cli_trust(int argc, char **argv, const char *usage, const char *help)
{
    static const struct option opts[] = {{"list", no_argument, NULL, 'l'},
                                         {"remove", no_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    bool list = false, remove = false;
    int o;
    optind = 0;
    while ((o = getopt_long(argc, argv, "+lrh", opts, NULL)) != -1) {
        switch (o) {
        case 'l': list = true; break;
        case 'r': remove = true; break;
        case 'h': printf("usage: corral %s\n\n%s", usage, help); return 0;
        default: fprintf(stderr, "usage: corral %s\nTry 'corral trust --help'.\n", usage); return 2;
        }
    }
    int rest = argc - optind;
    if (list && (remove || rest))
        return trust_usage(usage, "--list takes no directory and no other option");
    if (!list && rest != 1)
        return trust_usage(usage, rest ? "one directory at a time" : "which directory? (corral trust DIR)");
    char *file = trust_file(), err[PATH_MAX + 256];
    int rc = 1;
    if (list) {
        char **l = trust_read(file, err, sizeof err);
        if (l) {
            for (char **p = l; *p; p++)
                printf("%s\n", *p);
            trust_list_free(l);
            rc = 0;
        } else {
            fprintf(stderr, "corral trust: %s\n", err);
        }
        free(file);
        return rc;
    }
    const char *arg = argv[optind];
    bool changed;
    if (remove) {
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
    } else if (trust_add(file, dir, &changed, err, sizeof err) < 0) {
        fprintf(stderr, "corral trust: %s\n", err);
    } else {
        printf(changed ? "trusted %s: its .corral/rules/*.rules load after your own rules:\n"
                       : "%s was trusted already; its rules:\n",
               dir);
        show_workspace_rules(dir);
        rc = 0;
    }
    free(dir);
    free(file);
    return rc;
}
