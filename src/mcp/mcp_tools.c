/*
 * mcp_tools.c - exec_command and write_stdin for MCP clients: the Codex
 * CLI's schemas (its descriptions verbatim, so a model that knows Codex's
 * tools uses these unchanged) and their translation to corral requests.
 */
#include "config.h"

#include "mcp/mcp_tools.h"
#include "protocol/proto.h"
#include "protocol/uexec.h"
#include "base/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The output schema both tools share: Codex's unified_exec_output_schema,
 * and corral's notices (for a client that shows its model only
 * structuredContent, every notice the text carries). */
#define OUTPUT_SCHEMA                                                                                            \
    "{\"type\":\"object\",\"properties\":{"                                                                      \
    "\"chunk_id\":{\"type\":\"string\",\"description\":\"Chunk identifier included when the response reports "  \
    "one.\"},"                                                                                                   \
    "\"wall_time_seconds\":{\"type\":\"number\",\"description\":\"Elapsed wall time spent waiting for output in " \
    "seconds.\"},"                                                                                               \
    "\"exit_code\":{\"type\":\"number\",\"description\":\"Process exit code when the command finished during "   \
    "this call.\"},"                                                                                             \
    "\"session_id\":{\"type\":\"number\",\"description\":\"Session identifier to pass to write_stdin when the "  \
    "process is still running.\"},"                                                                              \
    "\"original_token_count\":{\"type\":\"number\",\"description\":\"Approximate token count before output "     \
    "truncation.\"},"                                                                                            \
    "\"output\":{\"type\":\"string\",\"description\":\"Command output text, possibly truncated.\"},"            \
    "\"notices\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"corral's notes on "     \
    "this call, also in the text: what the sandbox refused and how to ask for it, the user's answer and note, a " \
    "truncation, a wait for the user, a warning.\"}},"                                                          \
    "\"required\":[\"wall_time_seconds\",\"output\"],\"additionalProperties\":false}"

static const char exec_command_tool[] =
    "{\"name\":\"exec_command\","
    "\"description\":\"Runs a command in a PTY, returning output or a session ID for ongoing interaction.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"cmd\":{\"type\":\"string\",\"description\":\"Shell command to execute.\"},"
    "\"workdir\":{\"type\":\"string\",\"description\":\"Working directory for the command. Defaults to the turn "
    "cwd.\"},"
    "\"shell\":{\"type\":\"string\",\"description\":\"Shell binary to launch. Defaults to the user's default "
    "shell.\"},"
    "\"login\":{\"type\":\"boolean\",\"description\":\"Request login-shell startup. Omit to inherit.\"},"
    "\"tty\":{\"type\":\"boolean\",\"description\":\"True allocates a PTY for the command; false or omitted uses "
    "plain pipes.\"},"
    "\"yield_time_ms\":{\"type\":\"number\",\"description\":\"Wait before yielding output. Defaults to 10000 ms; "
    "effective range is 250-30000 ms.\"},"
    "\"max_output_tokens\":{\"type\":\"number\",\"description\":\"Output token budget. Defaults to 10000 tokens; "
    "larger requests may be capped by policy.\"},"
    "\"sandbox_permissions\":{\"type\":\"string\",\"enum\":[\"use_default\",\"with_additional_permissions\","
    "\"require_escalated\"],\"description\":\"Per-command sandbox override. Defaults to `use_default`; use "
    "`with_additional_permissions` with `additional_permissions`, or `require_escalated` for unsandboxed "
    "execution.\"},"
    "\"justification\":{\"type\":\"string\",\"description\":\"User-facing approval question for "
    "`require_escalated`; omit otherwise.\"},"
    "\"prefix_rule\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Reusable approval "
    "prefix for `cmd`, only with `sandbox_permissions: \\\"require_escalated\\\"`; for example [\\\"git\\\", "
    "\\\"pull\\\"].\"},"
    "\"additional_permissions\":{\"type\":\"object\",\"properties\":{"
    "\"network\":{\"type\":\"object\",\"properties\":{\"enabled\":{\"type\":\"boolean\",\"description\":\"True "
    "requests network access; false or omitted requests none.\"}},\"additionalProperties\":false,"
    "\"description\":\"Network access request.\"},"
    "\"file_system\":{\"type\":\"object\",\"properties\":{"
    "\"read\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Absolute paths to grant read "
    "access; omit when none are needed.\"},"
    "\"write\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Absolute paths to grant "
    "write access; omit when none are needed.\"}},\"additionalProperties\":false,"
    "\"description\":\"Filesystem access request.\"}},"
    "\"additionalProperties\":false,\"description\":\"Sandboxed filesystem or network access for this command; "
    "only with `sandbox_permissions: \\\"with_additional_permissions\\\"`.\"}},"
    "\"required\":[\"cmd\"],\"additionalProperties\":false},"
    "\"outputSchema\":" OUTPUT_SCHEMA "}";

static const char write_stdin_tool[] =
    "{\"name\":\"write_stdin\","
    "\"description\":\"Writes characters to an existing unified exec session and returns recent output.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"session_id\":{\"type\":\"number\",\"description\":\"Identifier of the running unified exec session.\"},"
    "\"chars\":{\"type\":\"string\",\"description\":\"Bytes to write to stdin. Defaults to empty, which polls "
    "without writing.\"},"
    "\"yield_time_ms\":{\"type\":\"number\",\"description\":\"Wait before yielding output. Non-empty writes "
    "default to 250 ms and cap at 30000 ms; empty polls wait 5000-300000 ms by default.\"},"
    "\"max_output_tokens\":{\"type\":\"number\",\"description\":\"Output token budget. Defaults to 10000 tokens; "
    "larger requests may be capped by policy.\"}},"
    "\"required\":[\"session_id\"],\"additionalProperties\":false},"
    "\"outputSchema\":" OUTPUT_SCHEMA "}";

static json_t *load_const(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v) { /* a typo in the literals above: caught by every test run */
        fprintf(stderr, "corral mcp: internal error in a tool schema: %s at column %d\n", je.text, je.column);
        abort();
    }
    return v;
}

json_t *mcp_tools_list(void)
{
    json_t *tools = json_array();
    json_array_append_new(tools, load_const(exec_command_tool));
    json_array_append_new(tools, load_const(write_stdin_tool));
    return json_pack("{s:o}", "tools", tools);
}

/* ---- arguments ---------------------------------------------------------------- */

typedef struct args_ctx {
    const char *tool;
    char *err;
    size_t errlen;
} args_ctx;

static int arg_error(args_ctx *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int arg_error(args_ctx *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(a->err, a->errlen, "invalid arguments for %s: ", a->tool);
    if (n >= 0 && (size_t)n < a->errlen)
        vsnprintf(a->err + n, a->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Every key of obj is one of names (NULL-terminated). */
static int known_keys(args_ctx *a, json_t *obj, const char *where, const char *const *names)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        bool found = false;
        for (const char *const *n = names; *n && !found; n++)
            found = strcmp(key, *n) == 0;
        if (found)
            continue;
        char *shown = sanitize_text(key, strlen(key), 64);
        char list[400] = "";
        for (const char *const *n = names; *n; n++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", n == names ? "" : ", ", *n);
        arg_error(a, "unknown %s '%s' (accepted: %s)", where, shown, list);
        free(shown);
        return -1;
    }
    return 0;
}

/* An optional number as a whole number (a fraction is cut off, as a
 * client's float is meant); 1 present, 0 absent, -1 wrong. */
static int get_number(args_ctx *a, json_t *args, const char *name, int64_t *out)
{
    json_t *v = json_object_get(args, name);
    if (!v || json_is_null(v))
        return 0;
    double d;
    if (json_is_integer(v))
        d = (double)json_integer_value(v);
    else if (json_is_real(v))
        d = json_real_value(v);
    else
        return arg_error(a, "'%s' must be a number", name);
    if (d > (double)INT32_MAX)
        d = (double)INT32_MAX;
    if (d < (double)INT32_MIN)
        d = (double)INT32_MIN;
    *out = (int64_t)d;
    return 1;
}

static int get_string(args_ctx *a, json_t *args, const char *name, bool required, const char **out)
{
    json_t *v = json_object_get(args, name);
    if (!v || json_is_null(v)) {
        if (required)
            return arg_error(a, "'%s' is required (a string)", name);
        return 0;
    }
    if (!json_is_string(v))
        return arg_error(a, "'%s' must be a string", name);
    *out = json_string_value(v);
    return 1;
}

static int get_bool(args_ctx *a, json_t *args, const char *name, bool *out)
{
    json_t *v = json_object_get(args, name);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return arg_error(a, "'%s' must be true or false", name);
    *out = json_is_true(v);
    return 1;
}

/* An optional array of strings, copied (NULL when absent). */
static int get_strings(args_ctx *a, json_t *obj, const char *name, json_t **out)
{
    json_t *v = json_object_get(obj, name);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    size_t i;
    json_t *item;
    if (!json_is_array(v))
        return arg_error(a, "'%s' must be an array of strings", name);
    json_array_foreach(v, i, item) {
        if (!json_is_string(item))
            return arg_error(a, "'%s' must be an array of strings (item %zu is not a string)", name, i);
    }
    *out = json_deep_copy(v);
    return 1;
}

/* path made absolute against base. */
static char *absolute(const char *path, const char *base)
{
    if (path[0] == '/')
        return xstrdup(path);
    if (strcmp(path, ".") == 0 || path[0] == '\0')
        return xstrdup(base);
    size_t n = strlen(base);
    return xasprintf("%s%s%s", base, n && base[n - 1] == '/' ? "" : "/", path);
}

/* An absolute path with "." and ".." applied and repeated slashes
 * dropped, lexically (nothing is looked up). */
static char *normalize(const char *path)
{
    buf_t b;
    buf_init(&b);
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchrnul(p, '/');
        size_t n = (size_t)(end - p);
        if (n == 0 || (n == 1 && p[0] == '.')) {
            /* nothing */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (b.len && b.data[b.len - 1] != '/')
                b.len--;
            if (b.len)
                b.len--; /* the slash before it */
            b.data[b.len] = '\0';
        } else {
            buf_putc(&b, '/');
            buf_append(&b, p, n);
        }
        p = end;
    }
    if (!b.len)
        buf_putc(&b, '/');
    return buf_steal(&b);
}

/* word in single quotes for a POSIX shell. */
static void shell_quote(buf_t *b, const char *word)
{
    buf_putc(b, '\'');
    for (const char *p = word; *p; p++) {
        if (*p == '\'')
            buf_puts(b, "'\\''");
        else
            buf_putc(b, *p);
    }
    buf_putc(b, '\'');
}

static int64_t tokens_arg(int64_t v)
{
    return v < 0 ? 0 : v;
}

/* Codex's additional_permissions ({"network": {"enabled": bool},
 * "file_system": {"read": [...], "write": [...]}}) as corral's
 * ({"write": [...], "network": bool}); relative paths against workdir. */
static int permissions_arg(args_ctx *a, json_t *perm, const char *workdir, json_t *req)
{
    static const char *const top[] = {"network", "file_system", NULL};
    static const char *const net_keys[] = {"enabled", NULL};
    static const char *const fs_keys[] = {"read", "write", NULL};
    if (!json_is_object(perm))
        return arg_error(a, "'additional_permissions' must be an object");
    if (known_keys(a, perm, "field of additional_permissions", top) < 0)
        return -1;
    bool network = false;
    json_t *net = json_object_get(perm, "network");
    if (net && !json_is_null(net)) {
        if (!json_is_object(net))
            return arg_error(a, "'additional_permissions.network' must be an object ({\"enabled\": true})");
        if (known_keys(a, net, "field of additional_permissions.network", net_keys) < 0 ||
            get_bool(a, net, "enabled", &network) < 0)
            return -1;
    }
    json_t *write = NULL, *read = NULL;
    json_t *fs = json_object_get(perm, "file_system");
    if (fs && !json_is_null(fs)) {
        if (!json_is_object(fs))
            return arg_error(a, "'additional_permissions.file_system' must be an object");
        if (known_keys(a, fs, "field of additional_permissions.file_system", fs_keys) < 0 ||
            get_strings(a, fs, "read", &read) < 0 || get_strings(a, fs, "write", &write) < 0) {
            json_decref(read);
            return -1;
        }
    }
    if (json_array_size(read)) {
        json_decref(read);
        json_decref(write);
        return arg_error(a, "corral cannot grant extra read access for one command: its sandboxes read "
                            "everything outside their deny entries already.  Ask for write access, network "
                            "access, or require_escalated");
    }
    json_decref(read);
    json_t *abs_write = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(write, i, p) {
        char *path = absolute(json_string_value(p), workdir);
        json_array_append_new(abs_write, json_string(path));
        free(path);
    }
    json_decref(write);
    json_object_set_new(req, "additional_permissions",
                        json_pack("{s:o, s:b}", "write", abs_write, "network", network));
    return 0;
}

static json_t *exec_request(args_ctx *a, json_t *args, const mcp_exec_defaults *d)
{
    static const char *const names[] = {"cmd", "workdir", "shell", "login", "tty", "yield_time_ms",
                                        "max_output_tokens", "sandbox_permissions", "justification",
                                        "prefix_rule", "additional_permissions", NULL};
    const char *cmd = NULL, *workdir = NULL, *shell = NULL, *sandbox = NULL, *justification = NULL;
    bool tty = false, login = true;
    int64_t yield = -1, tokens = 0;
    json_t *prefix = NULL;
    int has_login, has_tokens, has_yield;
    if (known_keys(a, args, "argument", names) < 0 || get_string(a, args, "cmd", true, &cmd) < 0 ||
        get_string(a, args, "workdir", false, &workdir) < 0 || get_string(a, args, "shell", false, &shell) < 0 ||
        (has_login = get_bool(a, args, "login", &login)) < 0 || get_bool(a, args, "tty", &tty) < 0 ||
        (has_yield = get_number(a, args, "yield_time_ms", &yield)) < 0 ||
        (has_tokens = get_number(a, args, "max_output_tokens", &tokens)) < 0 ||
        get_string(a, args, "sandbox_permissions", false, &sandbox) < 0 ||
        get_string(a, args, "justification", false, &justification) < 0 ||
        get_strings(a, args, "prefix_rule", &prefix) < 0)
        return NULL;
    if (sandbox && strcmp(sandbox, "use_default") && strcmp(sandbox, "require_escalated") &&
        strcmp(sandbox, "with_additional_permissions")) {
        json_decref(prefix);
        arg_error(a, "'sandbox_permissions' must be \"use_default\", \"with_additional_permissions\" or "
                     "\"require_escalated\"");
        return NULL;
    }
    char *joined = workdir ? absolute(workdir, d->workdir) : xstrdup(d->workdir);
    char *dir = normalize(joined);
    free(joined);
    /* The server makes an exec's directory its sandbox's workspace, the
     * place it may write.  That stays the bridge's (-C, or where the
     * client started it), as Codex keeps its writable roots for a session:
     * a model cannot widen its own sandbox by naming a directory.  Another
     * workdir is where the command starts, by cd in its shell, inside the
     * sandbox (where a symlink can lead nowhere it could not go anyway). */
    buf_t line;
    buf_init(&line);
    if (strcmp(dir, d->workdir) != 0) {
        /* A line of its own: cmd stays exactly as given, whatever lists or
         * here-documents it holds, and runs only if the cd worked. */
        buf_puts(&line, "cd ");
        shell_quote(&line, dir);
        buf_puts(&line, " || exit\n");
    }
    buf_puts(&line, cmd);
    /* Given, a negative yield is the shortest (Codex clamps it); absent,
     * the default. */
    uint32_t y = uexec_exec_yield(has_yield ? (yield < 0 ? 0 : yield) : -1);
    if (y > d->yield_cap_ms)
        y = d->yield_cap_ms;
    json_t *req = json_pack("{s:s, s:s%, s:s, s:b, s:i}", "cmd", "exec", "command", line.data, line.len,
                            "workdir", d->workdir, "tty", tty, "yield_time_ms", (int)y);
    buf_free(&line);
    if (has_tokens)
        json_object_set_new(req, "max_output_tokens", json_integer(tokens_arg(tokens)));
    if (shell)
        json_object_set_new(req, "shell", json_string(shell));
    if (has_login)
        json_object_set_new(req, "login", json_boolean(login));
    if (sandbox)
        json_object_set_new(req, "sandbox_permissions", json_string(sandbox));
    if (justification)
        json_object_set_new(req, "justification", json_string(justification));
    if (prefix)
        json_object_set_new(req, "prefix_rule", prefix);
    json_t *perm = json_object_get(args, "additional_permissions");
    if (perm && !json_is_null(perm) && permissions_arg(a, perm, dir, req) < 0) {
        json_decref(req);
        free(dir);
        return NULL;
    }
    free(dir);
    if (d->profile)
        json_object_set_new(req, "profile", json_string(d->profile));
    if (d->net)
        json_object_set_new(req, "net", json_string(d->net));
    if (d->approval_policy)
        json_object_set_new(req, "approval_policy", json_string(d->approval_policy));
    return req;
}

static json_t *write_request(args_ctx *a, json_t *args, const mcp_exec_defaults *d)
{
    static const char *const names[] = {"session_id", "chars", "yield_time_ms", "max_output_tokens", NULL};
    const char *chars = "";
    int64_t sid = -1, yield = -1, tokens = 0;
    int has_sid, has_tokens, has_yield;
    if (known_keys(a, args, "argument", names) < 0 || (has_sid = get_number(a, args, "session_id", &sid)) < 0 ||
        get_string(a, args, "chars", false, &chars) < 0 ||
        (has_yield = get_number(a, args, "yield_time_ms", &yield)) < 0 ||
        (has_tokens = get_number(a, args, "max_output_tokens", &tokens)) < 0)
        return NULL;
    if (!has_sid) {
        arg_error(a, "'session_id' is required (the number an exec_command reply gave)");
        return NULL;
    }
    if (sid < 0) {
        arg_error(a, "'session_id' must be a session id, not %lld", (long long)sid);
        return NULL;
    }
    uint32_t y = uexec_write_yield(has_yield ? (yield < 0 ? 0 : yield) : -1, chars[0] == '\0',
                                   UEXEC_MAX_BACKGROUND_TIMEOUT_MS);
    if (y > d->yield_cap_ms)
        y = d->yield_cap_ms;
    json_t *req = json_pack("{s:s, s:I, s:s, s:i}", "cmd", "write_stdin", "session_id", (json_int_t)sid, "chars",
                            chars, "yield_time_ms", (int)y);
    if (has_tokens)
        json_object_set_new(req, "max_output_tokens", json_integer(tokens_arg(tokens)));
    return req;
}

mcp_tool_status mcp_tool_request(const char *name, json_t *args, const mcp_exec_defaults *d, json_t **req,
                                 char *err, size_t errlen)
{
    *req = NULL;
    bool exec = strcmp(name, "exec_command") == 0;
    if (!exec && strcmp(name, "write_stdin") != 0) {
        char *shown = sanitize_text(name, strlen(name), 64);
        snprintf(err, errlen, "unknown tool: %s (corral offers exec_command and write_stdin)", shown);
        free(shown);
        return MCP_TOOL_UNKNOWN;
    }
    args_ctx a = {name, err, errlen};
    json_t *empty = NULL;
    if (!args || json_is_null(args))
        args = empty = json_object();
    if (!json_is_object(args)) {
        arg_error(&a, "'arguments' must be an object");
        return MCP_TOOL_BAD_ARGS;
    }
    /* Gemini CLI adds wait_for_previous (a boolean: run this call after
     * the model's earlier ones) to every tool's schema, acts on it itself
     * and passes it on: it is the client's, not an argument of the tool. */
    json_t *own = NULL;
    if (json_is_boolean(json_object_get(args, "wait_for_previous"))) {
        args = own = json_copy(args);
        json_object_del(own, "wait_for_previous");
    }
    *req = exec ? exec_request(&a, args, d) : write_request(&a, args, d);
    json_decref(own);
    json_decref(empty);
    if (!*req)
        return MCP_TOOL_BAD_ARGS;
    /* The server reads messages of at most 1 MiB: say so here, naming the
     * size, rather than let it refuse a message it cannot attribute. */
    char *text = json_dumps(*req, JSON_COMPACT);
    size_t n = text ? strlen(text) : 0;
    free(text);
    if (n > PROTO_MAX_MSG) {
        json_decref(*req);
        *req = NULL;
        arg_error(&a, "the call is %zu bytes; corral takes at most %u bytes (1 MiB) per command or write: "
                      "write large input to a file first",
                  n, PROTO_MAX_MSG);
        return MCP_TOOL_BAD_ARGS;
    }
    return MCP_TOOL_OK;
}

/* ---- results ------------------------------------------------------------------ */

json_t *mcp_tool_error(const char *text)
{
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError", true);
}

/* Texts as more content items: they are not part of the envelope, which
 * stays Codex's word for word. */
static void add_texts(json_t *result, json_t *texts)
{
    size_t i;
    json_t *w;
    json_t *content = json_object_get(result, "content");
    json_array_foreach(texts, i, w) {
        if (json_is_string(w))
            json_array_append_new(content, json_pack("{s:s, s:O}", "type", "text", "text", w));
    }
}

static void add_notice(json_t *notices, const char *text)
{
    if (text && *text)
        json_array_append_new(notices, json_string(text));
}

/* Every notice of the reply, for structuredContent: a client that shows
 * its model structuredContent and not content (Claude Code) must carry
 * the same facts as one that shows the text (Gemini CLI, Codex).  The
 * sandbox's advice, the user's answer and the truncation header are in
 * the output and the envelope already; warnings and waits come as more
 * text (add_texts). */
static json_t *reply_notices(json_t *reply, json_t *warnings, json_t *waits)
{
    json_t *notices = json_array();
    add_notice(notices, json_string_value(json_object_get(reply, "sandbox_advice")));
    add_notice(notices, json_string_value(json_object_get(reply, "denial")));
    const char *output = json_string_value(json_object_get(reply, "output"));
    if (output && strncmp(output, "Warning: truncated output", 25) == 0) {
        const char *nl = strchr(output, '\n');
        char *line = xstrndup(output, nl ? (size_t)(nl - output) : strlen(output));
        char *text = xasprintf("%s: the middle of the output was cut to max_output_tokens", line);
        add_notice(notices, text);
        free(text);
        free(line);
    }
    size_t i;
    json_t *v;
    json_array_foreach(waits, i, v) add_notice(notices, json_string_value(v));
    json_array_foreach(warnings, i, v) add_notice(notices, json_string_value(v));
    return notices;
}

json_t *mcp_tool_result(json_t *req, json_t *reply, json_t *warnings, json_t *waits)
{
    json_t *error = json_object_get(reply, "error");
    if (error) {
        const char *code = json_string_value(json_object_get(error, "code"));
        const char *msg = json_string_value(json_object_get(error, "message"));
        if (!msg)
            msg = "the corral server reported an error";
        char *text;
        if (code && strcmp(code, PERR_NOT_FOUND) == 0 && json_object_get(req, "session_id"))
            /* Codex's own words for a session that is not (or no longer) there. */
            text = xasprintf("Unknown process id %lld",
                             (long long)json_integer_value(json_object_get(req, "session_id")));
        else if (code && strcmp(code, PERR_STDIN_CLOSED) == 0)
            text = xstrdup(msg);
        else
            text = xasprintf("corral: %s", msg);
        json_t *result = mcp_tool_error(text);
        free(text);
        add_texts(result, waits);
        add_texts(result, warnings);
        return result;
    }
    json_t *text = json_object_get(reply, "text");
    json_t *structured = json_object();
    static const char *const fields[] = {"chunk_id",   "wall_time_seconds",    "exit_code",
                                         "session_id", "original_token_count", "output"};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        json_t *v = json_object_get(reply, fields[i]);
        if (v)
            json_object_set(structured, fields[i], v);
    }
    if (!json_object_get(structured, "output"))
        json_object_set_new(structured, "output", json_string(""));
    /* As the envelope shows it (four decimals), not the server's double:
     * the two parts of the reply say the same. */
    json_t *wall = json_object_get(structured, "wall_time_seconds");
    double secs = json_is_number(wall) ? json_number_value(wall) : 0;
    if (!(secs >= 0 && secs < 1e9))
        secs = 0;
    json_object_set_new(structured, "wall_time_seconds", json_real((double)(long long)(secs * 1e4 + 0.5) / 1e4));
    json_t *notices = reply_notices(reply, warnings, waits);
    if (json_array_size(notices))
        json_object_set(structured, "notices", notices);
    json_decref(notices);
    const char *envelope = json_string_value(text);
    json_t *result = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
                               envelope ? envelope : "", "structuredContent", structured, "isError", false);
    add_texts(result, waits);
    add_texts(result, warnings);
    return result;
}
