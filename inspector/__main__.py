"""``python -m inspector`` runs the ``context-inspector`` command line."""

import sys

from inspector.cli import run

sys.exit(run())
