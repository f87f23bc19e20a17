# corral keeps itself on PATH in every bash a session starts: a login
# shell (bash -lc, what corral exec -c and an agent's exec_command run)
# reads /etc/profile, which sets PATH anew without corral's directory, and
# then this file (BASH_ENV, read after the profile by every non-interactive
# bash).  Tiny and idempotent: every bash script of the session reads it.
if [ -n "${CORRAL_BIN-}" ]; then
    case ":${PATH-}:" in
    *":${CORRAL_BIN%/*}:"*) ;;
    *) PATH="${CORRAL_BIN%/*}${PATH:+:$PATH}"; export PATH ;;
    esac
fi
# In a session whose program is not a hooked shell nor an exec (an agent
# inside a session: CORRAL_MARK_COMMANDS), the outermost bash -c is one
# command of the session: its line before it runs (once the snapshot
# before it is taken), its end and status at exit.  CORRAL_COMMAND, its
# number, tells the bash it starts that they are inside it.  zsh reads this
# file too where an agent sources it in each command's shell (Claude Code's
# CLAUDE_ENV_FILE, agent-env.sh), and it uses zsh when SHELL names zsh.
__corral_line=${BASH_EXECUTION_STRING-}
[ -z "${ZSH_VERSION-}" ] || __corral_line=${ZSH_EXECUTION_STRING-}
if [ -n "${CORRAL_MARK_COMMANDS-}" ] && [ -z "${CORRAL_COMMAND-}" ] && [ -n "$__corral_line" ]; then
    CORRAL_COMMAND=$("${CORRAL_BIN:-corral}" __hook-mark start -- "$__corral_line" </dev/null 2>/dev/null)
    case "$CORRAL_COMMAND" in '' | *[!0-9]*) CORRAL_COMMAND=0 ;; esac
    export CORRAL_COMMAND
    [ "$CORRAL_COMMAND" = 0 ] ||
        trap '"${CORRAL_BIN:-corral}" __hook-mark --status $? --command '"$CORRAL_COMMAND"' end </dev/null 2>/dev/null' EXIT
fi
unset __corral_line
if [ -n "${CORRAL_USER_BASH_ENV-}" ] && [ -r "$CORRAL_USER_BASH_ENV" ]; then
    . "$CORRAL_USER_BASH_ENV"
fi
