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
if [ -n "${CORRAL_USER_BASH_ENV-}" ] && [ -r "$CORRAL_USER_BASH_ENV" ]; then
    . "$CORRAL_USER_BASH_ENV"
fi
