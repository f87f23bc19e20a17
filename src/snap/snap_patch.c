/*
 * snap_patch.c - see snap_patch.h.
 */
#include "config.h"

#include "snap/snap_patch.h"

#include "snap/snap_diff.h"
#include "snap/snap_take.h"
#include "snap/snap_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_MAX_SIZE (1u << 20)
/* A file's patch in the screen's list past this many bytes is cut. */
#define FILE_PATCH_MAX (4u << 20)

void snap_quote_path(buf_t *b, const char *path)
{
    bool quote = false;
    for (const unsigned char *p = (const unsigned char *)path; *p && !quote; p++)
        quote = *p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f;
    if (!quote) {
        buf_puts(b, path);
        return;
    }
    buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        switch (*p) {
        case '\a': buf_puts(b, "\\a"); break;
        case '\b': buf_puts(b, "\\b"); break;
        case '\t': buf_puts(b, "\\t"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\v': buf_puts(b, "\\v"); break;
        case '\f': buf_puts(b, "\\f"); break;
        case '\r': buf_puts(b, "\\r"); break;
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        default:
            if (*p < 0x20 || *p >= 0x7f)
                buf_printf(b, "\\%03o", *p);
            else
                buf_putc(b, (char)*p);
        }
    }
    buf_putc(b, '"');
}

typedef struct print_ctx {
    buf_t *out;
    size_t max;
    bool cut;
} print_ctx;

static int on_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l, void *payload)
{
    (void)d;
    (void)h;
    print_ctx *p = payload;
    if (p->out->len >= p->max) {
        p->cut = true;
        return 1; /* stop */
    }
    if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
        l->origin == GIT_DIFF_LINE_DELETION)
        buf_putc(p->out, l->origin);
    buf_append(p->out, l->content, l->content_len);
    return 0;
}

static int make_diff(snap_store *st, const char *before, const char *after, const snap_patch_opts *o, bool binary,
                     git_diff **out, char *err, size_t errlen)
{
    git_tree *ta = NULL, *tb = NULL;
    snap_meta ma, mb;
    int rc = -1;
    if (snap_read(st, before, &ta, &ma, err, errlen) < 0)
        return -1;
    snap_meta_free(&ma);
    if (snap_read(st, after, &tb, &mb, err, errlen) < 0) {
        git_tree_free(ta);
        return -1;
    }
    snap_meta_free(&mb);
    git_diff_options opt;
    git_diff_options_init(&opt, GIT_DIFF_OPTIONS_VERSION);
    opt.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
    if (o && o->ignore_space)
        opt.flags |= GIT_DIFF_IGNORE_WHITESPACE;
    if (binary) {
        /* Binary changes as git diff --binary prints them (full ids), so
         * that git apply can apply them, in either direction. */
        opt.flags |= GIT_DIFF_SHOW_BINARY;
        opt.id_abbrev = GIT_OID_HEXSZ;
    } else {
        opt.max_size = DIFF_MAX_SIZE;
    }
    if (git_diff_tree_to_tree(out, st->repo, ta, tb, &opt) < 0) {
        snprintf(err, errlen, "cannot compare snapshots of %s: %s", st->ws, snap_git_error());
        goto done;
    }
    git_diff_find_options fo;
    git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
    fo.flags = GIT_DIFF_FIND_RENAMES;
    fo.rename_limit = 1000;
    fo.rename_threshold = 50;
    git_diff_find_similar(*out, &fo);
    rc = 0;
done:
    git_tree_free(ta);
    git_tree_free(tb);
    return rc;
}

static void name_status(const snap_changes *c, buf_t *out)
{
    for (size_t i = 0; i < c->n_files; i++) {
        const snap_file *f = &c->files[i];
        if (f->old_mode == 040000 && f->new_mode == 040000)
            continue; /* a git directory's row: marks only, no file */
        if (f->status == 'R') {
            buf_printf(out, "R%03d\t", f->similarity);
            snap_quote_path(out, f->old_path);
            buf_putc(out, '\t');
        } else {
            buf_printf(out, "%c\t", f->status);
        }
        snap_quote_path(out, f->path);
        buf_putc(out, '\n');
    }
}

static void stat_text(git_diff *diff, const snap_changes *c, buf_t *out)
{
    git_diff_stats *stats = NULL;
    git_buf gb = {0};
    if (git_diff_get_stats(&stats, diff) == 0 &&
        git_diff_stats_to_buf(&gb, stats, GIT_DIFF_STATS_FULL | GIT_DIFF_STATS_INCLUDE_SUMMARY, 80) == 0)
        buf_append(out, gb.ptr, gb.size);
    git_buf_dispose(&gb);
    git_diff_stats_free(stats);
    for (size_t i = 0; i < c->n_files; i++) {
        if (!c->files[i].large)
            continue;
        buf_puts(out, " ");
        snap_quote_path(out, c->files[i].path);
        buf_printf(out, " | large, not captured (%llu bytes)\n", (unsigned long long)c->files[i].new_size);
    }
}

/* Patch text as JSON: bytes that are not UTF-8 (a Latin-1 file) become
 * '?', for the screen only; corral diff prints the exact bytes. */
static json_t *text_json(const char *s, size_t len)
{
    if (utf8_valid_prefix(s, len) == len)
        return json_stringn(s, len);
    char *clean = xmalloc(len + 1);
    for (size_t j = 0; j < len; j++)
        clean[j] = (unsigned char)s[j] >= 0x80 ? '?' : s[j];
    clean[len] = '\0';
    json_t *j = json_stringn(clean, len);
    free(clean);
    return j;
}

/* Each file's patch, by its (new) path, into the file list's JSON. */
static void attach_patches(git_diff *diff, json_t *files)
{
    size_t n = git_diff_num_deltas(diff);
    for (size_t i = 0; i < n; i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        git_patch *patch = NULL;
        if (git_patch_from_diff(&patch, diff, i) < 0 || !patch) {
            git_error_clear();
            continue;
        }
        buf_t text;
        buf_init(&text);
        print_ctx pc = {&text, FILE_PATCH_MAX, false};
        git_patch_print(patch, on_line, &pc);
        git_patch_free(patch);
        if (pc.cut)
            buf_puts(&text, "\n... (cut: the patch is longer than the screen shows; corral diff prints it all)\n");
        size_t k;
        json_t *f;
        json_array_foreach(files, k, f) {
            const char *p = json_string_value(json_object_get(f, "path"));
            if (p && strcmp(p, d->new_file.path) == 0 && !json_object_get(f, "patch")) {
                json_object_set_new(f, "patch", text_json(text.data ? text.data : "", text.len));
                break;
            }
        }
        buf_free(&text);
    }
}

int snap_render(snap_store *st, const char *before, const char *after, snap_format fmt, const snap_patch_opts *o,
                size_t max, buf_t *text, json_t **files, char *err, size_t errlen)
{
    git_diff *diff = NULL;
    snap_changes c;
    memset(&c, 0, sizeof c);
    bool need_changes = fmt != SNAP_FMT_PATCH;
    if (need_changes && snap_changes_compute(st, before, after, &c, err, errlen) < 0)
        return -1;
    int rc = 0;
    if (fmt != SNAP_FMT_NAME_STATUS &&
        make_diff(st, before, after, o, fmt == SNAP_FMT_PATCH, &diff, err, errlen) < 0) {
        snap_changes_free(&c);
        return -1;
    }
    switch (fmt) {
    case SNAP_FMT_PATCH: {
        print_ctx pc = {text, max, false};
        if (git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, on_line, &pc) < 0 && !pc.cut) {
            snprintf(err, errlen, "cannot print the diff of %s: %s", st->ws, snap_git_error());
            rc = -1;
        }
        if (pc.cut)
            buf_printf(text, "\n... (cut at %zu bytes)\n", max);
        break;
    }
    case SNAP_FMT_NAME_STATUS:
        name_status(&c, text);
        break;
    case SNAP_FMT_STAT:
        stat_text(diff, &c, text);
        break;
    case SNAP_FMT_FILES: {
        json_t *j = snap_changes_json(&c, true);
        attach_patches(diff, json_object_get(j, "files"));
        *files = j;
        break;
    }
    }
    git_error_clear();
    git_diff_free(diff);
    snap_changes_free(&c);
    return rc;
}
