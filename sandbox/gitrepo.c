/*
 * gitrepo.c - a repository's config files and what they make git run
 * (see gitrepo.h).
 */
#include "config.h"

#include "gitrepo.h"
#include "gitconfig.h"
#include "sbutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* git dies past this many nested includes: what lies deeper runs nothing. */
#define MAX_INCLUDE_DEPTH 10

/* Config keys whose value is a command line git runs (with the shell, most
 * of them).  sub: 0 without a subsection, 1 with one, 2 either; key NULL:
 * every key of the section. */
static const struct {
    const char *section;
    int sub;
    const char *key;
} command_keys[] = {
    {"core", 0, "fsmonitor"},     {"core", 0, "sshcommand"},   {"core", 0, "editor"},
    {"core", 0, "pager"},         {"core", 0, "askpass"},      {"core", 0, "gitproxy"},
    {"core", 0, "alternaterefscommand"},                       {"sequence", 0, "editor"},
    {"diff", 0, "external"},      {"diff", 1, "command"},      {"diff", 1, "textconv"},
    {"difftool", 1, "cmd"},       {"difftool", 1, "path"},     {"mergetool", 1, "cmd"},
    {"mergetool", 1, "path"},     {"merge", 1, "driver"},      {"filter", 1, "clean"},
    {"filter", 1, "smudge"},      {"filter", 1, "process"},    {"alias", 0, NULL},
    {"pager", 0, NULL},           {"credential", 2, "helper"}, {"gpg", 2, "program"},
    {"gpg", 1, "defaultkeycommand"},                           {"interactive", 0, "difffilter"},
    {"remote", 1, "uploadpack"},  {"remote", 1, "receivepack"}, {"browser", 1, "cmd"},
    {"browser", 1, "path"},       {"man", 1, "cmd"},           {"man", 1, "path"},
    {"sendemail", 2, "smtpserver"}, {"sendemail", 2, "tocmd"}, {"sendemail", 2, "cccmd"},
    {"uploadpack", 0, "packobjectshook"},                      {"submodule", 1, "update"},
    {"trailer", 1, "cmd"},        {"trailer", 1, "command"},
};

static bool is_command_key(const char *section, const char *sub, const char *key)
{
    for (size_t i = 0; i < sizeof command_keys / sizeof command_keys[0]; i++) {
        if (strcmp(section, command_keys[i].section) != 0)
            continue;
        int want = command_keys[i].sub;
        if ((want == 0 && sub) || (want == 1 && !sub))
            continue;
        if (!command_keys[i].key || strcmp(key, command_keys[i].key) == 0)
            return true;
    }
    return false;
}

/* One config file being read: where its values go, where it is (relative
 * includes are resolved against its directory), how deep in includes. */
typedef struct reading {
    gp *g;
    gp_values *v;
    gp_repo *repo; /* NULL for the system and global files */
    const char *file;
    int depth;
    gp_links policy;
} reading;

static void read_config_file(const reading *rd, const char *path);

static int on_var(void *user, const char *section, const char *sub, const char *key, const char *value)
{
    const reading *rd = user;
    gp *g = rd->g;
    bool include = strcmp(key, "path") == 0 &&
                   ((strcmp(section, "include") == 0 && !sub) || (strcmp(section, "includeif") == 0 && sub));
    if (include && value) {
        /* Every includeIf counts, whatever its condition: "onbranch:"
         * depends on HEAD, which the sandbox writes. */
        char *dir = gp_parent(rd->file);
        char *p = gp_expand(value, dir);
        free(dir);
        if (p && rd->depth < MAX_INCLUDE_DEPTH) {
            reading inner = *rd;
            inner.file = p;
            inner.depth++;
            read_config_file(&inner, p);
        }
        free(p);
    } else if (value && strcmp(section, "core") == 0 && !sub && strcmp(key, "hookspath") == 0) {
        sb_list_push(&rd->v->hooks, &rd->v->n_hooks, value);
    } else if (value && strcmp(section, "init") == 0 && !sub && strcmp(key, "templatedir") == 0) {
        sb_list_push(&rd->v->dirs, &rd->v->n_dirs, value);
    } else if (value && is_command_key(section, sub, key)) {
        sb_list_push(&rd->v->cmds, &rd->v->n_cmds, value);
    } else if (rd->repo && value && strcmp(section, "core") == 0 && !sub && strcmp(key, "worktree") == 0) {
        free(rd->repo->core_worktree);
        rd->repo->core_worktree = gp_expand(value, rd->repo->gitdir);
    } else if (rd->repo && strcmp(section, "extensions") == 0 && !sub) {
        if (strcmp(key, "objectformat") == 0 && value)
            rd->repo->hash_len = strcasecmp(value, "sha256") == 0 ? 32 : 20;
        else if (strcmp(key, "worktreeconfig") == 0)
            rd->repo->worktree_config = sb_gitconfig_bool(value);
    }
    return g->rc;
}

/* Protect one config file git reads (read-only, or a placeholder when the
 * sandbox could create it), then read it as git would. */
static void read_config_file(const reading *rd, const char *path)
{
    gp *g = rd->g;
    if (!gp_protect_path(g, path, false, "git reads config from it, and config runs code", rd->policy))
        return;
    bool absent;
    char e[512] = "";
    if (sb_gitconfig_parse_file(path, on_var, (void *)rd, &absent, e, sizeof e) < 0 && g->rc == 0)
        gp_fail(g, "%s", e);
}

void gp_read_global_config(gp *g)
{
    reading rd = {.g = g, .v = &g->globals, .policy = GP_LINKS_FAIL};
    const char *nosystem = getenv("GIT_CONFIG_NOSYSTEM");
    if (!nosystem || !sb_gitconfig_bool(nosystem)) {
        const char *sys = getenv("GIT_CONFIG_SYSTEM");
        rd.file = sys && sys[0] == '/' ? sys : "/etc/gitconfig";
        read_config_file(&rd, rd.file);
    }
    const char *global = getenv("GIT_CONFIG_GLOBAL");
    if (global && global[0] == '/') {
        rd.file = global;
        read_config_file(&rd, global);
        return;
    }
    const char *xdg = getenv("XDG_CONFIG_HOME");
    char *files[2];
    files[0] = xdg && xdg[0] == '/' ? sb_printf("%s/git/config", xdg) : gp_expand("~/.config/git/config", NULL);
    files[1] = gp_expand("~/.gitconfig", NULL);
    for (int i = 0; i < 2; i++) {
        if (files[i]) {
            rd.file = files[i];
            read_config_file(&rd, files[i]);
        }
        free(files[i]);
    }
}

gp_repo *gp_repo_config(gp *g, const char *gitdir, const char *common, gp_links policy)
{
    for (size_t i = 0; i < g->n_repos; i++)
        if (strcmp(g->repos[i]->gitdir, gitdir) == 0)
            return g->rc == 0 ? g->repos[i] : NULL;
    gp_repo *r = sb_alloc(sizeof *r);
    r->gitdir = sb_strdup(gitdir);
    r->common = sb_strdup(common);
    r->hash_len = 20;
    g->repos = sb_realloc(g->repos, (g->n_repos + 1) * sizeof *g->repos);
    g->repos[g->n_repos++] = r;
    char *config = gp_join(common, "config");
    reading rd = {.g = g, .v = &r->v, .repo = r, .file = config, .policy = policy};
    read_config_file(&rd, config);
    free(config);
    /* config.worktree is read only when the common config says so (and
     * the sandbox cannot change that: that config is read-only). */
    if (r->worktree_config) {
        char *wt = gp_join(gitdir, "config.worktree");
        rd.file = wt;
        read_config_file(&rd, wt);
        free(wt);
    }
    return g->rc == 0 ? r : NULL;
}

/* Call fn for every word of a command line that names a file by path:
 * words are split at blanks and shell operators, quotes around a word
 * dropped; a word with quotes, expansions or globs inside is not a plain
 * path (and git would not run it as one without a shell doing more). */
static void command_paths(gp *g, const char *cmd, const char *base, gp_links policy)
{
    static const char seps[] = " \t\n;|&<>(){}`";
    const char *p = cmd;
    if (*p == '!')
        p++;
    while (*p && g->rc == 0) {
        p += strspn(p, seps);
        size_t n = strcspn(p, seps);
        if (n == 0)
            break;
        char *w = sb_printf("%.*s", (int)n, p);
        p += n;
        size_t len = strlen(w);
        if (len >= 2 && (w[0] == '\'' || w[0] == '"') && w[len - 1] == w[0]) {
            memmove(w, w + 1, len - 2);
            w[len - 2] = '\0';
        }
        bool plain = strchr(w, '/') && w[0] != '-' && !strpbrk(w, "$\\'\"*?[%=") && !strstr(w, "://");
        char *path = plain ? gp_expand(w, base) : NULL;
        if (path)
            gp_protect_program(g, path, "git config names it as a program to run", policy);
        free(path);
        free(w);
    }
}

static void protect_values(gp *g, const gp_values *v, const char *base, gp_links policy)
{
    for (size_t i = 0; i < v->n_hooks && g->rc == 0; i++) {
        char *p = gp_expand(v->hooks[i], base);
        if (p)
            gp_protect_path(g, p, true, "core.hooksPath: git runs the hooks in it", policy);
        free(p);
    }
    for (size_t i = 0; i < v->n_dirs && g->rc == 0; i++) {
        char *p = gp_expand(v->dirs[i], base);
        if (p)
            gp_protect_path(g, p, true, "init.templateDir: git copies it (hooks too) into new repositories",
                            policy);
        free(p);
    }
    for (size_t i = 0; i < v->n_cmds && g->rc == 0; i++)
        command_paths(g, v->cmds[i], base, policy);
}

void gp_protect_named(gp *g, const gp_repo *r, const char *base, gp_links policy)
{
    /* Hooks and commands run at the top of the work tree; core.worktree
     * moves it. */
    const char *bases[2] = {base, r->core_worktree};
    for (int i = 0; i < 2; i++) {
        if (!bases[i] || (i == 1 && base && strcmp(bases[1], base) == 0))
            continue;
        protect_values(g, &g->globals, bases[i], policy);
        protect_values(g, &r->v, bases[i], policy);
    }
}

void gp_repos_free(gp *g)
{
    for (size_t i = 0; i < g->n_repos; i++) {
        gp_repo *r = g->repos[i];
        free(r->gitdir);
        free(r->common);
        free(r->core_worktree);
        sb_list_free(r->v.hooks, r->v.n_hooks);
        sb_list_free(r->v.dirs, r->v.n_dirs);
        sb_list_free(r->v.cmds, r->v.n_cmds);
        free(r);
    }
    free(g->repos);
    g->repos = NULL;
    g->n_repos = 0;
}
