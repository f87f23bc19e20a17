# corral's shell integration for bash: every command line typed at the
# prompt is checked against corral's exec policy before it runs (corral(1),
# "Shell integration").  corral starts interactive bash sessions with
# --rcfile pointing here, so this file reads ~/.bashrc first.
#
# This is a policy gate, not a boundary: the sandbox around the session
# holds whatever the shell runs.  A refused line is not run and the reason
# is printed; a line the policy asks about waits for the user's answer.
# The check's answer also waits for the workspace's snapshot before the
# line, and the next prompt marks where the line ended (corral diff).
if [ -z "${__corral_hooked-}" ]; then
    __corral_hooked=1
    if [ -n "${CORRAL_LOGIN_SHELL-}" ]; then
        # The session asked for a login shell (bash -l), which reads no
        # rcfile: corral started it as an interactive one, and what a login
        # bash reads is read here.
        unset CORRAL_LOGIN_SHELL
        if [ -f /etc/profile ]; then
            . /etc/profile
        fi
        for __corral_f in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; do
            if [ -f "$__corral_f" ]; then
                . "$__corral_f"
                break
            fi
        done
        unset __corral_f
    elif [ -f "$HOME/.bashrc" ]; then
        . "$HOME/.bashrc"
    fi
    # A profile may set PATH anew: corral goes back first on it.
    if [ -n "${CORRAL_BIN-}" ]; then
        case ":${PATH-}:" in
        *":${CORRAL_BIN%/*}:"*) ;;
        *) PATH="${CORRAL_BIN%/*}${PATH:+:$PATH}"; export PATH ;;
        esac
    fi
    # ready: the next command starts a new line; each: the line was not
    # saved to history (HISTCONTROL=ignorespace, set +o history) or its
    # entry cannot be read (a readonly HISTTIMEFORMAT), so every simple
    # command is checked on its own; pass: checked; block: refused.
    __corral_state=pass
    __corral_hist=0
    # The prompt's own commands run between these two, unchecked.  A line
    # that was checked (and so may have run) ends here: its snapshot after.
    __corral_prompt_begin() {
        local st=$? was=$__corral_state
        __corral_state=prompt
        case "$was" in
        pass | each | block) "${CORRAL_BIN:-corral}" __hook-mark --status "$st" end ;;
        esac
    }
    __corral_prompt() {
        __corral_hist=$HISTCMD
        __corral_state=ready
    }
    # The line just typed, from its history entry, into __corral_line.
    # `history 1` prints the entry's number (padded to five columns, wider
    # once past 99999), '*' if the entry was edited or else a space, a
    # space, the time if HISTTIMEFORMAT is set, then the line as saved,
    # newlines and all.  Exactly that prefix goes: whatever the line itself
    # starts with (digits, spaces, something shaped like a number) is the
    # line.  Patterns, not =~, so the user's BASH_REMATCH is left alone.
    # 1: no entry that reads so, or a HISTTIMEFORMAT that cannot be
    # cleared (readonly), whose time could not be told from the line; the
    # caller then checks command by command.
    __corral_typed_line() {
        local HISTTIMEFORMAT= entry num 2>/dev/null
        [ -z "$HISTTIMEFORMAT" ] || return 1
        entry=$(builtin history 1) || return 1
        entry=${entry#"${entry%%[! ]*}"}
        num=${entry%%[!0-9]*}
        [ -n "$num" ] || return 1
        entry=${entry#"$num"}
        case "$entry" in
        "  "* | "* "*) __corral_line=${entry:2} ;;
        *) return 1 ;;
        esac
    }
    __corral_check() {
        "${CORRAL_BIN:-corral}" __hook-check --shell bash -- "$1"
    }
    __corral_gate() {
        case " ${FUNCNAME[*]} " in *" __corral_prompt "* | *" __corral_prompt_begin "*) return 0 ;; esac
        case "$BASH_COMMAND" in __corral_prompt*) return 0 ;; esac
        [ -n "${COMP_LINE-}" ] && return 0
        case "$__corral_state" in
        pass | prompt) return 0 ;;
        block) return 1 ;;
        ready)
            if [ "$HISTCMD" = "$__corral_hist" ] && __corral_typed_line; then
                if __corral_check "$__corral_line"; then
                    __corral_state=pass
                    return 0
                fi
                __corral_state=block
                return 1
            fi
            __corral_state=each
            ;;
        esac
        # Not in history: check this simple command as it was written.
        if __corral_check "$BASH_COMMAND"; then
            return 0
        fi
        __corral_state=block
        return 1
    }
    # Around the user's own prompt commands (a string or, bash 5.1+, an
    # array); newlines separate them whatever the user's ends with.
    if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
        PROMPT_COMMAND=(__corral_prompt_begin "${PROMPT_COMMAND[@]}" __corral_prompt)
    else
        PROMPT_COMMAND="__corral_prompt_begin"$'\n'"${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}__corral_prompt"
    fi
    shopt -s extdebug
    trap '__corral_gate' DEBUG
fi
