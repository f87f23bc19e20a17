# corral's shell integration for zsh: the user's .zprofile.
[[ -f ${CORRAL_USER_ZDOTDIR:-$HOME}/.zprofile ]] && . ${CORRAL_USER_ZDOTDIR:-$HOME}/.zprofile
