"""``python -m inspector.cli`` runs the ``context-inspector`` command line, as ``python -m inspector`` does."""

import sys

from inspector.cli import run

sys.exit(run())
