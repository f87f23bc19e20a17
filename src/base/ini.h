/*
 * ini.h - a git-config style INI reader: "[section]", "[section \"sub\"]",
 * "key = value", '#' and ';' comments, double-quoted values with \" \\ \n \t
 * escapes.  Used for the config file and themes.  Every problem is reported
 * as "FILE:LINE: what was wrong", never skipped silently.
 *
 * Included by src/base/, src/config/ and ui/.
 */
#ifndef CORRAL_INI_H
#define CORRAL_INI_H

#include <stddef.h>

#include "base/util.h"

/* Called for each key.  subsection is NULL when the section has none.
 * Return 0 to go on, or -1 after writing a message (without the file:line
 * prefix, which the reader adds) into err. */
typedef int (*ini_key_fn)(void *user, const char *section, const char *subsection,
                          const char *key, const char *value, char *err, size_t errlen);

/* Parse text (NUL-terminated) read from name.  0 or -1 with err set. */
int ini_parse(const char *name, const char *text, ini_key_fn fn, void *user, char *err,
              size_t errlen);

/* A problem found by ini_parse_all: "NAME:LINE: what was wrong", and the
 * section it is in (NULL outside any, or under a bad header). */
typedef void (*ini_error_fn)(void *user, const char *section, const char *message);

/* Parse all of text, handing every problem to on_error and going on with
 * the next line (a bad header's keys are skipped with it): the number of
 * problems, 0 when none. */
int ini_parse_all(const char *name, const char *text, ini_key_fn fn, ini_error_fn on_error, void *user);

/* Read a file of at most 4 MiB with no NUL byte into text (initialised
 * here; always a string on 0): 0, 1 when it does not exist (text empty),
 * or -1 with "PATH: why" in err. */
int ini_read_file(const char *path, buf_t *text, char *err, size_t errlen);

/* Read and parse a file.  A missing file is not an error when optional. */
int ini_parse_file(const char *path, int optional, ini_key_fn fn, void *user, char *err,
                   size_t errlen);

#endif
