/*
 * safety.c - see safety.h.  The lists follow the Codex CLI's
 * is_safe_command.rs and is_dangerous_command.rs (codex.md 4.5-4.6), except
 * that git is not safe.
 */
#include "config.h"

#include "safety.h"
#include "shsplit.h"

#include <string.h>
#include <strings.h>

static const char *basename_of(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* base64 writes a file with -o / --output. */
static bool base64_safe(char *const *argv)
{
    for (char *const *a = argv + 1; *a; a++)
        if (strcmp(*a, "--output") == 0 || has_prefix(*a, "--output=") || has_prefix(*a, "-o"))
            return false;
    return true;
}

/* find runs programs and writes files through these. */
static bool find_safe(char *const *argv)
{
    static const char *const unsafe[] = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint",
                                         "-fprint0", "-fprintf", NULL};
    for (char *const *a = argv + 1; *a; a++)
        if (in_list(*a, unsafe))
            return false;
    return true;
}

/* rg runs a preprocessor (--pre), a program for the host name, or
 * decompressors (-z, also grouped like -nz). */
static bool rg_safe(char *const *argv)
{
    for (char *const *a = argv + 1; *a; a++) {
        const char *s = *a;
        if (strcmp(s, "--pre") == 0 || has_prefix(s, "--pre=") || strcmp(s, "--hostname-bin") == 0 ||
            has_prefix(s, "--hostname-bin=") || strcmp(s, "--search-zip") == 0)
            return false;
        if (s[0] == '-' && s[1] != '-' && strchr(s + 1, 'z'))
            return false;
    }
    return true;
}

/* Only `sed -n N[,M]p [file]`: sed can write files and run commands. */
static bool sed_safe(char *const *argv)
{
    size_t n = 0;
    while (argv[n])
        n++;
    if (n < 3 || n > 4 || strcmp(argv[1], "-n") != 0)
        return false;
    const char *s = argv[2];
    size_t len = strlen(s);
    if (len < 2 || s[len - 1] != 'p')
        return false;
    bool digit = false, comma = false;
    for (size_t i = 0; i + 1 < len; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digit = true;
        else if (s[i] == ',' && digit && !comma)
            comma = true, digit = false;
        else
            return false;
    }
    return digit;
}

static bool argv_safe(char *const *argv)
{
    static const char *const always[] = {"cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id",
                                         "ls", "nl", "paste", "pwd", "rev", "seq", "stat", "tail", "tr",
                                         "true", "uname", "uniq", "wc", "which", "whoami", "numfmt", "tac",
                                         NULL};
    if (!argv[0])
        return false;
    const char *cmd = basename_of(argv[0]);
    if (in_list(cmd, always))
        return true;
    if (strcmp(cmd, "base64") == 0)
        return base64_safe(argv);
    if (strcmp(cmd, "find") == 0)
        return find_safe(argv);
    if (strcmp(cmd, "rg") == 0)
        return rg_safe(argv);
    if (strcmp(cmd, "sed") == 0)
        return sed_safe(argv);
    return false;
}

bool safety_known_safe(char *const *argv)
{
    const char *script = shsplit_shell_script(argv);
    if (!script)
        return argv_safe(argv);
    sh_commands cmds;
    if (shsplit_plain(script, &cmds) != 0)
        return false;
    bool safe = cmds.n > 0;
    for (size_t i = 0; i < cmds.n && safe; i++)
        safe = argv_safe(cmds.cmds[i]);
    sh_commands_free(&cmds);
    return safe;
}

/* rm -f, -rf, -fr, --force...: a force flag before "--". */
static bool forced_rm(char *const *argv)
{
    for (char *const *a = argv + 1; *a; a++) {
        if (strcmp(*a, "--") == 0)
            return false;
        if (strcmp(*a, "--force") == 0)
            return true;
        if ((*a)[0] == '-' && (*a)[1] != '-' && strchr(*a + 1, 'f'))
            return true;
    }
    return false;
}

static bool argv_dangerous(char *const *argv, int depth)
{
    if (!argv[0] || depth > 8)
        return false;
    const char *cmd = basename_of(argv[0]);
    if (strcmp(cmd, "rm") == 0)
        return forced_rm(argv);
    if (strcmp(cmd, "sudo") == 0)
        return argv_dangerous(argv + 1, depth + 1);
    return false;
}

bool safety_dangerous(char *const *argv)
{
    if (argv_dangerous(argv, 0))
        return true;
    const char *script = shsplit_shell_script(argv);
    if (!script)
        return false;
    sh_commands cmds;
    shsplit_literal(script, &cmds);
    bool danger = false;
    for (size_t i = 0; i < cmds.n && !danger; i++)
        danger = argv_dangerous(cmds.cmds[i], 0);
    sh_commands_free(&cmds);
    return danger;
}

bool safety_likely_sandbox_denied(int exit_code, const char *output, size_t len, const char **why)
{
    static const char *const keywords[] = {"operation not permitted", "permission denied", "read-only file system",
                                           "seccomp", "sandbox", "landlock", "failed to write file", NULL};
    *why = NULL;
    if (exit_code == 0)
        return false;
    for (const char *const *k = keywords; *k; k++) {
        size_t kl = strlen(*k);
        for (size_t i = 0; i + kl <= len; i++) {
            if (strncasecmp(output + i, *k, kl) == 0) {
                *why = *k;
                return true;
            }
        }
    }
    if (exit_code == 2 || exit_code == 126 || exit_code == 127)
        return false;
    if (exit_code == 128 + 31) {
        *why = "killed by SIGSYS";
        return true;
    }
    return false;
}
