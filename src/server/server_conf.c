/*
 * server_conf.c - the configuration the server runs with: read when it
 * starts, read again on the protocol's reload (corral reload, the screen's
 * key) and on SIGHUP, and what a screen is told so that it can say whether
 * the file still says what the server runs with.
 *
 * A file with errors in a section the server reads is never half applied:
 * the server starts only from a file without them, and a reload that finds
 * them keeps the running settings and says why.  A typo in [sandbox] deny
 * must not quietly drop a protection the user asked for.  Errors in the
 * sections only the screen reads ([ui], [keys]) are the screen's to report;
 * the server takes the rest of such a file.
 */
#include "config.h"

#include "server/server_conf.h"
#include "server/server_int.h"
#include "base/sha256.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A screen is sent the text the server runs with, to show which line of
 * the file changed since; a larger file is compared by its length only. */
#define TEXT_SHOWN_MAX (256 * 1024)

static void set_policy(server_t *srv)
{
    policy_settings *p = &srv->policy;
    p->approval = APPROVAL_ON_REQUEST;
    if (srv->conf.approval_policy)
        approval_policy_parse(srv->conf.approval_policy, &p->approval);
    p->granular_sandbox_approval = srv->conf.granular_sandbox_approval;
    p->granular_rules = srv->conf.granular_rules;
}

/* The errors of e that the server reads, one a line (malloc'd), or NULL. */
static char *server_errors(const conf_errors *e)
{
    if (!conf_errors_read_by(e, conf_server_sections))
        return NULL;
    conf_errors mine = {0};
    mine.text = xcalloc(e->n, sizeof *mine.text);
    mine.section = xcalloc(e->n, sizeof *mine.section);
    for (size_t i = 0; i < e->n; i++) {
        conf_errors one = {&e->text[i], &e->section[i], 1};
        if (conf_errors_read_by(&one, conf_server_sections))
            mine.text[mine.n++] = e->text[i];
    }
    char *joined = conf_errors_join(&mine);
    free(mine.text);
    free(mine.section);
    return joined;
}

int server_conf_load(server_t *srv, char *err, size_t errlen)
{
    conf_errors e = {0};
    char *text = NULL;
    conf_load_user_all(&srv->conf, &e, &text);
    char *mine = server_errors(&e);
    conf_errors_free(&e);
    if (mine) {
        /* One line (the start-up pipe carries one): every error, so that
         * one run shows them all. */
        buf_t line;
        buf_init(&line);
        for (const char *p = mine; *p; p++) {
            if (*p == '\n')
                buf_puts(&line, "; ");
            else
                buf_putc(&line, *p);
        }
        snprintf(err, errlen, "%s (the server reads these sections; fix them and start again)", line.data);
        buf_free(&line);
        free(mine);
        free(text);
        return -1;
    }
    srv->conf_path = conf_user_path();
    srv->conf_text = text;
    set_policy(srv);
    return 0;
}

void server_conf_free(server_t *srv)
{
    free(srv->conf_path);
    free(srv->conf_text);
    free(srv->conf_refused);
    free(srv->conf_later);
    srv->conf_path = srv->conf_text = srv->conf_refused = srv->conf_later = NULL;
}

json_t *server_conf_status(const server_t *srv)
{
    json_t *o = json_object();
    if (!srv->conf_path)
        return o;
    json_object_set_new(o, "path", json_string(srv->conf_path));
    /* What the server reads of the file: an edit of [ui] or [keys] does
     * not make its settings older. */
    char *text = conf_server_view(srv->conf_text ? srv->conf_text : "", NULL, NULL);
    size_t len = strlen(text);
    unsigned char d[SHA256_LEN];
    char hex[SHA256_HEX_LEN + 1];
    sha256(text, len, d);
    sha256_hex(d, hex);
    json_object_set_new(o, "sha256", json_string(hex));
    /* The text too, for the screen to name the line that changed (a file
     * that is not UTF-8, or a large one, is compared by its digest only). */
    json_t *t = len <= TEXT_SHOWN_MAX ? json_stringn(text, len) : NULL;
    if (t)
        json_object_set_new(o, "text", t);
    free(text);
    if (srv->conf_refused)
        json_object_set_new(o, "refused", json_string(srv->conf_refused));
    if (srv->conf_later)
        json_object_set_new(o, "restart_needed", json_string(srv->conf_later));
    return o;
}

/* What a reload could not change while the server runs: a section whose
 * settings were copied when the server started. */
static void restart_needed(const conf_t *old, const conf_t *now, json_t *list)
{
    if (!snap_conf_equal(&old->snap, &now->snap))
        json_array_append_new(list, json_string("snapshots"));
    if (old->network_max_connections != now->network_max_connections)
        json_array_append_new(list, json_string("network.max-connections"));
}

json_t *server_conf_reload(server_t *srv)
{
    conf_t fresh;
    conf_errors e = {0};
    char *text = NULL;
    conf_load_user_all(&fresh, &e, &text);
    char *mine = server_errors(&e);
    json_t *r = json_object();
    json_t *errors = json_array();
    for (size_t i = 0; i < e.n; i++)
        json_array_append_new(errors, json_string(e.text[i]));
    json_object_set_new(r, "errors", errors);
    conf_errors_free(&e);
    free(srv->conf_refused);
    srv->conf_refused = NULL;
    if (mine) {
        server_log("reload refused; the running settings stay: %s", mine);
        srv->conf_refused = mine;
        conf_free(&fresh);
        free(text);
        json_object_set_new(r, "applied", json_false());
    } else {
        json_t *later = json_array();
        restart_needed(&srv->conf, &fresh, later);
        /* What needs a restart stays as the server started with it, so
         * that the settings it runs with are the ones it says it has. */
        snap_conf old_snap = srv->conf.snap;
        int old_max = srv->conf.network_max_connections;
        srv->conf.snap = fresh.snap;
        fresh.snap = old_snap;
        fresh.network_max_connections = old_max;
        conf_free(&srv->conf);
        srv->conf = fresh;
        free(srv->conf_text);
        srv->conf_text = text;
        free(srv->conf_later);
        srv->conf_later = NULL;
        if (json_array_size(later)) {
            buf_t b;
            buf_init(&b);
            for (size_t i = 0; i < json_array_size(later); i++)
                buf_printf(&b, "%s%s", i ? ", " : "", json_string_value(json_array_get(later, i)));
            srv->conf_later = buf_steal(&b);
        }
        set_policy(srv);
        srv->prebuilts.keep_warm_ms = srv->conf.sandbox_keep_warm_ms;
        EACH_MODULE(srv, m)
            if ((*m)->config_changed)
                (*m)->config_changed(srv);
        server_log("reloaded %s", srv->conf_path);
        json_object_set_new(r, "applied", json_true());
        json_object_set_new(r, "restart_needed", later);
    }
    json_object_set_new(r, "path", json_string(srv->conf_path ? srv->conf_path : ""));
    json_t *ev = json_pack("{s:s}", "event", "config");
    json_object_set_new(ev, "config", server_conf_status(srv));
    conn_broadcast(ev);
    return r;
}
