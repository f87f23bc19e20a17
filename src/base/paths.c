/*
 * paths.c - locating corral's directories.  The runtime directory holds the
 * admin socket, so it is checked like tmux checks its socket directory: a
 * directory planted by another user in /tmp must never be used.
 */
#include "config.h"

#include "base/paths.h"
#include "base/util.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *paths_home(void)
{
    const char *h = getenv("HOME");
    if (h && h[0] == '/')
        return h;
    struct passwd *pw = getpwuid(getuid());
    if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
        return pw->pw_dir;
    return "/";
}

const char *paths_user_shell(void)
{
    const char *s = getenv("SHELL");
    if (s && s[0] == '/' && access(s, X_OK) == 0)
        return s;
    struct passwd *pw = getpwuid(getuid());
    if (pw && pw->pw_shell && pw->pw_shell[0] == '/' && access(pw->pw_shell, X_OK) == 0)
        return pw->pw_shell;
    return "/bin/sh";
}

/* $VAR/corral if VAR is set to an absolute path, else $HOME/fallback/corral. */
static char *xdg_dir(const char *var, const char *fallback)
{
    const char *v = getenv(var);
    if (v && v[0] == '/')
        return xasprintf("%s/corral", v);
    return xasprintf("%s/%s/corral", paths_home(), fallback);
}

char *paths_state_dir(void)
{
    return xdg_dir("XDG_STATE_HOME", ".local/state");
}

char *paths_config_dir(void)
{
    return xdg_dir("XDG_CONFIG_HOME", ".config");
}

/* Make sure dir is a real directory owned by us with mode 0700. */
static int check_private_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) < 0) {
        snprintf(err, errlen, "cannot stat %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is not a directory (a symlink or file is in the way); remove it", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s is owned by uid %u, not by you (uid %u); remove it or set XDG_RUNTIME_DIR",
                 dir, (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    if ((st.st_mode & 0777) != 0700 && chmod(dir, 0700) < 0) {
        snprintf(err, errlen, "cannot make %s private (chmod 0700): %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

char *paths_runtime_dir(char *err, size_t errlen)
{
    const char *x = getenv("XDG_RUNTIME_DIR");
    char *dir;
    struct stat st;
    if (x && x[0] == '/' && stat(x, &st) == 0 && S_ISDIR(st.st_mode))
        dir = xasprintf("%s/corral", x);
    else
        dir = xasprintf("/tmp/corral-%u", (unsigned)geteuid());
    if (check_private_dir(dir, err, errlen) < 0) {
        free(dir);
        return NULL;
    }
    return dir;
}

char *paths_socket(char *err, size_t errlen)
{
    char *dir = paths_runtime_dir(err, errlen);
    if (!dir)
        return NULL;
    char *sock = xasprintf("%s/default.sock", dir);
    free(dir);
    return sock;
}
