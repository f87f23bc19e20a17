/*
 * cli_escalate.c - the verbs that run inside a session and talk to the
 * server over the session channel (sesschan.h), never the admin socket:
 *
 *  corral escalate [-w PATH]... [--net] [--reason TEXT] -- CMD...
 *      asks the user to run CMD outside the session's sandbox (or in a
 *      wider one), with this process's stdin, stdout and stderr; waits
 *      and exits with CMD's status.
 *  corral __hook-check --shell NAME -- LINE
 *      the shell hooks' question: may this command line run?
 *
 * Each verb is one entry (cli_verb.h) that cli.c lists (__hook-check among
 * the verbs it never shows).
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "base/exitcode.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The session channel from CORRAL_SESSION_FD, or -1 with a message. */
static int channel(const char *verb, bool quiet)
{
    const char *v = getenv("CORRAL_SESSION_FD");
    char *end = NULL;
    long fd = v ? strtol(v, &end, 10) : -1;
    struct stat st;
    if (!v || !*v || *end || fd < 0 || fd > INT_MAX || fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        if (!quiet)
            fprintf(stderr,
                    "corral %s: no session channel (CORRAL_SESSION_FD%s%s): this works only inside a corral "
                    "session, from a process that kept the session's fd 3\n",
                    verb, v ? "=" : " is not set", v ? v : "");
        return -1;
    }
    return (int)fd;
}

/* Send req with a fresh reply socket (and fds) over chan; returns our end
 * of the reply socket, or -1 with a message. */
static int send_request(const char *verb, int chan, json_t *req, const int *fds, int nfds)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
        fprintf(stderr, "corral %s: cannot make a reply socket: %s\n", verb, strerror(errno));
        return -1;
    }
    char *text = json_dumps(req, JSON_COMPACT);
    int all[4] = {sp[1], -1, -1, -1};
    for (int i = 0; i < nfds && i < 3; i++)
        all[i + 1] = fds[i];
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(4 * sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = text, .iov_len = strlen(text)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                       .msg_controllen = CMSG_SPACE((size_t)(nfds + 1) * sizeof(int))};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN((size_t)(nfds + 1) * sizeof(int));
    memcpy(CMSG_DATA(c), all, (size_t)(nfds + 1) * sizeof(int));
    ssize_t n;
    do
        n = sendmsg(chan, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    int e = errno;
    free(text);
    close(sp[1]);
    if (n < 0) {
        fprintf(stderr, "corral %s: cannot reach the server over the session channel: %s\n", verb, strerror(e));
        close(sp[0]);
        return -1;
    }
    return sp[0];
}

/* The next reply, or NULL when the server closed the socket. */
static json_t *next_reply(int fd)
{
    static char buf[65536];
    ssize_t n;
    do
        n = recv(fd, buf, sizeof buf, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return NULL;
    return json_loadb(buf, (size_t)n, 0, NULL);
}

static const char *state_of(json_t *r);

/* The reply that settles a request: past "pending" (said on stderr, as
 * "WHO: waiting for the user to approve request N...") and "running"
 * (said after such a wait: the person who waited, or the agent reading
 * the output, learns the answer came and what now runs is the command).
 * NULL when the server closed the socket without one. */
static json_t *settling_reply(int fd, const char *who)
{
    long long asked = 0;
    for (;;) {
        json_t *r = next_reply(fd);
        if (!r)
            return NULL;
        const char *st = state_of(r);
        if (strcmp(st, "pending") == 0) {
            asked = (long long)json_integer_value(json_object_get(r, "approval"));
            fprintf(stderr, "%s: waiting for the user to approve request %lld...\n", who, asked);
        } else if (strcmp(st, "running") == 0) {
            if (asked)
                fprintf(stderr, "%s: request %lld approved; running it now\n", who, asked);
        } else {
            return r;
        }
        json_decref(r);
    }
}

static const char *state_of(json_t *r)
{
    const char *s = json_string_value(json_object_get(r, "state"));
    return s ? s : "";
}

static const char *message_of(json_t *r)
{
    const char *s = json_string_value(json_object_get(r, "message"));
    return s ? s : "(no message)";
}

static char *current_dir(void)
{
    char buf[PATH_MAX];
    return getcwd(buf, sizeof buf) ? xstrdup(buf) : xstrdup("/");
}

/* PATH made absolute, as typed: symlinks are not resolved here.  The
 * server resolves it and refuses a symlink the sandbox could re-point, so
 * what the user approves is what the server checked. */
static char *absolute(const char *path, const char *cwd)
{
    return path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
}

static int verb_escalate(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"write", required_argument, NULL, 'w'},
                                         {"net", no_argument, NULL, 'N'},
                                         {"reason", required_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    char *cwd = current_dir();
    json_t *write = json_array();
    bool net = false;
    const char *reason = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "+w:Nr:h", opts, NULL)) != -1) {
        switch (c) {
        case 'w': {
            char *p = absolute(optarg, cwd);
            json_array_append_new(write, json_string(p));
            free(p);
            break;
        }
        case 'N':
            net = true;
            break;
        case 'r':
            reason = optarg;
            break;
        case 'h':
            json_decref(write);
            free(cwd);
            return cli_print_help(v);
        default:
            json_decref(write);
            free(cwd);
            return cli_usage_line(v);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "corral escalate: no command given (corral escalate [OPTIONS] -- CMD [ARG...])\n");
        json_decref(write);
        free(cwd);
        return EXIT_USAGE;
    }
    int chan = channel("escalate", false);
    if (chan < 0) {
        json_decref(write);
        free(cwd);
        return EXIT_NOT_RUN;
    }
    json_t *cmd = json_array();
    for (int i = optind; i < argc; i++)
        json_array_append_new(cmd, json_string(argv[i]));
    json_t *req = json_pack("{s:s, s:o, s:s, s:b}", "verb", "escalate", "argv", cmd, "cwd", cwd, "network", net);
    if (json_array_size(write))
        json_object_set(req, "write", write);
    json_decref(write);
    if (reason)
        json_object_set_new(req, "reason", json_string(reason));
    free(cwd);
    static const int stdio[3] = {0, 1, 2};
    int fd = send_request("escalate", chan, req, stdio, 3);
    json_decref(req);
    if (fd < 0)
        return EXIT_NOT_RUN;
    json_t *r = settling_reply(fd, "corral escalate");
    if (!r) {
        fprintf(stderr, "corral escalate: the server closed the request without an answer\n");
        return EXIT_NOT_RUN;
    }
    if (strcmp(state_of(r), "exited") == 0) {
        int status = (int)json_integer_value(json_object_get(r, "status"));
        json_decref(r);
        if (WIFSIGNALED(status))
            return 128 + WTERMSIG(status);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    fprintf(stderr, "%s\n", message_of(r)); /* denied, refused or failed */
    json_decref(r);
    return EXIT_NOT_RUN;
}

const cli_verb cli_verb_escalate = {
    .name = "escalate",
    .usage = "escalate [-w PATH]... [--net] [--reason TEXT] -- CMD [ARG...]",
    .help = "Inside a corral session: ask the user to run CMD outside the session's\n"
            "sandbox, or with -w/--net in a wider one.  The request goes to the supervisor\n"
            "screen (or corral approvals) over the session's channel; once approved CMD\n"
            "runs with this terminal as its stdin, stdout and stderr, and corral escalate\n"
            "exits with its status.  Denied or refused: exit 126 with the reason (and the\n"
            "user's note).\n\n"
            "  -w, --write PATH   also writable (repeatable)\n"
            "  -N, --net          with network access\n"
            "  -r, --reason TEXT  why, shown to the user\n",
    .run = verb_escalate,
    .where = CLI_LOCAL,
};

static int verb_hook_check(const cli_verb *v, int argc, char **argv)
{
    const char *shell = "sh";
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--shell") == 0 && i + 1 < argc)
            shell = argv[++i];
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            break;
    }
    if (i + 1 != argc) {
        cli_usage_line(v);
        fputs(v->help, stderr);
        return EXIT_USAGE;
    }
    /* Outside a session there is nobody to ask: the hook does nothing. */
    int chan = channel("__hook-check", true);
    if (chan < 0)
        return 0;
    char *cwd = current_dir();
    json_t *req = json_pack("{s:s, s:s, s:s, s:s}", "verb", "check", "shell", shell, "line", argv[i], "cwd", cwd);
    free(cwd);
    int fd = send_request("__hook-check", chan, req, NULL, 0);
    json_decref(req);
    if (fd < 0)
        return EXIT_NOT_RUN;
    json_t *r = settling_reply(fd, "corral");
    if (!r) {
        /* Fail closed: without an answer the line does not run. */
        fprintf(stderr, "corral: the policy check got no answer; the command line was not run\n");
        return EXIT_NOT_RUN;
    }
    bool run = strcmp(state_of(r), "run") == 0;
    if (!run)
        fprintf(stderr, "%s\n", message_of(r));
    json_decref(r);
    return run ? 0 : EXIT_NOT_RUN;
}

/* Internal: cli.c never lists it, and it takes no --help (its one argument
 * is whatever line the user typed). */
const cli_verb cli_verb_hook_check = {
    .name = "__hook-check",
    .usage = "__hook-check --shell NAME -- LINE",
    .help = "(internal: corral's shell hooks ask the server about each command line)\n",
    .run = verb_hook_check,
    .where = CLI_LOCAL,
};
