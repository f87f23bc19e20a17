/* Unit tests for the snapshot store and diff records (src/snap/snap_*.c): each
 * kind of change a command can make is captured and reported, files that
 * cannot be captured are named with the reason, risk marks are set, the
 * bytes are exact whatever .gitattributes says, no git filter or fsmonitor
 * of the workspace ever runs, and nothing is written into the workspace. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/sha256.h"
#include "snap/snap_diff.h"
#include "snap/snap_gc.h"
#include "snap/snap_meta.h"
#include "snap/snap_pack.h"
#include "snap/snap_patch.h"
#include "snap/snap_revert.h"
#include "snap/snap_store.h"
#include "snap/snap_storewire.h"
#include "snap/snap_take.h"
#include "snap/snap_watch.h"
#include "base/util.h"

typedef struct fixture {
    char base[256], ws[300], snapdir[300];
    snap_conf conf;
    snap_store *st;
} fixture;

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("command failed (%d): %s", rc, cmd);
}

static void put(fixture *f, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", f->ws, rel);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->base, sizeof f->base, "/tmp/snapXXXXXX");
    assert_non_null(mkdtemp(f->base));
    snprintf(f->ws, sizeof f->ws, "%s/ws", f->base);
    snprintf(f->snapdir, sizeof f->snapdir, "%s/snapshots", f->base);
    mkdir(f->ws, 0755);
    snap_conf_defaults(&f->conf);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    snap_store_close(f->st);
    snap_conf_free(&f->conf);
    sh("rm -rf '%s'", f->base);
    free(f);
    return 0;
}

static void open_store(fixture *f)
{
    char err[1024] = "";
    f->st = snap_store_open(f->snapdir, f->ws, &f->conf, err, sizeof err);
    if (!f->st)
        fail_msg("%s", err);
    /* The workspace is read by corral's confined reader, a sandbox
     * running the corral binary (not this test program). */
    if (getenv("CORRAL_BIN"))
        setenv("CORRAL_EXE", getenv("CORRAL_BIN"), 1);
    if (snap_store_start_reader(f->st, err, sizeof err) < 0)
        fail_msg("%s", err);
}

static void take(fixture *f, char out[SNAP_OID_HEX])
{
    snap_taken t;
    if (snap_take(f->st, false, false, &t) < 0)
        fail_msg("%s", t.error);
    snprintf(out, SNAP_OID_HEX, "%s", t.commit);
}

static void changes(fixture *f, const char *a, const char *b, snap_changes *c)
{
    char err[1024];
    if (snap_changes_compute(f->st, a, b, c, err, sizeof err) < 0)
        fail_msg("%s", err);
}

static const snap_file *file(const snap_changes *c, const char *path)
{
    for (size_t i = 0; i < c->n_files; i++)
        if (strcmp(c->files[i].path, path) == 0)
            return &c->files[i];
    return NULL;
}

static const snap_missed *missed(const snap_changes *c, const char *path)
{
    for (size_t i = 0; i < c->n_missed; i++)
        if (strcmp(c->missed[i].path, path) == 0)
            return &c->missed[i];
    return NULL;
}

/* A digest of every file under dir (names, modes, contents, link targets):
 * what "nothing was written" compares. */
static void tree_digest(const char *dir, char out[65])
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && find . -printf '%%p %%m %%y %%s %%l %%T@\\n' | LC_ALL=C sort && find . -type f -print0 | "
             "LC_ALL=C sort -z | xargs -0 -r sha256sum",
             dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    sha256_ctx c;
    sha256_init(&c);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        sha256_update(&c, buf, n);
    pclose(p);
    unsigned char d[SHA256_LEN];
    sha256_final(&c, d);
    sha256_hex(d, out);
}

static void every_change_kind_is_recorded(void **state)
{
    fixture *f = *state;
    sh("cd %s && mkdir -p d sub2 && printf 'one\\ntwo\\n' > a.txt && echo gone > del.txt && echo x > run.sh && "
       "ln -s a.txt link && echo f > fd && mkdir dirfile && echo in > dirfile/x && "
       "seq 1 200 > long.txt && echo ignored > skip.log && printf '*.log\\n' > .gitignore && "
       "printf 'bin\\0ary' > blob.bin && (cd sub2 && git init -q && echo s > s && git add s && "
       "git -c user.name=t -c user.email=t@t commit -qm one)",
       f->ws);
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX];
    take(f, a);
    sh("cd %s && printf 'one\\nTWO\\nthree\\n' > a.txt && rm del.txt && chmod +x run.sh && echo new > new.txt && "
       "ln -sfn long.txt link && ln -s a.txt link2 && rm fd && mkdir fd && echo y > fd/y && rm -r dirfile && "
       "echo file > dirfile && mv long.txt long2.txt && printf 'bin\\0ARY' > blob.bin && echo more >> skip.log && "
       "mkdir -p node_modules/pkg && for i in $(seq 1 300); do echo $i > node_modules/pkg/f$i.js; done && "
       "head -c 9000000 /dev/zero > big.dat && "
       "(cd sub2 && echo t > t && git add t && git -c user.name=t -c user.email=t@t commit -qm two)",
       f->ws);
    take(f, b);
    snap_changes c;
    changes(f, a, b, &c);
    const snap_file *x;
    assert_non_null(x = file(&c, "a.txt"));
    assert_int_equal(x->status, 'M');
    assert_int_equal(x->added, 2);
    assert_int_equal(x->removed, 1);
    assert_non_null(x = file(&c, "del.txt"));
    assert_int_equal(x->status, 'D');
    assert_non_null(x = file(&c, "run.sh"));
    assert_int_equal(x->new_mode, 0100755);
    assert_true(x->risks & RISK_EXEC);
    assert_non_null(x = file(&c, "new.txt"));
    assert_int_equal(x->status, 'A');
    assert_non_null(x = file(&c, "link"));
    assert_string_equal(x->old_target, "a.txt");
    assert_string_equal(x->new_target, "long.txt");
    assert_non_null(x = file(&c, "link2"));
    assert_int_equal(x->new_mode, 0120000);
    assert_non_null(x = file(&c, "fd"));
    assert_int_equal(x->status, 'D');
    assert_non_null(file(&c, "fd/y"));
    assert_non_null(x = file(&c, "dirfile/x"));
    assert_int_equal(x->status, 'D');
    assert_non_null(x = file(&c, "dirfile"));
    assert_int_equal(x->status, 'A');
    assert_non_null(x = file(&c, "long2.txt"));
    assert_int_equal(x->status, 'R');
    assert_string_equal(x->old_path, "long.txt");
    assert_non_null(x = file(&c, "blob.bin"));
    assert_true(x->binary);
    assert_null(file(&c, "skip.log"));
    assert_null(file(&c, "node_modules/pkg/f1.js"));
    assert_non_null(missed(&c, "node_modules/"));
    assert_non_null(x = file(&c, "big.dat"));
    assert_true(x->large);
    assert_int_equal(x->new_size, 9000000);
    assert_non_null(missed(&c, "big.dat"));
    assert_non_null(x = file(&c, "sub2"));
    assert_int_equal(x->new_mode, 0160000);
    assert_true(x->risks & RISK_GITLINK);
    assert_true(c.renamed == 1 && c.deleted >= 2 && c.added >= 4);
    snap_changes_free(&c);
}

static void nothing_changed_reuses_the_snapshot(void **state)
{
    fixture *f = *state;
    put(f, "a", "a\n");
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX];
    take(f, a);
    snap_taken t;
    assert_int_equal(snap_take(f->st, false, false, &t), 0);
    assert_true(t.reused);
    assert_string_equal(t.commit, a);
    /* Forced: a real walk still finds nothing new. */
    assert_int_equal(snap_take(f->st, true, false, &t), 0);
    assert_string_equal(t.commit, a);
    put(f, "a", "b\n");
    take(f, b);
    assert_string_not_equal(a, b);
}

static void touched_files_are_rehashed_once(void **state)
{
    fixture *f = *state;
    put(f, "a", "same\n");
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX];
    take(f, a);
    sh("touch -d '2001-01-01' %s/a", f->ws);
    take(f, b);
    assert_string_equal(a, b);
}

static void bytes_are_exact_whatever_gitattributes_say(void **state)
{
    fixture *f = *state;
    sh("cd %s && git init -q && printf '* text=auto eol=lf\\n*.txt filter=evil\\n' > .gitattributes && "
       "git config filter.evil.clean 'touch %s/filter-ran; cat' && git config core.fsmonitor 'touch %s/fsmonitor-ran' "
       "&& printf 'a\\r\\nb\\r\\n' > crlf.txt",
       f->ws, f->base, f->base);
    open_store(f);
    char a[SNAP_OID_HEX];
    take(f, a);
    git_tree *tree;
    snap_meta m;
    char err[512];
    assert_int_equal(snap_read(f->st, a, &tree, &m, err, sizeof err), 0);
    git_tree_entry *e;
    assert_int_equal(git_tree_entry_bypath(&e, tree, "crlf.txt"), 0);
    git_blob *blob;
    assert_int_equal(git_blob_lookup(&blob, f->st->repo, git_tree_entry_id(e)), 0);
    assert_int_equal(git_blob_rawsize(blob), 6);
    assert_memory_equal(git_blob_rawcontent(blob), "a\r\nb\r\n", 6);
    git_blob_free(blob);
    git_tree_entry_free(e);
    git_tree_free(tree);
    snap_meta_free(&m);
    char marker[512];
    snprintf(marker, sizeof marker, "%s/filter-ran", f->base);
    assert_int_not_equal(access(marker, F_OK), 0);
    snprintf(marker, sizeof marker, "%s/fsmonitor-ran", f->base);
    assert_int_not_equal(access(marker, F_OK), 0);
}

static void nothing_is_written_into_the_workspace(void **state)
{
    fixture *f = *state;
    sh("cd %s && git init -q && echo a > a && git add a && git -c user.name=t -c user.email=t@t commit -qm a && "
       "echo b > b && mkdir n && (cd n && git init -q)",
       f->ws);
    char before[65], after[65];
    tree_digest(f->ws, before);
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX];
    take(f, a);
    snap_taken t;
    assert_int_equal(snap_take(f->st, true, false, &t), 0);
    snprintf(b, sizeof b, "%s", t.commit);
    snap_changes c;
    changes(f, a, b, &c);
    snap_changes_free(&c);
    tree_digest(f->ws, after);
    assert_string_equal(before, after);
}

/* The row of path must carry mark, and a detail that says what loads it. */
static void assert_marked(const snap_changes *c, const char *path, unsigned mark, const char *why)
{
    const snap_file *x = file(c, path);
    if (!x)
        fail_msg("no row for %s", path);
    if (!(x->risks & mark))
        fail_msg("%s is not marked %s", path, snap_risk_name(mark));
    if (!x->risk_detail || !strstr(x->risk_detail, why))
        fail_msg("the mark of %s does not say '%s': %s", path, why, x->risk_detail ? x->risk_detail : "(none)");
}

static void agent_configuration_is_marked_at_any_depth(void **state)
{
    fixture *f = *state;
    put(f, "a", "a\n");
    put(f, ".gitignore", "settings.local.json\n");
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX], c2[SNAP_OID_HEX];
    take(f, a);
    sh("cd %s && mkdir -p sub/.codex d/b/.claude pkg/.gemini x/.agents/skills/s sub/.corral/rules sub/.vscode "
       "sub/.github/workflows .husky deep/er/still/more/.claude sub2/.claude && "
       "echo 'notify = [\"sh\"]' > sub/.codex/config.toml && echo '{}' > d/b/.claude/settings.json && "
       "echo '{}' > pkg/.mcp.json && echo '{}' > pkg/.gemini/settings.json && echo s > x/.agents/skills/s/SKILL.md && "
       "echo r > sub/.corral/rules/x.rules && echo 'export A=1' > sub/.envrc && echo '{}' > sub/.vscode/tasks.json && "
       "echo '{}' > sub/.vscode/settings.json && echo on: push > sub/.github/workflows/ci.yml && "
       "echo npx x > .husky/pre-commit && echo repos: > sub/.pre-commit-config.yaml && echo be evil > sub/AGENTS.md && "
       "echo '{}' > deep/er/still/more/.claude/settings.json && echo '{}' > sub2/.claude/settings.local.json && "
       "ln -s ../cfg sub/.mcp.json && echo plain > sub/notes.txt",
       f->ws);
    take(f, b);
    snap_changes c;
    changes(f, a, b, &c);
    assert_marked(&c, "sub/.codex/config.toml", RISK_AGENT, "Codex loads .codex/");
    assert_marked(&c, "d/b/.claude/settings.json", RISK_AGENT, "Claude Code loads .claude/");
    assert_marked(&c, "deep/er/still/more/.claude/settings.json", RISK_AGENT, "Claude Code");
    assert_marked(&c, "pkg/.mcp.json", RISK_AGENT, "MCP servers");
    assert_marked(&c, "sub/.mcp.json", RISK_AGENT, "MCP servers"); /* a symlink called so */
    assert_marked(&c, "pkg/.gemini/settings.json", RISK_AGENT, "Gemini CLI");
    assert_marked(&c, "x/.agents/skills/s/SKILL.md", RISK_AGENT, "skills");
    assert_marked(&c, "sub/AGENTS.md", RISK_AGENT, "instructions");
    assert_marked(&c, "sub/.corral/rules/x.rules", RISK_CORRAL, "corral trust");
    assert_marked(&c, "sub/.envrc", RISK_ENVRC, "direnv");
    assert_marked(&c, "sub/.vscode/tasks.json", RISK_EDITOR, "folder-open tasks");
    assert_marked(&c, "sub/.vscode/settings.json", RISK_EDITOR, "programs");
    assert_marked(&c, "sub/.github/workflows/ci.yml", RISK_CI, "secrets");
    assert_marked(&c, ".husky/pre-commit", RISK_HOOK, "husky");
    assert_marked(&c, "sub/.pre-commit-config.yaml", RISK_HOOK, "pre-commit runs");
    /* Ignored by .gitignore: not captured, still marked as it appears. */
    assert_marked(&c, "sub2/.claude/settings.local.json", RISK_AGENT, "not captured");
    assert_null(missed(&c, "sub/notes.txt"));
    assert_int_equal(file(&c, "sub/notes.txt")->risks, 0);
    snap_changes_free(&c);
    /* A change to one, and its removal, are marked too. */
    sh("cd %s && echo 'notify = [\"evil\"]' > sub/.codex/config.toml && rm pkg/.mcp.json", f->ws);
    take(f, c2);
    changes(f, b, c2, &c);
    assert_marked(&c, "sub/.codex/config.toml", RISK_AGENT, "Codex");
    assert_marked(&c, "pkg/.mcp.json", RISK_AGENT, "Claude Code");
    snap_changes_free(&c);
}

static void a_new_hook_is_risk_marked(void **state)
{
    fixture *f = *state;
    put(f, "a", "a\n");
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX];
    take(f, a);
    sh("cd %s && mkdir -p sub/.git/hooks && printf '#!/bin/sh\\necho pwned\\n' > sub/.git/hooks/pre-commit && "
       "chmod +x sub/.git/hooks/pre-commit && mkdir -p .github/workflows && echo on: push > .github/workflows/x.yml "
       "&& echo 'export A=1' > .envrc",
       f->ws);
    take(f, b);
    snap_changes c;
    changes(f, a, b, &c);
    const snap_file *x = file(&c, "sub");
    assert_non_null(x);
    assert_true(x->risks & RISK_HOOK);
    assert_true(x->risks & RISK_GITLINK);
    assert_non_null(strstr(x->risk_detail, "pre-commit"));
    assert_true(file(&c, ".github/workflows/x.yml")->risks & RISK_CI);
    assert_true(file(&c, ".envrc")->risks & RISK_ENVRC);
    /* Risk marks first in the list. */
    assert_true(c.files[0].risks & RISK_HOOK);
    snap_changes_free(&c);
}

/* A sandbox writes the workspace's .git: a pack whose index names an
 * object its data does not hold must not stand in for the file's bytes. */
static void a_lying_pack_is_dropped_not_believed(void **state)
{
    fixture *f = *state;
    sh("cd %s && git init -q && printf 'the real content of a file\\n' > real.txt && git add . && "
       "git -c user.name=t -c user.email=t@t commit -qm a && git gc -q", f->ws);
    /* Damage every object's data in the pack: its index still names them. */
    sh("cd %s/.git/objects/pack && p=$(ls pack-*.pack) && chmod u+w $p && "
       "dd if=/dev/zero of=$p bs=1 seek=12 count=$(( $(stat -c %%s $p) - 32 )) conv=notrunc status=none", f->ws);
    open_store(f);
    snap_taken t;
    assert_int_equal(snap_take(f->st, false, false, &t), -1);
    assert_non_null(strstr(t.error, "do not hold what their index claims"));
    /* The next one stores the bytes it read itself. */
    assert_int_equal(snap_take(f->st, true, false, &t), 0);
    assert_false(t.seeded);
    git_tree *tree;
    snap_meta m;
    char err[512];
    assert_int_equal(snap_read(f->st, t.commit, &tree, &m, err, sizeof err), 0);
    git_tree_entry *e;
    assert_int_equal(git_tree_entry_bypath(&e, tree, "real.txt"), 0);
    git_blob *blob;
    assert_int_equal(git_blob_lookup(&blob, f->st->repo, git_tree_entry_id(e)), 0);
    assert_int_equal(git_blob_rawsize(blob), 27);
    assert_memory_equal(git_blob_rawcontent(blob), "the real content of a file\n", 27);
    git_blob_free(blob);
    git_tree_entry_free(e);
    git_tree_free(tree);
    snap_meta_free(&m);
}

static void the_first_snapshot_is_seeded_from_the_users_repository(void **state)
{
    fixture *f = *state;
    sh("cd %s && git init -q && for i in $(seq 1 50); do echo $i > f$i; done && git add . && "
       "git -c user.name=t -c user.email=t@t commit -qm a && git gc -q && echo changed > f1 && echo new > g",
       f->ws);
    open_store(f);
    snap_taken t;
    assert_int_equal(snap_take(f->st, false, false, &t), 0);
    assert_true(t.seeded);
    assert_int_equal(t.files, 51);
    git_tree *tree;
    snap_meta m;
    char err[512];
    assert_int_equal(snap_read(f->st, t.commit, &tree, &m, err, sizeof err), 0);
    git_tree_entry *e;
    assert_int_equal(git_tree_entry_bypath(&e, tree, "f1"), 0);
    git_blob *blob;
    assert_int_equal(git_blob_lookup(&blob, f->st->repo, git_tree_entry_id(e)), 0);
    assert_memory_equal(git_blob_rawcontent(blob), "changed\n", 8);
    git_blob_free(blob);
    git_tree_entry_free(e);
    git_tree_free(tree);
    snap_meta_free(&m);
}

static void patch_is_git_compatible(void **state)
{
    fixture *f = *state;
    sh("cd %s && printf 'a\\nb\\n' > t && printf 'x\\0y' > bin && echo z > gone", f->ws);
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX];
    take(f, a);
    sh("cd %s && printf 'a\\nB\\n' > t && printf 'x\\0Y' > bin && rm gone && echo n > 'sp ace' && chmod +x t",
       f->ws);
    take(f, b);
    buf_t text;
    buf_init(&text);
    char err[512];
    assert_int_equal(snap_render(f->st, a, b, SNAP_FMT_PATCH, NULL, 1u << 20, &text, NULL, err, sizeof err), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/p.diff", f->base);
    FILE *fp = fopen(path, "w");
    fwrite(text.data, 1, text.len, fp);
    fclose(fp);
    buf_free(&text);
    sh("cd %s && git apply -R %s && printf 'a\\nb\\n' | cmp - t && printf 'x\\0y' | cmp - bin && test -f gone && "
       "! test -e 'sp ace' && ! test -x t",
       f->ws, path);
}

/* ---- the first snapshot through one pack (snap_pack.h) ---------------------------- */

/* The first snapshot of the workspace in a store of its own under
 * f->base/name, with the pack used from pack_min files on: its tree and
 * commit message, the store's directory, the progress it ended with. */
typedef struct first_result {
    char tree[SNAP_OID_HEX];
    char *message;
    char *dir;
    long stored, done, total;
} first_result;

static void first_in(fixture *f, const char *name, long pack_min, first_result *r)
{
    char snapdir[600], err[1024] = "";
    snprintf(snapdir, sizeof snapdir, "%s/%s", f->base, name);
    snap_store *st = snap_store_open(snapdir, f->ws, &f->conf, err, sizeof err);
    if (!st)
        fail_msg("%s", err);
    st->pack_min = pack_min;
    if (getenv("CORRAL_BIN"))
        setenv("CORRAL_EXE", getenv("CORRAL_BIN"), 1);
    if (snap_store_start_reader(st, err, sizeof err) < 0)
        fail_msg("%s", err);
    snap_taken t;
    if (snap_take(st, false, false, &t) < 0)
        fail_msg("%s", t.error);
    snprintf(r->tree, sizeof r->tree, "%s", t.tree);
    git_oid id;
    git_commit *c;
    assert_int_equal(git_oid_fromstr(&id, t.commit), 0);
    assert_int_equal(git_commit_lookup(&c, st->repo, &id), 0);
    r->message = strdup(git_commit_message(c));
    git_commit_free(c);
    r->dir = strdup(st->dir);
    r->stored = t.stored;
    r->done = atomic_load(&st->progress->done);
    r->total = atomic_load(&st->progress->total);
    snap_store_close(st);
}

static void first_free(first_result *r)
{
    free(r->message);
    free(r->dir);
}

static long packs_in(const char *store)
{
    char path[700];
    snprintf(path, sizeof path, "%s/objects/pack", store);
    DIR *d = opendir(path);
    long n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strlen(e->d_name) > 5 && strcmp(e->d_name + strlen(e->d_name) - 5, ".pack") == 0;
    if (d)
        closedir(d);
    return n;
}

/* Loose objects in the store (objects/XX/...). */
static long loose_in(const char *store)
{
    long n = 0;
    for (int fan = 0; fan < 256; fan++) {
        char path[700];
        snprintf(path, sizeof path, "%s/objects/%02x", store, fan);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)))
            n += e->d_name[0] != '.';
        if (d)
            closedir(d);
    }
    return n;
}

/* Whatever the threads' timing, the packed first snapshot is the one the
 * files stored one by one give: the same tree, the same record of what
 * was left out and why (a FIFO, an unreadable file and directory, a file
 * over the size cap, names git cannot store, a nested repository), and a
 * pack git itself finds whole. */
static void the_packed_first_snapshot_is_the_serial_one(void **state)
{
    fixture *f = *state;
    f->conf.max_file_size = 2u << 20;
    sh("cd %s && mkdir -p a/b c && for i in $(seq 1 60); do echo \"line $i\" > a/f$i; echo $((i %% 7)) > a/b/g$i; "
       "done && : > empty && printf '#!/bin/sh\\n' > c/run && chmod +x c/run && ln -s a/f1 link && "
       "ln -s /etc/passwd out && head -c 1500000 /dev/urandom > c/big && head -c 3000000 /dev/urandom > c/huge && "
       "mkfifo c/fifo && echo no > c/locked && chmod 000 c/locked && mkdir shut && echo s > shut/s && "
       "chmod 000 shut && mkdir .GIT 'GIT~1' && echo x > .GIT/x && echo y > 'GIT~1/y' && mkdir sub && "
       "git init -q sub && echo z > c/zz",
       f->ws);
    first_result packed, serial;
    first_in(f, "packed", 1, &packed);
    first_in(f, "serial", LONG_MAX, &serial);
    sh("chmod 755 %s/shut && chmod 644 %s/c/locked", f->ws, f->ws);
    assert_string_equal(packed.tree, serial.tree);
    assert_string_equal(packed.message, serial.message);
    assert_int_equal(packed.stored, serial.stored);
    /* The files' pack and the trees' (snap_treepack.h): of the packed
     * snapshot only its commit is a loose object. */
    assert_int_equal(packs_in(packed.dir), 2);
    assert_int_equal(loose_in(packed.dir), 1);
    assert_int_equal(packs_in(serial.dir), 0);
    sh("git --git-dir='%s' fsck --strict --no-dangling >/dev/null && git --git-dir='%s' verify-pack %s/objects/pack/*.idx",
       packed.dir, packed.dir, packed.dir);
    /* Progress: "storing done/total", total the files to read (c/huge and
     * c/locked among them, left out once read), done those stored. */
    assert_int_equal(packed.done, packed.stored);
    assert_int_equal(serial.done, serial.stored);
    assert_int_equal(packed.total, serial.total);
    assert_true(packed.total >= packed.stored && packed.total <= packed.stored + 2);
    first_free(&packed);
    first_free(&serial);
}

/* The default threshold: a first snapshot of more files than it stores
 * them through the pack, and its tree is what git writes for the same
 * files. */
static void the_packed_first_snapshot_is_what_git_writes(void **state)
{
    fixture *f = *state;
    sh("cd %s && for d in $(seq 1 30); do mkdir -p d$d/e; for i in $(seq 1 20); do echo \"$d $i\" > d$d/f$i; "
       "echo same > d$d/e/s$i; done; done && : > empty && printf 'x' > exe && chmod +x exe && ln -s d1/f1 link",
       f->ws);
    first_result r;
    first_in(f, "store", SNAP_PACK_MIN, &r);
    assert_int_equal(packs_in(r.dir), 2);
    assert_int_equal(loose_in(r.dir), 1);
    char shadow[600], cmd[2048];
    snprintf(shadow, sizeof shadow, "%s/shadow", f->base);
    snprintf(cmd, sizeof cmd,
             "git init -q --bare '%s' && GIT_DIR='%s' GIT_WORK_TREE='%s' sh -c 'git add -A && git write-tree'",
             shadow, shadow, f->ws);
    FILE *p = popen(cmd, "r");
    char tree[64] = "";
    assert_non_null(fgets(tree, sizeof tree, p));
    pclose(p);
    tree[strcspn(tree, "\n")] = '\0';
    assert_string_equal(r.tree, tree);
    first_free(&r);
}

/* Hostile: while packed snapshots are taken, files are swapped for
 * symlinks to a secret outside, FIFOs, directories, or removed.  Every
 * snapshot completes, the secret's bytes are never stored, the store
 * stays whole, and once the workspace is quiet a snapshot is the serial
 * one of it. */
static void the_packed_snapshot_survives_files_swapped_while_read(void **state)
{
    fixture *f = *state;
    sh("echo TOPSECRET-CONTENT > %s/secret && cd %s && mkdir d && for i in $(seq 1 800); do echo $i > d/f$i; done",
       f->base, f->ws);
    /* The swapper's own children (ln, rm, mkfifo) become this process's
     * when it is killed, so that every one of them can be waited for: a
     * swap still under way after the kill would change the workspace
     * between the last snapshot and the serial one. */
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        char script[1024];
        snprintf(script, sizeof script,
                 "cd %s/d && while :; do for i in $(seq 1 800 | shuf -n 40); do case $((i %% 4)) in "
                 "0) ln -sfn %s/secret f$i ;; 1) rm -f f$i; mkfifo f$i ;; 2) rm -f f$i; mkdir -p f$i ;; "
                 "3) rm -rf f$i ;; esac; done; for i in $(seq 1 800); do [ -f f$i ] && [ ! -L f$i ] || "
                 "{ rm -rf f$i; echo $i > f$i; }; done; done",
                 f->ws, f->base);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    char err[1024] = "";
    f->st = snap_store_open(f->snapdir, f->ws, &f->conf, err, sizeof err);
    if (!f->st)
        fail_msg("%s", err);
    f->st->pack_min = 1;
    if (getenv("CORRAL_BIN"))
        setenv("CORRAL_EXE", getenv("CORRAL_BIN"), 1);
    assert_int_equal(snap_store_start_reader(f->st, err, sizeof err), 0);
    for (int i = 0; i < 6; i++) {
        snap_taken t;
        if (snap_take(f->st, true, false, &t) < 0)
            fail_msg("%s", t.error);
    }
    setpgid(pid, pid); /* whichever of the two runs first */
    kill(-pid, SIGKILL);
    while (waitpid(-pid, NULL, 0) > 0 || errno == EINTR)
        ;
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    snap_taken t;
    if (snap_take(f->st, true, false, &t) < 0)
        fail_msg("%s", t.error);
    sh("git --git-dir='%s' fsck --strict --no-dangling >/dev/null && ! git --git-dir='%s' cat-file --batch-all-objects "
       "--batch | grep -a -q TOPSECRET-CONTENT",
       f->st->dir, f->st->dir);
    first_result serial;
    first_in(f, "serial", LONG_MAX, &serial);
    assert_string_equal(t.tree, serial.tree);
    first_free(&serial);
}

/* The pack's own SHA-1 (its trailer and its index's): the standard's
 * vectors, across a block boundary and past many blocks. */
static void the_packs_sha1_is_sha1(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t reps;
        const char *hex;
    } v[] = {
        {"abc", 1, "a9993e364706816aba3e25717850c26c9cd0d89d"},
        {"", 1, "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
        {"a", 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t n = strlen(v[i].in) * v[i].reps;
        char *data = malloc(n + 1);
        for (size_t r = 0; r < v[i].reps; r++)
            memcpy(data + r * strlen(v[i].in), v[i].in, strlen(v[i].in));
        unsigned char sum[20];
        snap_sha1(data, n, sum);
        char hex[41];
        for (int b = 0; b < 20; b++)
            snprintf(hex + 2 * b, 3, "%02x", sum[b]);
        assert_string_equal(hex, v[i].hex);
        free(data);
    }
}

static void meta_survives_any_name(void **state)
{
    (void)state;
    snap_meta m;
    memset(&m, 0, sizeof m);
    snap_meta_add_large(&m, "a b\n%c\t", 10, 20, 0100644);
    snap_meta_add_ignored(&m, "");
    snap_meta_repo *r = snap_meta_add_repo(&m, "x y");
    snprintf(r->git.hooks_path, sizeof r->git.hooks_path, "../h h");
    r->git.n_hooks = 1;
    snprintf(r->git.hooks[0].name, sizeof r->git.hooks[0].name, "pre commit");
    snprintf(r->git.hooks[0].sha, sizeof r->git.hooks[0].sha, "abc");
    char *text = snap_meta_format(&m);
    snap_meta p;
    snap_meta_parse(text, &p);
    assert_int_equal(p.n_large, 1);
    assert_string_equal(p.large[0].path, "a b\n%c\t");
    assert_int_equal(p.n_ignored, 1);
    assert_string_equal(p.ignored[0], "");
    assert_string_equal(p.repos[0].path, "x y");
    assert_string_equal(p.repos[0].git.hooks_path, "../h h");
    assert_string_equal(p.repos[0].git.hooks[0].name, "pre commit");
    free(text);
    snap_meta_free(&m);
    snap_meta_free(&p);
}

static void revert_restores_and_refuses_conflicts(void **state)
{
    fixture *f = *state;
    sh("cd %s && printf 'orig\\r\\n' > m && echo d > d && ln -s m l && mkdir keep && echo k > keep/k", f->ws);
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX], now[SNAP_OID_HEX], later[SNAP_OID_HEX];
    take(f, a);
    sh("cd %s && echo changed > m && rm d && ln -sfn keep l && mkdir -p new/deep && echo n > new/deep/n && "
       "chmod +x keep/k",
       f->ws);
    take(f, b);
    snap_revert_plan p;
    char err[512];
    assert_int_equal(snap_revert_plan_make(f->st, a, b, b, &p, err, sizeof err), 0);
    assert_int_equal(p.n_conflicts, 0);
    assert_int_equal(snap_revert_apply(f->st, &p, err, sizeof err), 0);
    assert_int_equal(p.n_failed, 0);
    snap_revert_plan_free(&p);
    take(f, now);
    git_tree *ta, *tn;
    snap_meta ma, mn;
    assert_int_equal(snap_read(f->st, a, &ta, &ma, err, sizeof err), 0);
    assert_int_equal(snap_read(f->st, now, &tn, &mn, err, sizeof err), 0);
    assert_true(git_oid_equal(git_tree_id(ta), git_tree_id(tn))); /* exactly the tree before */
    git_tree_free(ta);
    git_tree_free(tn);
    snap_meta_free(&ma);
    snap_meta_free(&mn);
    /* Changed again afterwards: a conflict, and nothing is done. */
    sh("cd %s && echo x > m", f->ws);
    take(f, b);
    sh("cd %s && echo y > m && echo z > other", f->ws);
    take(f, later);
    assert_int_equal(snap_revert_plan_make(f->st, now, b, later, &p, err, sizeof err), 0);
    assert_int_equal(p.n_conflicts, 1);
    assert_string_equal(p.conflicts[0].path, "m");
    assert_int_equal(snap_revert_apply(f->st, &p, err, sizeof err), -1);
    snap_revert_plan_free(&p);
    sh("cd %s && test \"$(cat m)\" = y", f->ws);
}

static void revert_never_writes_through_a_symlink(void **state)
{
    fixture *f = *state;
    char outside[400];
    snprintf(outside, sizeof outside, "%s/outside", f->base);
    sh("mkdir -p %s && cd %s && mkdir d && echo inside > d/f", outside, f->ws);
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX];
    take(f, a);
    sh("cd %s && rm d/f", f->ws);
    take(f, b);
    snap_revert_plan p;
    char err[512];
    assert_int_equal(snap_revert_plan_make(f->st, a, b, b, &p, err, sizeof err), 0);
    /* Between the plan and its application, d becomes a symlink out. */
    sh("cd %s && rmdir d && ln -s %s d", f->ws, outside);
    assert_int_equal(snap_revert_apply(f->st, &p, err, sizeof err), 0);
    assert_int_equal(p.n_failed, 1);
    snap_revert_plan_free(&p);
    sh("test ! -e %s/f", outside);
}

static void gc_drops_expired_sessions_and_keeps_the_rest(void **state)
{
    fixture *f = *state;
    f->conf.retention_ms = 1000;
    put(f, "a", "1\n");
    open_store(f);
    char a[SNAP_OID_HEX], b[SNAP_OID_HEX];
    take(f, a);
    char err[512];
    assert_int_equal(snap_gc_anchor(f->st, "old-1", 1, a, err, sizeof err), 0);
    snap_gc_session(f->st, "old-1", wall_sec() - 100, wall_sec() - 50);
    put(f, "a", "2\n");
    take(f, b);
    assert_int_equal(snap_gc_anchor(f->st, "live-2", 1, b, err, sizeof err), 0);
    snap_gc_session(f->st, "live-2", wall_sec(), 0);
    snap_gc_result r;
    const char *live[] = {"live-2"};
    assert_int_equal(snap_gc_run(f->st, true, live, 1, &r), 0);
    assert_int_equal(r.sessions_dropped, 1);
    assert_true(r.repacked);
    git_tree *tree;
    snap_meta m;
    assert_int_equal(snap_read(f->st, b, &tree, &m, err, sizeof err), 0);
    git_tree_free(tree);
    snap_meta_free(&m);
    assert_int_equal(snap_read(f->st, a, &tree, &m, err, sizeof err), -1);
    /* Still a working store: a snapshot after gc. */
    put(f, "a", "3\n");
    take(f, a);
    assert_string_not_equal(a, b);
}

/* Maintenance is due once a store has many loose objects (checked after
 * every session, so from a sample of them, as git's gc --auto), and no
 * longer once it is repacked. */
static void gc_is_due_with_many_loose_objects(void **state)
{
    fixture *f = *state;
    f->conf.max_new_files = 100000; /* all of them stored, however many are new */
    put(f, "a", "1\n");
    open_store(f);
    f->st->pack_min = LONG_MAX; /* every object stored loose */
    char a[SNAP_OID_HEX];
    take(f, a);
    assert_false(snap_gc_due(f->st));
    sh("cd %s && mkdir many && cd many && i=0; while [ $i -lt 12000 ]; do echo $i > f$i; i=$((i+1)); done", f->ws);
    take(f, a);
    assert_true(snap_gc_due(f->st));
    snap_gc_result r;
    assert_int_equal(snap_gc_run(f->st, false, NULL, 0, &r), 0);
    assert_true(r.repacked);
    assert_false(snap_gc_due(f->st));
}

/* The dirty bit: a sandbox's empty read-only mount points, made and
 * removed around every command in the tree (.codex) and in the git
 * directory (commondir, modules), leave the workspace clean, so the next
 * boundary costs no walk; a name that stays, in either place, makes it
 * dirty. */
static void mount_points_that_come_and_go_leave_it_clean(void **state)
{
    fixture *f = *state;
    sh("git -C '%s' init -q", f->ws);
    put(f, "a.txt", "a\n");
    snap_watch w;
    snap_watch_init(&w, 1000);
    snap_watch_prepare(&w, f->ws, NULL, NULL);
    assert_false(snap_watch_poll(&w));
    sh("cd '%s' && mkdir .codex .claude && mkdir .git/modules && : > .git/commondir", f->ws);
    sh("cd '%s' && rmdir .codex .claude .git/modules && rm .git/commondir", f->ws);
    assert_false(snap_watch_poll(&w));
    sh(": > '%s/.git/commondir'", f->ws);
    assert_true(snap_watch_poll(&w)); /* one that stays in .git */
    snap_watch_prepare(&w, f->ws, NULL, NULL);
    assert_false(snap_watch_poll(&w));
    sh("rm '%s/.git/commondir'", f->ws);
    assert_true(snap_watch_poll(&w)); /* one that was there and went */
    snap_watch_prepare(&w, f->ws, NULL, NULL);
    sh("mkdir '%s/.codex'", f->ws);
    assert_true(snap_watch_poll(&w)); /* one that stays in the tree */
    snap_watch_free(&w);
}

static void settings_are_checked(void **state)
{
    (void)state;
    snap_conf c;
    snap_conf_defaults(&c);
    char err[300];
    assert_int_equal(snap_conf_set(&c, "max-file-size", "2M", err, sizeof err), 0);
    assert_int_equal(c.max_file_size, 2u << 20);
    assert_int_equal(snap_conf_set(&c, "max-file-size", "lots", err, sizeof err), -1);
    assert_non_null(strstr(err, "not a size"));
    assert_int_equal(snap_conf_set(&c, "allow", "relative/path", err, sizeof err), -1);
    assert_int_equal(snap_conf_set(&c, "allow", "/home/me/", err, sizeof err), 0);
    assert_true(snap_conf_allows(&c, "/home/me"));
    assert_false(snap_conf_allows(&c, "/home/me/x"));
    assert_int_equal(snap_conf_set(&c, "retention", "2d", err, sizeof err), 0);
    assert_int_equal(c.keep_open_ms, 10u * 60 * 1000); /* the default: an agent's commands find it warm */
    assert_int_equal(snap_conf_set(&c, "keep-open", "30s", err, sizeof err), 0);
    assert_int_equal(c.keep_open_ms, 30000);
    assert_int_equal(snap_conf_set(&c, "keep-open", "0", err, sizeof err), 0);
    assert_int_equal(c.keep_open_ms, 0);
    assert_int_equal(snap_conf_set(&c, "keep-open", "2d", err, sizeof err), -1);
    assert_non_null(strstr(err, "snapshots.keep-open: '2d' is not a duration up to 1d"));
    assert_int_equal(c.store_idle_ms, 30000); /* the default: an agent's next command finds the store warm */
    assert_int_equal(snap_conf_set(&c, "store-idle", "5m", err, sizeof err), 0);
    assert_int_equal(c.store_idle_ms, 5u * 60 * 1000);
    assert_int_equal(snap_conf_set(&c, "store-idle", "2d", err, sizeof err), -1);
    assert_non_null(strstr(err, "snapshots.store-idle: '2d' is not a duration up to 1d"));
    /* As the store's process gets them. */
    snap_conf_set(&c, "exclude", "*.log", err, sizeof err);
    json_t *j = ssw_conf_json(&c);
    snap_conf back;
    assert_int_equal(ssw_conf_from_json(j, &back), 0);
    assert_true(snap_conf_equal(&c, &back));
    snap_conf_free(&back);
    json_object_del(j, "allow");
    assert_int_equal(ssw_conf_from_json(j, &back), -1);
    json_decref(j);
    assert_int_equal(snap_conf_set(&c, "frob", "1", err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown key 'frob' in [snapshots]"));
    snap_conf_free(&c);
}

/* ---- the store process's messages ---------------------------------------------- */

typedef struct big_msg {
    int fd;
    buf_t text;
    json_t *j;
} big_msg;

static void *send_big(void *arg)
{
    big_msg *m = arg;
    snap_wire_out o;
    buf_init(&o.b);
    for (int i = 1; i <= 3; i++) { /* progress first, as a running job sends it */
        sw_begin(&o, SSW_PROGRESS);
        sw_u64(&o, (uint64_t)i);
        sw_u64(&o, 3);
        sw_u8(&o, SNAP_STORING);
        sw_send(m->fd, &o);
    }
    sw_out_free(&o);
    ssw_send(m->fd, SSW_ANSWER, m->j, &m->text, -1);
    return NULL;
}

static int progress_seen;

static void count_progress(void *user, uint64_t done, uint64_t total, int phase)
{
    (void)user;
    assert_int_equal(total, 3);
    assert_int_equal(phase, SNAP_STORING);
    progress_seen = (int)done;
}

static void the_store_wire_carries_messages_larger_than_a_frame(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    big_msg m = {.fd = sv[0]};
    buf_init(&m.text);
    /* A diff's text of 3 frames and a bit, with every byte value; a JSON
     * answer of 2 frames and a bit. */
    for (size_t i = 0; i < 3 * SNAP_WIRE_CHUNK + 17; i++) {
        char c = (char)(i * 7 % 256);
        buf_append(&m.text, &c, 1);
    }
    char *big = xmalloc(2 * SNAP_WIRE_CHUNK + 5);
    memset(big, 'a', 2 * SNAP_WIRE_CHUNK + 4);
    big[2 * SNAP_WIRE_CHUNK + 4] = '\0';
    m.j = json_pack("{s:s, s:i}", "files", big, "rc", 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, send_big, &m), 0);
    snap_wire_inbox ib;
    sw_inbox_init(&ib, sv[1]);
    int type = 0;
    json_t *got = NULL;
    buf_t text;
    buf_init(&text);
    assert_int_equal(ssw_recv(&ib, 10000, &type, &got, &text, count_progress, NULL), 1);
    pthread_join(th, NULL);
    assert_int_equal(type, SSW_ANSWER);
    assert_int_equal(progress_seen, 3);
    assert_true(json_equal(got, m.j));
    assert_int_equal(text.len, m.text.len);
    assert_memory_equal(text.data, m.text.data, text.len);
    json_decref(got);
    buf_free(&text);
    /* Malformed: a progress frame cut short, an answer that is not a JSON
     * object. */
    snap_wire_out o;
    buf_init(&o.b);
    sw_begin(&o, SSW_PROGRESS);
    sw_u64(&o, 1);
    sw_send(sv[0], &o);
    got = NULL;
    assert_int_equal(ssw_recv(&ib, 10000, &type, &got, NULL, NULL, NULL), -EPROTO);
    sw_begin(&o, SSW_ANSWER);
    sw_bytes(&o, "[1]", 3);
    sw_send(sv[0], &o);
    assert_int_equal(ssw_recv(&ib, 10000, &type, &got, NULL, NULL, NULL), -EPROTO);
    assert_null(got);
    sw_out_free(&o);
    /* Any bytes a session named a file with survive, as JSON can carry
     * them; a NUL inside is refused. */
    const char *names[] = {"plain.txt", "caf\xc3\xa9", "bad\xff\xfe name", "\x80"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        json_t *v = ssw_str(names[i]);
        char *dumped = json_dumps(v, JSON_ENCODE_ANY), *back = NULL;
        json_t *parsed = json_loads(dumped, JSON_DECODE_ANY, NULL);
        back = ssw_str_dup(parsed);
        assert_non_null(back);
        assert_string_equal(back, names[i]);
        free(back);
        free(dumped);
        json_decref(parsed);
        json_decref(v);
    }
    json_t *with_nul = json_pack("{s:s}", "b64", "YQBi"); /* "a\0b" */
    assert_null(ssw_str_dup(with_nul));
    json_decref(with_nul);
    /* The peer gone between messages: 0. */
    close(sv[0]);
    assert_int_equal(ssw_recv(&ib, 10000, &type, &got, NULL, NULL, NULL), 0);
    sw_inbox_free(&ib);
    close(sv[1]);
    json_decref(m.j);
    buf_free(&m.text);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_change_kind_is_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(mount_points_that_come_and_go_leave_it_clean, setup, teardown),
        cmocka_unit_test_setup_teardown(nothing_changed_reuses_the_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(touched_files_are_rehashed_once, setup, teardown),
        cmocka_unit_test_setup_teardown(bytes_are_exact_whatever_gitattributes_say, setup, teardown),
        cmocka_unit_test_setup_teardown(nothing_is_written_into_the_workspace, setup, teardown),
        cmocka_unit_test_setup_teardown(a_new_hook_is_risk_marked, setup, teardown),
        cmocka_unit_test_setup_teardown(agent_configuration_is_marked_at_any_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(the_first_snapshot_is_seeded_from_the_users_repository, setup, teardown),
        cmocka_unit_test_setup_teardown(a_lying_pack_is_dropped_not_believed, setup, teardown),
        cmocka_unit_test_setup_teardown(the_packed_first_snapshot_is_the_serial_one, setup, teardown),
        cmocka_unit_test_setup_teardown(the_packed_first_snapshot_is_what_git_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(the_packed_snapshot_survives_files_swapped_while_read, setup, teardown),
        cmocka_unit_test_setup_teardown(patch_is_git_compatible, setup, teardown),
        cmocka_unit_test(the_packs_sha1_is_sha1),
        cmocka_unit_test(meta_survives_any_name),
        cmocka_unit_test_setup_teardown(revert_restores_and_refuses_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(revert_never_writes_through_a_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(gc_is_due_with_many_loose_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(gc_drops_expired_sessions_and_keeps_the_rest, setup, teardown),
        cmocka_unit_test(settings_are_checked),
        cmocka_unit_test(the_store_wire_carries_messages_larger_than_a_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
