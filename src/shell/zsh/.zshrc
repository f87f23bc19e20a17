# corral's shell integration for zsh: every command line accepted at the
# prompt is checked against corral's exec policy before it runs.  This is
# a policy gate, not a boundary: the sandbox holds whatever the shell runs.
# A refused line is not run (it stays in history to edit) and the reason is
# printed; a line the policy asks about waits for the user's answer.  The
# check's answer also waits for the workspace's snapshot before the line,
# and the next prompt marks where the line ended (corral diff).
ZDOTDIR=${CORRAL_USER_ZDOTDIR:-$HOME}
unset CORRAL_USER_ZDOTDIR __corral_zdotdir
[[ -f $ZDOTDIR/.zshrc ]] && . $ZDOTDIR/.zshrc
__corral_accept_line() {
    if [[ -n ${BUFFER//[[:space:]]/} ]]; then
        zle -I
        # Checked: whatever became of it, the next prompt marks its end.
        __corral_ran=1
        if ! "${CORRAL_BIN:-corral}" __hook-check --shell zsh -- "$BUFFER" </dev/null; then
            print -s -- "$BUFFER"
            BUFFER=''
        fi
    fi
    zle .accept-line
}
zle -N accept-line __corral_accept_line
__corral_precmd() {
    local st=$?
    if [[ -n $__corral_ran ]]; then
        __corral_ran=
        "${CORRAL_BIN:-corral}" __hook-mark --status $st end </dev/null
    fi
}
# First, so that it sees the line's status and marks its end before the
# user's own prompt functions run.
precmd_functions=(__corral_precmd $precmd_functions)
