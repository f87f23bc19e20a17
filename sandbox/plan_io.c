/*
 * plan_io.c - a launch plan as text: printed for people (--print-plan) and
 * serialized for the session's init, which reads it from a file descriptor
 * with an empty environment (so /proc/1/environ holds nothing).
 *
 * Serialized form: one record per line, fields separated by tabs, each field
 * with '%', tab and newline written as %25, %09, %0A.
 */
#include "config.h"

#include "plan.h"
#include "sbutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_name(sb_mount_kind k)
{
    switch (k) {
    case SB_M_BIND: return "bind";
    case SB_M_TMPFS: return "tmpfs";
    case SB_M_DEV: return "dev";
    case SB_M_PROC: return "proc";
    case SB_M_MASK_FILE: return "mask";
    case SB_M_OVERLAY: return "overlay";
    }
    return "?";
}

void sb_plan_print(const sb_plan *plan, FILE *f)
{
    fprintf(f, "profile:    %s%s\n", plan->profile, plan->unconfined ? "  (no sandbox: full access)" : "");
    fprintf(f, "network:    %s\n", sb_net_name(plan->net));
    fprintf(f, "command:   ");
    for (char **a = plan->argv; *a; a++)
        fprintf(f, " %s", *a);
    fprintf(f, "\ncwd:        %s\nworkspace:  %s\n", plan->cwd, plan->workspace);
    if (plan->unconfined) {
        fprintf(f, "namespaces: none; the command runs under corral's init (a subreaper) only\n");
    } else {
        fprintf(f, "namespaces: user (uid %u -> %u, gid %u -> %u, setgroups denied), mount, pid, ipc, uts, "
                   "cgroup%s\n",
                (unsigned)plan->uid, (unsigned)plan->uid, (unsigned)plan->gid, (unsigned)plan->gid,
                plan->ns_flags & CLONE_NEWNET ? ", net (its own: loopback only, brought up; 127.0.0.1 and ::1 reach "
                                                 "this sandbox alone, nothing is routed out)"
                                               : "; network shared with the host");
        fprintf(f, "mounts, in order (then pivot_root into the new root; the old root is detached):\n");
        for (size_t i = 0; i < plan->n_mounts; i++) {
            const sb_mount *m = &plan->mounts[i];
            char mode[16];
            if (m->kind == SB_M_BIND || m->kind == SB_M_TMPFS)
                snprintf(mode, sizeof mode, "%s %s%s", kind_name(m->kind), m->rdonly ? "ro" : "rw",
                         m->link ? " link" : "");
            else
                snprintf(mode, sizeof mode, "%s", kind_name(m->kind));
            const char *hidden = m->hide_in_layer ? "; hidden in the home layer instead where it can be, so a tool "
                                                    "may write its own" : "";
            if (m->kind == SB_M_BIND && strcmp(m->src, m->dst) != 0)
                fprintf(f, "  %3zu  %-9s %s  <- %s  (%s)\n", i + 1, mode, m->dst, m->src, m->why);
            else
                fprintf(f, "  %3zu  %-9s %s  (%s%s)\n", i + 1, mode, m->dst, m->why, hidden);
        }
        for (size_t i = 0; i < plan->n_warnings; i++)
            fprintf(f, "warning:    %s\n", plan->warnings[i]);
        if (plan->n_placeholders) {
            fprintf(f, "placeholders (made on the host for read-only mounts; shared with other sandboxes, removed "
                       "when the last one using them ends):\n");
            for (size_t i = 0; i < plan->n_placeholders; i++)
                fprintf(f, "       %s  (%s)\n", plan->placeholders[i].path,
                        plan->placeholders[i].content ? "a file" : "an empty directory");
        }
        fprintf(f, "process:    init is pid 1 (non-dumpable, empty environment, under the same filter);\n"
                   "            the command runs in a new session with its terminal as the controlling tty;\n"
                   "            every fd but 0-2 is closed\n");
        fprintf(f, "privileges: all capabilities dropped (bounding, ambient, inheritable, permitted, "
                   "effective); no_new_privs\n");
    }
    size_t n_env = 0;
    while (plan->envp[n_env])
        n_env++;
    fprintf(f, "environment (%zu):\n", n_env);
    for (char **e = plan->envp; *e; e++)
        fprintf(f, "       %s\n", *e);
}

/* ---- serialization ------------------------------------------------------- */

static void put_field(FILE *f, const char *s)
{
    fputc('\t', f);
    for (const char *p = s ? s : ""; *p; p++) {
        if (*p == '%')
            fputs("%25", f);
        else if (*p == '\t')
            fputs("%09", f);
        else if (*p == '\n')
            fputs("%0A", f);
        else
            fputc(*p, f);
    }
}

char *sb_plan_serialize(const sb_plan *plan, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    fprintf(f, "V\t1\n");
    fprintf(f, "P");
    put_field(f, plan->profile);
    fprintf(f, "\t%d\t%d\t%d\t%u\t%u\n", plan->unconfined, (int)plan->net, plan->ns_flags, (unsigned)plan->uid,
            (unsigned)plan->gid);
    for (char **a = plan->argv; *a; a++) {
        fputc('A', f);
        put_field(f, *a);
        fputc('\n', f);
    }
    fputc('C', f);
    put_field(f, plan->cwd);
    fputs("\nW", f);
    put_field(f, plan->workspace);
    fputc('\n', f);
    for (char **e = plan->envp; *e; e++) {
        fputc('E', f);
        put_field(f, *e);
        fputc('\n', f);
    }
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const sb_mount *m = &plan->mounts[i];
        fprintf(f, "M\t%d", (int)m->kind);
        put_field(f, m->src);
        put_field(f, m->dst);
        fprintf(f, "\t%d\t%llu\t%o", m->rdonly, (unsigned long long)m->size, m->mode);
        put_field(f, m->why);
        fprintf(f, "\t%d\t%d\n", m->link, m->hide_in_layer);
    }
    if (plan->layer_home) {
        fprintf(f, "H\t%d", (int)plan->layer_mode);
        put_field(f, plan->layer_home);
        put_field(f, plan->layer_path);
        put_field(f, plan->layer_dir);
        fprintf(f, "\t%d\n", plan->layer_in_memory);
    }
    for (size_t i = 0; i < plan->n_write_roots; i++) {
        fputc('R', f);
        put_field(f, plan->write_roots[i]);
        fputc('\n', f);
    }
    const sb_limits *l = &plan->limits;
    fprintf(f, "L\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\n", (unsigned long long)l->nofile,
            (unsigned long long)l->fsize, (unsigned long long)l->core, (unsigned long long)l->nproc,
            (unsigned long long)l->tmp_size, (unsigned long long)l->pids_max, (unsigned long long)l->memory_max);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    *len = size;
    return buf;
}

/* Split a line into fields (in place), unescaping each. */
static int split_fields(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max)
            return -1;
        fields[n++] = p;
        char *tab = strchr(p, '\t');
        if (tab)
            *tab = '\0';
        /* unescape in place */
        char *r = p, *w = p;
        while (*r) {
            if (r[0] == '%' && r[1] && r[2]) {
                char hex[3] = {r[1], r[2], 0};
                *w++ = (char)strtol(hex, NULL, 16);
                r += 3;
            } else {
                *w++ = *r++;
            }
        }
        *w = '\0';
        if (!tab)
            return n;
        p = tab + 1;
    }
}

static unsigned long long num(const char *s)
{
    return strtoull(s, NULL, 10);
}

int sb_plan_parse(const char *text, size_t len, sb_plan *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *copy = sb_alloc(len + 1);
    memcpy(copy, text, len);
    size_t n_argv = 0, n_env = 0;
    char **argv = NULL, **env = NULL;
    int rc = -1, lineno = 0;
    bool versioned = false;
    for (char *line = copy, *next; line && *line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *fl[16];
        int nf = split_fields(line, fl, 16);
        if (nf < 1)
            goto bad;
        char tag = fl[0][0];
        if (tag == 'V' && nf == 2 && strcmp(fl[1], "1") == 0)
            versioned = true;
        else if (tag == 'P' && nf == 7) {
            out->profile = sb_strdup(fl[1]);
            out->unconfined = num(fl[2]) != 0;
            out->net = (sb_net)num(fl[3]);
            out->ns_flags = (int)num(fl[4]);
            out->uid = (uid_t)num(fl[5]);
            out->gid = (gid_t)num(fl[6]);
        } else if (tag == 'A' && nf == 2)
            sb_list_push(&argv, &n_argv, fl[1]);
        else if (tag == 'C' && nf == 2)
            out->cwd = sb_strdup(fl[1]);
        else if (tag == 'W' && nf == 2)
            out->workspace = sb_strdup(fl[1]);
        else if (tag == 'E' && nf == 2)
            sb_list_push(&env, &n_env, fl[1]);
        else if (tag == 'M' && nf == 10) {
            if (out->n_mounts == out->cap_mounts) {
                out->cap_mounts = out->cap_mounts ? out->cap_mounts * 2 : 32;
                out->mounts = sb_realloc(out->mounts, out->cap_mounts * sizeof *out->mounts);
            }
            sb_mount *m = &out->mounts[out->n_mounts++];
            m->kind = (sb_mount_kind)num(fl[1]);
            m->src = fl[2][0] ? sb_strdup(fl[2]) : NULL;
            m->dst = sb_strdup(fl[3]);
            m->rdonly = num(fl[4]) != 0;
            m->size = num(fl[5]);
            m->mode = (unsigned)strtoul(fl[6], NULL, 8);
            m->why = sb_strdup(fl[7]);
            m->link = num(fl[8]) != 0;
            m->hide_in_layer = num(fl[9]) != 0;
            m->skip = false;
            bool needs_src = m->kind == SB_M_BIND || m->kind == SB_M_OVERLAY;
            if (m->kind > SB_M_OVERLAY || m->dst[0] != '/' || (needs_src && (!m->src || m->src[0] != '/')))
                goto bad;
        } else if (tag == 'H' && nf == 6 && !out->layer_home) {
            if (num(fl[1]) > SB_HOME_OFF)
                goto bad;
            out->layer_mode = (sb_home_layer)num(fl[1]);
            out->layer_home = sb_strdup(fl[2]);
            out->layer_path = fl[3][0] ? sb_strdup(fl[3]) : NULL;
            out->layer_dir = fl[4][0] ? sb_strdup(fl[4]) : NULL;
            out->layer_in_memory = num(fl[5]) != 0;
            if (out->layer_home[0] != '/' || (out->layer_path && out->layer_path[0] != '/') ||
                (out->layer_dir && out->layer_dir[0] != '/'))
                goto bad;
        } else if (tag == 'R' && nf == 2)
            sb_list_push(&out->write_roots, &out->n_write_roots, fl[1]);
        else if (tag == 'L' && nf == 8) {
            sb_limits *l = &out->limits;
            l->nofile = num(fl[1]);
            l->fsize = num(fl[2]);
            l->core = num(fl[3]);
            l->nproc = num(fl[4]);
            l->tmp_size = num(fl[5]);
            l->pids_max = num(fl[6]);
            l->memory_max = num(fl[7]);
        } else
            goto bad;
    }
    if (!versioned || !out->profile || !argv || !out->cwd || !out->workspace) {
        snprintf(err, errlen, "launch plan incomplete");
        goto out;
    }
    out->argv = argv;
    out->envp = env ? env : sb_alloc(sizeof(char *));
    argv = env = NULL;
    n_argv = n_env = 0;
    rc = 0;
    goto out;
bad:
    snprintf(err, errlen, "launch plan line %d is malformed", lineno);
out:
    sb_list_free(argv, n_argv);
    sb_list_free(env, n_env);
    free(copy);
    if (rc < 0)
        sb_plan_free(out);
    return rc;
}

/* ---- placeholders (made and removed in placeholders.c) ------------------- */

void sb_placeholders_free(sb_placeholder *ph, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ph[i].path);
        free(ph[i].content);
    }
    free(ph);
}

char **sb_plan_denied_below(const sb_plan *plan, const char *dir, size_t *n)
{
    char **list = NULL;
    *n = 0;
    size_t dl = strlen(dir);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const sb_mount *m = &plan->mounts[i];
        bool mask = m->kind == SB_M_MASK_FILE || (m->kind == SB_M_TMPFS && m->rdonly);
        if (!mask || !m->dst || strncmp(m->dst, dir, dl) != 0 || (dl > 1 && m->dst[dl] != '/'))
            continue;
        const char *rel = m->dst + dl + (dl > 1);
        if (*rel)
            sb_list_push(&list, n, rel);
    }
    return list;
}

bool sb_plan_writable(const sb_plan *plan, const char *dir)
{
    for (size_t i = 0; i < plan->n_write_roots; i++)
        if (strcmp(plan->write_roots[i], dir) == 0)
            return true;
    return false;
}
