/*
 * log.c - see log.h.
 */
#include "config.h"

#include "server/log.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void server_log(const char *fmt, ...)
{
    char when[32];
    iso_time(when, wall_sec());
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s corral[%d]: ", when, (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}
