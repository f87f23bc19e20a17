/*
 * paths.h - where corral keeps its files (docs/formats.md): the runtime
 * directory with the admin socket, the state directory with session logs and
 * recordings, and the config directory.  Each honours its XDG variable.
 *
 * Included by src/base/, src/config/, src/protocol/, src/policy/,
 * src/record/, src/server/, src/snap/, src/gate/ and src/cli/.
 */
#ifndef CORRAL_PATHS_H
#define CORRAL_PATHS_H

#include <stddef.h>

/* The runtime directory ($XDG_RUNTIME_DIR/corral or /tmp/corral-UID),
 * created 0700 if missing.  Refuses (returns NULL, message in err) a
 * directory that is a symlink, owned by another user, or not a directory;
 * tightens its mode to 0700 if it is ours but looser. Caller frees. */
char *paths_runtime_dir(char *err, size_t errlen);
/* <runtime>/default.sock; same checks. Caller frees. */
char *paths_socket(char *err, size_t errlen);
/* $XDG_STATE_HOME/corral (default ~/.local/state/corral); not created. */
char *paths_state_dir(void);
/* $XDG_CONFIG_HOME/corral (default ~/.config/corral); not created. */
char *paths_config_dir(void);
/* The user's home directory (HOME, else the passwd entry, else "/"). */
const char *paths_home(void);
/* The user's login shell ($SHELL if absolute, else passwd, else /bin/sh). */
const char *paths_user_shell(void);

#endif
