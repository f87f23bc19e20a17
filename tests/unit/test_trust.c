/* Unit tests for trusted workspaces pinned to their rules (trust.h,
 * rules_ws.h): SHA-256 against the standard's vectors, the trust file
 * (old lines without a digest, damaged records, names with odd bytes),
 * what counts as a change and how it is told, and the rules cache loading
 * a trusted workspace's rules only while they are the trusted ones. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/rules.h"
#include "policy/rules_ws.h"
#include "base/sha256.h"
#include "policy/trust.h"

static char dir[] = "/tmp/corral-test-trust-XXXXXX";
static char ws[200], rdir[240];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    char cfg[300];
    snprintf(cfg, sizeof cfg, "%s/config", dir);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    snprintf(ws, sizeof ws, "%s/ws", dir);
    snprintf(rdir, sizeof rdir, "%s/.corral/rules", ws);
    return mkdir_p(rdir, 0755);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *rules_path(const char *name)
{
    static char p[400];
    snprintf(p, sizeof p, "%s/%s", rdir, name);
    return p;
}

/* ---- SHA-256 ------------------------------------------------------------------------------ */

static void expect_sha(const void *data, size_t len, const char *want)
{
    unsigned char d[SHA256_LEN];
    char hex[SHA256_HEX_LEN + 1];
    sha256(data, len, d);
    sha256_hex(d, hex);
    assert_string_equal(hex, want);
    /* The same fed in pieces of every size from 1 to 130 bytes. */
    for (size_t step = 1; step <= 130 && len; step++) {
        sha256_ctx c;
        sha256_init(&c);
        for (size_t i = 0; i < len; i += step)
            sha256_update(&c, (const char *)data + i, len - i < step ? len - i : step);
        sha256_final(&c, d);
        sha256_hex(d, hex);
        assert_string_equal(hex, want);
    }
}

/* FIPS 180-4's examples (and NIST's long-message vector). */
static void sha256_vectors(void **state)
{
    (void)state;
    expect_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    expect_sha(m448, strlen(m448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsm"
                       "nopqrstnopqrstu";
    expect_sha(m896, strlen(m896), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    unsigned char d[SHA256_LEN];
    char hex[SHA256_HEX_LEN + 1];
    sha256(million, 1000000, d);
    sha256_hex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
    unsigned char back[SHA256_LEN];
    assert_int_equal(sha256_from_hex(hex, strlen(hex), back), 0);
    assert_memory_equal(back, d, SHA256_LEN);
    assert_int_equal(sha256_from_hex(hex, 63, back), -1);
    hex[5] = 'g';
    assert_int_equal(sha256_from_hex(hex, 64, back), -1);
}

/* ---- the trust file ---------------------------------------------------------------------- */

static trust_rules two_files(const char *a_text, const char *b_text)
{
    trust_rules r = {0};
    r.n = 2;
    r.files = calloc(2, sizeof *r.files);
    r.files[0] = (trust_rulefile){strdup("a.rules"), {0}, true};
    r.files[1] = (trust_rulefile){strdup("b.rules"), {0}, true};
    sha256(a_text, strlen(a_text), r.files[0].sha);
    sha256(b_text, strlen(b_text), r.files[1].sha);
    trust_rules_digest(&r);
    return r;
}

static void file_format(void **state)
{
    (void)state;
    trust_list l = {0};
    l.n = 2;
    l.v = calloc(2, sizeof *l.v);
    l.v[0] = (trust_entry){strdup("/old"), false, false, {0}};
    l.v[1] = (trust_entry){strdup("/w s"), true, false, two_files("x", "y")};
    free(l.v[1].rules.files[1].name);
    l.v[1].rules.files[1].name = strdup("odd\\name\nwith\x7f.rules");
    trust_rules_digest(&l.v[1].rules);
    buf_t b;
    buf_init(&b);
    trust_format(&b, &l);
    /* Readable: one line per directory, one per file, names escaped. */
    assert_non_null(strstr(b.data, "\n/old\nsha256:"));
    assert_non_null(strstr(b.data, " /w s\n  sha256:"));
    assert_non_null(strstr(b.data, " odd\\\\name\\x0awith\\x7f.rules\n"));
    trust_list back;
    trust_parse(b.data, b.len, &back);
    assert_int_equal(back.n, 2);
    assert_string_equal(back.v[0].dir, "/old");
    assert_false(back.v[0].pinned);
    assert_string_equal(back.v[1].dir, "/w s");
    assert_true(back.v[1].pinned);
    assert_false(back.v[1].damaged);
    assert_int_equal(back.v[1].rules.n, 2);
    assert_string_equal(back.v[1].rules.files[1].name, "odd\\name\nwith\x7f.rules");
    assert_memory_equal(back.v[1].rules.digest, l.v[1].rules.digest, SHA256_LEN);
    trust_list_free(&back);

    /* A file line edited by hand: the record no longer adds up. */
    char *edited = strdup(b.data);
    char *line = strstr(edited, "  sha256:") + 9;
    *line = *line == '0' ? '1' : '0';
    trust_parse(edited, strlen(edited), &back);
    assert_true(back.v[1].damaged);
    assert_false(trust_current(&back.v[1], &l.v[1].rules, NULL));
    buf_t why;
    buf_init(&why);
    trust_current(&back.v[1], &l.v[1].rules, &why);
    assert_string_equal(why.data, "/w s/.corral/rules: the record of what you trusted there does not add up (edited "
                                  "by hand?): review them and run `corral trust /w s` again");
    buf_free(&why);
    trust_list_free(&back);
    free(edited);
    buf_free(&b);
    trust_list_free(&l);

    /* Old files: one path per line, relative lines and doubles ignored, CRLF. */
    const char *old = "/a\r\nrelative/b\n/a\n\n# comment\n/c";
    trust_parse(old, strlen(old), &back);
    assert_int_equal(back.n, 2);
    assert_string_equal(back.v[0].dir, "/a");
    assert_string_equal(back.v[1].dir, "/c");
    assert_false(back.v[0].pinned);
    trust_list_free(&back);
}

/* What counts as a change, and the message that tells it. */
static void changes(void **state)
{
    (void)state;
    trust_entry e = {"/ws", true, false, two_files("x", "y")};
    trust_rules same = two_files("x", "y"), edited = two_files("x", "y2");
    assert_true(trust_current(&e, &same, NULL));
    buf_t why;
    buf_init(&why);
    assert_false(trust_current(&e, &edited, &why));
    assert_string_equal(why.data, "/ws/.corral/rules changed since you trusted it (b.rules changed): review them and "
                                  "run `corral trust /ws` again");
    /* a.rules removed, c.rules added (unreadable), b.rules kept. */
    trust_rules now = two_files("y", "z");
    free(now.files[0].name);
    now.files[0].name = strdup("b.rules");
    sha256("y", 1, now.files[0].sha);
    free(now.files[1].name);
    now.files[1].name = strdup("c.rules");
    now.files[1].readable = false;
    trust_rules_digest(&now);
    buf_reset(&why);
    assert_false(trust_current(&e, &now, &why));
    assert_string_equal(why.data, "/ws/.corral/rules changed since you trusted it (a.rules removed, c.rules added, "
                                  "unreadable): review them and run `corral trust /ws` again");
    /* An old record without a digest: nothing loads while there are rules. */
    trust_entry old = {"/ws", false, false, {0}};
    trust_rules none = {0};
    trust_rules_digest(&none);
    assert_true(trust_current(&old, &none, NULL));
    buf_reset(&why);
    assert_false(trust_current(&old, &same, &why));
    assert_string_equal(why.data, "/ws/.corral/rules: /ws was trusted before corral pinned trust to the rules it "
                                  "loads: review them and run `corral trust /ws` again");
    buf_free(&why);
    trust_rules_free(&e.rules);
    trust_rules_free(&same);
    trust_rules_free(&edited);
    trust_rules_free(&now);
}

/* ---- trusting and loading ------------------------------------------------------------------- */

static trust_change trust_now(void)
{
    char **files = rules_dir_list(rdir);
    trust_snapshot snap;
    trust_snapshot_read(files, &snap);
    char *file = trust_file(), err[512];
    trust_change was = TRUST_SAME;
    if (trust_add(file, ws, &snap.rules, &was, err, sizeof err) < 0)
        fail_msg("%s", err);
    free(file);
    trust_snapshot_free(&snap);
    rules_dir_list_free(files);
    return was;
}

/* The decision of the rules for `cmd x` in the workspace, and the errors. */
static rule_decision decision(rules_ws *c, const char *cmd, char **errors)
{
    char *argv[] = {(char *)cmd, "x", NULL};
    const rules_t *r = rules_ws_for(c, ws, NULL, NULL);
    rule_match *m;
    size_t n = rules_match(r, argv, false, &m);
    rule_decision d = rules_decide(m, n);
    rules_matches_free(m, n);
    *errors = rules_ws_errors(c);
    return d;
}

static void pinned_workspace(void **state)
{
    (void)state;
    write_file(rules_path("team.rules"), "prefix_rule(pattern=[\"touch\"], decision=\"forbidden\")\n");
    rules_ws *c = rules_ws_new();
    char *errors;
    assert_int_equal(decision(c, "touch", &errors), RULE_NONE); /* not trusted yet */
    assert_null(errors);
    assert_int_equal(trust_now(), TRUST_NEW);
    assert_int_equal(decision(c, "touch", &errors), RULE_FORBIDDEN);
    assert_null(errors);
    assert_int_equal(trust_now(), TRUST_SAME);

    /* A sandbox writes itself an allow rule: nothing of the workspace loads. */
    write_file(rules_path("zz-agent.rules"), "prefix_rule(pattern=[\"curl\"], decision=\"allow\")\n");
    assert_int_equal(decision(c, "curl", &errors), RULE_NONE);
    char want[1024];
    snprintf(want, sizeof want, "%s changed since you trusted it (zz-agent.rules added): review them and run "
                                "`corral trust %s` again\n", rdir, ws);
    assert_string_equal(errors, want);
    free(errors);
    assert_int_equal(decision(c, "touch", &errors), RULE_NONE); /* the team's rules neither */
    free(errors);

    /* The user reviews and trusts again: both load. */
    assert_int_equal(trust_now(), TRUST_REPINNED);
    assert_int_equal(decision(c, "curl", &errors), RULE_ALLOW);
    assert_null(errors);
    assert_int_equal(decision(c, "touch", &errors), RULE_FORBIDDEN);

    /* An edit in place, then a file swapped for a symlink: each stops it. */
    write_file(rules_path("zz-agent.rules"), "prefix_rule(pattern=[\"curl\"], decision=\"prompt\")\n");
    assert_int_equal(decision(c, "curl", &errors), RULE_NONE);
    assert_non_null(strstr(errors, "(zz-agent.rules changed)"));
    free(errors);
    assert_int_equal(trust_now(), TRUST_REPINNED);
    assert_int_equal(decision(c, "curl", &errors), RULE_PROMPT);
    assert_null(errors);
    char target[400];
    snprintf(target, sizeof target, "%s/elsewhere.rules", dir);
    write_file(target, "prefix_rule(pattern=[\"curl\"], decision=\"prompt\")\n");
    unlink(rules_path("zz-agent.rules"));
    assert_int_equal(symlink(target, rules_path("zz-agent.rules")), 0);
    assert_int_equal(decision(c, "touch", &errors), RULE_NONE);
    assert_non_null(strstr(errors, "(zz-agent.rules unreadable)"));
    assert_non_null(strstr(errors, "zz-agent.rules: is a symbolic link"));
    free(errors);
    char *file = trust_file(), err[512];
    char **files = rules_dir_list(rdir);
    trust_snapshot snap;
    trust_snapshot_read(files, &snap);
    assert_int_equal(trust_add(file, ws, &snap.rules, NULL, err, sizeof err), -1); /* never pinned */
    snprintf(want, sizeof want, "cannot trust %s: zz-agent.rules in its .corral/rules cannot be read", ws);
    assert_string_equal(err, want);
    trust_snapshot_free(&snap);
    rules_dir_list_free(files);
    unlink(rules_path("zz-agent.rules"));
    assert_int_equal(decision(c, "touch", &errors), RULE_NONE); /* removed: still not the trusted set */
    assert_non_null(strstr(errors, "(zz-agent.rules removed)"));
    free(errors);

    /* Removing the trust drops the error with it. */
    bool changed;
    assert_int_equal(trust_remove(file, ws, &changed, err, sizeof err), 0);
    assert_true(changed);
    assert_int_equal(decision(c, "touch", &errors), RULE_NONE);
    assert_null(errors);

    /* A line from before digests (an older corral): its rules do not load. */
    write_file(file, ws);
    assert_int_equal(decision(c, "touch", &errors), RULE_NONE);
    snprintf(want, sizeof want, "%s: %s was trusted before corral pinned trust to the rules it loads: review them "
                                "and run `corral trust %s` again\n", rdir, ws, ws);
    assert_string_equal(errors, want);
    free(errors);
    assert_int_equal(trust_now(), TRUST_REPINNED);
    assert_int_equal(decision(c, "touch", &errors), RULE_FORBIDDEN);
    assert_null(errors);
    free(file);
    rules_ws_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(file_format),
        cmocka_unit_test(changes),
        cmocka_unit_test(pinned_workspace),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
