# corral's shell integration for zsh: every command line read at the
# prompt is checked against corral's exec policy before it runs.  This is
# a policy gate, not a boundary: the sandbox holds whatever the shell runs.
# A refused line is not run (it stays in history to edit) and the reason is
# printed; a line the policy asks about waits for the user's answer.  The
# check's answer also waits for the workspace's snapshot before the line,
# and the next prompt marks where the line ended (corral diff).
ZDOTDIR=${CORRAL_USER_ZDOTDIR:-$HOME}
unset CORRAL_USER_ZDOTDIR __corral_zdotdir
[[ -f $ZDOTDIR/.zshrc ]] && . $ZDOTDIR/.zshrc
# The check runs once zsh has read the whole line and is about to run it,
# not when a key accepts the buffer: a line continued at the PS2 prompt
# is only whole by then, and history expansion (!!) has made it what runs.
# $1 is that line as zsh keeps it in history, exactly as typed (continued
# lines and all), even for a line HIST_IGNORE_SPACE keeps out; it is
# empty only when zsh no longer has the line, and then $3, the text zsh
# will run, is checked instead.
__corral_preexec() {
    emulate -L zsh
    # Checked: whatever becomes of it, the next prompt marks its end.
    __corral_ran=1
    local line=$1
    [[ -n $line ]] || line=$3
    "${CORRAL_BIN:-corral}" __hook-check --shell zsh -- "$line" </dev/null && return 0
    # Refused: an interrupt here stops zsh from running the line (zsh
    # keeps it after preexec).  The user's own INT trap, which could
    # swallow it, is set aside for this function only (emulate -L makes
    # traps local).
    trap - INT
    kill -INT $$
}
__corral_precmd() {
    local st=$?
    if [[ -n $__corral_ran ]]; then
        __corral_ran=
        "${CORRAL_BIN:-corral}" __hook-mark --status $st end </dev/null
    fi
}
# First in the lists (a function named preexec or precmd itself still
# runs before them): the check comes before the user's own preexec
# functions, and the end mark sees the line's status before the user's
# own prompt functions run.
preexec_functions=(__corral_preexec $preexec_functions)
precmd_functions=(__corral_precmd $precmd_functions)
