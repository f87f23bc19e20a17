/*
 * tiles.c - see tiles.h.
 *
 * Folding: an agent (any client but "user") running one command after
 * another leaves a finished session for each; from two on, those fold into
 * one row per agent ("▸ 14 finished"), which Space or Enter unfolds.
 * Running sessions and the user's own stay rows.  The selected session
 * keeps its row while it is selected, so a command finishing under the
 * user's eyes does not vanish from the sidebar.
 *
 * Kept tiles: in the split and grid layouts K keeps the selected session
 * in the tile it is in; the other tiles show, as before, the selected
 * session and the most recently used ones.
 */
#include "config.h"

#include "tui_int.h"
#include "dialog.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- folding ------------------------------------------------------------- */

static int expanded_index(tui_t *t, const char *client)
{
    for (int i = 0; i < t->tiles.nexpanded; i++)
        if (strcmp(t->tiles.expanded[i], client) == 0)
            return i;
    return -1;
}

static void set_expanded(tui_t *t, const char *client, bool on)
{
    ui_tiles *tl = &t->tiles;
    int i = expanded_index(t, client);
    if (on && i < 0 && tl->nexpanded < TILES_EXPANDED_MAX)
        snprintf(tl->expanded[tl->nexpanded++], sizeof tl->expanded[0], "%s", client);
    else if (!on && i >= 0) {
        tl->nexpanded--;
        memmove(tl->expanded[i], tl->expanded[i + 1], (size_t)(tl->nexpanded - i) * sizeof tl->expanded[0]);
    }
}

/* An agent's finished commands fold from two on: one alone keeps its row,
 * which says more than "1 finished" in the same space. */
#define FOLD_FROM 2

static int finished_of(tui_t *t, const char *client)
{
    int n = 0;
    for (size_t i = 0; i < t->list.n; i++)
        n += ui_session_foldable(t->list.v[i]) && strcmp(t->list.v[i]->client, client) == 0;
    return n;
}

bool tiles_folded_away(tui_t *t, const ui_session *s)
{
    return ui_session_foldable(s) && (expanded_index(t, s->client) >= 0 || s->id != t->selected) &&
           finished_of(t, s->client) >= FOLD_FROM;
}

/* The sessions under client's folded row, and how many of them failed. */
static int fold_count(tui_t *t, const char *client, int *failed)
{
    int n = 0;
    if (failed)
        *failed = 0;
    for (size_t i = 0; i < t->list.n; i++) {
        ui_session *s = t->list.v[i];
        if (strcmp(s->client, client) == 0 && tiles_folded_away(t, s)) {
            n++;
            if (failed && s->exit_code != 0)
                (*failed)++;
        }
    }
    return n;
}

int tiles_fold_rows(tui_t *t, sidebar_row *rows, int total, const char *client, int *sel_line)
{
    int n = fold_count(t, client, NULL);
    if (n == 0)
        return total;
    if (strcmp(t->tiles.fold_selected, client) == 0)
        *sel_line = total;
    rows[total++] = (sidebar_row){SB_FOLD, n, client};
    if (expanded_index(t, client) < 0)
        return total;
    for (size_t i = 0; i < t->list.n; i++) {
        ui_session *s = t->list.v[i];
        if (strcmp(s->client, client) != 0 || !tiles_folded_away(t, s))
            continue;
        if (s->id == t->selected)
            *sel_line = total;
        rows[total++] = (sidebar_row){SB_SESSION, (int)i, client};
    }
    return total;
}

void tiles_draw_fold_row(tui_t *t, const sidebar_row *row, int y)
{
    ui_rect r = t->sidebar;
    theme_elem e = strcmp(t->tiles.fold_selected, row->client) == 0 ? TH_SIDEBAR_SELECTED : TH_SIDEBAR;
    paint_set(e, e);
    paint_fill(y, r.x, r.w);
    bool open = expanded_index(t, row->client) >= 0;
    paint_text(y, r.x + 1, 1, paint_unicode() ? (open ? "\xe2\x96\xbe" : "\xe2\x96\xb8") : (open ? "-" : "+"));
    int failed;
    fold_count(t, row->client, &failed);
    char text[64];
    snprintf(text, sizeof text, "%d finished", row->index);
    int x = r.x + 3, right = r.x + r.w - 1;
    if (right <= x)
        return;
    x += paint_text(y, x, right - x, text);
    if (failed && right > x) {
        snprintf(text, sizeof text, " (%d failed)", failed);
        paint_set(TH_STATE_EXIT_FAIL, e);
        paint_text(y, x, right - x, text);
    }
}

/* ---- selection ------------------------------------------------------------- */

void tiles_select_fold(tui_t *t, const char *client)
{
    char name[TILES_CLIENT_MAX + 1];
    snprintf(name, sizeof name, "%s", client); /* client may point into a row about to change */
    tui_select(t, 0);
    t->ended.selected[0] = '\0';
    snprintf(t->tiles.fold_selected, sizeof t->tiles.fold_selected, "%s", name);
    t->full_redraw = true;
    tui_redraw_soon(t);
}

bool tiles_fold_selected(tui_t *t)
{
    return t->tiles.fold_selected[0] != 0;
}

void tiles_toggle_fold(tui_t *t)
{
    ui_session *s = tui_selected(t);
    char client[TILES_CLIENT_MAX + 1];
    if (tiles_fold_selected(t)) {
        snprintf(client, sizeof client, "%s", t->tiles.fold_selected);
    } else if (s && strcmp(s->client, "user") != 0) {
        snprintf(client, sizeof client, "%s", s->client);
    } else {
        tui_message(t, true, "only an agent's finished commands fold: select one of its rows");
        return;
    }
    bool open = expanded_index(t, client) < 0;
    if (open && fold_count(t, client, NULL) == 0) {
        tui_message(t, false, "%s has fewer than two finished commands: nothing is folded", client);
        return;
    }
    set_expanded(t, client, open);
    /* Folding them away from under the selection: the folded row takes it. */
    if (!open && s && ui_session_foldable(s) && strcmp(s->client, client) == 0)
        tiles_select_fold(t, client);
    t->full_redraw = true;
    tui_redraw_soon(t);
    tiles_save(t);
}

bool tiles_session_removed(tui_t *t, int id)
{
    for (int i = 0; i < LAYOUT_MAX_PANES; i++)
        if (t->tiles.kept[i] == id)
            t->tiles.kept[i] = 0;
    /* Its folded row went with the sessions it folded. */
    if (tiles_fold_selected(t) && fold_count(t, t->tiles.fold_selected, NULL) == 0) {
        t->tiles.fold_selected[0] = 0;
        return true;
    }
    return false;
}

/* ---- kept tiles ----------------------------------------------------------------- */

static bool kept_here(tui_t *t, int tile, int id)
{
    return tile < LAYOUT_MAX_PANES && id && t->tiles.kept[tile] == id;
}

int tiles_pick(tui_t *t, ui_layout lay, int *out)
{
    int k = layout_capacity(lay, (int)t->list.n);
    for (int i = 0; i < k; i++)
        out[i] = 0;
    /* Kept sessions first, each in its own tile (not in single: there the
     * selected session is the whole screen). */
    int free_tiles = k;
    for (int i = 0; i < k && lay != LAYOUT_SINGLE; i++) {
        if (t->tiles.kept[i] && ui_sessions_find(&t->list, t->tiles.kept[i])) {
            out[i] = t->tiles.kept[i];
            free_tiles--;
        }
    }
    /* The free tiles: the selected session and the next in sidebar order,
     * drawn in sidebar order. */
    bool placed_selected = false;
    for (int i = 0; i < k; i++)
        placed_selected |= out[i] && out[i] == t->selected;
    bool want_selected = !placed_selected && ui_sessions_find(&t->list, t->selected) != NULL;
    int others = want_selected ? free_tiles - 1 : free_tiles, tile = 0;
    for (size_t i = 0; i < t->list.n && free_tiles > 0; i++) {
        int id = t->list.v[i]->id;
        bool shown = false;
        for (int j = 0; j < k; j++)
            shown |= out[j] == id;
        if (shown)
            continue;
        if (id == t->selected && want_selected)
            want_selected = false;
        else if (others > 0)
            others--;
        else
            continue;
        while (out[tile])
            tile++;
        out[tile] = id;
        free_tiles--;
    }
    return k;
}

void tiles_draw_mark(tui_t *t, int pane)
{
    int id = t->visible[pane];
    ui_session *s = ui_sessions_find(&t->list, id);
    if (t->zoom || t->layout == LAYOUT_SINGLE || !kept_here(t, pane, id) || !s || s->scroll > 0)
        return;
    static const char mark[] = " [kept] ";
    ui_rect r = t->panes[pane];
    int w = paint_width(mark);
    if (r.w < w + 12)
        return;
    theme_elem e = id == t->selected ? TH_BORDER_FOCUS : TH_BORDER;
    paint_set(e, e);
    paint_text(r.y, r.x + r.w - w, w, mark);
}

void tiles_keep(tui_t *t)
{
    ui_session *s = tui_selected(t);
    if (!s) {
        tui_message(t, true, "no session selected");
        return;
    }
    if (t->zoom || t->layout == LAYOUT_SINGLE) {
        char keys[48];
        key_bindings_names(&t->conf->keys, KA_LAYOUT, keys, sizeof keys);
        tui_message(t, true, "sessions are kept in tiles of the split and grid layouts (%s changes the layout)", keys);
        return;
    }
    /* Where it is shown once the keys before this one have taken effect
     * (the last frame may be older than them). */
    int ids[LAYOUT_MAX_PANES], tile = -1, k = tiles_pick(t, t->layout, ids);
    for (int i = 0; i < k; i++)
        if (ids[i] == s->id)
            tile = i;
    if (tile < 0) {
        tui_message(t, true, "%s is not on the screen", s->name);
        return;
    }
    if (t->tiles.kept[tile] == s->id) {
        t->tiles.kept[tile] = 0;
        tui_message(t, false, "%s is no longer kept: tile %d shows the most recent sessions again", s->name,
                    tile + 1);
    } else {
        for (int i = 0; i < LAYOUT_MAX_PANES; i++)
            if (t->tiles.kept[i] == s->id)
                t->tiles.kept[i] = 0;
        t->tiles.kept[tile] = s->id;
        tui_message(t, false, "%s stays in tile %d; new sessions take the other tiles", s->name, tile + 1);
    }
    t->relayout = true;
    tui_redraw_soon(t);
    tiles_save(t);
}

/* ---- clearing exited sessions ---------------------------------------------------- */

/* The exited sessions a clear removes: all but the pinned (as corral rm
 * --exited).  Returns how many; *pinned counts those left. */
static int clearable(tui_t *t, json_t *ids, int *pinned)
{
    int n = 0;
    *pinned = 0;
    for (size_t i = 0; i < t->list.n; i++) {
        ui_session *s = t->list.v[i];
        if (s->running || hosts_unreachable(t, s->id))
            continue;
        if (s->pinned) {
            (*pinned)++;
            continue;
        }
        n++;
        if (ids)
            json_array_append_new(ids, json_integer(s->id));
    }
    return n;
}

static void on_rm_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    json_t *err = json_object_get(reply, "error");
    if (!reply || err) {
        tui_message(t, true, "clear: %s", reply ? json_string_value(json_object_get(err, "message"))
                                                : "the server went away");
        return;
    }
    size_t n = json_array_size(json_object_get(reply, "removed"));
    tui_message(t, false, "removed %zu exited session%s (logs and recordings stay on disk)", n, n == 1 ? "" : "s");
}

static void send_rm(tui_t *t)
{
    int pinned;
    json_t *ids = json_array();
    if (clearable(t, ids, &pinned) == 0) {
        json_decref(ids);
        return;
    }
    /* One request to each machine, with its own sessions. */
    for (size_t h = 0; h < t->hosts.n; h++) {
        json_t *mine = json_array();
        size_t i;
        json_t *v;
        json_array_foreach(ids, i, v)
            if (hosts_index_of((int)json_integer_value(v)) == (int)h)
                json_array_append(mine, v);
        if (json_array_size(mine))
            hosts_request_on(t, (int)h, json_pack("{s:s, s:o}", "cmd", "rm", "sessions", mine), on_rm_reply, t);
        else
            json_decref(mine);
    }
    json_decref(ids);
}

/* The confirmation's question, as many as there are when it is drawn. */
static void clear_question(tui_t *t, int target, char *out, size_t outlen)
{
    (void)target;
    int pinned, n = clearable(t, NULL, &pinned);
    snprintf(out, outlen, "Remove %d exited sessions? (logs, recordings stay on disk)", n);
}

static void clear_confirmed(tui_t *t, int target)
{
    (void)target;
    send_rm(t);
}

void tiles_clear_exited(tui_t *t)
{
    int pinned, n = clearable(t, NULL, &pinned);
    if (n == 0 && pinned)
        tui_message(t, false, "%d exited session%s %s pinned and stay%s (p unpins)", pinned, pinned == 1 ? "" : "s",
                    pinned == 1 ? "is" : "are", pinned == 1 ? "s" : "");
    else if (n == 0)
        tui_message(t, false, "no exited sessions to clear");
    else if (n == 1)
        send_rm(t);
    else
        confirm_open(t, "Clear exited sessions", clear_question, clear_confirmed, 0);
}

void tiles_already_exited(tui_t *t, const ui_session *s)
{
    char keys[48];
    key_bindings_names(&t->conf->keys, KA_CLEAR_EXITED, keys, sizeof keys);
    const ui_host *h = hosts_of(t, s->id);
    if (h && h->index > 0)
        tui_message(t, true, "%s has already exited: %s removes exited sessions (corral -H %s rm %d this one)",
                    s->name, keys, h->name, hosts_server_id(s->id));
    else
        tui_message(t, true, "%s has already exited: %s removes exited sessions (corral rm %d this one)", s->name,
                    keys, s->id);
}

/* ---- kept on the server ---------------------------------------------------------- */

static void on_saved(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    json_t *err = json_object_get(reply, "error");
    if (reply && err)
        tui_message(t, true, "the layout was not kept for the next attach: %s",
                    json_string_value(json_object_get(err, "message")));
}

/* A kept tile of another machine not put back yet: it stays while its
 * tile is free (that machine may be down for this whole run). */
static bool there_pending(tui_t *t, int k)
{
    return t->tiles.kept[t->tiles.there[k].tile] == 0;
}

static json_t *there_json(int tile, const char *host, int session)
{
    return json_pack("{s:i, s:s, s:i}", "tile", tile, "host", host, "session", session);
}

void tiles_save(tui_t *t)
{
    t->tiles.changed = true;
    json_t *kept = json_array(), *expanded = json_array(), *there = json_array();
    /* This machine's server checks this machine's tiles against its store;
     * another machine's are kept by that machine's name and its server's
     * id, which the screen finds again next time. */
    for (int i = 0; i < LAYOUT_MAX_PANES; i++) {
        int id = t->tiles.kept[i];
        const ui_host *h = hosts_remote_id(id) ? hosts_of(t, id) : NULL;
        json_array_append_new(kept, json_integer(hosts_remote_id(id) ? 0 : id));
        if (h && h->name && strlen(h->name) <= TILES_CLIENT_MAX) /* the server's bound on a name */
            json_array_append_new(there, there_json(i, h->name, hosts_server_id(id)));
    }
    int n = 0;
    for (int k = 0; k < t->tiles.nthere; k++)
        if (there_pending(t, k)) {
            t->tiles.there[n++] = t->tiles.there[k];
            json_array_append_new(there, there_json(t->tiles.there[k].tile, t->tiles.there[k].host,
                                                    t->tiles.there[k].session));
        }
    t->tiles.nthere = n;
    for (int i = 0; i < t->tiles.nexpanded; i++)
        json_array_append_new(expanded, json_string(t->tiles.expanded[i]));
    json_t *layout = json_pack("{s:s, s:b, s:o, s:o, s:o}", "mode", layout_key(t->layout), "zoom", t->zoom, "tiles",
                               kept, "expanded", expanded, "remote_tiles", there);
    hosts_request_on(t, 0, json_pack("{s:s, s:o}", "cmd", "layout", "set", layout), on_saved, t);
}

static void on_restored(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    json_t *l = json_object_get(reply, "layout");
    /* Nothing kept, a server without layouts, or the user was quicker. */
    if (!json_is_object(l) || t->tiles.changed)
        return;
    int mode = layout_from_key(json_string_value(json_object_get(l, "mode")));
    if (mode >= 0)
        t->layout = (ui_layout)mode;
    if (!t->attach_id) /* corral attach ID zooms on that session */
        t->zoom = json_is_true(json_object_get(l, "zoom"));
    size_t i;
    json_t *v;
    memset(t->tiles.kept, 0, sizeof t->tiles.kept);
    json_array_foreach(json_object_get(l, "tiles"), i, v)
        if (i < LAYOUT_MAX_PANES)
            t->tiles.kept[i] = (int)json_integer_value(v);
    t->tiles.nexpanded = 0;
    json_array_foreach(json_object_get(l, "expanded"), i, v)
        if (json_is_string(v))
            set_expanded(t, json_string_value(v), true);
    t->tiles.nthere = 0;
    json_array_foreach(json_object_get(l, "remote_tiles"), i, v) {
        json_int_t tile = json_integer_value(json_object_get(v, "tile"));
        json_int_t sid = json_integer_value(json_object_get(v, "session"));
        const char *host = json_string_value(json_object_get(v, "host"));
        if (t->tiles.nthere >= LAYOUT_MAX_PANES || tile < 0 || tile >= LAYOUT_MAX_PANES || sid <= 0 ||
            sid >= UI_HOST_STRIDE || !host || strlen(host) > TILES_CLIENT_MAX || t->tiles.kept[tile])
            continue;
        int k = t->tiles.nthere++;
        t->tiles.there[k].tile = (int)tile;
        t->tiles.there[k].session = (int)sid;
        snprintf(t->tiles.there[k].host, sizeof t->tiles.there[k].host, "%s", host);
    }
    /* Machines already up (the layout may come after their lists). */
    for (size_t k = 1; k < t->hosts.n && k < UI_HOSTS_MAX; k++)
        if (t->hosts.v[k]->state == HOST_UP)
            tiles_restore_there(t, t->hosts.v[k]);
    t->relayout = true;
    tui_redraw_soon(t);
}

void tiles_restore_there(tui_t *t, ui_host *h)
{
    if (!h->name || t->tiles.nthere == 0)
        return;
    int n = 0;
    for (int k = 0; k < t->tiles.nthere; k++) {
        int id = h->index * UI_HOST_STRIDE + t->tiles.there[k].session;
        if (strcmp(t->tiles.there[k].host, h->name) != 0) {
            t->tiles.there[n++] = t->tiles.there[k]; /* another machine's: still to come */
            continue;
        }
        /* Listed: back in its tile (unless something was kept there
         * meanwhile, or it is kept in another already).  Not listed: gone
         * from that machine, the tile stays free. */
        bool elsewhere = false;
        for (int i = 0; i < LAYOUT_MAX_PANES; i++)
            elsewhere |= t->tiles.kept[i] == id;
        if (ui_sessions_find(&t->list, id) && there_pending(t, k) && !elsewhere)
            t->tiles.kept[t->tiles.there[k].tile] = id;
    }
    t->tiles.nthere = n;
    t->relayout = true;
    tui_redraw_soon(t);
}

void tiles_restore(tui_t *t)
{
    hosts_request_on(t, 0, json_pack("{s:s}", "cmd", "layout"), on_restored, t);
}
