#!/usr/bin/env python3
"""The escape battery (battery.py) again, every attack's command started
from a pre-built sandbox (docs/sandbox.md, "Pre-built sandboxes"): a
command from one must be exactly as confined as one made from nothing, as
root and as an unprivileged user."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
os.execv(sys.executable, [sys.executable, os.path.join(here, "battery.py"), "--prebuilt"] + sys.argv[1:])
