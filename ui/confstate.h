/*
 * confstate.h - the config file as the screen sees it (confstate.c): the
 * errors the file has now (all of them, from one read), whether the
 * running server's settings are the file's, and the reload key.
 *
 * Included only in ui/.
 */
#ifndef CORRAL_UI_CONFSTATE_H
#define CORRAL_UI_CONFSTATE_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "config/conf.h"

struct tui;

typedef struct ui_confstate {
    char *path;          /* the file the screen read */
    conf_errors errors;  /* its errors as it is now */
    char *text;          /* its text as it is now */
    dev_t dev;           /* what it was when last read: an edit shows in these */
    ino_t ino;
    off_t size;
    long long mtime_ns;
    /* The server's (the subscribe reply's and the config event's config). */
    bool server_known;
    char *srv_path, *srv_sha, *srv_text, *srv_refused, *srv_later;
} ui_confstate;

/* At start: the file as the screen read it (errors and text are taken). */
void confstate_init(struct tui *t, conf_errors *errors, char *text);
/* The server's config status (docs/protocol.md, "config"). */
void confstate_server(struct tui *t, json_t *config);
/* Every tick: an edit of the file is read (its errors and difference are
 * shown at once; R applies it). */
void confstate_poll(struct tui *t);
/* The reload key: the screen's own settings ([keys], [ui] sidebar-width,
 * mouse and notify) from the file, and the server asked to read it too. */
void confstate_reload(struct tui *t);
/* The status bar's part (the error style): columns used, 0 when all is
 * well. */
int confstate_status(struct tui *t, int y, int x, int maxw);
/* The help's lines about the config file (each whole; the help wraps
 * them), handed to line one by one; none when all is well. */
void confstate_help(struct tui *t, void (*line)(void *user, const char *text, bool heading), void *user);
void confstate_free(struct tui *t);

#endif
