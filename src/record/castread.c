/*
 * castread.c - asciicast v2 reader.  The whole recording is read into
 * memory (a 100 MB recording reads in a few tens of milliseconds; a
 * mapping would make a file truncated under us a SIGBUS).  Events are
 * parsed by hand on the fast path (`[number, "code", "string"]`, the form
 * every writer uses), and any line the fast path does not take is given to
 * jansson, which either reads it (an unknown event code with any data) or
 * says precisely why it is not JSON.
 */
#include "config.h"

#include "record/castread.h"
#include "base/quote.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* A recording larger than this is refused rather than read into memory. */
#define CAST_MAX_BYTES ((size_t)4 << 30)
/* Warnings about this many lines, then one saying that more are not shown. */
#define WARN_MAX 32
/* tar's listing of an export: names only, a few KiB in practice. */
#define TAR_LIST_MAX ((size_t)16 << 20)

struct castread {
    char *name;
    char *data;
    size_t size;
    size_t pos;          /* where the next line starts */
    unsigned long line;  /* its number */
    size_t first_event;  /* offset of line 2 */
    cast_header hdr;
    char *title, *command;
    buf_t str;           /* the current event's decoded data */
    castread_warn_fn warn;
    void *warn_user;
    size_t warned[WARN_MAX]; /* lines warned about (their offsets) */
    size_t n_warned;
};

/* Text from the recording (or from tar about it) for a message: what a
 * terminal would act on made visible, and at most max bytes of that with
 * the cut marked.  The printers quote whole messages again; this keeps the
 * message readable (and its cut honest) wherever it is shown.  Caller
 * frees. */
static char *shown(const char *s, size_t len, size_t max)
{
    char *v = quote_text_visible(s, len);
    char *cut = quote_shorten(v, max);
    free(v);
    return cut;
}

/* ---- JSON pieces ------------------------------------------------------------ */

/* What a byte is inside a JSON string: 0 copy, 1 stop (quote, backslash, or
 * a control character, which JSON does not allow raw). */
static unsigned char str_stop[256];

static void init_tables(void)
{
    static bool done;
    if (done)
        return;
    for (int c = 0; c < 0x20; c++)
        str_stop[c] = 1;
    str_stop['"'] = 1;
    str_stop['\\'] = 1;
    done = true;
}

static int hex4(const char *s, size_t len, size_t i, unsigned *out)
{
    if (i + 4 > len)
        return -1;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = (unsigned char)s[i + k];
        int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (h < 0)
            return -1;
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return 0;
}

int castread_json_string(const char *s, size_t len, buf_t *out, size_t *used)
{
    init_tables();
    /* The decoded string is never longer than its JSON form: reserve that
     * once and write straight into it. */
    char *o = NULL;
    if (out) {
        buf_reserve(out, len);
        o = out->data + out->len;
    }
    size_t i = 0;
    for (;;) {
        size_t run = i;
        while (run < len && !str_stop[(unsigned char)s[run]])
            run++;
        if (o && run > i) {
            memcpy(o, s + i, run - i);
            o += run - i;
        }
        i = run;
        if (i >= len)
            return -1; /* no closing quote */
        unsigned char c = (unsigned char)s[i];
        if (c == '"') {
            if (out) {
                out->len = (size_t)(o - out->data);
                out->data[out->len] = '\0';
            }
            *used = i + 1;
            return 0;
        }
        if (c != '\\')
            return -1; /* a raw control character */
        if (i + 1 >= len)
            return -1;
        char e = s[i + 1], lit;
        switch (e) {
        case '"': lit = '"'; break;
        case '\\': lit = '\\'; break;
        case '/': lit = '/'; break;
        case 'b': lit = '\b'; break;
        case 'f': lit = '\f'; break;
        case 'n': lit = '\n'; break;
        case 'r': lit = '\r'; break;
        case 't': lit = '\t'; break;
        case 'u': {
            unsigned u;
            if (hex4(s, len, i + 2, &u) < 0)
                return -1;
            i += 6;
            uint32_t cp = u;
            if (u >= 0xd800 && u <= 0xdbff) {
                unsigned lo;
                if (i + 1 < len && s[i] == '\\' && s[i + 1] == 'u' && hex4(s, len, i + 2, &lo) == 0 &&
                    lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                } else {
                    cp = 0xfffd; /* a lone high surrogate */
                }
            } else if (u >= 0xdc00 && u <= 0xdfff) {
                cp = 0xfffd; /* a lone low surrogate */
            }
            /* At most 4 bytes for the 6 or 12 read. */
            if (o && cp < 0x80)
                *o++ = (char)cp;
            else if (o)
                o += utf8_put_scalar(cp, o);
            continue;
        }
        default: return -1;
        }
        if (o)
            *o++ = lit;
        i += 2;
    }
}

/* A JSON number at s[*i..len) (RFC 8259's grammar, nothing more), as a
 * double.  Locale-free: the screen sets a locale, and strtod follows its
 * decimal point. */
static int json_number(const char *s, size_t len, size_t *i, double *out)
{
    size_t p = *i;
    bool neg = false;
    if (p < len && s[p] == '-') {
        neg = true;
        p++;
    }
    if (p >= len || s[p] < '0' || s[p] > '9')
        return -1;
    double v = 0;
    if (s[p] == '0') {
        p++;
    } else {
        while (p < len && s[p] >= '0' && s[p] <= '9')
            v = v * 10 + (s[p++] - '0');
    }
    if (p < len && s[p] == '.') {
        p++;
        if (p >= len || s[p] < '0' || s[p] > '9')
            return -1;
        double scale = 0.1;
        while (p < len && s[p] >= '0' && s[p] <= '9') {
            v += (s[p++] - '0') * scale;
            scale /= 10;
        }
    }
    if (p < len && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        bool eneg = false;
        if (p < len && (s[p] == '+' || s[p] == '-'))
            eneg = s[p++] == '-';
        if (p >= len || s[p] < '0' || s[p] > '9')
            return -1;
        long e = 0;
        while (p < len && s[p] >= '0' && s[p] <= '9') {
            if (e < 100000)
                e = e * 10 + (s[p] - '0');
            p++;
        }
        for (long k = 0; k < e && v != 0; k++) {
            if (eneg)
                v /= 10;
            else if (v < 1e300)
                v *= 10;
            else
                break; /* as large as a time gets */
        }
    }
    *out = neg ? -v : v;
    *i = p;
    return 0;
}

static size_t skip_ws(const char *s, size_t len, size_t i)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    return i;
}

static cast_kind kind_of(const char *code, size_t len)
{
    if (len == 1) {
        switch (code[0]) {
        case 'o': return CAST_OUTPUT;
        case 'r': return CAST_RESIZE;
        case 'm': return CAST_MARKER;
        case 'i': return CAST_INPUT;
        }
    }
    return CAST_OTHER;
}

/* The fast path: `[number, "code", "data"]` and nothing else on the line.
 * 1 parsed, 0 not this form (try jansson). */
static int parse_fast(castread_t *r, const char *s, size_t len, cast_event *ev, bool want_output)
{
    size_t i = skip_ws(s, len, 0);
    if (i >= len || s[i] != '[')
        return 0;
    i = skip_ws(s, len, i + 1);
    if (json_number(s, len, &i, &ev->time) < 0)
        return 0;
    i = skip_ws(s, len, i);
    if (i >= len || s[i] != ',')
        return 0;
    i = skip_ws(s, len, i + 1);
    if (i >= len || s[i] != '"')
        return 0;
    /* The code: one letter in practice; decoded like any string. */
    size_t used;
    buf_reset(&r->str);
    if (castread_json_string(s + i + 1, len - i - 1, &r->str, &used) < 0)
        return 0;
    ev->kind = kind_of(r->str.data, r->str.len);
    i = skip_ws(s, len, i + 1 + used);
    if (i >= len || s[i] != ',')
        return 0;
    i = skip_ws(s, len, i + 1);
    if (i >= len || s[i] != '"')
        return 0; /* data that is not a string: jansson decides */
    bool decode = ev->kind != CAST_OTHER && (ev->kind != CAST_OUTPUT || want_output);
    buf_reset(&r->str);
    if (castread_json_string(s + i + 1, len - i - 1, decode ? &r->str : NULL, &used) < 0)
        return 0;
    i = skip_ws(s, len, i + 1 + used);
    if (i >= len || s[i] != ']')
        return 0;
    if (skip_ws(s, len, i + 1) != len)
        return 0;
    ev->data = decode ? r->str.data : NULL; /* never NULL: allocated at the start */
    ev->len = decode ? r->str.len : 0;
    return 1;
}

/* The slow path: jansson reads the line.  1 an event, -1 not one (err). */
static int parse_json(castread_t *r, const char *s, size_t len, cast_event *ev, bool want_output, char *err,
                      size_t errlen)
{
    json_error_t je;
    json_t *a = json_loadb(s, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!a) {
        /* jansson's text quotes the line ("near '...'"). */
        char *why = shown(je.text, strlen(je.text), 200);
        snprintf(err, errlen, "%s:%lu: not JSON: %s (column %d)", r->name, r->line, why, je.column);
        free(why);
        return -1;
    }
    int rc = -1;
    json_t *t = json_array_get(a, 0), *code = json_array_get(a, 1), *data = json_array_get(a, 2);
    if (!json_is_array(a) || json_array_size(a) != 3 || !json_is_number(t) || !json_is_string(code)) {
        snprintf(err, errlen, "%s:%lu: not an asciicast v2 event (an event is [time, \"code\", data])", r->name,
                 r->line);
        goto out;
    }
    ev->time = json_number_value(t);
    ev->kind = kind_of(json_string_value(code), json_string_length(code));
    ev->data = NULL;
    ev->len = 0;
    if (ev->kind != CAST_OTHER) {
        if (!json_is_string(data)) {
            snprintf(err, errlen, "%s:%lu: the data of a \"%s\" event must be a string", r->name, r->line,
                     json_string_value(code));
            goto out;
        }
        if (ev->kind != CAST_OUTPUT || want_output) {
            buf_reset(&r->str);
            buf_append(&r->str, json_string_value(data), json_string_length(data));
            ev->data = r->str.data;
            ev->len = r->str.len;
        }
    }
    rc = 1;
out:
    json_decref(a);
    return rc;
}

static long parse_dimension(const char *s, const char **end)
{
    long v = 0;
    const char *p = s;
    while (*p >= '0' && *p <= '9') {
        if (v < 100000000)
            v = v * 10 + (*p - '0');
        p++;
    }
    *end = p;
    return p == s ? -1 : v;
}

void castread_warn(castread_t *r, size_t offset, unsigned long line, const char *fmt, ...)
{
    /* A line is read again by every pass over the recording (the markers'
     * index, a seek back): each is warned about once. */
    for (size_t i = 0; i < r->n_warned && i < WARN_MAX; i++)
        if (r->warned[i] == offset)
            return;
    if (r->n_warned > WARN_MAX)
        return;
    char msg[1024];
    if (r->n_warned == WARN_MAX) {
        snprintf(msg, sizeof msg, "%s: more lines with warnings; not shown", r->name);
    } else {
        r->warned[r->n_warned] = offset;
        int n = snprintf(msg, sizeof msg, "%s:%lu: ", r->name, line);
        va_list ap;
        va_start(ap, fmt);
        if (n > 0 && (size_t)n < sizeof msg)
            vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    r->n_warned++;
    if (r->warn)
        r->warn(r->warn_user, msg);
}

int castread_next(castread_t *r, cast_event *ev, bool want_output, char *err, size_t errlen)
{
    for (;;) {
        if (r->pos >= r->size)
            return 0;
        const char *s = r->data + r->pos;
        size_t avail = r->size - r->pos;
        const char *nl = memchr(s, '\n', avail);
        size_t len = nl ? (size_t)(nl - s) : avail;
        size_t offset = r->pos;
        unsigned long line = ++r->line;
        r->pos += nl ? len + 1 : len;
        if (skip_ws(s, len, 0) == len)
            continue; /* a blank line */
        memset(ev, 0, sizeof *ev);
        ev->offset = offset;
        ev->line = line;
        int rc = parse_fast(r, s, len, ev, want_output);
        if (rc == 0) {
            char why[512];
            rc = parse_json(r, s, len, ev, want_output, why, sizeof why);
            if (rc < 0) {
                if (!nl) {
                    /* Cut mid-write: the rest never came. */
                    castread_warn(r, offset, line,
                                  "the last line is incomplete (the recording was cut off, or is still being "
                                  "written); skipped");
                    return 0;
                }
                snprintf(err, errlen, "%s", why);
                return -1;
            }
        }
        if (ev->time < 0 || ev->time != ev->time)
            ev->time = 0;
        if (ev->kind == CAST_RESIZE) {
            const char *p;
            long cols = parse_dimension(ev->data, &p);
            long rows = *p == 'x' ? parse_dimension(p + 1, &p) : -1;
            if (cols < 1 || rows < 1 || *p) {
                char *data = shown(ev->data, ev->len, 40);
                castread_warn(r, offset, line, "a resize to \"%s\" is not COLSxROWS; skipped", data);
                free(data);
                ev->kind = CAST_OTHER;
            } else {
                ev->cols = cols;
                ev->rows = rows;
            }
        }
        return 1;
    }
}

size_t castread_tell(const castread_t *r)
{
    return r->pos;
}

unsigned long castread_line(const castread_t *r)
{
    return r->line;
}

void castread_seek(castread_t *r, size_t offset, unsigned long line)
{
    r->pos = offset < r->first_event ? r->first_event : offset > r->size ? r->size : offset;
    r->line = line > 0 ? line - 1 : 1;
}

void castread_rewind(castread_t *r)
{
    r->pos = r->first_event;
    r->line = 1;
}

const cast_header *castread_header(const castread_t *r)
{
    return &r->hdr;
}

const char *castread_name(const castread_t *r)
{
    return r->name;
}

size_t castread_size(const castread_t *r)
{
    return r->size;
}

/* ---- opening ------------------------------------------------------------------ */

static int read_header(castread_t *r, char *err, size_t errlen)
{
    if (r->size == 0) {
        snprintf(err, errlen, "%s is empty: not an asciicast recording", r->name);
        return -1;
    }
    const char *nl = memchr(r->data, '\n', r->size);
    size_t len = nl ? (size_t)(nl - r->data) : r->size;
    json_error_t je;
    json_t *h = json_loadb(r->data, len, 0, &je);
    if (!h || !json_is_object(h)) {
        char *why = shown(h ? "not an object" : je.text, strlen(h ? "not an object" : je.text), 200);
        snprintf(err, errlen, "%s is not an asciicast recording: its first line is not a JSON header (%s)", r->name,
                 why);
        free(why);
        json_decref(h);
        return -1;
    }
    int rc = -1;
    json_t *v = json_object_get(h, "version");
    if (!json_is_integer(v)) {
        snprintf(err, errlen, "%s is not an asciicast recording: its header has no version", r->name);
        goto out;
    }
    if (json_integer_value(v) != 2) {
        snprintf(err, errlen, "%s is asciicast version %lld; corral reads version 2 (what corral and asciinema 2 "
                 "write)", r->name, (long long)json_integer_value(v));
        goto out;
    }
    json_t *w = json_object_get(h, "width"), *ht = json_object_get(h, "height");
    if (!json_is_integer(w) || !json_is_integer(ht) || json_integer_value(w) < 1 || json_integer_value(ht) < 1) {
        snprintf(err, errlen, "%s: the header's width and height must be whole numbers from 1", r->name);
        goto out;
    }
    r->hdr.version = 2;
    r->hdr.width = json_integer_value(w) > 100000000 ? 100000000 : (long)json_integer_value(w);
    r->hdr.height = json_integer_value(ht) > 100000000 ? 100000000 : (long)json_integer_value(ht);
    json_t *ts = json_object_get(h, "timestamp"), *il = json_object_get(h, "idle_time_limit");
    r->hdr.timestamp = json_is_number(ts) ? json_number_value(ts) : 0;
    r->hdr.idle_time_limit = json_is_number(il) && json_number_value(il) > 0 ? json_number_value(il) : 0;
    json_t *t = json_object_get(h, "title"), *c = json_object_get(h, "command");
    if (json_is_string(t))
        r->hdr.title = r->title = xstrdup(json_string_value(t));
    if (json_is_string(c))
        r->hdr.command = r->command = xstrdup(json_string_value(c));
    r->first_event = nl ? len + 1 : len;
    r->pos = r->first_event;
    r->line = 1;
    rc = 0;
out:
    json_decref(h);
    return rc;
}

static castread_t *new_reader(const char *name, castread_warn_fn warn, void *user)
{
    castread_t *r = xcalloc(1, sizeof *r);
    r->name = xstrdup(name);
    buf_init(&r->str);
    buf_reserve(&r->str, 4096); /* so an empty string's data is "" */
    r->warn = warn;
    r->warn_user = user;
    return r;
}

void castread_close(castread_t *r)
{
    if (!r)
        return;
    free(r->name);
    free(r->data);
    free(r->title);
    free(r->command);
    buf_free(&r->str);
    free(r);
}

/* Read fd to its end into *out (at most max bytes: -EFBIG beyond). */
/* All of fd, at most max bytes: 0, -EFBIG or -errno (read_all). */
static int read_whole(int fd, size_t max, char **out, size_t *outlen)
{
    buf_t b;
    buf_init(&b);
    int rc = read_all(fd, max, &b);
    if (rc < 0) {
        buf_free(&b);
        return rc;
    }
    *outlen = b.len;
    *out = b.data ? buf_steal(&b) : xstrdup("");
    return 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static const char *tar_path(void)
{
    return access("/bin/tar", X_OK) == 0 ? "/bin/tar" : "/usr/bin/tar";
}

/* Run tar with argv (stdin /dev/null, stdout a pipe we read; stderr to
 * stdout when merge_stderr, else /dev/null) and collect its output.
 * Returns its wait status, or -1 (err) when it could not run or said too
 * much. */
static int run_tar(char *const argv[], bool merge_stderr, size_t max, char **out, size_t *outlen, char *err,
                   size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot make a pipe for tar: %s", strerror(errno));
        return -1;
    }
    /* tar takes options from TAR_OPTIONS too: the argument vector alone
     * says what it does. */
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = xcalloc(n + 1, sizeof *envp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TAR_OPTIONS=", 12) != 0)
            envp[k++] = environ[i];
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    if (merge_stderr)
        posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    else
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    rc = read_whole(p[0], max, out, outlen);
    close(p[0]);
    if (rc < 0)
        kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc < 0) {
        if (rc == -EFBIG)
            snprintf(err, errlen, "tar's output is larger than %zu MiB", max >> 20);
        else
            snprintf(err, errlen, "cannot read tar's output: %s", strerror(-rc));
        return -1;
    }
    return status;
}

/* The recording in an export: output.cast at the top, else in exactly one
 * directory one level down.  Returns the member's name as tar lists it. */
static char *find_member(const char *path, char *list, size_t len, char *err, size_t errlen)
{
    char *top = NULL, *down = NULL;
    int downs = 0;
    char *save = NULL;
    list[len] = '\0';
    for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strchr(line, '\\'))
            continue; /* tar quoted an odd character: not a name we could pass back */
        const char *name = strncmp(line, "./", 2) == 0 ? line + 2 : line;
        if (strcmp(name, "output.cast") == 0) {
            if (!top)
                top = line;
            continue;
        }
        const char *slash = strchr(name, '/');
        if (slash && slash > name && strcmp(slash, "/output.cast") == 0) {
            if (!down || strcmp(down, line) != 0)
                downs++;
            if (!down)
                down = line;
        }
    }
    if (top)
        return xstrdup(top);
    if (downs == 1)
        return xstrdup(down);
    if (downs > 1)
        snprintf(err, errlen, "%s holds %d recordings (DIR/output.cast): replay one of them from the extracted "
                 "archive", path, downs);
    else
        snprintf(err, errlen, "%s holds no output.cast (at its top or one directory down): not a corral export?",
                 path);
    return NULL;
}

static int load_export(castread_t *r, const char *path, char *err, size_t errlen)
{
    char *list = NULL;
    size_t len = 0;
    char why[512];
    /* --force-local: a name with a colon is a file here, never a remote
     * host tar would connect to. */
    char *argv_list[] = {(char *)tar_path(), "--force-local", "-tzf", (char *)path, NULL};
    int st = run_tar(argv_list, true, TAR_LIST_MAX, &list, &len, why, sizeof why);
    if (st < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, why);
        return -1;
    }
    list = xrealloc(list, len + 1);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        /* tar's own words are the last line it printed. */
        list[len] = '\0';
        while (len > 0 && list[len - 1] == '\n')
            list[--len] = '\0';
        char *last = strrchr(list, '\n');
        char *msg = shown(last ? last + 1 : list, strlen(last ? last + 1 : list), 300);
        snprintf(err, errlen, "%s is not a readable .tar.gz archive (tar: %s)", path, *msg ? msg : "failed");
        free(msg);
        free(list);
        return -1;
    }
    char *member = find_member(path, list, len, err, errlen);
    free(list);
    if (!member)
        return -1;
    char *argv_x[] = {(char *)tar_path(), "--force-local", "-xzOf", (char *)path, "--occurrence=1",
                      "--no-wildcards", "--", member, NULL};
    st = run_tar(argv_x, false, CAST_MAX_BYTES, &r->data, &r->size, why, sizeof why);
    if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char *name = shown(member, strlen(member), 200);
        if (st < 0)
            snprintf(err, errlen, "cannot extract %s from %s: %s", name, path, why);
        else
            snprintf(err, errlen, "tar could not extract %s from %s", name, path);
        free(name);
        free(member);
        return -1;
    }
    free(r->name);
    char *name = shown(member, strlen(member), 200);
    r->name = xasprintf("%s:%s", path, name);
    free(name);
    free(member);
    return 0;
}

static int load_file(castread_t *r, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is a directory, not a recording (a session's is its output.cast)", path);
        close(fd);
        return -1;
    }
    int rc = read_whole(fd, CAST_MAX_BYTES, &r->data, &r->size);
    close(fd);
    if (rc < 0) {
        if (rc == -EFBIG)
            snprintf(err, errlen, "%s is larger than %zu GiB: too large to replay", path, CAST_MAX_BYTES >> 30);
        else
            snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
        return -1;
    }
    return 0;
}

castread_t *castread_open(const char *path, castread_warn_fn warn, void *user, char *err, size_t errlen)
{
    castread_t *r = new_reader(path, warn, user);
    bool export = has_suffix(path, ".tar.gz") || has_suffix(path, ".tgz");
    if (export) {
        /* tar would say little about a missing file: say it here. */
        struct stat st;
        if (stat(path, &st) < 0) {
            snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
            castread_close(r);
            return NULL;
        }
    }
    if ((export ? load_export(r, path, err, errlen) : load_file(r, path, err, errlen)) < 0 ||
        read_header(r, err, errlen) < 0) {
        castread_close(r);
        return NULL;
    }
    return r;
}

castread_t *castread_open_memory(const char *name, const char *data, size_t len, castread_warn_fn warn,
                                 void *user, char *err, size_t errlen)
{
    castread_t *r = new_reader(name, warn, user);
    r->data = xmalloc(len + 1);
    memcpy(r->data, data, len);
    r->size = len;
    if (read_header(r, err, errlen) < 0) {
        castread_close(r);
        return NULL;
    }
    return r;
}
