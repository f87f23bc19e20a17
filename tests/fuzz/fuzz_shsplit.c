/*
 * fuzz_shsplit.c - libFuzzer target for the exec policy's shell reading
 * (src/policy/shsplit.c): any script (from an agent, so hostile) must be read as
 * plain commands or as complex, and its literal commands listed, without a
 * crash, a leak, a read out of bounds, deep recursion or more than a
 * moment's work.  A plain script's commands are never empty, and the
 * literal reading finds at least the commands of a plain one.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *     -Isrc -I<dir with an empty config.h> tests/fuzz/fuzz_shsplit.c src/policy/shsplit.c \
 *     src/base/util.c -o fuzz_shsplit
 *   ./fuzz_shsplit -max_len=4096 CORPUS_DIR
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/shsplit.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *script = xstrndup((const char *)data, size); /* argv strings end at a NUL */
    sh_commands plain, lit;
    int complex = shsplit_plain(script, &plain);
    shsplit_literal(script, &lit);
    if (complex != 0 && complex != 1)
        abort();
    if (complex == 0) {
        if (plain.n == 0)
            abort();
        for (size_t i = 0; i < plain.n; i++)
            if (!plain.cmds[i][0])
                abort(); /* a plain command has a program */
        if (lit.n < plain.n)
            abort(); /* every plain command is a literal one too */
    } else if (plain.n != 0) {
        abort();
    }
    sh_commands_free(&plain);
    sh_commands_free(&lit);
    free(script);
    return 0;
}
