/*
 * safety.c - see safety.h.  The lists follow the Codex CLI's
 * is_safe_command.rs and is_dangerous_command.rs, except
 * that git is not safe.
 */
#include "config.h"

#include "policy/safety.h"
#include "sandbox/sbutil.h"
#include "policy/shsplit.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- a sandbox-shaped failure -------------------------------------------- */

/* needle in hay[0..len), any case. */
static const char *find_nocase(const char *hay, size_t len, const char *needle)
{
    size_t nl = strlen(needle);
    for (size_t i = 0; i + nl <= len; i++)
        if (strncasecmp(hay + i, needle, nl) == 0)
            return hay + i;
    return NULL;
}

static bool under_any(const char *path, char *const *roots)
{
    for (char *const *r = roots; r && *r; r++)
        if (sb_path_under(path, *r))
            return true;
    return false;
}

/* path (absolute, maybe missing) as the host sees it: the canonical path of
 * its longest existing ancestor, with the rest appended.  NULL if even "/"
 * fails. */
static char *host_path(const char *path)
{
    char *copy = sb_strdup(path);
    char canon[PATH_MAX];
    size_t keep = strlen(copy);
    for (;;) {
        copy[keep] = '\0';
        if (realpath(keep ? copy : "/", canon)) {
            const char *rest = path + keep; /* "" or "/more/parts" */
            char *out = strcmp(canon, "/") == 0 ? sb_strdup(*rest ? rest : "/") : sb_printf("%s%s", canon, rest);
            free(copy);
            return out;
        }
        if (keep == 0) {
            free(copy);
            return NULL;
        }
        char *slash = strrchr(copy, '/');
        keep = slash ? (size_t)(slash - copy) : 0;
    }
}

/* Could the user do it on the host (so the sandbox is what stopped it)?
 * An existing path readable and writable, or a missing one whose nearest
 * existing directory is writable. */
static bool host_would_allow(const char *path)
{
    if (access(path, F_OK) == 0)
        return access(path, R_OK | W_OK) == 0;
    char *dir = sb_strdup(path);
    bool ok = false;
    for (char *slash; (slash = strrchr(dir, '/')) != NULL;) {
        *slash = '\0';
        const char *d = *dir ? dir : "/";
        if (access(d, F_OK) == 0) {
            ok = access(d, W_OK | X_OK) == 0;
            break;
        }
        if (!*dir)
            break;
    }
    free(dir);
    return ok;
}

/* The next path-like word of line[*i..len) (a word '/...', './...',
 * '../...', or a quoted word: a file name in quotes, as coreutils and
 * Python print them) as a host path (relative ones from cwd); NULL when
 * there is none left.  Caller frees. */
static char *next_path(const char *line, size_t len, size_t *i, const char *cwd)
{
    while (*i < len) {
        char q = line[*i];
        size_t start, end;
        if (q == '\'' || q == '"' || q == '`') {
            start = *i + 1;
            end = start;
            while (end < len && line[end] != q && line[end] != '\'' && line[end] != '"')
                end++;
            *i = end + 1;
        } else if (q == '/' || (q == '.' && *i + 1 < len && (line[*i + 1] == '/' || line[*i + 1] == '.'))) {
            if (*i > 0 && line[*i - 1] != ' ' && line[*i - 1] != '(' && line[*i - 1] != '=' &&
                line[*i - 1] != '\t') {
                (*i)++;
                continue;
            }
            start = *i;
            end = *i;
            while (end < len && line[end] != ' ' && line[end] != ':' && line[end] != ',' && line[end] != ')' &&
                   line[end] != '\t')
                end++;
            *i = end;
        } else {
            (*i)++;
            continue;
        }
        if (end <= start || end - start >= PATH_MAX)
            continue;
        char word[PATH_MAX];
        memcpy(word, line + start, end - start);
        word[end - start] = '\0';
        if (strchr(word, ' ') && word[0] != '/')
            continue; /* a quoted phrase, not a file */
        char *abs = word[0] == '/' ? sb_strdup(word) : sb_path_join(cwd ? cwd : "/", word);
        char *host = host_path(abs);
        free(abs);
        if (host)
            return host;
    }
    return NULL;
}

static void keep_line(safety_denial *d, const char *line, size_t n)
{
    snprintf(d->line, sizeof d->line, "%.*s", (int)(n < sizeof d->line - 1 ? n : sizeof d->line - 1), line);
}

bool safety_sandbox_denial(int exit_code, const char *output, size_t len, const char *cwd,
                           char *const *write_roots, safety_denial *d)
{
    memset(d, 0, sizeof *d);
    const char *keyword;
    if (!safety_likely_sandbox_denied(exit_code, output, len, &keyword))
        return false;
    if (exit_code == 128 + 31) {
        d->kind = DENIAL_SIGSYS;
        return true;
    }
    /* Line by line: the evidence and the path it names sit together. */
    const char *end = output + len;
    for (const char *line = output; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        bool erofs = find_nocase(line, n, "read-only file system") != NULL;
        bool eperm = find_nocase(line, n, "operation not permitted") != NULL;
        bool eacces = find_nocase(line, n, "permission denied") != NULL;
        if (erofs) {
            d->kind = DENIAL_READONLY;
            keep_line(d, line, n);
            size_t i = 0;
            char *path = next_path(line, n, &i, cwd);
            if (path) {
                snprintf(d->path, sizeof d->path, "%s", path);
                d->inside_roots = under_any(path, write_roots);
            }
            free(path);
            return true;
        }
        if (eperm || eacces) {
            bool saw_path = false;
            size_t i = 0;
            for (char *path; (path = next_path(line, n, &i, cwd)) != NULL;) {
                saw_path = true;
                bool outside = !under_any(path, write_roots) && host_would_allow(path);
                if (outside) {
                    d->kind = DENIAL_PATH;
                    snprintf(d->path, sizeof d->path, "%s", path);
                    keep_line(d, line, n);
                }
                free(path);
                if (outside)
                    return true;
            }
            if (eperm && !saw_path) {
                d->kind = DENIAL_CALL;
                keep_line(d, line, n);
                return true;
            }
        }
        line += n + 1;
    }
    return false;
}

void safety_denial_text(const safety_denial *d, char *out, size_t outlen)
{
    switch (d->kind) {
    case DENIAL_SIGSYS:
        snprintf(out, outlen, "it was killed by SIGSYS (a system call the sandbox forbids)");
        break;
    case DENIAL_READONLY:
        snprintf(out, outlen, "read-only file system, the sandbox's view%s%s: \"%s\"", d->path[0] ? " of " : "",
                 d->path, d->line);
        break;
    case DENIAL_PATH:
        snprintf(out, outlen, "denied on %s, outside the sandbox's write roots, which the host allows: \"%s\"",
                 d->path, d->line);
        break;
    case DENIAL_CALL:
        snprintf(out, outlen, "operation not permitted, a call the sandbox refuses: \"%s\"", d->line);
        break;
    default:
        snprintf(out, outlen, "no sign of the sandbox");
    }
}

/* The directory to name in --add-write for path: itself when it is an
 * existing directory, else its nearest existing ancestor. */
static void writable_dir_for(const char *path, char *out, size_t outlen)
{
    char *dir = sb_strdup(path);
    struct stat st;
    while (!(stat(dir, &st) == 0 && S_ISDIR(st.st_mode))) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) {
            snprintf(dir, strlen(dir) + 1, "/");
            break;
        }
        *slash = '\0';
    }
    snprintf(out, outlen, "%s", dir);
    free(dir);
}

void safety_denial_advice(const safety_denial *d, char *out, size_t outlen)
{
    char dir[PATH_MAX];
    switch (d->kind) {
    case DENIAL_READONLY:
    case DENIAL_PATH:
        if (!d->path[0]) {
            snprintf(out, outlen, "the sandbox refused a write outside the paths it may write (\"%s\"); to allow "
                     "it, ask with --sandbox-permissions with_additional_permissions --add-write DIR, or from "
                     "inside a session: corral escalate -w DIR -- COMMAND",
                     d->line);
        } else if (d->kind == DENIAL_READONLY && d->inside_roots) {
            snprintf(out, outlen, "the sandbox keeps %s read-only (it can make your own tools run code: git's "
                     "hooks and config, .corral, ...); no extra write root opens it: only a run outside the "
                     "sandbox could write it (--sandbox-permissions require_escalated, or corral escalate -- "
                     "COMMAND), which a human must approve",
                     d->path);
        } else {
            writable_dir_for(d->path, dir, sizeof dir);
            snprintf(out, outlen, "the sandbox refused to write %s (outside the paths it may write); to allow "
                     "it, ask with --sandbox-permissions with_additional_permissions --add-write %s, or from "
                     "inside a session: corral escalate -w %s -- COMMAND",
                     d->path, dir, dir);
        }
        break;
    case DENIAL_CALL:
        snprintf(out, outlen, "the sandbox refused a system call (\"%s\"): with the network off only loopback "
                 "works; to reach the network ask with --sandbox-permissions with_additional_permissions "
                 "--add-net (corral escalate --net -- COMMAND inside a session), or run it outside the sandbox "
                 "with --sandbox-permissions require_escalated",
                 d->line);
        break;
    case DENIAL_SIGSYS:
        snprintf(out, outlen, "the sandbox's filter killed it (SIGSYS); run it outside the sandbox with "
                 "--sandbox-permissions require_escalated (or corral escalate -- COMMAND) if it must make that "
                 "call");
        break;
    default:
        snprintf(out, outlen, "no sign of the sandbox");
    }
}

/* ---- rules derived from a request ------------------------------------------ */

bool safety_rule_prefix_allowed(char *const *prefix, char *why, size_t whylen)
{
    /* Programs that run whatever their arguments say: a rule on them
     * alone (or on them with a script name, which the sandbox can
     * rewrite) allows anything. */
    static const char *const runners[] = {
        "bash", "sh", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox",
        "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php",
        "lua", "luajit", "tclsh", "wish", "Rscript", "osascript", "pwsh", "powershell", "java", "jshell",
        "awk", "gawk", "mawk", "nawk", "env", "sudo", "doas", "su", "runuser", "pkexec", "xargs", "nohup",
        "timeout", "nice", "ionice", "stdbuf", "setsid", "unbuffer", "time", "exec", "eval", "command",
        "builtin", "script", "expect", "watch", "parallel", "flock", "chroot", "unshare", "nsenter", "strace",
        "ltrace", "gdb", "valgrind", "npx", "uvx", "pipx", "bunx", "pnpx", NULL};
    if (!prefix || !prefix[0] || !prefix[0][0]) {
        snprintf(why, whylen, "there is no command to make a rule of");
        return false;
    }
    const char *base = basename_of(prefix[0]);
    /* python3.11, perl5.36 ... */
    char name[64];
    snprintf(name, sizeof name, "%s", base);
    size_t k = strlen(name);
    while (k > 0 && ((name[k - 1] >= '0' && name[k - 1] <= '9') || name[k - 1] == '.'))
        name[--k] = '\0';
    if (in_list(base, runners) || (k > 0 && in_list(name, runners))) {
        snprintf(why, whylen, "a rule starting with '%s' would allow any program or script it runs", base);
        return false;
    }
    return true;
}

/* ---- risk hints ------------------------------------------------------------ */

/* s names a .git directory or something in one: a path component ".git"
 * (not "y.git" in a URL, not ".github"). */
static bool names_git_dir(const char *s)
{
    for (const char *p = strstr(s, ".git"); p; p = strstr(p + 1, ".git")) {
        bool starts = p == s || p[-1] == '/' || p[-1] == ' ' || p[-1] == '=' || p[-1] == '\'' || p[-1] == '"';
        bool ends = p[4] == '\0' || p[4] == '/' || p[4] == ' ' || p[4] == '\'' || p[4] == '"';
        if (starts && ends)
            return true;
    }
    return false;
}

/* s has "| SHELL" (also "| sudo SHELL", "|SHELL -"): what it writes is run. */
static bool pipes_into_shell(const char *s)
{
    static const char *const shells[] = {"sh", "bash", "zsh", "dash", "ksh", "fish", NULL};
    for (const char *p = strchr(s, '|'); p; p = strchr(p + 1, '|')) {
        const char *q = p + 1;
        if (*q == '|') { /* || is not a pipe */
            p++;
            continue;
        }
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, "sudo ", 5) == 0) {
            q += 5;
            for (;;) { /* sudo's options, up to the command */
                while (*q == ' ')
                    q++;
                if (*q != '-')
                    break;
                while (*q && *q != ' ')
                    q++;
            }
        }
        const char *base = q;
        for (const char *r = q; *r && *r != ' '; r++)
            if (*r == '/')
                base = r + 1; /* /bin/sh */
        for (const char *const *sh = shells; *sh; sh++) {
            size_t n = strlen(*sh);
            if (strncmp(base, *sh, n) == 0 && (base[n] == '\0' || base[n] == ' ' || base[n] == ';'))
                return true;
        }
    }
    return false;
}

size_t safety_risk_hints(char *const *argv, const char *workspace, char *const *write, bool escalated,
                         bool network, const char **out, size_t max)
{
    bool outside = false, git = false, sudo = false, pipe_sh = false;
    for (char *const *w = write; w && *w; w++) {
        outside = outside || !workspace || !sb_path_under(*w, workspace);
        git = git || names_git_dir(*w);
    }
    for (char *const *p = argv; p && *p; p++) {
        git = git || names_git_dir(*p);
        sudo = sudo || strcmp(basename_of(*p), "sudo") == 0 || strstr(*p, "sudo ") != NULL;
        pipe_sh = pipe_sh || pipes_into_shell(*p);
    }
    const char *all[6];
    size_t n = 0;
    if (escalated)
        all[n++] = "runs without the sandbox";
    if (outside)
        all[n++] = "writes outside the workspace";
    if (git)
        all[n++] = "touches .git";
    if (sudo)
        all[n++] = "sudo";
    if (pipe_sh)
        all[n++] = "pipes into a shell";
    if (network)
        all[n++] = "network access";
    for (size_t i = 0; i < n && i < max; i++)
        out[i] = all[i];
    return n < max ? n : max;
}
