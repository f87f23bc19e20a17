/*
 * cli.h - the command-line verbs (docs/corral.1).
 */
#ifndef CORRAL_CLI_H
#define CORRAL_CLI_H

/* Run corral with these arguments; returns the exit status. */
int cli_main(int argc, char **argv);

/* Verbs in files of their own (called by cli_main with their usage/help). */
struct conf;
int cli_load_conf(struct conf *c);
int cli_sandbox(int argc, char **argv, const char *usage, const char *help);
int cli_doctor(int argc, char **argv, const char *usage, const char *help);

#endif
