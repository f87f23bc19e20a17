# corral's shell integration for zsh (corral(1), "Shell integration").
# corral points ZDOTDIR here; each file reads the user's own one from
# CORRAL_USER_ZDOTDIR, and .zshrc hands ZDOTDIR back after installing the
# hook.
__corral_zdotdir=$ZDOTDIR
ZDOTDIR=${CORRAL_USER_ZDOTDIR:-$HOME}
[[ -f $ZDOTDIR/.zshenv ]] && . $ZDOTDIR/.zshenv
CORRAL_USER_ZDOTDIR=$ZDOTDIR
ZDOTDIR=$__corral_zdotdir
