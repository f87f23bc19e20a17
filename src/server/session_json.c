/*
 * session_json.c - a session as clients see it (ls, new, subscribe, the
 * session events): what the server knows of it, then each module's
 * fields (module.h).
 */
#include "config.h"

#include "server/server_int.h"
#include "protocol/uexec.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

json_t *server_session_json(server_t *srv, session_t *s)
{
    char created[32], used[32], state[64];
    iso_time(created, s->created);
    iso_time(used, s->last_used_wall);
    session_state_text(s, state, sizeof state);
    json_t *argv = json_array();
    for (char **p = s->argv; *p; p++) {
        size_t n;
        char *fixed = uexec_lossy_utf8(*p, strlen(*p), &n);
        json_array_append_new(argv, json_stringn(fixed, n));
        free(fixed);
    }
    size_t cwdn;
    char *cwd = uexec_lossy_utf8(s->cwd, strlen(s->cwd), &cwdn);
    json_t *o = json_pack("{s:i, s:s, s:o, s:s%, s:s, s:s, s:s, s:b, s:b, s:s, s:s, s:s, s:f, s:i, s:i, s:i}",
                          "id", s->id, "name", s->name, "command", argv, "cwd", cwd, cwdn, "client",
                          s->client, "profile", s->profile, "kind", s->kind == SESSION_EXEC ? "exec" : "user",
                          "tty", s->tty, "pinned", s->pinned, "state",
                          s->state == SESSION_RUNNING ? "running" : "exited", "status", state, "created",
                          created, "age_seconds", wall_sec() - s->created, "pid", (int)s->pid, "cols",
                          s->cols, "rows", s->rows);
    free(cwd);
    json_object_set_new(o, "last_used", json_string(used));
    if (s->state == SESSION_EXITED) {
        json_object_set_new(o, "exit_code", json_integer(s->exit_code));
        if (s->exit_signal)
            json_object_set_new(o, "signal", json_integer(s->exit_signal));
        /* Who ended it, when corral did: "user" (kill), "shutdown" (the
         * server stopped), "lifetime", "client disconnected", "pruned". */
        if (s->kill_reason)
            json_object_set_new(o, "killed_by", json_string(s->kill_reason));
    }
    json_object_set_new(o, "use", json_integer((json_int_t)s->last_used));
    server_session *x = srv_session(s);
    double quiet = x->last_output_ms ? (double)(uv_now(srv->loop) - x->last_output_ms) / 1000.0
                                     : wall_sec() - s->created;
    json_object_set_new(o, "output_age_seconds", json_real(quiet));
    TELL_MODULES(srv, session_json, s, o);
    if (x->net_mode)
        json_object_set_new(o, "network", json_string(x->net_mode));
    const char *title = vt_title(s->vt);
    if (title && *title)
        json_object_set_new(o, "title", json_string(title));
    return o;
}
