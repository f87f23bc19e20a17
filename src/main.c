/*
 * main.c - corral's entry point: the internal session init when the server
 * starts a session through us, otherwise the command-line verbs.
 */
#include "config.h"

#include <locale.h>
#include <string.h>

#include "cli.h"
#include "init.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "__init") == 0)
        return init_main(argc - 1, argv + 1);
    setlocale(LC_ALL, "");
    return cli_main(argc, argv);
}
