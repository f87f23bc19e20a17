/*
 * approval_text.c - a waiting request in one line, for notifications.
 * Everything that came from a session goes through quote.h: a
 * notification lands in a terminal's escape sequence or a program's
 * environment, where a raw control character would be an attack.
 */
#include "config.h"

#include "protocol/approval_text.h"
#include "base/quote.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *approval_field_visible(const json_t *approval, const char *key, size_t max)
{
    json_t *v = json_object_get(approval, key);
    const char *s = json_string_value(v);
    if (!s)
        return xstrdup("");
    char *vis = quote_text_visible(s, json_string_length(v));
    char *cut = quote_shorten(vis, max);
    free(vis);
    return cut;
}

char *approval_summary(const json_t *approval, size_t max)
{
    buf_t b;
    buf_init(&b);
    json_int_t session = json_integer_value(json_object_get(approval, "session"));
    char *name = approval_field_visible(approval, "session_name", 64);
    char *client = approval_field_visible(approval, "client", 64);
    if (session)
        buf_printf(&b, "session %lld%s%s%s", (long long)session, *name ? " (" : "", name, *name ? ")" : "");
    else
        buf_printf(&b, "%s", *client ? client : "a client");
    const char *kind = json_string_value(json_object_get(approval, "kind"));
    if (kind && strcmp(kind, "network") == 0) {
        char *host = approval_field_visible(approval, "host", 256);
        char *proto = approval_field_visible(approval, "protocol", 16);
        buf_printf(&b, " asks to reach %s%s%s%s", host, *proto ? " (" : "", proto, *proto ? ")" : "");
        free(host);
        free(proto);
    } else {
        const char *sb = json_string_value(json_object_get(json_object_get(approval, "permissions"), "sandbox"));
        /* "command" is already display-quoted by the server; a typed line is shown as typed */
        char *cmd = approval_field_visible(approval, json_object_get(approval, "line") ? "line" : "command", 512);
        buf_printf(&b, " asks to run%s: %s",
                   sb && strcmp(sb, "escalated") == 0 ? " outside the sandbox"
                   : sb && strcmp(sb, "more") == 0    ? " with more permissions"
                                                      : "",
                   cmd);
        free(cmd);
    }
    free(name);
    free(client);
    /* One line: what quote_text_visible left is printable, but the
     * pieces above were cut apart; cut the whole again. */
    char *line = quote_shorten(b.data, max);
    buf_free(&b);
    return line;
}
