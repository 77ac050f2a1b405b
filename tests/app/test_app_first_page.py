"""The server's warm-up prepares the first page's replay under the key the page reads.

Bug class: the warm-up replays something the first page never asks for (the demo when the app was
started on another transcript, or the right transcript under another key), so the first page
replays again; or a prepared replay is served for inputs it was not made from (a changed setting).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from inspector.bundled import AppLaunch
from inspector.app import first_page as first

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"


@pytest.fixture
def launched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, object]:
    """A transcript file of its own (a key no earlier test cached), prepared as ``serve`` does."""
    path = tmp_path / f"run_{tmp_path.name}.json"
    path.write_bytes(DEMO.read_bytes())
    rp = first.prepare_first_page(first.launch_from_serve_args(["app.py", "--server.port", "1", "--",
                                                                "--transcript", str(path)]))
    monkeypatch.setattr(sys, "argv", ["app.py", "--transcript", str(path)])
    yield path, rp
    first._PREPARED.clear()


@pytest.mark.slow
def test_the_first_page_reads_the_replay_the_warm_up_prepared(launched: tuple[Path, object]) -> None:
    _path, rp = launched
    assert rp is not None and len(first._PREPARED) == 3  # conversations, transcript, replay
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert first._PREPARED == {}  # every prepared result was asked for under its key, and handed out
    assert at.session_state["_stepped_replay"] is rp  # the page shows the prepared replay itself
    assert at.session_state["n_calls"] == len(rp.frames)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_changed_setting_replays_instead_of_reading_the_prepared_replay(launched: tuple[Path, object]) -> None:
    _path, rp = launched
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="counter").set_value("estimate").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = at.session_state["_stepped_replay"]
    assert shown is not rp and shown.counter == "estimate" and rp.counter == "tiktoken"  # type: ignore[attr-defined]


def test_the_launch_options_are_read_after_the_double_dash() -> None:
    args = ["app.py", "--server.headless", "true", "--", "--transcript", "/x/t.json", "--manifest", "/x/m.yaml"]
    assert first.launch_from_serve_args(args) == AppLaunch(Path("/x/t.json"), Path("/x/m.yaml"))
    assert first.launch_from_serve_args(["app.py", "--transcript", "/x/t.json"]) == AppLaunch()  # not after --


def test_nothing_prepared_is_handed_out_for_another_key() -> None:
    first._PREPARED[("replay", ("k",))] = "made"
    try:
        assert first.take_prepared("replay", ("other",)) is None
        assert first.take_prepared("transcript", ("k",)) is None
        assert first.take_prepared("replay", ("k",)) == "made"
        assert first.take_prepared("replay", ("k",)) is None  # handed out once
    finally:
        first._PREPARED.clear()


# --- the garbage collector does not re-read the replays at every step ----------------------------------

def test_the_prepared_replay_and_its_figure_are_out_of_the_collectors_scans(launched: tuple[Path, object]) -> None:
    """Streamlit collects after every script run; what the warm-up made is frozen, so a step's
    collection does not re-read it (gc.get_objects lists what a collection scans)."""
    import gc

    _path, rp = launched
    scanned = {id(o) for o in gc.get_objects()}
    figure = rp.views["app_timeline"]  # type: ignore[attr-defined]
    for kept in (rp, rp.frames, figure):  # type: ignore[attr-defined]
        assert id(kept) not in scanned


def test_a_replay_dropped_after_a_freeze_is_collected_at_the_next_one() -> None:
    """freeze_heap unfreezes and collects before it freezes again: a cycle frozen once and dropped
    since is freed, not kept for the life of the server."""
    import gc
    import weakref

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the collector frees it
    gone = weakref.ref(a)
    first.freeze_heap()
    assert id(a) not in {id(o) for o in gc.get_objects()}  # frozen
    del a, b
    first.freeze_heap()
    assert gone() is None
