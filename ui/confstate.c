/*
 * confstate.c - the config file as the screen sees it.  A typo in the
 * file must never keep a person from the screen where approvals wait: the
 * screen opens with the file's lines that have errors left out, lists
 * every error (the status bar the first, `?` all of them), notices when
 * the file is edited, and says when the running server's settings are not
 * the file's (which line changed since the server read it), until the
 * reload key (R) or `corral reload` makes them the same.  The comparison
 * is of what the server reads (conf_server_view): a new comment, or an
 * edit of [ui] or [keys], does not make the server's settings older.
 */
#include "config.h"

#include "confstate.h"
#include "tui_int.h"
#include "base/sha256.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void note_stat(ui_confstate *c)
{
    struct stat st;
    if (stat(c->path, &st) < 0)
        memset(&st, 0, sizeof st);
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    c->size = st.st_size;
    c->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

void confstate_init(tui_t *t, conf_errors *errors, char *text)
{
    ui_confstate *c = &t->cfg;
    c->path = conf_user_path();
    c->errors = *errors;
    memset(errors, 0, sizeof *errors);
    c->text = text;
    note_stat(c);
}

static char *dup_field(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? xstrdup(s) : NULL;
}

void confstate_server(tui_t *t, json_t *config)
{
    ui_confstate *c = &t->cfg;
    if (!json_is_object(config))
        return;
    free(c->srv_path), free(c->srv_sha), free(c->srv_text), free(c->srv_refused), free(c->srv_later);
    c->srv_path = dup_field(config, "path");
    c->srv_sha = dup_field(config, "sha256");
    c->srv_text = dup_field(config, "text");
    c->srv_refused = dup_field(config, "refused");
    c->srv_later = dup_field(config, "restart_needed");
    c->server_known = c->srv_path && c->srv_sha;
    tui_redraw_soon(t);
}

/* Read the file again: its errors and text as they are now. */
static void reread(tui_t *t, conf_t *into)
{
    ui_confstate *c = &t->cfg;
    conf_errors_free(&c->errors);
    free(c->text);
    c->text = NULL;
    conf_t scratch;
    conf_defaults(&scratch);
    conf_t *conf = into ? into : &scratch;
    conf_load_all(conf, c->path, &c->errors, &c->text);
    conf_free(&scratch);
    note_stat(c);
}

void confstate_poll(tui_t *t)
{
    ui_confstate *c = &t->cfg;
    struct stat st;
    if (stat(c->path, &st) < 0)
        memset(&st, 0, sizeof st);
    long long mtime = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    if (st.st_dev == c->dev && st.st_ino == c->ino && st.st_size == c->size && mtime == c->mtime_ns)
        return;
    reread(t, NULL);
    t->full_redraw = true;
    tui_redraw_soon(t);
}

/* The file's line of the first line of view b that is not view a's (b's
 * line numbers in lines), or the line after b's last when b lost lines;
 * 0 when they are the same. */
static int first_changed_line(const char *a, const char *b, const int *lines, size_t n)
{
    size_t i = 0;
    while (*a || *b) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || memcmp(a, b, la) != 0)
            return i < n ? lines[i] : n ? lines[n - 1] + 1 : 1;
        a += la + (a[la] == '\n');
        b += lb + (b[lb] == '\n');
        i++;
    }
    return 0;
}

/* The server's settings are not the file's: 0 when they are (or when the
 * server has not said), else the line that changed, or -1 when which line
 * cannot be told. */
static int server_differs(const ui_confstate *c)
{
    if (!c->server_known || !c->text || strcmp(c->srv_path, c->path) != 0)
        return 0; /* a server of another config home: not this file's to judge */
    /* Compared as the server reads the file: the screen's own sections
     * blanked on both sides. */
    int *lines = NULL;
    size_t n = 0;
    char *mine = conf_server_view(c->text, &lines, &n);
    unsigned char d[SHA256_LEN];
    char hex[SHA256_HEX_LEN + 1];
    sha256(mine, strlen(mine), d);
    sha256_hex(d, hex);
    int line = 0;
    if (strcmp(hex, c->srv_sha) != 0) {
        line = c->srv_text ? first_changed_line(c->srv_text, mine, lines, n) : 0;
        line = line > 0 ? line : -1;
    }
    free(mine);
    free(lines);
    return line;
}

static void reload_key(tui_t *t, char *out, size_t outlen)
{
    out[0] = 0;
    if (t->conf->keys.keys[KA_RELOAD][0])
        keyspec_name(t->conf->keys.keys[KA_RELOAD][0], out, outlen);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int confstate_status(tui_t *t, int y, int x, int maxw)
{
    ui_confstate *c = &t->cfg;
    if (maxw <= 0)
        return 0;
    char key[32], text[1400];
    reload_key(t, key, sizeof key);
    int line = server_differs(c);
    char differs[160] = "";
    if (line > 0) /* FILE:LINE, as the errors name a place */
        snprintf(differs, sizeof differs, "the server runs older settings (%s:%d changed)", base_name(c->path), line);
    else if (line < 0)
        snprintf(differs, sizeof differs, "the server runs older settings");
    if (line && key[0])
        snprintf(differs + strlen(differs), sizeof differs - strlen(differs), "; %s reloads", key);
    /* The count and the server first: an error's text is long and is
     * what the status bar cuts. */
    if (c->errors.n) {
        /* The first error, its file without the directory (the status bar
         * is short; ? lists them all in full). */
        const char *first = c->errors.text[0];
        size_t n = strlen(c->path);
        if (strncmp(first, c->path, n) == 0)
            first += n - strlen(base_name(c->path));
        char count[48];
        if (c->errors.n > 1)
            snprintf(count, sizeof count, "%zu errors, ? lists them", c->errors.n);
        else
            snprintf(count, sizeof count, "1 error, ? lists it");
        snprintf(text, sizeof text, "config: %s%s%s: %s", count, differs[0] ? "; " : "", differs, first);
    } else if (differs[0]) {
        snprintf(text, sizeof text, "config: %s", differs);
    } else if (c->server_known && c->srv_later && !line) {
        snprintf(text, sizeof text, "config: %s waits for a server restart", c->srv_later);
    } else {
        return 0;
    }
    paint_set(TH_STATE_EXIT_FAIL, TH_STATUS);
    int used = paint_text(y, x, maxw, text);
    paint_set(TH_STATUS, TH_STATUS);
    return used;
}

void confstate_help(tui_t *t, void (*line)(void *user, const char *text, bool heading), void *user)
{
    ui_confstate *c = &t->cfg;
    int changed = server_differs(c);
    if (!c->errors.n && !changed && !(c->server_known && c->srv_later))
        return;
    char key[32], text[512];
    reload_key(t, key, sizeof key);
    snprintf(text, sizeof text, "Config file %s", c->path);
    line(user, text, true);
    if (c->errors.n) {
        snprintf(text, sizeof text, "  %zu error%s; the lines with them are left out:", c->errors.n,
                 c->errors.n == 1 ? "" : "s");
        line(user, text, false);
    }
    for (size_t i = 0; i < c->errors.n; i++) {
        char *one = xasprintf("  %s", c->errors.text[i]);
        line(user, one, false);
        free(one);
    }
    if (changed) {
        if (changed > 0)
            snprintf(text, sizeof text, "  The running server's settings are older than the file: line %d changed "
                     "since it read it.", changed);
        else
            snprintf(text, sizeof text, "  The running server's settings are older than the file.");
        line(user, text, false);
        if (c->srv_refused)
            line(user, "  Its last reload was refused (errors in sections the server reads); it keeps the settings "
                       "it runs with.", false);
        snprintf(text, sizeof text, "  %s reads the file again (so do corral reload and SIGHUP to the server).",
                 key[0] ? key : "The reload action");
        line(user, text, false);
    }
    if (c->server_known && c->srv_later) {
        snprintf(text, sizeof text, "  %s: waits for a server restart (corral server --stop, then corral).",
                 c->srv_later);
        line(user, text, false);
    }
}

static void on_reload_reply(uiconn_t *conn, json_t *reply, void *user)
{
    (void)conn;
    tui_t *t = user;
    if (!reply || json_object_get(reply, "error")) {
        const char *msg = json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
        tui_message(t, true, "the server did not reload: %s", msg ? msg : "no answer");
        return;
    }
    if (!json_is_true(json_object_get(reply, "applied"))) {
        size_t n = json_array_size(json_object_get(reply, "errors"));
        tui_message(t, true, "the server keeps its settings: the file has %zu error%s (? lists them)", n,
                    n == 1 ? "" : "s");
    } else if (t->cfg.errors.n) {
        tui_message(t, false, "reloaded; the lines with errors are left out (? lists them)");
    } else {
        tui_message(t, false, "reloaded %s", base_name(t->cfg.path));
    }
    tui_redraw_soon(t);
}

void confstate_reload(tui_t *t)
{
    /* The screen's own settings come from the same read: [keys], the
     * sidebar's width, the mouse and notifications.  The theme and
     * truecolor wait for the screen's next start. */
    conf_t fresh;
    conf_defaults(&fresh);
    reread(t, &fresh);
    t->conf->keys = fresh.keys;
    t->conf->ui_sidebar_width = fresh.ui_sidebar_width;
    t->conf->ui_notify = fresh.ui_notify;
    if (t->conf->ui_mouse != fresh.ui_mouse) {
        t->conf->ui_mouse = fresh.ui_mouse;
        input_stop();
        input_start(t->conf->ui_mouse);
    }
    conf_free(&fresh);
    t->relayout = true;
    t->full_redraw = true;
    hosts_request(t, json_pack("{s:s}", "cmd", "reload"), on_reload_reply, t);
    tui_redraw_soon(t);
}

void confstate_free(tui_t *t)
{
    ui_confstate *c = &t->cfg;
    free(c->path), free(c->text);
    conf_errors_free(&c->errors);
    free(c->srv_path), free(c->srv_sha), free(c->srv_text), free(c->srv_refused), free(c->srv_later);
    memset(c, 0, sizeof *c);
}
