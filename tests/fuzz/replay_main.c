/*
 * replay_main.c - the main() of every libFuzzer target when make check
 * builds it with gcc and no libFuzzer: run LLVMFuzzerTestOneInput once on
 * each file named on the command line (a directory: its files in name
 * order), or, given nothing, on the committed corpus
 * $CORRAL_TESTS_SRCDIR/fuzz/corpus/FUZZ_CORPUS, printing TAP.  A crash or
 * a sanitizer report stops the run after the last "ok" printed, which names
 * the input before the one that failed.
 *
 * A target built this way is compiled with -DFUZZ_CORPUS='"name"' and
 * linked with this file; the libFuzzer build (tests/fuzz/build.sh) leaves
 * this file out and uses libFuzzer's main.
 */
#include "config.h"

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_CORPUS
#error "build with -DFUZZ_CORPUS='\"name of the directory under tests/fuzz/corpus\"'"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct inputs {
    char **path;
    size_t n;
};

static void add(struct inputs *in, char *path)
{
    char **grown = realloc(in->path, (in->n + 1) * sizeof *in->path);
    if (!grown) {
        perror("replay_main");
        exit(99);
    }
    in->path = grown;
    in->path[in->n++] = path;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s) {
        perror("replay_main");
        exit(99);
    }
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

/* Each argument is a file, or a directory whose files run in name order. */
static void add_inputs(struct inputs *in, const char *path)
{
    struct dirent **names;
    int k = scandir(path, &names, NULL, alphasort);
    if (k < 0) {
        char *copy = strdup(path);
        if (!copy) {
            perror("replay_main");
            exit(99);
        }
        add(in, copy);
        return;
    }
    for (int i = 0; i < k; i++) {
        if (names[i]->d_name[0] != '.')
            add(in, join(path, names[i]->d_name));
        free(names[i]);
    }
    free(names);
}

/* The whole file, or NULL with errno set; *len its size.  An input is a
 * corpus file of at most a few hundred kilobytes, read into one buffer the
 * size libFuzzer would hand over (no terminating NUL, so a target that reads
 * past the end is caught under ASan as it would be by libFuzzer). */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *grown = realloc(buf, cap);
            if (!grown) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    /* Exactly the input's bytes, so an overread is one past a malloc'd block. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return NULL;
    }
    memcpy(exact, buf, n);
    free(buf);
    *len = n;
    return exact;
}

int main(int argc, char **argv)
{
    struct inputs in = {NULL, 0};
    for (int i = 1; i < argc; i++)
        add_inputs(&in, argv[i]);
    if (argc == 1) {
        const char *src = getenv("CORRAL_TESTS_SRCDIR");
        char *fuzz = join(src ? src : "tests", "fuzz/corpus");
        char *corpus = join(fuzz, FUZZ_CORPUS);
        add_inputs(&in, corpus);
        free(corpus);
        free(fuzz);
    }
    printf("1..%zu\n", in.n ? in.n : 1);
    if (in.n == 0)
        printf("not ok 1 - no inputs found in corpus %s (is CORRAL_TESTS_SRCDIR set?)\n",
               FUZZ_CORPUS);
    int rc = in.n ? 0 : 1;
    for (size_t i = 0; i < in.n; i++) {
        size_t len = 0;
        uint8_t *data = slurp(in.path[i], &len);
        const char *slash = strrchr(in.path[i], '/');
        const char *name = slash ? slash + 1 : in.path[i];
        if (!data) {
            printf("not ok %zu - cannot read %s\n", i + 1, in.path[i]);
            rc = 1;
        } else {
            fflush(stdout);
            LLVMFuzzerTestOneInput(data, len);
            printf("ok %zu - %s/%s\n", i + 1, FUZZ_CORPUS, name);
            free(data);
        }
        free(in.path[i]);
    }
    free(in.path);
    return rc;
}
