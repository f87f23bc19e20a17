/*
 * cli_verb.h - one verb of the command line (corral VERB, docs/corral.1):
 * the entry each verb exports, and what the verbs share.  Every verb,
 * wherever its code lives, is one const cli_verb; cli.c lists the entries
 * in the order corral --help shows them, finds the one named and runs it.
 * Included by the files of src/cli/ only.
 */
#ifndef CORRAL_CLI_VERB_H
#define CORRAL_CLI_VERB_H

typedef struct cli_verb cli_verb;
struct cli_verb {
    const char *name;  /* corral NAME */
    const char *usage; /* the usage line, after "usage: corral " */
    const char *help;  /* --help's text, after the usage line and a blank line */
    /* The verb itself: argv[0] is "corral NAME" (getopt names the verb in
     * its messages with it) and getopt is reset for the verb's own options.
     * Returns the exit status (base/exitcode.h). */
    int (*run)(const cli_verb *v, int argc, char **argv);
};

#endif
