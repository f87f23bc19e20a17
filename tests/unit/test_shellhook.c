/* Unit tests for starting shells with corral's hook (shellhook.h): which
 * command lines get it and how, and that the compiled-in scripts are
 * complete and written out intact. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/shellhook.h"

static void bash_gets_rcfile(void **state)
{
    (void)state;
    char *plain[] = {"/bin/bash", NULL}, *interactive[] = {"bash", "-i", NULL};
    char **argv, **env;
    assert_true(shellhook_apply(plain, "/run/corral/shell", &argv, &env));
    assert_string_equal(argv[0], "/bin/bash");
    assert_string_equal(argv[1], "--rcfile");
    assert_string_equal(argv[2], "/run/corral/shell/corral.bash");
    assert_string_equal(argv[3], "-i");
    assert_null(argv[4]);
    assert_null(env);
    shellhook_free(argv, env);
    assert_true(shellhook_apply(interactive, "/h", &argv, &env));
    assert_string_equal(argv[2], "/h/corral.bash");
    shellhook_free(argv, env);
}

/* A login bash reads no --rcfile: it starts as an interactive bash whose
 * rcfile reads the login files (CORRAL_LOGIN_SHELL). */
static void login_bash_gets_rcfile_and_its_profile(void **state)
{
    (void)state;
    char *forms[][4] = {{"bash", "-l", NULL}, {"bash", "--login", NULL}, {"bash", "-il", NULL},
                        {"bash", "-i", "-l", NULL}, {"/bin/bash", "-l", "-i", NULL}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char **argv, **env;
        assert_true(shellhook_apply(forms[i], "/h", &argv, &env));
        assert_string_equal(argv[1], "--rcfile");
        assert_string_equal(argv[2], "/h/corral.bash");
        assert_string_equal(argv[3], "-i");
        assert_null(argv[4]);
        assert_non_null(env);
        assert_string_equal(env[0], "CORRAL_LOGIN_SHELL=1");
        assert_null(env[1]);
        shellhook_free(argv, env);
    }
}

static void zsh_gets_zdotdir(void **state)
{
    (void)state;
    char *zsh[] = {"/usr/bin/zsh", NULL};
    char **argv, **env;
    setenv("ZDOTDIR", "/home/me/.zsh", 1);
    assert_true(shellhook_apply(zsh, "/run/corral/shell", &argv, &env));
    assert_string_equal(argv[0], "/usr/bin/zsh");
    assert_null(argv[1]);
    assert_string_equal(env[0], "ZDOTDIR=/run/corral/shell/zsh");
    assert_string_equal(env[1], "CORRAL_USER_ZDOTDIR=/home/me/.zsh");
    shellhook_free(argv, env);
    unsetenv("ZDOTDIR");
}

/* A script, -c, a login shell or another shell: left as asked. */
static void others_untouched(void **state)
{
    (void)state;
    char *c[] = {"bash", "-c", "echo hi", NULL}, *script[] = {"bash", "build.sh", NULL};
    char *login[] = {"zsh", "-l", NULL}, *fish[] = {"fish", NULL}, *sh[] = {"sh", NULL};
    char *login_c[] = {"bash", "-l", "-c", "echo hi", NULL}, *login_script[] = {"bash", "-l", "build.sh", NULL};
    char **argv, **env;
    char **cases[] = {c, script, login, fish, sh, login_c, login_script};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_false(shellhook_apply(cases[i], "/h", &argv, &env));
        assert_null(argv);
        assert_null(env);
    }
}

static void scripts_written(void **state)
{
    (void)state;
    char dir[] = "/tmp/corral-hook-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char err[512];
    assert_int_equal(shellhook_install(dir, err, sizeof err), 0);
    size_t n = 0;
    for (const shellhook_file *f = shellhook_files; f->name; f++, n++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, f->name);
        FILE *fp = fopen(path, "r");
        assert_non_null(fp);
        static char buf[65536];
        size_t len = fread(buf, 1, sizeof buf - 1, fp);
        buf[len] = 0;
        fclose(fp);
        assert_string_equal(buf, f->content);
        unlink(path);
    }
    /* corral.bash, path.bash (BASH_ENV), agent-env.sh (CLAUDE_ENV_FILE) and
     * zsh's .zshenv, .zprofile, .zshrc */
    assert_int_equal(n, 6);
    char sub[512];
    snprintf(sub, sizeof sub, "%s/zsh", dir);
    rmdir(sub);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bash_gets_rcfile),
        cmocka_unit_test(login_bash_gets_rcfile_and_its_profile),
        cmocka_unit_test(zsh_gets_zdotdir),
        cmocka_unit_test(others_untouched),
        cmocka_unit_test(scripts_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
