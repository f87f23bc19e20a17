/*
 * cli.h - the command-line verbs (docs/corral.1).
 */
#ifndef CORRAL_CLI_H
#define CORRAL_CLI_H

/* Run corral with these arguments; returns the exit status. */
int cli_main(int argc, char **argv);

#endif
