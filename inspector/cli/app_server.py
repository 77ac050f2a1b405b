"""The app's server: ``python -m inspector.cli.app_server run APP [flags] [-- options]`` is
Streamlit's own command line after :func:`warm_up`.

``context-inspector app`` runs it (:func:`inspector.bundled.app_command` builds the command). It
is no subcommand: :mod:`inspector.cli` never imports it, so running it as ``__main__`` meets no
second copy of itself.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

APP_PRELOAD: tuple[str, ...] = (
    "pandas", "plotly.graph_objects", "yaml", "inspector.replay", "inspector.compare", "inspector.transcripts",
    "inspector.report.tables", "inspector.report.figures", "inspector.live", "inspector.app.page",
)
"""What the app's script imports, imported by :func:`serve` before the server starts listening.

A fresh Streamlit server imports nothing of the script until the first browser connects. Imported
first, these modules are already in ``sys.modules`` when the script runs, so the first page shows
without waiting for them; the server takes that much longer to come up instead."""


def warm_up(args: Sequence[str] = ()) -> None:
    """Import :data:`APP_PRELOAD`, then prepare the first page: the replay of the transcript and
    manifest the app is launched on (``args``: :func:`serve`'s, the launch options after ``--``;
    none: the bundled demo), kept under the cache key the first page reads
    (:mod:`inspector.app.first_page`).

    The first replay in a process loads the tokenizer's ranks, the model map and the validators,
    and a long transcript's replay and forgetting analysis take their time; done here, before the
    server listens, the first page does not wait for them. Sets the offline defaults of
    :func:`inspector.apply_offline_defaults` in this process, as the app's script itself does. Best
    effort: a failure here changes nothing (the app reports any real problem when it replays).
    Returns None and raises nothing but the preload's :class:`ImportError`."""
    import importlib
    import logging

    for name in APP_PRELOAD:
        importlib.import_module(name)
    from inspector import apply_offline_defaults
    from inspector.app.first_page import launch_from_serve_args, prepare_first_page

    apply_offline_defaults()
    log = logging.getLogger("inspector")
    level = log.level
    log.setLevel(logging.ERROR)  # the replay's own trim warnings are the app's to show, not the server log's
    try:
        prepare_first_page(launch_from_serve_args(args))
    except Exception:  # noqa: BLE001 - best effort, see the docstring
        pass
    finally:
        log.setLevel(level)


def serve(argv: Sequence[str] | None = None) -> int:
    """Run Streamlit's command line with ``argv`` (default: this process's arguments; Streamlit's
    own, e.g. ``run APP --server.port 8501 -- --transcript FILE``) after :func:`warm_up`. Returns 0
    when Streamlit returns; Streamlit's own usage errors exit the process."""
    args = list(sys.argv[1:] if argv is None else argv)
    warm_up(args)
    from streamlit.web import cli

    sys.argv = ["streamlit", *args]  # streamlit's click command reads its arguments from sys.argv
    cli.main(prog_name="streamlit")
    return 0


if __name__ == "__main__":  # the app's server: see serve()
    raise SystemExit(serve())
