/* Unit tests for sandbox plan compilation: the policy decisions a user
 * relies on (deny beats write beats read, the more specific path wins,
 * symlinked roots resolve, protected .git parts and workspace names, a
 * protected path through a writable symlink fails closed), the environment
 * allowlist, and the plan's round trip to the init. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "placeholders.h"
#include "plan.h"
#include "profile.h"

static char root[] = "/tmp/corral-test-plan-XXXXXX";
static char *ws, *home, *other;

static void mk(const char *fmt, const char *arg)
{
    char p[1100];
    snprintf(p, sizeof p, fmt, arg);
    assert_int_equal(mkdir(p, 0755), 0);
}

static void touch(const char *fmt, const char *arg, const char *content)
{
    char p[1100];
    snprintf(p, sizeof p, fmt, arg);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(root))
        return -1;
    asprintf(&ws, "%s/ws", root);
    asprintf(&home, "%s/home", root);
    asprintf(&other, "%s/other", root);
    mk("%s", ws);
    mk("%s/.git", ws);
    mk("%s/.git/hooks", ws);
    touch("%s/.git/config", ws, "[core]\n");
    mk("%s/.codex", ws);
    mk("%s", home);
    mk("%s/.ssh", home);
    mk("%s", other);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

static char *const argv_true[] = {"true", NULL};

static sb_request request(char *const *env)
{
    sb_request r = {.argv = argv_true, .cwd = ws, .workspace = ws, .environ = env, .home = home,
                    .corral_state = NULL, .corral_config = NULL};
    return r;
}

/* The mount at dst in the plan, or NULL. */
static const sb_mount *mount_at(const sb_plan *p, const char *dst)
{
    for (size_t i = 0; i < p->n_mounts; i++)
        if (strcmp(p->mounts[i].dst, dst) == 0)
            return &p->mounts[i];
    return NULL;
}

static size_t index_of(const sb_plan *p, const char *dst)
{
    for (size_t i = 0; i < p->n_mounts; i++)
        if (strcmp(p->mounts[i].dst, dst) == 0)
            return i;
    fail_msg("no mount at %s", dst);
    return 0;
}

static void workspace_write_view(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    const sb_mount *m = mount_at(&plan, "/");
    assert_non_null(m);
    assert_true(m->rdonly); /* the host is read-only */
    m = mount_at(&plan, ws);
    assert_non_null(m);
    assert_false(m->rdonly); /* the workspace is writable */
    char p[512];
    snprintf(p, sizeof p, "%s/.git/hooks", ws);
    assert_true(mount_at(&plan, p)->rdonly);
    assert_true(index_of(&plan, p) > index_of(&plan, ws)); /* after, so it wins */
    snprintf(p, sizeof p, "%s/.git/config", ws);
    assert_true(mount_at(&plan, p)->rdonly);
    snprintf(p, sizeof p, "%s/.codex", ws);
    assert_true(mount_at(&plan, p)->rdonly);
    /* .corral and .agents do not exist: placeholders are planned, and a
     * commondir saying "." (no redirection) that the sandbox cannot write. */
    assert_int_equal(plan.n_placeholders, 3);
    bool commondir = false;
    for (size_t i = 0; i < plan.n_placeholders; i++)
        if (strstr(plan.placeholders[i].path, "/.git/commondir"))
            commondir = plan.placeholders[i].content && strcmp(plan.placeholders[i].content, ".\n") == 0;
    assert_true(commondir);
    /* .git itself is pinned: a mount point cannot be renamed away. */
    snprintf(p, sizeof p, "%s/.git", ws);
    assert_non_null(mount_at(&plan, p));
    assert_false(mount_at(&plan, p)->rdonly);
    size_t pin = index_of(&plan, p);
    snprintf(p, sizeof p, "%s/.git/hooks", ws);
    assert_true(pin < index_of(&plan, p)); /* before what it holds */
    snprintf(p, sizeof p, "%s/.ssh", home);
    m = mount_at(&plan, p);
    assert_non_null(m);
    assert_int_equal(m->kind, SB_M_TMPFS); /* masked */
    assert_int_equal(m->mode, 0);
    assert_non_null(mount_at(&plan, "/tmp"));
    assert_false(mount_at(&plan, "/tmp")->rdonly);
    assert_true(plan.ns_flags != 0);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void nested_repositories_are_pinned(void **state)
{
    (void)state;
    /* ws3/vendor/lib is a repository of its own, with a submodule gitdir:
     * the path down to it is pinned and their hooks are read-only. */
    char ws3[512], p[600];
    snprintf(ws3, sizeof ws3, "%s/ws3", root);
    mkdir(ws3, 0755);
    mk("%s/vendor", ws3);
    mk("%s/vendor/lib", ws3);
    mk("%s/vendor/lib/.git", ws3);
    mk("%s/vendor/lib/.git/hooks", ws3);
    touch("%s/vendor/lib/.git/HEAD", ws3, "ref: refs/heads/main\n");
    mk("%s/vendor/lib/.git/modules", ws3);
    mk("%s/vendor/lib/.git/modules/sub", ws3);
    touch("%s/vendor/lib/.git/modules/sub/HEAD", ws3, "ref: refs/heads/main\n");
    touch("%s/vendor/lib/.git/modules/sub/config", ws3, "[core]\n");
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = ws3;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/vendor", ws3);
    assert_false(mount_at(&plan, p)->rdonly); /* pinned, still writable */
    snprintf(p, sizeof p, "%s/vendor/lib", ws3);
    assert_non_null(mount_at(&plan, p));
    snprintf(p, sizeof p, "%s/vendor/lib/.git/hooks", ws3);
    assert_true(mount_at(&plan, p)->rdonly);
    snprintf(p, sizeof p, "%s/vendor/lib/.git/modules/sub/config", ws3);
    assert_true(mount_at(&plan, p)->rdonly);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void git_symlink_fails_closed(void **state)
{
    (void)state;
    char ws4[512], link[600];
    snprintf(ws4, sizeof ws4, "%s/ws4", root);
    mkdir(ws4, 0755);
    mk("%s/real", ws4);
    snprintf(link, sizeof link, "%s/.git", ws4);
    assert_int_equal(symlink("real", link), 0);
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = ws4;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, link));
    sb_profile_free(&prof);
}

static void read_only_profile(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_true(mount_at(&plan, ws)->rdonly);
    assert_int_equal(plan.n_placeholders, 0); /* nothing writable to protect */
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void deny_beats_write_beats_read(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    sb_profile_add(&prof, other, SB_READ);
    sb_profile_add(&prof, other, SB_WRITE);
    sb_profile_add(&prof, ws, SB_WRITE); /* write beats the profile's read */
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_false(mount_at(&plan, other)->rdonly);
    assert_false(mount_at(&plan, ws)->rdonly);
    sb_plan_free(&plan);
    sb_profile_add(&prof, other, SB_DENY);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_int_equal(mount_at(&plan, other)->kind, SB_M_TMPFS); /* deny beats write */
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void more_specific_path_wins(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512], sub[512];
    snprintf(sub, sizeof sub, "%s/inner", other);
    mkdir(sub, 0755);
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, other, SB_DENY);
    sb_profile_add(&prof, sub, SB_WRITE); /* deeper: wins inside the mask */
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_true(index_of(&plan, sub) > index_of(&plan, other));
    assert_false(mount_at(&plan, sub)->rdonly);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void symlinked_root_is_resolved(void **state)
{
    (void)state;
    char link[512];
    snprintf(link, sizeof link, "%s/link-to-other", root);
    assert_int_equal(symlink(other, link), 0);
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, link, SB_WRITE);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_null(mount_at(&plan, link));
    assert_false(mount_at(&plan, other)->rdonly); /* bound at its target */
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void deny_through_writable_symlink_fails_closed(void **state)
{
    (void)state;
    /* ws/secrets -> other: a deny of ws/secrets/x could be dodged by
     * re-pointing the symlink, so it must not compile. */
    char link[512], denied[512];
    snprintf(link, sizeof link, "%s/secrets", ws);
    assert_int_equal(symlink(other, link), 0);
    snprintf(denied, sizeof denied, "%s/secrets/key", ws);
    touch("%s/key", other, "k");
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, denied, SB_DENY);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, denied));
    assert_non_null(strstr(err, link)); /* both paths named */
    unlink(link);
    sb_profile_free(&prof);
}

static void git_file_points_to_protected_gitdir(void **state)
{
    (void)state;
    /* A worktree: ws2/.git is a file naming a gitdir whose hooks and
     * config must be read-only too. */
    char ws2[512], gitdir[512];
    snprintf(ws2, sizeof ws2, "%s/ws2", root);
    snprintf(gitdir, sizeof gitdir, "%s/ws2/.realgit", root);
    mkdir(ws2, 0755);
    mkdir(gitdir, 0755);
    mk("%s/hooks", gitdir);
    touch("%s/config", gitdir, "[core]\n");
    touch("%s/.git", ws2, "gitdir: .realgit\n");
    sb_profile prof;
    char err[512], p[600];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = ws2;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/.git", ws2);
    assert_true(mount_at(&plan, p)->rdonly);
    snprintf(p, sizeof p, "%s/hooks", gitdir);
    assert_true(mount_at(&plan, p)->rdonly);
    snprintf(p, sizeof p, "%s/config", gitdir);
    assert_true(mount_at(&plan, p)->rdonly);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void missing_write_root_is_an_error(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512], p[512];
    snprintf(p, sizeof p, "%s/nope", root);
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, p, SB_WRITE);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, p));
    assert_non_null(strstr(err, "create it first"));
    sb_profile_free(&prof);
}

static bool has_env(const sb_plan *p, const char *kv)
{
    for (char **e = p->envp; *e; e++)
        if (strcmp(*e, kv) == 0)
            return true;
    return false;
}

static bool has_name(const sb_plan *p, const char *name)
{
    size_t n = strlen(name);
    for (char **e = p->envp; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return true;
    return false;
}

static void environment_allowlist(void **state)
{
    (void)state;
    char *env[] = {"PATH=/usr/bin", "HOME=/h", "LC_ALL=C.UTF-8", "SSH_AUTH_SOCK=/run/ssh", "GITHUB_TOKEN=t",
                   "AWS_SECRET_ACCESS_KEY=k", "OPENAI_API_KEY=k", "LD_PRELOAD=/x.so", "MY_SECRET_THING=s",
                   "EDITOR=vi", "NPM_TOKEN=n", NULL};
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_keep_env(&prof, "EDITOR");
    sb_profile_keep_env(&prof, "*TOKEN"); /* a glob never lets a secret in */
    sb_profile_keep_env(&prof, "NPM_TOKEN"); /* the exact name does */
    sb_profile_set_env(&prof, "FOO=bar");
    char *set[] = {"TERM=xterm-256color", NULL};
    sb_request req = request(env);
    req.set_env = set;
    req.session_id = 4242;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_true(has_env(&plan, "PATH=/usr/bin"));
    assert_true(has_env(&plan, "LC_ALL=C.UTF-8"));
    assert_true(has_env(&plan, "EDITOR=vi"));
    assert_true(has_env(&plan, "NPM_TOKEN=n"));
    assert_true(has_env(&plan, "FOO=bar"));
    assert_true(has_env(&plan, "TERM=xterm-256color"));
    assert_true(has_env(&plan, "CORRAL_SESSION=4242"));
    assert_true(has_env(&plan, "CORRAL_SANDBOX=workspace-write"));
    assert_false(has_name(&plan, "SSH_AUTH_SOCK"));
    assert_false(has_name(&plan, "GITHUB_TOKEN"));
    assert_false(has_name(&plan, "AWS_SECRET_ACCESS_KEY"));
    assert_false(has_name(&plan, "OPENAI_API_KEY"));
    assert_false(has_name(&plan, "LD_PRELOAD"));
    assert_false(has_name(&plan, "MY_SECRET_THING"));
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void full_profile_is_no_sandbox(void **state)
{
    (void)state;
    char *env[] = {"PATH=/usr/bin", "GITHUB_TOKEN=t", "CORRAL_SESSION=1", NULL};
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "full", err, sizeof err), 0);
    sb_request req = request(env);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_true(plan.unconfined);
    assert_int_equal(plan.n_mounts, 0);
    assert_int_equal(plan.ns_flags, 0);
    assert_true(has_env(&plan, "GITHUB_TOKEN=t")); /* passed on as it is */
    assert_true(has_env(&plan, "CORRAL_SANDBOX=full"));
    assert_false(has_env(&plan, "CORRAL_SESSION=1")); /* corral's own are set, not inherited */
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void plan_round_trip(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    char *env[] = {"PATH=/a\tb\nc%d", NULL}; /* escapes survive */
    sb_request req = request(env);
    sb_plan plan, back;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    size_t len;
    char *text = sb_plan_serialize(&plan, &len);
    assert_non_null(text);
    assert_int_equal(sb_plan_parse(text, len, &back, err, sizeof err), 0);
    assert_int_equal(back.n_mounts, plan.n_mounts);
    for (size_t i = 0; i < plan.n_mounts; i++) {
        assert_string_equal(back.mounts[i].dst, plan.mounts[i].dst);
        assert_int_equal(back.mounts[i].rdonly, plan.mounts[i].rdonly);
    }
    assert_true(has_env(&back, "PATH=/a\tb\nc%d"));
    assert_string_equal(back.cwd, plan.cwd);
    assert_int_equal(back.ns_flags, plan.ns_flags);
    sb_plan_free(&back);
    /* Garbage never parses into a plan. */
    assert_int_equal(sb_plan_parse("V\t1\nM\t9\t\t/x\n", 13, &back, err, sizeof err), -1);
    assert_int_equal(sb_plan_parse("nonsense", 8, &back, err, sizeof err), -1);
    free(text);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void unknown_profile_is_named(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "paranoid", err, sizeof err), -1);
    assert_non_null(strstr(err, "'paranoid'"));
    sb_profile_free(&prof);
}

static bool exists(const char *fmt, const char *arg)
{
    char p[1100];
    snprintf(p, sizeof p, fmt, arg);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Placeholders are made and removed relative to their parent directory,
 * opened without following symlinks: a sandbox that swaps a directory on
 * the way for a symlink between the plan and the launch (or during the
 * sandbox's life) makes corral create or remove nothing outside. */
static void placeholders_never_follow_a_swapped_symlink(void **state)
{
    (void)state;
    char base[512], run[600], reg[700], p[700];
    snprintf(base, sizeof base, "%s/swap", root);
    mk("%s", base);
    mk("%s/ws", base);
    mk("%s/ws/sub", base);
    mk("%s/outside", base);
    mk("%s/outside2", base);
    mk("%s/outside2/.agents", base); /* an empty directory of the user's, outside */
    snprintf(run, sizeof run, "%s/run", base);
    mkdir(run, 0700);
    char *registry = sb_placeholder_registry(run);
    snprintf(reg, sizeof reg, "%s", registry);

    /* Creation: ws/sub is planned, then becomes a symlink to outside. */
    char path[700];
    snprintf(path, sizeof path, "%s/ws/sub/.corral", base);
    sb_placeholder ph = {.path = path, .content = NULL};
    snprintf(p, sizeof p, "%s/ws/sub", base);
    char moved[700];
    snprintf(moved, sizeof moved, "%s/ws/sub.real", base);
    assert_int_equal(rename(p, moved), 0);
    char target[700];
    snprintf(target, sizeof target, "%s/outside", base);
    assert_int_equal(symlink(target, p), 0);
    sb_placeholder_hold *hold = NULL;
    char err[1024];
    assert_int_equal(sb_placeholders_acquire(reg, &ph, 1, &hold, err, sizeof err), -1);
    assert_non_null(strstr(err, "symlink"));
    assert_false(exists("%s/outside/.corral", base)); /* nothing made outside */
    assert_false(exists("%s/ws/sub.real/.corral", base));

    /* Removal: made in ws/sub2, which then moves away and is replaced by
     * a symlink to a directory holding an empty .agents of the user's. */
    mk("%s/ws/sub2", base);
    snprintf(path, sizeof path, "%s/ws/sub2/.agents", base);
    ph.path = path;
    assert_int_equal(sb_placeholders_acquire(reg, &ph, 1, &hold, err, sizeof err), 0);
    assert_true(exists("%s/ws/sub2/.agents", base));
    snprintf(p, sizeof p, "%s/ws/sub2", base);
    snprintf(moved, sizeof moved, "%s/ws/sub2.moved", base);
    assert_int_equal(rename(p, moved), 0);
    snprintf(target, sizeof target, "%s/outside2", base);
    assert_int_equal(symlink(target, p), 0);
    sb_placeholders_release(hold);
    assert_true(exists("%s/outside2/.agents", base));       /* the user's, outside: untouched */
    assert_false(exists("%s/ws/sub2.moved/.agents", base)); /* ours, where it went: removed */
    free(registry);
}

/* Several sandboxes share a placeholder: it stays while any of them holds
 * it, only the last removes it, and a path the user made is never
 * removed. */
static void placeholders_are_shared_and_counted(void **state)
{
    (void)state;
    char base[512], run[600], path[700], mine[700];
    snprintf(base, sizeof base, "%s/shared", root);
    mk("%s", base);
    snprintf(run, sizeof run, "%s/run", base);
    mkdir(run, 0700);
    char *reg = sb_placeholder_registry(run);
    snprintf(path, sizeof path, "%s/.codex", base);
    snprintf(mine, sizeof mine, "%s/.agents", base);
    mk("%s/.agents", base); /* the user's own empty directory */
    sb_placeholder ph[] = {{.path = path, .content = NULL}, {.path = mine, .content = NULL}};
    sb_placeholder_hold *a = NULL, *b = NULL;
    char err[1024];
    assert_int_equal(sb_placeholders_acquire(reg, ph, 2, &a, err, sizeof err), 0);
    assert_int_equal(sb_placeholders_acquire(reg, ph, 2, &b, err, sizeof err), 0);
    sb_placeholders_release(a);
    assert_true(exists("%s/.codex", base)); /* b still uses it */
    sb_placeholders_release(b);
    assert_false(exists("%s/.codex", base)); /* the last one removed it */
    assert_true(exists("%s/.agents", base)); /* not corral's: kept */
    free(reg);
}

/* The workspace (or a write root) must not be $HOME, "/" or above $HOME:
 * ~/.bashrc and ~/.config/autostart would be writable. */
static void home_workspace_is_refused(void **state)
{
    (void)state;
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = home;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, home));
    assert_non_null(strstr(err, ".bashrc"));
    assert_non_null(strstr(err, "-C DIR"));
    assert_non_null(strstr(err, "--allow-home-workspace"));
    req.allow_home_workspace = true; /* asked for explicitly */
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
        fail_msg("with allow_home_workspace: %s", err);
    sb_plan_free(&plan);
    req.allow_home_workspace = false;
    req.cwd = req.workspace = root; /* an ancestor of the home */
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, root));
    req = request(NULL);
    sb_profile_add(&prof, "/", SB_WRITE); /* a write root above the home */
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, "write root /"));
    sb_profile_free(&prof);
    /* Read-only, the home is harmless as a workspace. */
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    req = request(NULL);
    req.cwd = req.workspace = home;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void assert_readonly_mount(const sb_plan *plan, const char *fmt, const char *arg)
{
    char p[1100];
    snprintf(p, sizeof p, fmt, arg);
    const sb_mount *m = mount_at(plan, p);
    if (!m)
        fail_msg("no mount at %s: it would be writable", p);
    if (!m->rdonly)
        fail_msg("%s is mounted writable", p);
}

/* An extra write root never overrides what corral protects: on the same
 * path, or inside it. */
static void write_roots_never_open_protected_paths(void **state)
{
    (void)state;
    char p[600];
    snprintf(p, sizeof p, "%s/.corral", ws);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/.corral/rules", ws);
    mkdir(p, 0755);
    static const char *const writes[] = {"%s/.git/hooks", "%s/.git", "%s/.corral", "%s/.corral/rules", NULL};
    for (const char *const *wfmt = writes; *wfmt; wfmt++) {
        sb_profile prof;
        char err[1024];
        assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
        snprintf(p, sizeof p, *wfmt, ws);
        sb_profile_add(&prof, p, SB_WRITE);
        sb_request req = request(NULL);
        sb_plan plan;
        if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
            fail_msg("-w %s: %s", p, err);
        assert_readonly_mount(&plan, "%s/.git/hooks", ws);
        assert_readonly_mount(&plan, "%s/.git/config", ws);
        assert_readonly_mount(&plan, "%s/.corral", ws);
        const sb_mount *m = mount_at(&plan, p);
        assert_true(m == NULL || m->rdonly || strcmp(*wfmt, "%s/.git") == 0); /* .git: pinned, writable */
        sb_plan_free(&plan);
        sb_profile_free(&prof);
    }
    snprintf(p, sizeof p, "%s/.corral/rules", ws);
    rmdir(p);
    snprintf(p, sizeof p, "%s/.corral", ws);
    rmdir(p);
}

/* A write root inside a git directory gets that directory's protection
 * even when nothing around it is writable: `-w ws/.git` with the
 * read-only profile, and a subdirectory of a bare repository. */
static void write_root_inside_a_gitdir_keeps_hooks_readonly(void **state)
{
    (void)state;
    char p[700], bare[600];
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/.git", ws);
    sb_profile_add(&prof, p, SB_WRITE);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_false(mount_at(&plan, p)->rdonly); /* objects, refs, the index: writable */
    assert_readonly_mount(&plan, "%s/.git/hooks", ws);
    assert_readonly_mount(&plan, "%s/.git/config", ws);
    sb_plan_free(&plan);
    sb_profile_free(&prof);

    snprintf(bare, sizeof bare, "%s/bare.git", root);
    mk("%s", bare);
    mk("%s/objects", bare);
    mk("%s/objects/pack", bare);
    mk("%s/refs", bare);
    touch("%s/HEAD", bare, "ref: refs/heads/main\n");
    touch("%s/config", bare, "[core]\n\tbare = true\n");
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/objects/pack", bare);
    sb_profile_add(&prof, p, SB_WRITE);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_false(mount_at(&plan, p)->rdonly);
    assert_readonly_mount(&plan, "%s/config", bare);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
    /* The bare repository itself writable: its missing hooks directory is
     * made a read-only placeholder. */
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    sb_profile_add(&prof, bare, SB_WRITE);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_readonly_mount(&plan, "%s/hooks", bare);
    assert_readonly_mount(&plan, "%s/config", bare);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

/* An escalation that keeps the sandbox writes "/" and keeps the default
 * deny list: /var/run (a symlink to /run on Debian) is masked at /run,
 * where it points, instead of failing the plan. */
static void writable_root_keeps_default_deny_list(void **state)
{
    (void)state;
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, "/", SB_WRITE);
    sb_request req = request(NULL);
    req.allow_home_workspace = true;
    sb_plan plan;
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
        fail_msg("workspace-write + write / does not compile: %s", err);
    assert_false(mount_at(&plan, "/")->rdonly);
    char run[PATH_MAX];
    assert_non_null(realpath("/var/run", run));
    const sb_mount *m = mount_at(&plan, run);
    assert_non_null(m);
    assert_int_equal(m->kind, SB_M_TMPFS); /* still masked */
    char p[600];
    snprintf(p, sizeof p, "%s/.ssh", home);
    assert_int_equal(mount_at(&plan, p)->kind, SB_M_TMPFS);
    sb_plan_free(&plan);
    /* A deny path the user gives still fails closed through a symlink the
     * sandbox could re-point (everything is writable now). */
    char link[600], denied[700];
    snprintf(link, sizeof link, "%s/to-other", root);
    assert_int_equal(symlink(other, link), 0);
    snprintf(denied, sizeof denied, "%s/secret", link);
    sb_profile_add(&prof, denied, SB_DENY);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, "crosses writable symlink"));
    assert_non_null(strstr(err, link));
    unlink(link);
    sb_profile_free(&prof);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workspace_write_view),
        cmocka_unit_test(nested_repositories_are_pinned),
        cmocka_unit_test(git_symlink_fails_closed),
        cmocka_unit_test(read_only_profile),
        cmocka_unit_test(deny_beats_write_beats_read),
        cmocka_unit_test(more_specific_path_wins),
        cmocka_unit_test(symlinked_root_is_resolved),
        cmocka_unit_test(deny_through_writable_symlink_fails_closed),
        cmocka_unit_test(git_file_points_to_protected_gitdir),
        cmocka_unit_test(missing_write_root_is_an_error),
        cmocka_unit_test(environment_allowlist),
        cmocka_unit_test(full_profile_is_no_sandbox),
        cmocka_unit_test(plan_round_trip),
        cmocka_unit_test(unknown_profile_is_named),
        cmocka_unit_test(placeholders_never_follow_a_swapped_symlink),
        cmocka_unit_test(placeholders_are_shared_and_counted),
        cmocka_unit_test(home_workspace_is_refused),
        cmocka_unit_test(write_roots_never_open_protected_paths),
        cmocka_unit_test(write_root_inside_a_gitdir_keeps_hooks_readonly),
        cmocka_unit_test(writable_root_keeps_default_deny_list),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
