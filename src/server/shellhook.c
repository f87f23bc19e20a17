/*
 * shellhook.c - writing the shell hook scripts and starting shells with
 * them (shellhook.h).
 */
#include "config.h"

#include "server/shellhook.h"
#include "base/paths.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write path atomically (a temporary file renamed over it). */
static int write_file(const char *path, const char *content, char *err, size_t errlen)
{
    char *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = -1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        goto out;
    }
    size_t len = strlen(content);
    ssize_t w = write(fd, content, len);
    if (close(fd) < 0 || w != (ssize_t)len) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, w < 0 ? strerror(errno) : "short write");
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) < 0) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    free(tmp);
    return rc;
}

int shellhook_install(const char *dir, char *err, size_t errlen)
{
    for (const shellhook_file *f = shellhook_files; f->name; f++) {
        char *path = xasprintf("%s/%s", dir, f->name);
        char *parent = xstrdup(path);
        *strrchr(parent, '/') = '\0';
        int rc = mkdir_p(parent, 0755);
        if (rc < 0) {
            snprintf(err, errlen, "cannot create %s: %s", parent, strerror(-rc));
            free(parent);
            free(path);
            return -1;
        }
        free(parent);
        rc = write_file(path, f->content, err, errlen);
        free(path);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

bool shellhook_apply(char *const *argv, const char *hookdir, char ***new_argv, char ***env)
{
    *new_argv = NULL;
    *env = NULL;
    if (!argv || !argv[0])
        return false;
    /* Only a plain interactive shell, a login one too for bash: with a
     * script, -c, or options of its own, the user asked for something
     * else. */
    size_t argc = 0;
    while (argv[argc])
        argc++;
    bool plain = argc == 1 || (argc == 2 && strcmp(argv[1], "-i") == 0);
    bool login = false;
    for (size_t i = 1; i < argc && argc <= 3; i++) {
        static const char *const login_opts[] = {"-l", "--login", "-il", "-li", NULL};
        bool known = strcmp(argv[i], "-i") == 0;
        for (const char *const *o = login_opts; *o && !known; o++)
            if (strcmp(argv[i], *o) == 0)
                known = login = true;
        if (!known) {
            login = false;
            break;
        }
    }
    const char *name = base_name(argv[0]);
    if (strcmp(name, "bash") == 0 && (plain || login)) {
        /* bash reads no --rcfile as a login shell: a login bash starts as
         * an interactive one whose rcfile reads the login files first
         * (corral.bash, CORRAL_LOGIN_SHELL). */
        char **a = xcalloc(5, sizeof *a);
        a[0] = xstrdup(argv[0]);
        a[1] = xstrdup("--rcfile");
        a[2] = xasprintf("%s/corral.bash", hookdir);
        a[3] = xstrdup("-i");
        *new_argv = a;
        if (login) {
            char **e = xcalloc(2, sizeof *e);
            e[0] = xstrdup("CORRAL_LOGIN_SHELL=1");
            *env = e;
        }
        return true;
    }
    if (!plain)
        return false;
    if (strcmp(name, "zsh") == 0) {
        char **a = xcalloc(argc + 1, sizeof *a);
        for (size_t i = 0; i < argc; i++)
            a[i] = xstrdup(argv[i]);
        const char *user = getenv("ZDOTDIR");
        char **e = xcalloc(3, sizeof *e);
        e[0] = xasprintf("ZDOTDIR=%s/zsh", hookdir);
        e[1] = xasprintf("CORRAL_USER_ZDOTDIR=%s", user && *user ? user : paths_home());
        *new_argv = a;
        *env = e;
        return true;
    }
    return false;
}

void shellhook_free(char **new_argv, char **env)
{
    for (char **p = new_argv; p && *p; p++)
        free(*p);
    free(new_argv);
    for (char **p = env; p && *p; p++)
        free(*p);
    free(env);
}
