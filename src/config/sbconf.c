/*
 * sbconf.c - from configuration to a sandbox profile and request.
 */
#include "config.h"

#include "config/sbconf.h"
#include "base/paths.h"
#include "base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void apply_extras(sb_profile *p, const conf_sandbox *sb)
{
    for (size_t i = 0; i < sb->n_read; i++)
        sb_profile_add(p, sb->read[i], SB_READ);
    for (size_t i = 0; i < sb->n_write; i++)
        sb_profile_add(p, sb->write[i], SB_WRITE);
    for (size_t i = 0; i < sb->n_deny; i++)
        sb_profile_add(p, sb->deny[i], SB_DENY);
    if (sb->net >= 0)
        p->net = (sb_net)sb->net;
    if (sb->home_layer >= 0)
        p->home_layer = (sb_home_layer)sb->home_layer;
    if (sb->home_layer_in >= 0)
        p->home_layer_on_disk = sb->home_layer_in == 1;
    if (sb->nofile)
        p->limits.nofile = sb->nofile;
    if (sb->fsize)
        p->limits.fsize = sb->fsize;
    if (sb->core != UINT64_MAX)
        p->limits.core = sb->core;
    if (sb->nproc)
        p->limits.nproc = sb->nproc;
    if (sb->tmp_size)
        p->limits.tmp_size = sb->tmp_size;
    if (sb->pids_max)
        p->limits.pids_max = sb->pids_max;
    if (sb->memory_max)
        p->limits.memory_max = sb->memory_max;
}

static const conf_sandbox *find(const conf_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_profiles; i++)
        if (strcmp(c->profiles[i].name, name) == 0)
            return &c->profiles[i];
    return NULL;
}

int sbconf_profile(const conf_t *c, const char *name, sb_profile *out, char *err, size_t errlen)
{
    if (!name)
        name = c->sandbox_profile ? c->sandbox_profile : SB_PROFILE_DEFAULT;
    /* Follow the base chain down to a built-in profile. */
    const conf_sandbox *chain[8];
    int depth = 0;
    const char *cur = name;
    const conf_sandbox *sb;
    while ((sb = find(c, cur)) != NULL) {
        if (depth == 8) {
            snprintf(err, errlen, "profile '%s': its base chain is longer than 8 (or loops)", name);
            return -1;
        }
        chain[depth++] = sb;
        cur = sb->base ? sb->base : SB_PROFILE_DEFAULT;
    }
    if (sb_profile_builtin(out, cur, err, errlen) < 0) {
        if (depth > 0)
            snprintf(err, errlen, "profile '%s' is based on '%s', which is neither built in (read-only, "
                     "workspace-write, full) nor a [profile] section", chain[depth - 1]->name, cur);
        return -1;
    }
    if (depth > 0) {
        free(out->name);
        out->name = xstrdup(name);
    }
    if (out->unconfined)
        return 0;
    apply_extras(out, &c->sandbox);
    for (int i = depth - 1; i >= 0; i--)
        apply_extras(out, chain[i]);
    for (size_t i = 0; i < c->n_env_keep; i++)
        sb_profile_keep_env(out, c->env_keep[i]);
    for (size_t i = 0; i < c->n_env_set; i++)
        sb_profile_set_env(out, c->env_set[i]);
    return 0;
}

/* A short stable name for a workspace path, for its cache directory. */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void sbconf_request_dirs(sb_request *req, const char *workspace)
{
    static char *state, *config, *cache, *layers, *key;
    free(state);
    free(config);
    free(cache);
    free(layers);
    free(key);
    state = paths_state_dir();
    config = paths_config_dir();
    /* The state directory must exist to be denied: the home layers live
     * in it, and the home's overlay would show a directory made later. */
    mkdir_p(state, 0700);
    layers = xasprintf("%s/home-layers", state);
    const char *xc = getenv("XDG_CACHE_HOME");
    char *base = xc && xc[0] == '/' ? xasprintf("%s/corral", xc) : xasprintf("%s/.cache/corral", paths_home());
    const char *slash = strrchr(workspace, '/');
    char *leaf = sanitize_text(slash && slash[1] ? slash + 1 : "root", strlen(slash && slash[1] ? slash + 1 : "root"),
                               40);
    for (char *p = leaf; *p; p++)
        if (*p == '/' || *p == '?' || *p == ' ')
            *p = '_';
    key = xasprintf("%s-%016llx", leaf, (unsigned long long)fnv1a(workspace));
    cache = xasprintf("%s/%s", base, key);
    free(leaf);
    free(base);
    /* Each tool's cache directory must exist to be bound. */
    static const char *const subdirs[] = {".cache", ".npm", ".cargo/registry", ".cargo/git", "go/pkg", ".m2",
                                          ".gradle", NULL};
    for (const char *const *d = subdirs; *d; d++) {
        char *p = xasprintf("%s/%s", cache, *d);
        mkdir_p(p, 0700);
        free(p);
    }
    const char *rt = getenv("XDG_RUNTIME_DIR");
    req->home = paths_home();
    req->runtime_dir = rt && rt[0] == '/' ? rt : NULL;
    req->corral_state = state;
    req->corral_config = config;
    req->cache_dir = cache;
    req->home_layers_dir = layers;
    req->workspace_key = key;
}

bool sbconf_unconfined(const conf_t *c, const char *name)
{
    sb_profile prof;
    char err[512];
    if (sbconf_profile(c, name, &prof, err, sizeof err) < 0)
        return false;
    bool unconfined = prof.unconfined;
    sb_profile_free(&prof);
    return unconfined;
}

extern char **environ;

/* Each path the server resolved when the request came (and a human may
 * have approved) is bound from exactly that path: had a component become a
 * symlink since, compiling would have followed it somewhere else.  (After
 * this the init opens every mount source without following symlinks, so a
 * later swap fails the setup instead.) */
static bool binds_exactly(const sb_plan *plan, char *const *resolved, char *err, size_t errlen)
{
    for (char *const *w = resolved; w && *w; w++) {
        bool found = false;
        for (size_t i = 0; i < plan->n_mounts && !found; i++)
            found = plan->mounts[i].kind == SB_M_BIND && plan->mounts[i].src && strcmp(plan->mounts[i].src, *w) == 0;
        if (!found) {
            snprintf(err, errlen, "write root %s changed since it was asked for (it no longer resolves to itself: "
                     "a symlink?); it was not run", *w);
            return false;
        }
    }
    return true;
}

sb_plan *sbconf_compile(const conf_t *c, const launch_spec *spec, const sbconf_tools *tools, int id, char *err,
                        size_t errlen)
{
    sb_profile prof;
    if (sbconf_profile(c, spec->profile, &prof, err, errlen) < 0)
        return NULL;
    for (char **p = spec->read; p && *p; p++)
        sb_profile_add(&prof, *p, SB_READ);
    for (char **p = spec->write; p && *p; p++)
        sb_profile_add(&prof, *p, SB_WRITE);
    for (char **p = spec->deny; p && *p; p++)
        sb_profile_add(&prof, *p, SB_DENY);
    if (spec->net >= 0)
        prof.net = (sb_net)spec->net;
    const char *workspace = spec->workspace ? spec->workspace : spec->cwd;
    sb_request req = {.argv = tools && tools->argv ? tools->argv : spec->argv, .cwd = spec->cwd,
                      .workspace = workspace, .environ = environ, .set_env = tools ? tools->set_env : NULL,
                      .session_id = id, .allow_home_workspace = spec->allow_home_workspace};
    if (tools) {
        req.corral_exe = tools->corral_exe;
        req.shell_dir = tools->shell_dir;
    }
    sbconf_request_dirs(&req, workspace);
    sb_plan *plan = xcalloc(1, sizeof *plan);
    int rc = sb_plan_compile(&prof, &req, plan, err, errlen);
    sb_profile_free(&prof);
    if (rc == 0 && !plan->unconfined && !binds_exactly(plan, spec->resolved_write, err, errlen))
        rc = -1;
    if (rc < 0) {
        sb_plan_free(plan);
        free(plan);
        return NULL;
    }
    return plan;
}

void launch_sandbox_of(const launch_spec *spec, launch_sandbox *out)
{
    launch_sandbox view = {.profile = (char *)spec->profile, .write = spec->write, .read = spec->read,
                           .deny = spec->deny, .net = spec->net, .allow_home = spec->allow_home_workspace};
    launch_sandbox_copy(out, &view);
}

void launch_sandbox_copy(launch_sandbox *dst, const launch_sandbox *src)
{
    *dst = *src;
    dst->profile = src->profile ? xstrdup(src->profile) : NULL;
    dst->write = strv_copy(src->write);
    dst->read = strv_copy(src->read);
    dst->deny = strv_copy(src->deny);
}

void launch_sandbox_free(launch_sandbox *s)
{
    free(s->profile);
    strv_free(s->write);
    strv_free(s->read);
    strv_free(s->deny);
    memset(s, 0, sizeof *s);
    s->net = -1;
}
