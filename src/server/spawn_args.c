/*
 * spawn_args.c - see spawn_args.h.
 */
#include "config.h"

#include "server/spawn_args.h"
#include "base/paths.h"
#include "base/util.h"

#include <string.h>

void spawn_args_free(spawn_args *a)
{
    strv_free(a->r.argv);
    strv_free(a->r.write);
    strv_free(a->r.read);
    strv_free(a->r.deny);
}

int spawn_args_read(conn_t *c, json_t *id, json_t *req, const char *cwd_field, spawn_args *a)
{
    proto_err e;
    memset(a, 0, sizeof *a);
    a->r.net = -1;
    const char *net = NULL, *approval = NULL;
    if (proto_get_string(req, cwd_field, false, &a->r.cwd, &e) < 0 ||
        proto_get_string(req, "name", false, &a->r.name, &e) < 0 ||
        proto_get_int(req, "rows", false, 1, 1000, &a->rows, &e) < 0 ||
        proto_get_int(req, "cols", false, 1, 1000, &a->cols, &e) < 0 ||
        proto_get_string(req, "profile", false, &a->r.profile, &e) < 0 ||
        proto_get_string(req, "net", false, &net, &e) < 0 || proto_get_argv(req, "write", false, &a->r.write, &e) < 0 ||
        proto_get_argv(req, "read", false, &a->r.read, &e) < 0 ||
        proto_get_argv(req, "deny", false, &a->r.deny, &e) < 0 ||
        proto_get_string(req, "approval_policy", false, &approval, &e) < 0 ||
        proto_get_bool(req, "allow_home_workspace", false, &a->r.allow_home_workspace, &e) < 0) {
        spawn_args_free(a);
        conn_reply_error(c, id, e.code, e.message);
        return -1;
    }
    if (approval) {
        /* The session's own approval policy; granular's switches stay the
         * configured ones. */
        a->policy = *server_policy(conn_server(c));
        if (approval_policy_parse(approval, &a->policy.approval) < 0) {
            proto_fail(&e, PERR_BAD_REQUEST, "field 'approval_policy' must be \"on-request\", \"unless-trusted\", "
                       "\"never\" or \"granular\"");
            goto fail;
        }
        a->r.policy = &a->policy;
    }
    if (a->r.cwd && a->r.cwd[0] != '/') {
        proto_fail(&e, PERR_BAD_REQUEST, "field '%s' must be an absolute path", cwd_field);
        goto fail;
    }
    if (net && (a->r.net = sb_net_parse(net)) < 0) {
        proto_fail(&e, PERR_BAD_REQUEST, "field 'net' must be \"off\", \"proxy\" or \"full\"");
        goto fail;
    }
    if (!a->r.cwd)
        a->r.cwd = paths_home();
    a->r.rows = (int)a->rows;
    a->r.cols = (int)a->cols;
    return 0;
fail:
    spawn_args_free(a);
    conn_reply_error(c, id, e.code, e.message);
    return -1;
}
