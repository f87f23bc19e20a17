/*
 * rlimits.c - rlimits and per-sandbox cgroups.
 *
 * cgroup v2: a child of the caller's own cgroup, when the pids (and memory)
 * controllers are enabled for its children or can be.  cgroup v1: a child
 * in the pids and memory hierarchies when they are writable (as root, or
 * delegated).  Anything that cannot be made is recorded, not fatal: the
 * rlimits (RLIMIT_NPROC per user namespace) remain the floor.
 */
#include "config.h"

#include "rlimits.h"
#include "sbutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Our cgroup path in hierarchy "controller" (v1) or the unified one
 * (controller NULL), from /proc/self/cgroup. */
static char *own_cgroup(const char *controller)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return NULL;
    char line[1024];
    char *res = NULL;
    while (!res && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = '\0';
        const char *ctrls = c1 + 1, *path = c2 + 1;
        if (!controller) {
            if (strcmp(line, "0") == 0 && *ctrls == '\0')
                res = sb_strdup(path);
            continue;
        }
        char *list = sb_strdup(ctrls);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
            if (strcmp(tok, controller) == 0)
                res = sb_strdup(path);
        free(list);
    }
    fclose(f);
    return res;
}

static int write_file(const char *dir, const char *name, const char *value)
{
    char *path = sb_printf("%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, value, strlen(value));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(value) ? 0 : -1;
}

static bool file_has_word(const char *path, const char *word)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char buf[1024];
    bool found = false;
    while (!found && fscanf(f, "%1023s", buf) == 1)
        found = strcmp(buf, word) == 0;
    fclose(f);
    return found;
}

/* The unified hierarchy's mount point, or NULL. */
static const char *unified_root(void)
{
    struct stat st;
    if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0)
        return "/sys/fs/cgroup";
    if (stat("/sys/fs/cgroup/unified/cgroup.controllers", &st) == 0)
        return "/sys/fs/cgroup/unified";
    return NULL;
}

/* Where a v2 child with the needed controllers could go; NULL and why. */
static char *v2_parent(const sb_limits *l, bool try_enable, char *why, size_t whylen)
{
    const char *root = unified_root();
    char *own = own_cgroup(NULL);
    char *dir = NULL;
    if (!root || !own) {
        snprintf(why, whylen, "no cgroup v2 hierarchy");
        goto out;
    }
    dir = sb_printf("%s%s", root, strcmp(own, "/") == 0 ? "" : own);
    char *ctl = sb_printf("%s/cgroup.subtree_control", dir);
    char *avail = sb_printf("%s/cgroup.controllers", dir);
    bool ok = access(dir, W_OK) == 0;
    const char *need[] = {"pids", l->memory_max ? "memory" : NULL};
    for (int i = 0; i < 2 && ok; i++) {
        if (!need[i] || file_has_word(ctl, need[i]))
            continue;
        if (!file_has_word(avail, need[i])) {
            ok = false;
            continue;
        }
        char *plus = sb_printf("+%s", need[i]);
        ok = try_enable && write_file(dir, "cgroup.subtree_control", plus) == 0;
        free(plus);
    }
    if (!ok)
        snprintf(why, whylen, "cgroup v2 at %s does not delegate the pids%s controller to us", dir,
                 l->memory_max ? " and memory" : "");
    free(ctl);
    free(avail);
    if (!ok) {
        free(dir);
        dir = NULL;
    }
out:
    free(own);
    return dir;
}

/* The v1 directory for controller where a child could be made, or NULL. */
static char *v1_parent(const char *controller)
{
    char *own = own_cgroup(controller);
    if (!own)
        return NULL;
    char *dir = sb_printf("/sys/fs/cgroup/%s%s", controller, strcmp(own, "/") == 0 ? "" : own);
    free(own);
    if (access(dir, W_OK) != 0) {
        free(dir);
        return NULL;
    }
    return dir;
}

void sb_cgroup_probe(const sb_limits *l, sb_cgroup *out, char *where, size_t wherelen)
{
    memset(out, 0, sizeof *out);
    char why[200];
    char *v2 = v2_parent(l, false, why, sizeof why);
    if (v2) {
        out->pids_applied = true;
        out->memory_applied = l->memory_max != 0;
        snprintf(where, wherelen, "cgroup v2 under %s", v2);
        free(v2);
        return;
    }
    char *pids = v1_parent("pids"), *mem = l->memory_max ? v1_parent("memory") : NULL;
    out->pids_applied = pids != NULL;
    out->memory_applied = mem != NULL;
    if (pids)
        snprintf(where, wherelen, "cgroup v1 under %s%s%s", pids, mem ? " and " : "", mem ? mem : "");
    else
        snprintf(where, wherelen, "none");
    if (!pids)
        snprintf(out->why_not, sizeof out->why_not,
                 "%s, and no writable cgroup v1 pids hierarchy (run as root, or start corral in a delegated "
                 "cgroup: systemd-run --user --scope -p Delegate=yes corral server)",
                 why);
    free(pids);
    free(mem);
}

static char *make_child(const char *parent, pid_t pid)
{
    char *dir = sb_printf("%s/corral-%d", parent, (int)pid);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        free(dir);
        return NULL;
    }
    return dir;
}

static void add_dir(sb_cgroup *out, char *dir)
{
    for (int i = 0; i < SB_CGROUP_MAX_DIRS; i++) {
        if (!out->dirs[i]) {
            out->dirs[i] = dir;
            return;
        }
    }
    free(dir);
}

/* A v2 child of parent for pid with l's limits.  False when pid could not
 * be put in it (the parent no longer takes children); what was made is in
 * out->dirs either way. */
static bool v2_child(const char *parent, pid_t pid, const sb_limits *l, sb_cgroup *out)
{
    char num[32], pidstr[32];
    snprintf(pidstr, sizeof pidstr, "%d", (int)pid);
    char *dir = make_child(parent, pid);
    if (!dir)
        return false;
    snprintf(num, sizeof num, "%llu", (unsigned long long)l->pids_max);
    out->pids_applied = write_file(dir, "pids.max", num) == 0;
    out->memory_applied = false;
    if (l->memory_max) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)l->memory_max);
        out->memory_applied = write_file(dir, "memory.max", num) == 0;
    }
    bool placed = write_file(dir, "cgroup.procs", pidstr) == 0;
    if (!placed)
        out->pids_applied = out->memory_applied = false;
    add_dir(out, dir);
    return placed;
}

/* v1 children of pids (and mem, may be NULL) for pid with l's limits. */
static void v1_children(const char *pids, const char *mem, pid_t pid, const sb_limits *l, sb_cgroup *out)
{
    char num[32], pidstr[32];
    snprintf(pidstr, sizeof pidstr, "%d", (int)pid);
    char *dir = pids ? make_child(pids, pid) : NULL;
    if (dir) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)l->pids_max);
        out->pids_applied = write_file(dir, "pids.max", num) == 0 && write_file(dir, "cgroup.procs", pidstr) == 0;
        add_dir(out, dir);
    }
    dir = mem && l->memory_max ? make_child(mem, pid) : NULL;
    if (dir) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)l->memory_max);
        out->memory_applied =
            write_file(dir, "memory.limit_in_bytes", num) == 0 && write_file(dir, "cgroup.procs", pidstr) == 0;
        add_dir(out, dir);
    }
}

/* Where the last command's cgroup was made: the v2 parent, or the v1 pids
 * (and memory) parents.  Finding them (the unified root, /proc/self/cgroup,
 * subtree_control, each v1 hierarchy) gives the same answer for every
 * command of a server and cost more than making the child itself.  The
 * next command goes straight there; when that fails to apply a limit it
 * applied before (the server moved to another cgroup, a controller taken
 * back), the parents are looked up afresh, as the first time. */
static struct {
    pthread_mutex_t lock;
    char *v2;            /* the v2 parent, or NULL */
    bool v2_memory;      /* asked with a memory limit, and had it */
    char *v1_pids;       /* the v1 parents, when v2 had none */
    char *v1_mem;
    bool v1_mem_asked;   /* v1_mem was looked for */
} memo = {PTHREAD_MUTEX_INITIALIZER, NULL, false, NULL, NULL, false};

static void memo_forget_locked(void)
{
    free(memo.v2);
    free(memo.v1_pids);
    free(memo.v1_mem);
    memo.v2 = memo.v1_pids = memo.v1_mem = NULL;
    memo.v2_memory = memo.v1_mem_asked = false;
}

/* From the memo: 1 made (out filled), 0 nothing remembered for l, -1 the
 * remembered parents failed (out holds what was made; the memo is gone). */
static int create_from_memo(pid_t pid, const sb_limits *l, sb_cgroup *out)
{
    pthread_mutex_lock(&memo.lock);
    char *v2 = memo.v2 && (memo.v2_memory || !l->memory_max) ? sb_strdup(memo.v2) : NULL;
    bool v1 = !memo.v2 && memo.v1_pids && (memo.v1_mem_asked || !l->memory_max);
    char *pids = v1 ? sb_strdup(memo.v1_pids) : NULL;
    char *mem = v1 && memo.v1_mem ? sb_strdup(memo.v1_mem) : NULL;
    pthread_mutex_unlock(&memo.lock);
    int rc = 0;
    if (v2)
        rc = v2_child(v2, pid, l, out) && out->pids_applied && (out->memory_applied || !l->memory_max) ? 1 : -1;
    else if (pids) {
        v1_children(pids, mem, pid, l, out);
        rc = out->pids_applied && (out->memory_applied || !l->memory_max || !mem) ? 1 : -1;
    }
    free(v2);
    free(pids);
    free(mem);
    if (rc < 0) {
        pthread_mutex_lock(&memo.lock);
        memo_forget_locked();
        pthread_mutex_unlock(&memo.lock);
    }
    return rc;
}

/* A cgroup corral made and could not remove: its sandbox's launcher was
 * killed (SIGKILL, a crash, a machine put to sleep mid-command), so
 * nobody removed it.  Empty ones older than this are removed by the next
 * launcher that makes cgroups under the same parent; a younger one may be
 * another launcher's, made a moment before it moves its init in. */
#define STALE_CGROUP_SEC 60

/* Remove the stale, empty corral-PID cgroups under parent (rmdir fails
 * harmlessly on one with processes or children in it). */
static void sweep_stale(const char *parent)
{
    int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *digits = strncmp(e->d_name, "corral-", 7) == 0 ? e->d_name + 7 : NULL;
        if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits))
            continue;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            now - st.st_mtime > STALE_CGROUP_SEC)
            unlinkat(dfd, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

/* Once per parent and process: the first launcher of a server, or each
 * corral sandbox, clears what crashed ones left. */
static void sweep_once(const char *parent)
{
    static char *swept[4];
    if (!parent)
        return;
    pthread_mutex_lock(&memo.lock);
    bool seen = false;
    size_t i = 0;
    for (; i < sizeof swept / sizeof swept[0] && swept[i]; i++)
        seen |= strcmp(swept[i], parent) == 0;
    if (!seen && i < sizeof swept / sizeof swept[0])
        swept[i] = sb_strdup(parent);
    pthread_mutex_unlock(&memo.lock);
    if (!seen)
        sweep_stale(parent);
}

static void memo_keep(const char *v2, bool v2_memory, const char *pids, const char *mem, bool mem_asked)
{
    sweep_once(v2);
    sweep_once(pids);
    sweep_once(mem);
    pthread_mutex_lock(&memo.lock);
    memo_forget_locked();
    memo.v2 = v2 ? sb_strdup(v2) : NULL;
    memo.v2_memory = v2_memory;
    memo.v1_pids = pids ? sb_strdup(pids) : NULL;
    memo.v1_mem = mem ? sb_strdup(mem) : NULL;
    memo.v1_mem_asked = mem_asked;
    pthread_mutex_unlock(&memo.lock);
}

void sb_cgroup_create(pid_t pid, const sb_limits *l, sb_cgroup *out)
{
    memset(out, 0, sizeof *out);
    int rc = create_from_memo(pid, l, out);
    if (rc > 0)
        return;
    /* What a failed attempt made: removed once pid is elsewhere. */
    sb_cgroup failed = *out;
    memset(out, 0, sizeof *out);
    char why[200] = "";
    char *v2 = v2_parent(l, true, why, sizeof why);
    bool done = false;
    if (v2) {
        if (v2_child(v2, pid, l, out) && out->pids_applied) {
            memo_keep(v2, out->memory_applied, NULL, NULL, false);
            done = true;
        } else {
            snprintf(why, sizeof why, "cgroup v2 at %s did not take the pids limit", v2);
        }
        free(v2);
    }
    if (!done) {
        char *pids = v1_parent("pids"), *mem = l->memory_max ? v1_parent("memory") : NULL;
        v1_children(pids, mem, pid, l, out);
        if (out->pids_applied)
            memo_keep(NULL, false, pids, mem, l->memory_max != 0);
        else
            snprintf(out->why_not, sizeof out->why_not, "%s; no writable cgroup v1 pids hierarchy", why);
        free(pids);
        free(mem);
    }
    sb_cgroup_remove(&failed);
}

void sb_cgroup_remove(sb_cgroup *cg)
{
    for (int i = 0; i < SB_CGROUP_MAX_DIRS; i++) {
        if (cg->dirs[i]) {
            rmdir(cg->dirs[i]);
            free(cg->dirs[i]);
            cg->dirs[i] = NULL;
        }
    }
}

static int set_limit(int resource, const char *name, uint64_t value, char *err, size_t errlen)
{
    struct rlimit cur;
    if (getrlimit(resource, &cur) < 0)
        cur.rlim_max = RLIM_INFINITY;
    rlim_t v = (rlim_t)value;
    if (cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
        v = cur.rlim_max; /* cannot raise a hard limit: keep the tighter one */
    struct rlimit r = {v, v};
    if (setrlimit(resource, &r) < 0) {
        snprintf(err, errlen, "cannot set %s to %llu: %s", name, (unsigned long long)v, strerror(errno));
        return -1;
    }
    return 0;
}

/* Memory is bounded by the cgroup's memory.max (pages in use), never by
 * RLIMIT_AS or RLIMIT_DATA: an address-space limit breaks programs that
 * reserve far more address space than they use (V8, the JVM), and the
 * sandbox's own init when corral is built with --enable-sanitizers
 * (AddressSanitizer reserves terabytes of shadow address space at start). */
int sb_rlimits_apply(const sb_limits *l, bool cgroup_pids, char *err, size_t errlen)
{
    if (set_limit(RLIMIT_CORE, "RLIMIT_CORE", l->core, err, errlen) < 0)
        return -1;
    if (l->nofile && set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", l->nofile, err, errlen) < 0)
        return -1;
    if (l->fsize && set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", l->fsize, err, errlen) < 0)
        return -1;
    if (!cgroup_pids && l->nproc && set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", l->nproc, err, errlen) < 0)
        return -1;
    return 0;
}

bool sb_nproc_applies(void)
{
    return getuid() != 0;
}
