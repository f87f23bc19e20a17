/* Unit tests for resolving paths that come from requests (pathres.h):
 * symlinks inside writable roots are refused, others followed, "." and
 * ".." applied, missing paths refused; on a real scratch tree. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/pathres.h"
#include "base/util.h"

static char base[PATH_MAX]; /* canonical scratch root */

static char *at(const char *rel)
{
    return xasprintf("%s/%s", base, rel);
}

static void mk(const char *rel)
{
    char *p = at(rel);
    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
}

static void ln(const char *target, const char *rel)
{
    char *p = at(rel);
    assert_int_equal(symlink(target, p), 0);
    free(p);
}

static int setup(void **state)
{
    (void)state;
    char tmpl[] = "/var/tmp/corral-pathres-XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, base))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd = xasprintf("rm -rf '%s'", base);
    int rc = system(cmd);
    free(cmd);
    return rc == 0 ? 0 : -1;
}

static void test_resolves_and_refuses(void **state)
{
    (void)state;
    mk("ws");
    mk("ws/out");
    mk("ws/.git");
    mk("ws/.git/hooks");
    mk("outside");
    mk("real");
    ln("../outside", "ws/out-link");       /* inside the writable workspace */
    ln(".git/hooks", "ws/build");          /* the review's "build -> .git/hooks" */
    ln("real", "alias");                   /* outside every writable root */
    char *ws = at("ws");
    char *writable[] = {ws, NULL};
    char err[PATH_MAX + 512];

    char *p = at("ws/out");
    char *r = pathres_resolve(p, writable, err, sizeof err);
    assert_non_null(r);
    assert_string_equal(r, p);
    free(r);
    free(p);

    /* A symlink the sandbox could re-point: refused, naming it. */
    p = at("ws/out-link");
    r = pathres_resolve(p, writable, err, sizeof err);
    assert_null(r);
    assert_non_null(strstr(err, "out-link"));
    assert_non_null(strstr(err, "writable root"));
    free(p);
    p = at("ws/build/pre-commit");
    assert_null(pathres_resolve(p, writable, err, sizeof err));
    free(p);

    /* ".." through a symlink in the workspace is refused too. */
    p = at("ws/out-link/../outside");
    assert_null(pathres_resolve(p, writable, err, sizeof err));
    free(p);

    /* A symlink outside the writable roots is followed. */
    p = at("alias");
    r = pathres_resolve(p, writable, err, sizeof err);
    char *want = at("real");
    assert_non_null(r);
    assert_string_equal(r, want);
    free(r);
    free(want);
    free(p);

    /* "." and ".." are applied to the resolved path. */
    p = at("ws/./out/../out");
    r = pathres_resolve(p, writable, err, sizeof err);
    want = at("ws/out");
    assert_non_null(r);
    assert_string_equal(r, want);
    free(r);
    free(want);
    free(p);

    /* Without writable roots every symlink is followed. */
    p = at("ws/out-link");
    r = pathres_resolve(p, NULL, err, sizeof err);
    want = at("outside");
    assert_non_null(r);
    assert_string_equal(r, want);
    free(r);
    free(want);
    free(p);

    /* Missing, relative, or absurdly long: refused with a reason. */
    p = at("ws/missing");
    assert_null(pathres_resolve(p, writable, err, sizeof err));
    assert_non_null(strstr(err, "No such file"));
    free(p);
    assert_null(pathres_resolve("ws/out", writable, err, sizeof err));
    assert_non_null(strstr(err, "not an absolute path"));
    char *huge = xmalloc(PATH_MAX + 10);
    memset(huge, 'a', PATH_MAX + 9);
    huge[0] = '/';
    huge[PATH_MAX + 9] = '\0';
    assert_null(pathres_resolve(huge, writable, err, sizeof err));
    free(huge);
    r = pathres_resolve("/", writable, err, sizeof err);
    assert_string_equal(r, "/");
    free(r);
    free(ws);
}

static void test_loop(void **state)
{
    (void)state;
    ln("loop-b", "loop-a");
    ln("loop-a", "loop-b");
    char err[PATH_MAX + 512];
    char *p = at("loop-a");
    assert_null(pathres_resolve(p, NULL, err, sizeof err));
    assert_non_null(strstr(err, "too many levels"));
    free(p);
}

static void test_under(void **state)
{
    (void)state;
    assert_true(pathres_under("/ws", "/ws"));
    assert_true(pathres_under("/ws/a", "/ws"));
    assert_false(pathres_under("/ws2", "/ws"));
    assert_true(pathres_under("/anything", "/"));
    assert_true(pathres_under("/ws/a", "/ws/"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolves_and_refuses),
        cmocka_unit_test(test_loop),
        cmocka_unit_test(test_under),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
