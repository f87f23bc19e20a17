[ -z "${CORRAL_SHELL_DIR-}" ] || . "$CORRAL_SHELL_DIR/path.bash"
