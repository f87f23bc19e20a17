/*
 * snap_storewire.c - see snap_storewire.h.
 */
#include "config.h"

#include "snap/snap_storewire.h"

#include "base/utf8.h"
#include "protocol/proto.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* What one frame carries of a message's JSON or text. */
#define PART_MAX SNAP_WIRE_CHUNK

static int send_parts(int fd, int type, const char *data, size_t len, bool last_is_typed, int final_type,
                      int pass_fd)
{
    snap_wire_out o;
    buf_init(&o.b);
    int rc = 0;
    size_t at = 0;
    do {
        size_t n = len - at > PART_MAX ? PART_MAX : len - at;
        bool last = at + n == len;
        sw_begin(&o, last && last_is_typed ? final_type : type);
        sw_bytes(&o, data + at, n);
        rc = last && last_is_typed && pass_fd >= 0 ? sw_send_fds(fd, &o, &pass_fd, 1) : sw_send(fd, &o);
        at += n;
    } while (rc == 0 && at < len);
    sw_out_free(&o);
    return rc;
}

int ssw_send(int fd, int type, json_t *j, const buf_t *text, int pass_fd)
{
    if (text && text->len) {
        int rc = send_parts(fd, SSW_TEXT, text->data, text->len, false, 0, -1);
        if (rc < 0)
            return rc;
    }
    char *s = json_dumps(j, JSON_COMPACT);
    if (!s)
        return -ENOMEM;
    int rc = send_parts(fd, SSW_MORE, s, strlen(s), true, type, pass_fd);
    free(s);
    return rc;
}

int ssw_recv(snap_wire_inbox *ib, int timeout_ms, int *type, json_t **j, buf_t *text, ssw_progress_fn progress,
             void *user)
{
    buf_t js;
    buf_init(&js);
    int rc;
    for (;;) {
        snap_wire_in in;
        rc = sw_recv(ib, &in, timeout_ms);
        if (rc <= 0)
            break;
        if (in.type == SSW_PROGRESS) {
            uint64_t done, total;
            uint8_t phase;
            bool ok = sw_get_u64(&in, &done) && sw_get_u64(&in, &total) && sw_get_u8(&in, &phase) && sw_done(&in);
            sw_in_free(&in);
            if (!ok) {
                rc = -EPROTO;
                break;
            }
            if (progress)
                progress(user, done, total, phase);
            continue;
        }
        const unsigned char *data;
        size_t len;
        bool ok = sw_get_bytes(&in, &data, &len) && sw_done(&in);
        if (ok && in.type == SSW_TEXT && text)
            buf_append(text, data, len);
        else if (ok && in.type != SSW_TEXT)
            buf_append(&js, data, len);
        int t = in.type;
        sw_in_free(&in);
        if (!ok) {
            rc = -EPROTO;
            break;
        }
        if (t == SSW_TEXT || t == SSW_MORE)
            continue;
        json_error_t e;
        *j = json_loadb(js.data ? js.data : "", js.len, 0, &e);
        *type = t;
        rc = json_is_object(*j) ? 1 : -EPROTO;
        if (rc < 0) {
            json_decref(*j);
            *j = NULL;
        }
        break;
    }
    buf_free(&js);
    return rc;
}

json_t *ssw_str(const char *s)
{
    size_t len = strlen(s);
    if (utf8_valid_prefix(s, len) == len)
        return json_stringn(s, len);
    size_t n;
    char *b64 = base64_encode(s, len, &n);
    json_t *o = json_pack("{s:s%}", "b64", b64, n);
    free(b64);
    return o;
}

char *ssw_str_dup(json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        return strlen(s) == json_string_length(v) ? xstrdup(s) : NULL;
    }
    json_t *b = json_object_get(v, "b64");
    if (!json_is_string(b))
        return NULL;
    size_t n;
    char *raw = base64_decode(json_string_value(b), json_string_length(b), &n);
    if (!raw)
        return NULL;
    if (memchr(raw, '\0', n)) {
        free(raw);
        return NULL;
    }
    char *out = xmalloc(n + 1);
    memcpy(out, raw, n);
    out[n] = '\0';
    free(raw);
    return out;
}

void ssw_str_copy(json_t *v, char *out, size_t size)
{
    char *s = ssw_str_dup(v);
    snprintf(out, size, "%s", s ? s : "");
    free(s);
}

json_t *ssw_strings(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, ssw_str(v[i]));
    return a;
}

json_t *ssw_conf_json(const snap_conf *c)
{
    return json_pack("{s:b, s:I, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "enabled", c->enabled,
                     "max_file_size", (json_int_t)c->max_file_size, "max_new_files", c->max_new_files, "max_files",
                     c->max_files, "retention_ms", (json_int_t)c->retention_ms, "max_store_size",
                     (json_int_t)c->max_store_size, "stall_ms", (json_int_t)c->stall_ms, "keep_open_ms",
                     (json_int_t)c->keep_open_ms, "store_idle_ms", (json_int_t)c->store_idle_ms, "allow",
                     ssw_strings(c->allow, c->n_allow), "exclude", ssw_strings(c->exclude, c->n_exclude));
}

static int strings_from(json_t *a, char ***v, size_t *n)
{
    if (!json_is_array(a))
        return -1;
    *n = 0;
    *v = xcalloc(json_array_size(a) + 1, sizeof **v);
    for (size_t i = 0; i < json_array_size(a); i++) {
        char *s = ssw_str_dup(json_array_get(a, i));
        if (!s)
            return -1;
        (*v)[(*n)++] = s;
    }
    return 0;
}

int ssw_conf_from_json(json_t *o, snap_conf *c)
{
    snap_conf_defaults(c);
    int enabled = 0;
    json_int_t file_size, retention, store_size, stall, keep_open, store_idle;
    json_t *allow, *exclude;
    if (json_unpack(o, "{s:b, s:I, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "enabled", &enabled,
                    "max_file_size", &file_size, "max_new_files", &c->max_new_files, "max_files", &c->max_files,
                    "retention_ms", &retention, "max_store_size", &store_size, "stall_ms", &stall, "keep_open_ms",
                    &keep_open, "store_idle_ms", &store_idle, "allow", &allow, "exclude", &exclude) < 0)
        return -1;
    c->enabled = enabled;
    c->max_file_size = (uint64_t)file_size;
    c->retention_ms = (uint64_t)retention;
    c->max_store_size = (uint64_t)store_size;
    c->stall_ms = (uint64_t)stall;
    c->keep_open_ms = (uint64_t)keep_open;
    c->store_idle_ms = (uint64_t)store_idle;
    if (strings_from(allow, &c->allow, &c->n_allow) < 0 || strings_from(exclude, &c->exclude, &c->n_exclude) < 0) {
        snap_conf_free(c);
        return -1;
    }
    return 0;
}
