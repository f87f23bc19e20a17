/*
 * cli_complete.c - `corral __complete -- WORD...`: the candidates for the
 * last word of a command line being typed, one per line, for the shell
 * completions (src/shell/completion/): verbs, a verb's options (read from
 * its own usage and help text, so a new option completes with no change
 * here), session ids and approval request ids from a running server, and
 * after -H the config's [hosts] names.
 * Nothing printed means "complete file names" (a directory after -C, a
 * command after --).  Never starts a server, never prompts, and prints
 * nothing on stderr: it runs on every Tab.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "base/util.h"
#include "config/conf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct words {
    char **v;
    size_t n;
} words;

static void add_unique(words *w, const char *s, size_t len)
{
    for (size_t i = 0; i < w->n; i++)
        if (strlen(w->v[i]) == len && memcmp(w->v[i], s, len) == 0)
            return;
    w->v = xrealloc(w->v, (w->n + 1) * sizeof *w->v);
    w->v[w->n++] = xstrndup(s, len);
}

static void free_words(words *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    free(w->v);
}

/* Every --long-option a text names ("--speed X", "[--json]", "--help"). */
static void options_in(const char *text, words *out)
{
    for (const char *p = text; p && (p = strstr(p, "--")) != NULL;) {
        const char *s = p + 2, *e = s;
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-')) {
            p = s;
            continue;
        }
        while (isalnum((unsigned char)*e) || *e == '-')
            e++;
        if (e > s && isalpha((unsigned char)*s))
            add_unique(out, p, (size_t)(e - p));
        p = e;
    }
}

/* Does the option opt take a value, as the verb's usage or help writes it
 * ("--speed X", "-C DIR", "--note TEXT": a word in capitals follows)? */
static bool takes_value(const cli_verb *v, const char *opt)
{
    const char *texts[] = {v->usage, v->help};
    size_t len = strlen(opt);
    for (size_t t = 0; t < 2; t++) {
        for (const char *p = texts[t]; p && (p = strstr(p, opt)) != NULL; p += len) {
            const char *q = p + len;
            if (isalnum((unsigned char)*q) || *q == '-')
                continue;
            if (*q == ' ' || *q == '=')
                q++;
            if (isupper((unsigned char)*q))
                return true;
        }
    }
    return false;
}

/* The ids a server lists: sessions ("ls") or pending requests
 * ("approvals"), each with what it is, for the shells that show it. */
static void ids_from_server(const char *cmd, const char *list, words *out)
{
    client_t c;
    char err[512];
    if (client_connect(&c, "complete", false, err, sizeof err) < 0)
        return;
    json_t *r = client_call(&c, json_pack("{s:s}", "cmd", cmd), NULL, NULL, err, sizeof err);
    client_close(&c);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(r, list), i, x) {
        char id[32];
        int n = snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(x, "id")));
        add_unique(out, id, (size_t)n);
    }
    json_decref(r);
}

/* The names of the config's [hosts] (errors in the file left unsaid). */
static void host_names(words *out)
{
    conf_t c;
    conf_errors e = {0};
    conf_load_user_all(&c, &e, NULL);
    conf_errors_free(&e);
    for (size_t i = 0; i < c.n_hosts; i++)
        add_unique(out, c.host_names[i], strlen(c.host_names[i]));
    add_unique(out, "ssh://", 6);
    conf_free(&c);
}

static bool names_session(const cli_verb *v)
{
    return strstr(v->usage, "SESSION") || strstr(v->usage, " ID");
}

static int verb_complete(const cli_verb *self, int argc, char **argv)
{
    (void)self;
    int first = 1;
    if (first < argc && strcmp(argv[first], "--") == 0)
        first++;
    /* argv[first] is the program's own name; the last word is completed. */
    int nw = argc - first;
    if (nw < 2)
        return 0;
    char **w = argv + first;
    const char *cur = w[nw - 1];
    words out = {0};
    /* The global options before the verb (-H HOST): their value completes
     * to [hosts]'s names, and the verb's words follow them. */
    bool remote = false;
    int g = 1;
    while (g < nw - 1) {
        if (strcmp(w[g], "-H") == 0 || strcmp(w[g], "--host") == 0) {
            if (g + 1 == nw - 1) {
                host_names(&out);
                goto print;
            }
            g += 2;
        } else if ((strncmp(w[g], "-H", 2) == 0 && w[g][2]) || strncmp(w[g], "--host=", 7) == 0) {
            g++;
        } else {
            break;
        }
        remote = true;
    }
    w += g - 1; /* w[1] is the verb */
    nw -= g - 1;
    size_t nverbs;
    const cli_verb *const *verbs = cli_verbs(&nverbs);
    if (nw == 2) {
        if (cur[0] == '-') {
            add_unique(&out, "--help", 6);
            add_unique(&out, "--version", 9);
            if (!remote) {
                add_unique(&out, "-H", 2);
                add_unique(&out, "--host", 6);
            }
        } else {
            for (size_t i = 0; i < nverbs; i++)
                add_unique(&out, verbs[i]->name, strlen(verbs[i]->name));
        }
    } else {
        const cli_verb *v = NULL;
        for (size_t i = 0; i < nverbs && !v; i++)
            if (strcmp(verbs[i]->name, w[1]) == 0)
                v = verbs[i];
        bool after_dashes = false;
        for (int i = 2; i < nw - 1; i++)
            after_dashes |= strcmp(w[i], "--") == 0;
        const char *prev = w[nw - 2];
        if (!v || after_dashes) {
            /* an unknown verb, or a command's own words: file names */
        } else if (cur[0] == '-') {
            options_in(v->usage, &out);
            options_in(v->help, &out);
            add_unique(&out, "--help", 6);
        } else if (prev[0] == '-' && nw > 3 && takes_value(v, prev)) {
            /* an option's value: a file or directory name */
        } else if (remote) {
            /* ids are the other machine's: no ssh on every Tab */
        } else if (strcmp(v->name, "approve") == 0 || strcmp(v->name, "deny") == 0) {
            ids_from_server("approvals", "approvals", &out);
        } else if (names_session(v)) {
            ids_from_server("ls", "sessions", &out);
        }
    }
print:;
    size_t plen = strlen(cur);
    for (size_t i = 0; i < out.n; i++)
        if (strncmp(out.v[i], cur, plen) == 0)
            printf("%s\n", out.v[i]);
    free_words(&out);
    return 0;
}

const cli_verb cli_verb_complete = {
    .name = "__complete",
    .usage = "__complete -- WORD...",
    .help = "The candidates for the last WORD of a command line (for shell completion).\n",
    .run = verb_complete,
    .where = CLI_LOCAL,
};
