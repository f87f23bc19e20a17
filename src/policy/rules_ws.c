/*
 * rules_ws.c - see rules_ws.h.
 */
#include "config.h"

#include "base/paths.h"
#include "base/quote.h"
#include "policy/rules_int.h"
#include "policy/rules_ws.h"
#include "policy/trust.h"
#include "base/util.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* corral's own rules (docs/corral.rules.5): they decide only for commands
 * no rule of the user's matches, so "always" answers override them. */
const char rules_builtin_text[] =
    "# corral's built-in rules: asked before they run, whatever the sandbox.\n"
    "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\",\n"
    "            justification=\"pushing changes a remote repository\")\n"
    "prefix_rule(pattern=[\"sudo\"], decision=\"prompt\", justification=\"runs a command as another user\")\n";

/* Workspaces remembered at most (least recently used ones go first). */
#define MAX_WORKSPACES 64

char *rules_user_dir(void)
{
    char *cdir = paths_config_dir();
    char *dir = xasprintf("%s/rules", cdir);
    free(cdir);
    return dir;
}

char *rules_workspace_dir(const char *ws)
{
    return xasprintf("%s/.corral/rules", strcmp(ws, "/") == 0 ? "" : ws);
}

static int by_name(const struct dirent **x, const struct dirent **y)
{
    return strcmp((*x)->d_name, (*y)->d_name);
}

char **rules_dir_list(const char *dir)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, by_name);
    char **list = xcalloc(n > 0 ? (size_t)n + 1 : 1, sizeof *list);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name);
        if (len > 6 && strcmp(name + len - 6, ".rules") == 0)
            list[k++] = xasprintf("%s/%s", dir, name);
        free(names[i]);
    }
    free(names);
    return list;
}

void rules_dir_list_free(char **list)
{
    for (char **p = list; p && *p; p++)
        free(*p);
    free(list);
}

/* ---- change detection --------------------------------------------------------------- */

/* What a file or directory looked like when it was read.  A rewrite in
 * place changes the time or size; a replacement by rename, the inode; a
 * file added to or removed from a directory, the directory's time. */
typedef struct stamp {
    char *path;
    bool exists;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} stamp;

typedef struct stamps {
    stamp *v;
    size_t n;
} stamps;

static void stamp_read(stamp *s)
{
    struct stat st;
    s->exists = stat(s->path, &st) == 0;
    if (!s->exists)
        return;
    s->dev = st.st_dev, s->ino = st.st_ino, s->size = st.st_size, s->mtime = st.st_mtim;
}

static void stamps_add(stamps *s, const char *path)
{
    s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    stamp *t = &s->v[s->n++];
    memset(t, 0, sizeof *t);
    t->path = xstrdup(path);
    stamp_read(t);
}

static bool stamps_unchanged(const stamps *s)
{
    for (size_t i = 0; i < s->n; i++) {
        stamp now = {.path = s->v[i].path};
        stamp_read(&now);
        const stamp *was = &s->v[i];
        if (now.exists != was->exists)
            return false;
        if (now.exists && (now.dev != was->dev || now.ino != was->ino || now.size != was->size ||
                           now.mtime.tv_sec != was->mtime.tv_sec || now.mtime.tv_nsec != was->mtime.tv_nsec))
            return false;
    }
    return true;
}

static void stamps_free(stamps *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].path);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* ---- copying a policy --------------------------------------------------------------- */

static void copy_into(rules_t *dst, const rules_t *src)
{
    for (size_t i = 0; i < src->npr; i++) {
        const prule *p = &src->pr[i];
        prule c = {.first = rstr_dup(p->first.s, p->first.n), .nrest = p->nrest, .decision = p->decision,
                   .has_justification = p->has_justification};
        if (p->has_justification)
            c.justification = rstr_dup(p->justification.s, p->justification.n);
        c.rest = xcalloc(p->nrest + 1, sizeof *c.rest);
        for (size_t k = 0; k < p->nrest; k++) {
            c.rest[k].n = p->rest[k].n;
            c.rest[k].alts = xcalloc(p->rest[k].n + 1, sizeof *c.rest[k].alts);
            for (size_t a = 0; a < p->rest[k].n; a++)
                c.rest[k].alts[a] = rstr_dup(p->rest[k].alts[a].s, p->rest[k].alts[a].n);
        }
        rules_push_prefix(dst, &c);
    }
    for (size_t i = 0; i < src->nhx; i++) {
        const host_exe *h = &src->hx[i];
        host_exe c = {.name = xstrdup(h->name), .n = h->n, .paths = xcalloc(h->n + 1, sizeof(char *))};
        for (size_t k = 0; k < h->n; k++)
            c.paths[k] = xstrdup(h->paths[k]);
        rules_set_host_exe(dst, &c);
    }
    for (size_t i = 0; i < src->nnet; i++) {
        const rule_network *n = &src->net[i];
        rule_network c = {.host = xstrdup(n->host), .protocol = n->protocol, .decision = n->decision,
                          .justification = n->justification ? xstrdup(n->justification) : NULL};
        rules_push_network(dst, &c);
    }
}

/* Load every *.rules of dir into r (a file with an error is left out and
 * its error appended to errors), stamping the directory and each file. */
static void load_dir(rules_t *r, const char *dir, stamps *st, buf_t *errors)
{
    stamps_add(st, dir);
    char **files = rules_dir_list(dir);
    for (char **f = files; *f; f++) {
        char err[1024];
        stamps_add(st, *f);
        if (rules_load_file(r, *f, err, sizeof err) < 0)
            buf_printf(errors, "%s\n", err);
    }
    rules_dir_list_free(files);
}

/* A trusted workspace's rules: read once, loaded only when they are the
 * ones the user trusted (trust.h), else the reason in errors.  Loading the
 * bytes that were hashed leaves no moment for a sandbox to swap a file. */
static void load_workspace(rules_t *r, const trust_entry *t, stamps *st, buf_t *errors)
{
    char *dir = rules_workspace_dir(t->dir);
    stamps_add(st, dir);
    char **files = rules_dir_list(dir);
    for (char **f = files; *f; f++)
        stamps_add(st, *f);
    trust_snapshot snap;
    trust_snapshot_read(files, &snap);
    if (!trust_current(t, &snap.rules, errors)) {
        buf_putc(errors, '\n');
        for (size_t i = 0; i < snap.rules.n; i++)
            if (snap.error[i])
                buf_printf(errors, "%s\n", snap.error[i]);
    } else {
        for (size_t i = 0; i < snap.rules.n; i++) {
            char err[1024];
            if (rules_load_buffer(r, snap.path[i], snap.text[i], snap.len[i], err, sizeof err) < 0)
                buf_printf(errors, "%s\n", err);
        }
    }
    trust_snapshot_free(&snap);
    rules_dir_list_free(files);
    free(dir);
}

/* ---- the cache ---------------------------------------------------------------------- */

typedef struct ws_entry {
    char *ws;       /* canonical, trusted */
    rules_t *rules; /* the user's, then the workspace's */
    stamps st;
    unsigned user_gen; /* the user's rules it was built on */
    char *error;       /* its files' errors, or NULL */
    uint64_t used;
} ws_entry;

struct rules_ws {
    rules_t *builtin;     /* corral's own, loaded once */
    char *builtin_error;  /* a bug in them (the tests load them), or NULL */
    rules_t *user;
    stamps user_st;
    unsigned user_gen;
    char *user_error;
    trust_list trusted;
    stamps trust_st;
    ws_entry *ws;
    size_t nws;
    char **noted; /* untrusted workspaces with rules, told once */
    size_t nnoted;
    uint64_t clock;
};

rules_ws *rules_ws_new(void)
{
    return xcalloc(1, sizeof(rules_ws));
}

static void entry_free(ws_entry *e)
{
    free(e->ws);
    rules_free(e->rules);
    stamps_free(&e->st);
    free(e->error);
}

static void drop_entry(rules_ws *c, size_t i)
{
    entry_free(&c->ws[i]);
    c->ws[i] = c->ws[--c->nws];
}

void rules_ws_free(rules_ws *c)
{
    if (!c)
        return;
    rules_free(c->builtin);
    free(c->builtin_error);
    rules_free(c->user);
    stamps_free(&c->user_st);
    free(c->user_error);
    trust_list_free(&c->trusted);
    stamps_free(&c->trust_st);
    for (size_t i = 0; i < c->nws; i++)
        entry_free(&c->ws[i]);
    free(c->ws);
    rules_dir_list_free(c->noted);
    free(c);
}

void rules_ws_reload_user(rules_ws *c)
{
    rules_t *r = rules_new();
    buf_t errors;
    buf_init(&errors);
    stamps_free(&c->user_st);
    char *dir = rules_user_dir();
    load_dir(r, dir, &c->user_st, &errors);
    free(dir);
    rules_free(c->user);
    c->user = r;
    c->user_gen++;
    free(c->user_error);
    c->user_error = errors.len ? buf_steal(&errors) : NULL;
    buf_free(&errors);
}

rules_t *rules_ws_user(rules_ws *c)
{
    if (!c->user)
        rules_ws_reload_user(c);
    return c->user;
}

/* Re-read the trust list when its file changed; a list that cannot be
 * read trusts nothing.  Every workspace is then checked again: its digest
 * may be a new one (the user trusted it again after a change). */
static void refresh_trust(rules_ws *c)
{
    if (c->trust_st.n && stamps_unchanged(&c->trust_st))
        return;
    stamps_free(&c->trust_st);
    char *file = trust_file(), err[512];
    stamps_add(&c->trust_st, file);
    trust_list_free(&c->trusted);
    if (trust_read(file, &c->trusted, err, sizeof err) < 0)
        trust_list_free(&c->trusted);
    free(file);
    while (c->nws)
        drop_entry(c, c->nws - 1);
}

static bool listed(char *const *list, const char *s)
{
    for (char *const *p = list; p && *p; p++)
        if (strcmp(*p, s) == 0)
            return true;
    return false;
}

static void note_untrusted(rules_ws *c, const char *ws, char **note)
{
    if (!note || listed(c->noted, ws))
        return;
    char *dir = rules_workspace_dir(ws);
    char **files = rules_dir_list(dir);
    if (files[0] && c->nnoted < 256) {
        *note = xasprintf("workspace %s has rules in %s but is not trusted: they are ignored "
                          "(corral trust %s to load them)", ws, dir, ws);
        c->noted = xrealloc(c->noted, (c->nnoted + 2) * sizeof *c->noted);
        c->noted[c->nnoted++] = xstrdup(ws);
        c->noted[c->nnoted] = NULL;
    }
    rules_dir_list_free(files);
    free(dir);
}

static ws_entry *build_entry(rules_ws *c, const trust_entry *t)
{
    if (c->nws == MAX_WORKSPACES) {
        size_t oldest = 0;
        for (size_t i = 1; i < c->nws; i++)
            if (c->ws[i].used < c->ws[oldest].used)
                oldest = i;
        drop_entry(c, oldest);
    }
    c->ws = xrealloc(c->ws, (c->nws + 1) * sizeof *c->ws);
    ws_entry *e = &c->ws[c->nws++];
    memset(e, 0, sizeof *e);
    e->ws = xstrdup(t->dir);
    e->rules = rules_new();
    copy_into(e->rules, c->user);
    e->user_gen = c->user_gen;
    buf_t errors;
    buf_init(&errors);
    load_workspace(e->rules, t, &e->st, &errors);
    e->error = errors.len ? buf_steal(&errors) : NULL;
    buf_free(&errors);
    return e;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

const rules_t *rules_ws_for(rules_ws *c, const char *cwd, char **note, bool *errors_changed)
{
    char *before = rules_ws_errors(c);
    if (note)
        *note = NULL;
    if (!c->user || !stamps_unchanged(&c->user_st))
        rules_ws_reload_user(c);
    refresh_trust(c);
    const rules_t *r = c->user;
    char canon[PATH_MAX];
    if (cwd && realpath(cwd, canon)) {
        const trust_entry *t = trust_find(&c->trusted, canon);
        if (!t) {
            note_untrusted(c, canon, note);
        } else {
            ws_entry *e = NULL;
            for (size_t i = 0; i < c->nws && !e; i++)
                if (strcmp(c->ws[i].ws, canon) == 0)
                    e = &c->ws[i];
            if (e && (e->user_gen != c->user_gen || !stamps_unchanged(&e->st))) {
                drop_entry(c, (size_t)(e - c->ws));
                e = NULL;
            }
            if (!e)
                e = build_entry(c, t);
            e->used = ++c->clock;
            r = e->rules;
        }
    }
    if (errors_changed) {
        char *after = rules_ws_errors(c);
        *errors_changed = !same_text(before, after);
        free(after);
    }
    free(before);
    return r;
}

char *rules_ws_errors(rules_ws *c)
{
    buf_t b;
    buf_init(&b);
    if (c->builtin_error)
        buf_puts(&b, c->builtin_error);
    if (c->user_error)
        buf_puts(&b, c->user_error);
    for (size_t i = 0; i < c->nws; i++)
        if (c->ws[i].error)
            buf_puts(&b, c->ws[i].error);
    if (!b.len) {
        buf_free(&b);
        return NULL;
    }
    return buf_steal(&b);
}

const rules_t *rules_ws_builtin(rules_ws *c)
{
    if (!c->builtin) {
        char err[1024];
        c->builtin = rules_new();
        if (rules_load_text(c->builtin, RULES_BUILTIN_NAME, rules_builtin_text, err, sizeof err) < 0)
            c->builtin_error = xasprintf("%s\n", err);
    }
    return c->builtin;
}

/* ---- doctor ------------------------------------------------------------------------- */

/* what (a file's path) and detail (its error) may quote a workspace's
 * files or their names: shown made visible (quote.h). */
static void report_line(FILE *f, bool ok, const char *what, const char *detail)
{
    char *w = quote_text_visible(what, strlen(what)), *d = quote_text_visible(detail, strlen(detail));
    fprintf(f, "  %-4s %s\n       %s\n", ok ? "yes" : "NO", w, d);
    free(d);
    free(w);
}

/* One file loaded into r with its report line; false if it fails.  text
 * NULL: read path. */
static bool report_file(FILE *f, rules_t *r, const char *path, const char *text, size_t len)
{
    size_t before = rules_prefix_count(r), nbefore = rules_network_count(r);
    char err[1024], detail[128];
    int rc = text ? rules_load_buffer(r, path, text, len, err, sizeof err) : rules_load_file(r, path, err, sizeof err);
    if (rc < 0) {
        report_line(f, false, path, err);
        return false;
    }
    snprintf(detail, sizeof detail, "loaded: %zu prefix rules, %zu network rules", rules_prefix_count(r) - before,
             rules_network_count(r) - nbefore);
    report_line(f, true, path, detail);
    return true;
}

/* A trusted workspace's files, as the server loads them: only while they
 * are the ones the user trusted. */
static bool report_workspace(FILE *f, rules_t *r, const trust_entry *t, char **files)
{
    trust_snapshot snap;
    trust_snapshot_read(files, &snap);
    buf_t why;
    buf_init(&why);
    bool ok = trust_current(t, &snap.rules, &why);
    if (!ok) {
        char *wdir = rules_workspace_dir(t->dir);
        char *what = xasprintf("%s: none of its files loads", wdir);
        report_line(f, false, what, why.data);
        free(what);
        free(wdir);
        for (size_t i = 0; i < snap.rules.n; i++)
            if (snap.error[i])
                report_line(f, false, snap.path[i], snap.error[i]);
    }
    for (size_t i = 0; ok && i < snap.rules.n; i++)
        ok = report_file(f, r, snap.path[i], snap.text[i], snap.len[i]) && ok;
    buf_free(&why);
    trust_snapshot_free(&snap);
    return ok;
}

bool rules_report(FILE *f, const char *cwd)
{
    fprintf(f, "\nexec-policy rules, in the order they load (corral.rules(5)):\n");
    rules_t *r = rules_new();
    char err[1024], detail[128];
    bool ok = rules_load_text(r, RULES_BUILTIN_NAME, rules_builtin_text, err, sizeof err) == 0;
    snprintf(detail, sizeof detail, "%zu prefix rules, consulted where no other rule matches",
             rules_prefix_count(r));
    report_line(f, ok, RULES_BUILTIN_NAME, ok ? detail : err);
    rules_free(r);
    r = rules_new();
    char *udir = rules_user_dir();
    char **files = rules_dir_list(udir);
    if (!files[0])
        fprintf(f, "  --   no rules of yours in %s\n", udir);
    for (char **p = files; *p; p++)
        ok = report_file(f, r, *p, NULL, 0) && ok;
    rules_dir_list_free(files);
    free(udir);
    char canon[PATH_MAX];
    if (cwd && realpath(cwd, canon)) {
        char *wdir = rules_workspace_dir(canon);
        files = rules_dir_list(wdir);
        char *tfile = trust_file(), terr[512];
        trust_list trusted;
        if (trust_read(tfile, &trusted, terr, sizeof terr) < 0) {
            report_line(f, false, tfile, terr);
            ok = false;
        }
        const trust_entry *t = trust_find(&trusted, canon);
        if (!files[0] && !(t && t->pinned && t->rules.n))
            fprintf(f, "  --   no workspace rules in %s\n", wdir);
        else if (!t)
            fprintf(f, "  --   %s: this workspace is not trusted, so its rules are ignored\n"
                       "       (read them, then: corral trust %s)\n", wdir, canon);
        else
            ok = report_workspace(f, r, t, files) && ok;
        trust_list_free(&trusted);
        free(tfile);
        rules_dir_list_free(files);
        free(wdir);
    }
    rules_free(r);
    if (!ok)
        fprintf(f, "  a file marked NO is left out whole until it is fixed; corral policy check --rules FILE -- CMD "
                   "tries one\n");
    return ok;
}
