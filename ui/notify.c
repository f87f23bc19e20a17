/*
 * notify.c - a request waits: the bell, and a desktop notification through
 * the terminal, so that a person in another window hears of it.
 *
 * [ui] notify = auto sends OSC 9 (iTerm2, WezTerm, Windows Terminal,
 * ConEmu, Ghostty) or OSC 777 (VTE terminals, foot, urxvt) only where the
 * environment names such a terminal: elsewhere the sequence could show as
 * text.  Inside tmux the sequence is passed through (tmux's
 * allow-passthrough must be on).  The text is approval_summary's: what a
 * sandbox chose has no control character left in it, so it cannot end the
 * sequence early and write to the terminal itself.
 */
#include "config.h"

#include "notify.h"
#include "tui_int.h"
#include "protocol/approval_text.h"
#include "base/util.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && (value ? strcmp(v, value) == 0 : *v != 0);
}

static bool term_starts(const char *prefix)
{
    const char *v = getenv("TERM");
    return v && strncmp(v, prefix, strlen(prefix)) == 0;
}

/* Which notification the terminal shows: CONF_NOTIFY_OSC9, _OSC777, or
 * _BELL when none is known. */
static int detect(void)
{
    if (env_is("TERM_PROGRAM", "iTerm.app") || env_is("TERM_PROGRAM", "WezTerm") ||
        env_is("TERM_PROGRAM", "ghostty") || env_is("WT_SESSION", NULL) || env_is("ConEmuANSI", "ON"))
        return CONF_NOTIFY_OSC9;
    if (env_is("VTE_VERSION", NULL) || term_starts("foot") || term_starts("rxvt-unicode"))
        return CONF_NOTIFY_OSC777;
    return CONF_NOTIFY_BELL;
}

void term_notify(tui_t *t, const json_t *approval)
{
    int how = t->conf->ui_notify;
    if (how == CONF_NOTIFY_OFF)
        return;
    beep();
    if (how == CONF_NOTIFY_AUTO)
        how = detect();
    if (how != CONF_NOTIFY_OSC9 && how != CONF_NOTIFY_OSC777)
        return;
    char *text = approval_summary(approval, 240);
    for (char *p = text; *p; p++) /* approval_summary left none; a sequence is no place to trust that */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    buf_t seq;
    buf_init(&seq);
    if (how == CONF_NOTIFY_OSC9)
        buf_printf(&seq, "\033]9;corral: %s\007", text);
    else
        buf_printf(&seq, "\033]777;notify;corral;%s\007", text);
    free(text);
    buf_t out;
    buf_init(&out);
    if (getenv("TMUX")) {
        /* tmux passes a DCS "tmux;" sequence on to its terminal, its
         * escapes doubled */
        buf_puts(&out, "\033Ptmux;");
        for (size_t i = 0; i < seq.len; i++) {
            if (seq.data[i] == '\033')
                buf_putc(&out, '\033');
            buf_putc(&out, seq.data[i]);
        }
        buf_puts(&out, "\033\\");
    } else {
        buf_append(&out, seq.data, seq.len);
    }
    /* Between frames: curses has written its last one, and this moves no
     * cursor. */
    (void)!write(STDOUT_FILENO, out.data, out.len);
    buf_free(&seq);
    buf_free(&out);
}
