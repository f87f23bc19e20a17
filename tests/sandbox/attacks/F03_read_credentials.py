#!/usr/bin/env python3
# id: F03
# tries: read the user's credential stores: ~/.ssh, ~/.aws, ~/.config/gh, ~/.netrc, ~/.docker, ~/.kube, ~/.git-credentials, ~/.npmrc, ~/.pypirc, ~/.gnupg, ~/.password-store, keyrings, ~/.azure, gcloud
# expect: EACCES or ENOENT (an empty file is fine); no secret byte and no file name inside a masked directory
# neighbour: ordinary files of the home (~/.profile, ~/.config/other-app/settings.ini) are readable
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F03_read_credentials.py [INFO.json]
import os

from attacklib import attempt_listdir, attempt_read, main

FILES = [".ssh/id_test", ".ssh/id_ed25519", ".ssh/config", ".aws/credentials", ".config/gh/hosts.yml",
         ".netrc", ".docker/config.json", ".kube/config", ".git-credentials", ".npmrc", ".pypirc",
         ".gnupg/private-keys-v1.d/key.key", ".password-store/site.gpg", ".local/share/keyrings/login.keyring",
         ".azure/accessTokens.json", ".config/gcloud/credentials.db"]
DIRS = [".ssh", ".aws", ".gnupg", ".docker", ".kube", ".config/gh", ".password-store", ".local/share/keyrings"]


def attack():
    home = os.environ["HOME"]
    for rel in FILES:
        attempt_read(rel, os.path.join(home, rel), "read %d bytes")
    for rel in DIRS:
        attempt_listdir(rel, os.path.join(home, rel))


def neighbour():
    home = os.environ["HOME"]
    if "fake .profile" not in open(home + "/.profile").read():
        return "~/.profile content wrong"
    if "colour" not in open(home + "/.config/other-app/settings.ini").read():
        return "~/.config/other-app/settings.ini content wrong"
    return None


if __name__ == "__main__":
    main(attack, neighbour)
