/*
 * snap_diff.c - see snap_diff.h.
 */
#include "config.h"

#include "snap/snap_diff.h"

#include "snap/snap_meta.h"
#include "snap/snap_take.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Blobs larger than this are called binary without being read. */
#define DIFF_MAX_SIZE (1u << 20)

const char *snap_risk_name(unsigned bit)
{
    static const char *const names[SNAP_RISK_KINDS] = {"hook",  "hooks-path", "git-dir",     "gitlink",
                                                       "corral", "agent-config", "envrc",   "ci",
                                                       "editor-task", "git-file", "exec-bit", "symlink-out"};
    for (int i = 0; i < SNAP_RISK_KINDS; i++)
        if (bit == 1u << i)
            return names[i];
    return "?";
}

/* path is name, or ends in /name (name may hold a '/': ".vscode/tasks.json"). */
static bool is_named(const char *path, const char *name)
{
    size_t n = strlen(path), k = strlen(name);
    return n >= k && strcmp(path + n - k, name) == 0 && (n == k || path[n - k - 1] == '/');
}

/* path is in a directory called dir (anywhere), e.g. ".github/workflows". */
static bool in_dir(const char *path, const char *dir)
{
    size_t k = strlen(dir);
    for (const char *p = path; p; p = strchr(p, '/'), p = p ? p + 1 : NULL)
        if (strncmp(p, dir, k) == 0 && p[k] == '/')
            return true;
    return false;
}

/* The last component of path ends in suffix (and is more than it). */
static bool name_ends(const char *path, const char *suffix)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && strcmp(name + n - k, suffix) == 0;
}

/* What a path's name says about it, at any depth: configuration that a
 * program loads, and runs what it names, when it starts in (or is pointed
 * at) the directory that holds it (docs/sandbox.md, "Agent
 * configuration"; docs/snapshots.md, "Risk marks").  A directory rule
 * matches what is inside it and the name itself (a symlink called
 * .claude).  The first rule that matches gives the detail. */
typedef enum { R_FILE, R_DIR, R_SUFFIX } rule_kind;
typedef struct risk_rule {
    rule_kind kind;
    const char *name;
    unsigned risk;
    const char *why;
} risk_rule;

static const risk_rule rules[] = {
    {R_DIR, ".githooks", RISK_HOOK, "a git hooks directory (core.hooksPath): git runs these files"},
    {R_DIR, ".husky", RISK_HOOK, "husky's hooks: git runs them (core.hooksPath = .husky/_) and they run these scripts"},
    {R_FILE, ".pre-commit-config.yaml", RISK_HOOK,
     "pre-commit runs the hooks it lists (any command, for a local one) at git commit"},
    {R_FILE, "lefthook.yml", RISK_HOOK, "lefthook runs the commands it lists from git's hooks"},
    {R_FILE, ".lefthook.yml", RISK_HOOK, "lefthook runs the commands it lists from git's hooks"},
    {R_FILE, "lefthook-local.yml", RISK_HOOK, "lefthook runs the commands it lists from git's hooks"},
    {R_DIR, ".lefthook", RISK_HOOK, "lefthook's scripts: git's hooks run them"},
    {R_DIR, ".corral", RISK_CORRAL, "corral loads .corral/rules once you trust this directory (corral trust)"},
    {R_DIR, ".codex", RISK_AGENT,
     "Codex loads .codex/ in every directory from the repository's top down to where it starts: config.toml "
     "(MCP servers and hooks it runs, sandbox and approval settings) and rules"},
    {R_DIR, ".agents", RISK_AGENT,
     "Codex loads skills from .agents/ in every directory from where it starts up to the repository's top: "
     "instructions and scripts an agent may run"},
    {R_DIR, ".claude", RISK_AGENT,
     "Claude Code loads .claude/ where it starts: settings (hooks it runs, MCP servers, permissions), skills, "
     "commands and agents"},
    {R_FILE, ".mcp.json", RISK_AGENT, "Claude Code starts the MCP servers .mcp.json names where it starts"},
    {R_DIR, ".gemini", RISK_AGENT,
     "Gemini CLI loads .gemini/ where it starts: settings (hooks and MCP servers it runs) and .env"},
    {R_DIR, ".cursor", RISK_AGENT, "Cursor loads .cursor/ for the folder it opens: MCP servers, hooks, rules"},
    {R_DIR, ".opencode", RISK_AGENT, "opencode loads .opencode/ where it starts: plugins it runs, agents, commands"},
    {R_FILE, "opencode.json", RISK_AGENT, "opencode loads it where it starts: MCP servers it runs"},
    {R_FILE, "opencode.jsonc", RISK_AGENT, "opencode loads it where it starts: MCP servers it runs"},
    {R_DIR, ".continue", RISK_AGENT, "Continue loads .continue/ for the folder it opens: MCP servers it runs"},
    {R_FILE, ".aider.conf.yml", RISK_AGENT, "aider loads it where it starts: the lint and test commands it runs"},
    {R_FILE, "AGENTS.md", RISK_AGENT, "instructions Codex and other agents read when they start at or below here"},
    {R_FILE, "AGENTS.override.md", RISK_AGENT, "instructions Codex reads when it starts at or below here"},
    {R_FILE, "CLAUDE.md", RISK_AGENT, "instructions Claude Code reads when it starts at or below here"},
    {R_FILE, "CLAUDE.local.md", RISK_AGENT, "instructions Claude Code reads when it starts at or below here"},
    {R_FILE, "GEMINI.md", RISK_AGENT, "instructions Gemini CLI reads when it starts at or below here"},
    {R_FILE, ".envrc", RISK_ENVRC,
     "direnv runs .envrc when you enter this directory or one below it, once you allow it (direnv allow)"},
    {R_FILE, ".gitlab-ci.yml", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_FILE, ".travis.yml", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_FILE, "Jenkinsfile", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_FILE, "azure-pipelines.yml", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_FILE, "bitbucket-pipelines.yml", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_FILE, ".drone.yml", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_DIR, ".github/workflows", RISK_CI, "GitHub Actions runs it on push, with the repository's secrets"},
    {R_DIR, ".github/actions", RISK_CI,
     "a local action: the workflows that use it run it, with the repository's secrets"},
    {R_DIR, ".circleci", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_DIR, ".buildkite", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_DIR, ".gitea/workflows", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_DIR, ".forgejo/workflows", RISK_CI, "CI runs it on push, with the repository's secrets"},
    {R_FILE, ".vscode/tasks.json", RISK_EDITOR,
     "VS Code runs its folder-open tasks when it opens this folder (a trusted one), and the others on request"},
    {R_FILE, ".vscode/settings.json", RISK_EDITOR,
     "VS Code's settings for this folder can name programs (interpreters, linters, servers) its extensions run"},
    {R_FILE, ".vscode/launch.json", RISK_EDITOR, "the programs VS Code's debugger starts for this folder"},
    {R_FILE, ".vscode/extensions.json", RISK_EDITOR, "extensions VS Code offers to install for this folder"},
    {R_SUFFIX, ".code-workspace", RISK_EDITOR, "a VS Code workspace: its tasks and settings, as in .vscode/"},
    {R_DIR, ".idea/runConfigurations", RISK_EDITOR, "programs a JetBrains IDE runs for this project"},
    {R_DIR, ".devcontainer", RISK_EDITOR,
     "a dev container's commands, run when the folder is opened in one (initializeCommand on your host)"},
    {R_FILE, ".gitattributes", RISK_GIT_FILE, "git applies the filters and diff drivers it names to these files"},
    {R_FILE, ".gitmodules", RISK_GIT_FILE, "git fetches submodules from the URLs it names"},
};

static bool rule_matches(const risk_rule *r, const char *path)
{
    switch (r->kind) {
    case R_FILE: return is_named(path, r->name);
    case R_DIR: return in_dir(path, r->name) || is_named(path, r->name);
    default: return name_ends(path, r->name);
    }
}

const char *snap_path_risk_why(const char *path)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rule_matches(&rules[i], path))
            return rules[i].why;
    return NULL;
}

unsigned snap_path_risks(const char *path, unsigned old_mode, unsigned new_mode)
{
    unsigned r = 0;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rule_matches(&rules[i], path))
            r |= rules[i].risk;
    if ((new_mode & 0111) && new_mode != 0120000 && new_mode != 0160000 && !(old_mode & 0111))
        r |= RISK_EXEC;
    return r;
}

/* A symlink target that leaves the workspace from where the link is. */
static bool target_escapes(const char *link_path, const char *target)
{
    if (!target || !*target)
        return false;
    if (target[0] == '/')
        return true;
    int depth = 0;
    for (const char *p = link_path; (p = strchr(p, '/')); p++)
        depth++;
    const char *t = target;
    while (*t) {
        size_t n = strcspn(t, "/");
        if (n == 2 && t[0] == '.' && t[1] == '.') {
            if (--depth < 0)
                return true;
        } else if (!(n == 1 && t[0] == '.') && n > 0) {
            depth++;
        }
        t += n;
        while (*t == '/')
            t++;
    }
    return false;
}

/* Add to a row's risk detail; first: before what is there (the most
 * serious reads first). */
static void add_detail(snap_file *f, bool first, const char *fmt, const char *a, const char *b)
{
    char text[600];
    snprintf(text, sizeof text, fmt, a, b);
    if (f->risk_detail) {
        char *both = first ? xasprintf("%s; %s", text, f->risk_detail) : xasprintf("%s; %s", f->risk_detail, text);
        free(f->risk_detail);
        f->risk_detail = both;
    } else {
        f->risk_detail = xstrdup(text);
    }
}

static void set_detail(snap_file *f, const char *fmt, const char *a, const char *b)
{
    add_detail(f, false, fmt, a, b);
}

/* Why a row's name makes it risky (or, renamed, its old name), first in
 * its detail: the reviewer reads what runs it before anything else. */
static void path_detail(snap_file *f)
{
    const char *why = snap_path_risk_why(f->path);
    if (why) {
        add_detail(f, true, "%s%s", why, "");
    } else if (f->old_path && (why = snap_path_risk_why(f->old_path)) != NULL) {
        add_detail(f, true, "renamed from %s: %s", f->old_path, why);
    }
}

static snap_file *add_file(snap_changes *c)
{
    c->files = xrealloc(c->files, (c->n_files + 1) * sizeof *c->files);
    snap_file *f = &c->files[c->n_files++];
    memset(f, 0, sizeof *f);
    return f;
}

static snap_file *find_file(snap_changes *c, const char *path)
{
    for (size_t i = 0; i < c->n_files; i++)
        if (strcmp(c->files[i].path, path) == 0)
            return &c->files[i];
    return NULL;
}

static void add_missed(snap_changes *c, const char *path, const char *reason, uint64_t size, long count)
{
    c->missed = xrealloc(c->missed, (c->n_missed + 1) * sizeof *c->missed);
    c->missed[c->n_missed++] = (snap_missed){xstrdup(path), xstrdup(reason), size, count};
}

static char *blob_text(git_repository *repo, const git_oid *id, size_t max)
{
    git_blob *b = NULL;
    if (git_oid_is_zero(id) || git_blob_lookup(&b, repo, id) < 0) {
        git_error_clear();
        return NULL;
    }
    size_t n = (size_t)git_blob_rawsize(b);
    char *t = xstrndup(git_blob_rawcontent(b), n < max ? n : max);
    git_blob_free(b);
    return t;
}

static uint64_t blob_size(git_odb *odb, const git_oid *id)
{
    size_t len;
    git_object_t type;
    if (git_oid_is_zero(id) || git_odb_read_header(&len, &type, odb, id) < 0) {
        git_error_clear();
        return 0;
    }
    return len;
}

static char status_char(git_delta_t s)
{
    switch (s) {
    case GIT_DELTA_ADDED: return 'A';
    case GIT_DELTA_DELETED: return 'D';
    case GIT_DELTA_RENAMED: return 'R';
    case GIT_DELTA_TYPECHANGE: return 'T';
    default: return 'M';
    }
}

static int tree_changes(snap_store *st, git_tree *a, git_tree *b, snap_changes *c, char *err, size_t errlen)
{
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
    o.max_size = DIFF_MAX_SIZE;
    git_diff *diff = NULL;
    git_odb *odb = NULL;
    if (git_diff_tree_to_tree(&diff, st->repo, a, b, &o) < 0 || git_repository_odb(&odb, st->repo) < 0) {
        snprintf(err, errlen, "cannot compare snapshots of %s: %s", st->ws, snap_git_error());
        git_diff_free(diff);
        return -1;
    }
    git_diff_find_options fo;
    git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
    fo.flags = GIT_DIFF_FIND_RENAMES;
    fo.rename_limit = 1000;
    fo.rename_threshold = 50;
    git_diff_find_similar(diff, &fo);
    size_t n = git_diff_num_deltas(diff);
    for (size_t i = 0; i < n; i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        snap_file *f = add_file(c);
        f->status = status_char(d->status);
        f->similarity = d->status == GIT_DELTA_RENAMED ? d->similarity : 0;
        f->path = xstrdup(d->new_file.path);
        if (d->status == GIT_DELTA_RENAMED)
            f->old_path = xstrdup(d->old_file.path);
        f->old_mode = d->status == GIT_DELTA_ADDED ? 0 : d->old_file.mode;
        f->new_mode = d->status == GIT_DELTA_DELETED ? 0 : d->new_file.mode;
        git_oid_tostr(f->old_id, sizeof f->old_id, &d->old_file.id);
        git_oid_tostr(f->new_id, sizeof f->new_id, &d->new_file.id);
        if (f->old_mode == GIT_FILEMODE_BLOB || f->old_mode == GIT_FILEMODE_BLOB_EXECUTABLE)
            f->old_size = blob_size(odb, &d->old_file.id);
        if (f->new_mode == GIT_FILEMODE_BLOB || f->new_mode == GIT_FILEMODE_BLOB_EXECUTABLE)
            f->new_size = blob_size(odb, &d->new_file.id);
        if (f->old_mode == GIT_FILEMODE_LINK)
            f->old_target = blob_text(st->repo, &d->old_file.id, 4096);
        if (f->new_mode == GIT_FILEMODE_LINK)
            f->new_target = blob_text(st->repo, &d->new_file.id, 4096);
        bool blobs = f->old_mode != GIT_FILEMODE_COMMIT && f->new_mode != GIT_FILEMODE_COMMIT;
        git_patch *patch = NULL;
        if (blobs && git_patch_from_diff(&patch, diff, i) == 0 && patch) {
            size_t ctx, adds, dels;
            git_patch_line_stats(&ctx, &adds, &dels, patch);
            f->added = (long)adds;
            f->removed = (long)dels;
            f->binary = (git_patch_get_delta(patch)->flags & GIT_DIFF_FLAG_BINARY) != 0;
        }
        git_patch_free(patch);
        git_error_clear();
        f->risks = snap_path_risks(f->path, f->old_mode, f->new_mode);
        if (f->old_path)
            f->risks |= snap_path_risks(f->old_path, 0, 0) & ~RISK_EXEC;
        path_detail(f);
        if (f->new_mode == GIT_FILEMODE_LINK && target_escapes(f->path, f->new_target) &&
            (!f->old_target || !f->new_target || strcmp(f->old_target, f->new_target) != 0)) {
            f->risks |= RISK_SYMLINK_OUT;
            set_detail(f, "symlink to %s%s, outside the workspace", f->new_target, "");
        }
        if (f->old_mode == GIT_FILEMODE_COMMIT || f->new_mode == GIT_FILEMODE_COMMIT) {
            f->risks |= RISK_GITLINK;
            if (f->old_mode != GIT_FILEMODE_COMMIT)
                set_detail(f, "a nested git repository appeared at %s%s", f->path, "");
            else if (f->new_mode != GIT_FILEMODE_COMMIT)
                set_detail(f, "the nested git repository %s%s went", f->path, "");
            else
                set_detail(f, "the nested repository's HEAD moved (%.12s -> %.12s)", f->old_id, f->new_id);
        }
    }
    git_odb_free(odb);
    git_diff_free(diff);
    return 0;
}

/* Files over the size cap are in neither tree: their sizes and times in
 * the metas say whether they changed. */
static void large_changes(snap_changes *c, const snap_meta *ma, const snap_meta *mb)
{
    for (size_t i = 0; i < mb->n_large; i++) {
        const snap_meta_large *l = &mb->large[i];
        const snap_meta_large *old = snap_meta_find_large(ma, l->path);
        if (old && old->size == l->size && old->mtime_ns == l->mtime_ns && old->mode == l->mode)
            continue;
        snap_file *f = find_file(c, l->path);
        if (f && f->status == 'D') {
            f->status = 'M'; /* it grew past the cap */
        } else if (!f) {
            f = add_file(c);
            f->status = old ? 'M' : 'A';
            f->path = xstrdup(l->path);
            f->old_mode = old ? old->mode : 0;
            f->old_size = old ? old->size : 0;
            f->risks = snap_path_risks(l->path, f->old_mode, l->mode);
            path_detail(f);
        }
        f->large = true;
        f->new_mode = l->mode;
        f->new_size = l->size;
        f->added = f->removed = 0;
        add_missed(c, l->path, "too large", l->size, 0);
    }
    for (size_t i = 0; i < ma->n_large; i++) {
        const snap_meta_large *l = &ma->large[i];
        if (snap_meta_find_large(mb, l->path))
            continue;
        snap_file *f = find_file(c, l->path);
        if (f && f->status == 'A') {
            f->status = 'M'; /* it shrank under the cap */
            f->old_mode = l->mode;
            f->old_size = l->size;
            f->large = true;
        } else if (!f) {
            f = add_file(c);
            f->status = 'D';
            f->path = xstrdup(l->path);
            f->old_mode = l->mode;
            f->old_size = l->size;
            f->large = true;
        }
    }
}

static bool hook_in(const snap_gitdir *g, const snap_hook *h)
{
    for (int i = 0; i < g->n_hooks; i++)
        if (strcmp(g->hooks[i].name, h->name) == 0 && strcmp(g->hooks[i].sha, h->sha) == 0 &&
            g->hooks[i].mode == h->mode)
            return true;
    return false;
}

static snap_file *repo_row(snap_changes *c, const char *repo_path)
{
    char *path = *repo_path ? xasprintf("%s/.git", repo_path) : xstrdup(".git");
    snap_file *f = find_file(c, repo_path);
    if (!f)
        f = find_file(c, path);
    if (!f) {
        f = add_file(c);
        f->status = 'M';
        f->path = xstrdup(path);
        f->old_mode = f->new_mode = 040000;
    }
    free(path);
    return f;
}

/* Git directories: hooks, core.hooksPath, config; a new repository. */
static void repo_changes(snap_changes *c, const snap_meta *ma, const snap_meta *mb)
{
    for (size_t i = 0; i < mb->n_repos; i++) {
        const snap_meta_repo *r = &mb->repos[i];
        const snap_meta_repo *old = snap_meta_find_repo(ma, r->path);
        const char *where = *r->path ? r->path : "the workspace's repository";
        if (!old) {
            if (*r->path) {
                snap_file *f = repo_row(c, r->path);
                f->risks |= RISK_GIT_DIR;
                set_detail(f, "a new .git directory in %s%s", r->path, "");
            }
        } else if (strcmp(old->git.config_sha, r->git.config_sha) != 0) {
            snap_file *f = repo_row(c, r->path);
            f->risks |= RISK_GIT_DIR;
            set_detail(f, "git config of %s%s changed", where, "");
        }
        if (strcmp(old ? old->git.hooks_path : "", r->git.hooks_path) != 0) {
            snap_file *f = repo_row(c, r->path);
            f->risks |= RISK_HOOKS_PATH;
            add_detail(f, true, "core.hooksPath set to %s in %s", r->git.hooks_path[0] ? r->git.hooks_path : "(unset)",
                       where);
        }
        for (int k = 0; k < r->git.n_hooks; k++) {
            if (old && hook_in(&old->git, &r->git.hooks[k]))
                continue;
            snap_file *f = repo_row(c, r->path);
            f->risks |= RISK_HOOK;
            add_detail(f, true, "hook %s added or changed in %s", r->git.hooks[k].name, where);
        }
    }
}

static void missed_from_meta(snap_changes *c, const snap_meta *ma, const snap_meta *mb)
{
    for (size_t i = 0; i < mb->n_ignored; i++) {
        const char *path = mb->ignored[i];
        if (snap_meta_has_ignored(ma, path))
            continue;
        add_missed(c, path, "excluded", 0, 0);
        /* Agent settings are often ignored (.claude/settings.local.json,
         * .envrc): their content is not captured, but their appearing
         * must still be marked.  A change to one already there is not
         * seen. */
        size_t n = strlen(path);
        char *name = n > 1 && path[n - 1] == '/' ? xstrndup(path, n - 1) : xstrdup(path);
        unsigned risks = snap_path_risks(name, 0, 0);
        if (risks && !find_file(c, name)) {
            snap_file *f = add_file(c);
            f->status = 'A';
            f->path = name;
            f->risks = risks;
            path_detail(f);
            add_detail(f, false, "not captured (excluded from snapshots%s): later changes to it are not seen%s",
                       path[n - 1] == '/' ? ", with everything in it" : "", "");
        } else {
            free(name);
        }
    }
    for (size_t i = 0; i < mb->n_capped; i++)
        add_missed(c, mb->capped[i].path[0] ? mb->capped[i].path : ".", "new-file cap", 0, mb->capped[i].count);
    for (size_t i = 0; i < mb->n_invalid; i++) {
        bool before = false;
        for (size_t k = 0; k < ma->n_invalid && !before; k++)
            before = strcmp(ma->invalid[k], mb->invalid[i]) == 0;
        if (!before)
            add_missed(c, mb->invalid[i], "invalid name", 0, 0);
    }
}

/* Risky rows first (the most serious mark first), then by path. */
static int lowest_bit(unsigned r)
{
    for (int i = 0; i < 32; i++)
        if (r & (1u << i))
            return i;
    return 32;
}

static int file_cmp(const void *pa, const void *pb)
{
    const snap_file *a = pa, *b = pb;
    int ra = lowest_bit(a->risks), rb = lowest_bit(b->risks);
    if (ra != rb)
        return ra - rb;
    return strcmp(a->path, b->path);
}

int snap_changes_compute(snap_store *st, const char *before, const char *after, snap_changes *out, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    git_tree *ta = NULL, *tb = NULL;
    snap_meta ma, mb;
    memset(&ma, 0, sizeof ma);
    memset(&mb, 0, sizeof mb);
    int rc = -1;
    git_oid ida, idb;
    if (snap_read_meta(st, before, &ida, &ma, err, errlen) < 0 || snap_read_meta(st, after, &idb, &mb, err, errlen) < 0)
        goto out;
    /* The same tree (a command that changed nothing, the usual case): no
     * file changed, and libgit2 would still walk both trees to say so; the
     * trees are not even read. */
    if (!git_oid_equal(&ida, &idb)) {
        if (git_tree_lookup(&ta, st->repo, &ida) < 0 || git_tree_lookup(&tb, st->repo, &idb) < 0) {
            snprintf(err, errlen, "snapshots %.12s and %.12s of %s cannot be read: %s (was one removed by corral "
                     "gc?)", before, after, st->ws, snap_git_error());
            goto out;
        }
        if (tree_changes(st, ta, tb, out, err, errlen) < 0)
            goto out;
    }
    large_changes(out, &ma, &mb);
    repo_changes(out, &ma, &mb);
    missed_from_meta(out, &ma, &mb);
    if (out->n_files) /* (NULL when there are none, which qsort may not be given) */
        qsort(out->files, out->n_files, sizeof *out->files, file_cmp);
    for (size_t i = 0; i < out->n_files; i++) {
        snap_file *f = &out->files[i];
        switch (f->status) {
        case 'A': out->added++; break;
        case 'D': out->deleted++; break;
        case 'R': out->renamed++; break;
        case 'T': out->typechanged++; break;
        default: out->modified++; break;
        }
        out->lines_added += f->added;
        out->lines_removed += f->removed;
        out->risks |= f->risks;
    }
    rc = 0;
out:
    git_tree_free(ta);
    git_tree_free(tb);
    snap_meta_free(&ma);
    snap_meta_free(&mb);
    if (rc < 0)
        snap_changes_free(out);
    return rc;
}

void snap_changes_free(snap_changes *c)
{
    for (size_t i = 0; i < c->n_files; i++) {
        snap_file *f = &c->files[i];
        free(f->old_path);
        free(f->path);
        free(f->old_target);
        free(f->new_target);
        free(f->risk_detail);
    }
    free(c->files);
    for (size_t i = 0; i < c->n_missed; i++) {
        free(c->missed[i].path);
        free(c->missed[i].reason);
    }
    free(c->missed);
    memset(c, 0, sizeof *c);
}

static json_t *risk_array(unsigned risks)
{
    json_t *a = json_array();
    for (int i = 0; i < SNAP_RISK_KINDS; i++)
        if (risks & (1u << i))
            json_array_append_new(a, json_string(snap_risk_name(1u << i)));
    return a;
}

/* A path from the workspace as JSON: any bytes, made valid UTF-8 text. */
static json_t *path_json(const char *p)
{
    size_t n = strlen(p);
    if (utf8_valid_prefix(p, n) == n)
        return json_stringn(p, n);
    char *fixed = sanitize_text(p, n, n * 3 + 1);
    json_t *j = json_string(fixed);
    free(fixed);
    return j;
}

json_t *snap_changes_json(const snap_changes *c, bool files)
{
    json_t *o = json_object();
    json_object_set_new(o, "counts", json_pack("{s:i, s:i, s:i, s:i, s:i}", "added", c->added, "modified",
                                               c->modified, "deleted", c->deleted, "renamed", c->renamed,
                                               "typechanged", c->typechanged));
    json_object_set_new(o, "lines", json_pack("{s:I, s:I}", "added", (json_int_t)c->lines_added, "removed",
                                              (json_int_t)c->lines_removed));
    json_t *risk = json_array();
    for (size_t i = 0; i < c->n_files; i++) {
        const snap_file *f = &c->files[i];
        if (!f->risks)
            continue;
        json_t *r = json_pack("{s:o, s:o}", "path", path_json(f->path), "marks", risk_array(f->risks));
        if (f->risk_detail)
            json_object_set_new(r, "detail", path_json(f->risk_detail));
        json_array_append_new(risk, r);
    }
    json_object_set_new(o, "risk", risk);
    json_t *missed = json_array();
    for (size_t i = 0; i < c->n_missed; i++) {
        const snap_missed *m = &c->missed[i];
        json_t *j = json_pack("{s:o, s:s}", "path", path_json(m->path), "reason", m->reason);
        if (m->size)
            json_object_set_new(j, "size", json_integer((json_int_t)m->size));
        if (m->count)
            json_object_set_new(j, "files", json_integer(m->count));
        json_array_append_new(missed, j);
    }
    json_object_set_new(o, "not_captured", missed);
    if (!files)
        return o;
    json_t *fa = json_array();
    for (size_t i = 0; i < c->n_files; i++) {
        const snap_file *f = &c->files[i];
        char st[8];
        if (f->status == 'R')
            snprintf(st, sizeof st, "R%03d", f->similarity);
        else
            snprintf(st, sizeof st, "%c", f->status);
        json_t *j = json_pack("{s:s, s:o, s:i, s:i, s:I, s:I, s:b, s:b, s:I, s:I, s:o}", "status", st, "path",
                              path_json(f->path), "old_mode", (int)f->old_mode, "new_mode", (int)f->new_mode,
                              "old_size", (json_int_t)f->old_size, "new_size", (json_int_t)f->new_size, "binary",
                              f->binary, "large", f->large, "added", (json_int_t)f->added, "removed",
                              (json_int_t)f->removed, "risk", risk_array(f->risks));
        if (f->old_path)
            json_object_set_new(j, "old_path", path_json(f->old_path));
        if (f->old_target)
            json_object_set_new(j, "old_target", path_json(f->old_target));
        if (f->new_target)
            json_object_set_new(j, "new_target", path_json(f->new_target));
        if (f->risk_detail)
            json_object_set_new(j, "risk_detail", path_json(f->risk_detail));
        if (f->old_mode == GIT_FILEMODE_COMMIT || f->new_mode == GIT_FILEMODE_COMMIT)
            json_object_set_new(j, "gitlink", json_pack("{s:s, s:s}", "old", f->old_id, "new", f->new_id));
        json_array_append_new(fa, j);
    }
    json_object_set_new(o, "files", fa);
    return o;
}
