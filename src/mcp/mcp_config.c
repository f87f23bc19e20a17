/*
 * mcp_config.c - the registration snippets of `corral mcp --print-config`.
 */
#include "config.h"

#include "mcp/mcp_config.h"
#include "base/quote.h"
#include "base/util.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *const mcp_config_env_names[] = {"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", NULL};

/* A TOML basic string; NULL when s is not UTF-8 (TOML holds only text). */
static char *toml_string(const char *s)
{
    size_t n = strlen(s);
    if (utf8_valid_prefix(s, n) != n)
        return NULL;
    buf_t b;
    buf_init(&b);
    buf_putc(&b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_printf(&b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            buf_printf(&b, "\\u%04x", *p);
        else
            buf_putc(&b, (char)*p);
    }
    buf_putc(&b, '"');
    return buf_steal(&b);
}

/* The variables of mcp_config_env_names set here to an absolute path. */
static bool env_set(const char *name, const char **value)
{
    const char *v = getenv(name);
    if (!v || v[0] != '/')
        return false;
    *value = v;
    return true;
}

static int print_codex(FILE *f, const char *exe, char *const *args, unsigned timeout, char *err, size_t errlen)
{
    buf_t b;
    buf_init(&b);
    char *cmd = toml_string(exe);
    bool ok = cmd != NULL;
    buf_printf(&b, "# corral: run Codex's commands in corral's sandboxed sessions (see corral mcp --help).\n"
                   "# In ~/.codex/config.toml:\n"
                   "[mcp_servers.corral]\ncommand = %s\nargs = [", cmd ? cmd : "");
    free(cmd);
    for (size_t i = 0; args[i] && ok; i++) {
        char *a = toml_string(args[i]);
        ok = a != NULL;
        buf_printf(&b, "%s%s", i ? ", " : "", a ? a : "");
        free(a);
    }
    buf_puts(&b, "]\n");
    /* Codex starts its MCP servers with a filtered environment: these say
     * which corral server (and config) is yours. */
    bool any = false;
    for (const char *const *n = mcp_config_env_names; *n && ok; n++) {
        const char *v;
        if (!env_set(*n, &v))
            continue;
        char *tv = toml_string(v);
        ok = tv != NULL;
        buf_printf(&b, "%s%s = %s", any ? ", " : "env = { ", *n, tv ? tv : "");
        free(tv);
        any = true;
    }
    if (any)
        buf_puts(&b, " }\n");
    buf_printf(&b, "# corral asks you, not Codex, before anything leaves the sandbox.\n"
                   "default_tools_approval_mode = \"approve\"\n"
                   "# Longer than any wait of a call (a person may be answering an approval).\n"
                   "tool_timeout_sec = %u\n"
                   "# Every command through corral: turn Codex's own shell tool off too, in the\n"
                   "# [features] table of the same file:\n"
                   "#   shell_tool = false\n",
               timeout);
    if (!ok) {
        buf_free(&b);
        snprintf(err, errlen, "a path or argument is not valid UTF-8, which config.toml cannot hold");
        return -1;
    }
    fputs(b.data, f);
    buf_free(&b);
    return 0;
}

/* Claude Code's own limit on a call when neither the registration nor
 * MCP_TOOL_TIMEOUT sets one: 1e8 ms, about 27.8 hours.  Setting
 * MCP_TOOL_TIMEOUT lower would cut an approval short, so it is only
 * printed when a wait could outlast this. */
#define CLAUDE_DEFAULT_TOOL_TIMEOUT_S 100000u

static int print_claude(FILE *f, const char *exe, char *const *args, unsigned timeout)
{
    size_t n = 0;
    while (args[n])
        n++;
    /* The server's name before -e: claude's -e takes every word up to the
     * next option, and would take the name as one more variable. */
    const char *head[] = {"claude", "mcp", "add", "--transport", "stdio", "--scope", "user", "corral"};
    size_t nh = sizeof head / sizeof *head;
    size_t nenv = 0;
    for (const char *const *e = mcp_config_env_names; *e; e++)
        nenv++;
    char **argv = xcalloc(nh + 2 * nenv + 2 + n + 1, sizeof *argv);
    char **owned = xcalloc(nenv + 1, sizeof *owned);
    size_t k = 0, no = 0;
    for (size_t i = 0; i < nh; i++)
        argv[k++] = (char *)head[i];
    /* Claude Code passes its own environment on, but the registration
     * outlives the shell it was typed in: the variables that find this
     * user's corral server go with it. */
    for (const char *const *e = mcp_config_env_names; *e; e++) {
        const char *v;
        if (!env_set(*e, &v))
            continue;
        argv[k++] = "-e";
        argv[k++] = owned[no++] = xasprintf("%s=%s", *e, v);
    }
    argv[k++] = "--";
    argv[k++] = (char *)exe;
    for (size_t i = 0; i < n; i++)
        argv[k++] = args[i];
    char *line = quote_argv_display(argv);
    free(argv);
    for (size_t i = 0; i < no; i++)
        free(owned[i]);
    free(owned);
    fprintf(f, "# corral: run Claude Code's commands in corral's sandboxed sessions (see corral mcp --help).\n"
               "%s\n"
               "# corral asks you, not Claude Code, before anything leaves the sandbox: allow its\n"
               "# tools without a second question, in ~/.claude/settings.json\n"
               "#   {\"permissions\": {\"allow\": [\"mcp__corral\"]}}\n"
               "# or start it as: claude --allowedTools mcp__corral\n",
            line);
    if (timeout > CLAUDE_DEFAULT_TOOL_TIMEOUT_S)
        fprintf(f, "# Longer than any wait of a call (a person may be answering an approval):\n"
                   "export MCP_TOOL_TIMEOUT=%llu\n",
                (unsigned long long)timeout * 1000u);
    else
        fprintf(f, "# Its own tool timeout (about 27.8 hours) outlasts any wait of a call: leave\n"
                   "# MCP_TOOL_TIMEOUT unset (a lower value cuts a wait for your approval short).\n");
    fprintf(f, "# Every command through corral: start Claude Code without its own Bash tool,\n"
               "# claude --disallowedTools Bash\n"
               "# or put \"permissions\": {\"deny\": [\"Bash\"]} in ~/.claude/settings.json.\n");
    free(line);
    return 0;
}

/* The mcpServers entry; for Gemini CLI (gemini true) with "trust", so that
 * it offers the tools without asking (corral's gate asks), and "timeout"
 * (ms), as its default of 10 minutes would end a wait for an approval. */
static int print_json(FILE *f, const char *exe, char *const *args, bool gemini, unsigned timeout, char *err,
                      size_t errlen)
{
    json_t *jargs = json_array();
    bool ok = true;
    for (size_t i = 0; args[i] && ok; i++) {
        json_t *a = json_string(args[i]);
        ok = a != NULL;
        json_array_append_new(jargs, a);
    }
    json_t *server = json_object();
    json_t *cmd = json_string(exe);
    ok = ok && cmd;
    json_object_set_new(server, "command", cmd);
    json_object_set_new(server, "args", jargs);
    json_t *env = json_object();
    for (const char *const *n = mcp_config_env_names; *n && ok; n++) {
        const char *v;
        if (!env_set(*n, &v))
            continue;
        json_t *jv = json_string(v);
        ok = jv != NULL;
        json_object_set_new(env, *n, jv);
    }
    if (json_object_size(env))
        json_object_set(server, "env", env);
    json_decref(env);
    if (gemini) {
        json_object_set_new(server, "trust", json_true());
        json_object_set_new(server, "timeout", json_integer((json_int_t)timeout * 1000));
    }
    json_t *root = json_pack("{s:{s:o}}", "mcpServers", "corral", server);
    if (!ok) {
        json_decref(root);
        snprintf(err, errlen, "a path or argument is not valid UTF-8, which JSON cannot hold");
        return -1;
    }
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    /* Plain JSON, no comments: settings.json is merged by hand or by a tool. */
    fprintf(f, "%s\n", text);
    free(text);
    return 0;
}

int mcp_print_config(FILE *f, const char *client, const char *exe, char *const *mcp_args, unsigned tool_timeout_s,
                     char *err, size_t errlen)
{
    if (strcmp(client, "codex") == 0)
        return print_codex(f, exe, mcp_args, tool_timeout_s, err, errlen);
    if (strcmp(client, "claude") == 0)
        return print_claude(f, exe, mcp_args, tool_timeout_s);
    if (strcmp(client, "gemini") == 0)
        return print_json(f, exe, mcp_args, true, tool_timeout_s, err, errlen);
    if (strcmp(client, "json") == 0)
        return print_json(f, exe, mcp_args, false, tool_timeout_s, err, errlen);
    snprintf(err, errlen, "--print-config wants codex, claude, gemini or json");
    return -1;
}
