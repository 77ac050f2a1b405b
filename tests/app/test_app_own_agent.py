"""The app describes the transcript's own agent and never shows a trimmed summary as sent (Q21, Q18).

Bug classes: the app replayed a user's transcript as the sample manifest's agent, and printed a
computed-but-trimmed summary under "Payload sent". Loading a transcript now selects its own prompt,
tools and model with a visible switch, every view states what is in force, and a trimmed summary
appears only as "Not sent" with its reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streamlit.testing.v1 import AppTest

from inspector.replay.ranges import SUMMARY_TRIMMED

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plain(markdown: str) -> str:
    """Markdown the app escaped to show as plain text (inspector.app.words.plain_md), read back as that text."""
    return re.sub(r"\\(.)", r"\1", markdown)


def captions(at: AppTest) -> str:
    return "\n".join(plain(str(c.value)) for c in at.caption)


def test_the_demo_runs_as_its_own_agent_and_states_it() -> None:
    at = start()
    assert at.radio(key="agent_source").value == "auto"
    text = captions(at)
    assert "system text from the transcript" in text and "15 schema(s) from the transcript" in text
    assert "model gpt-4o (manifest)" in text and "window 7,200 tokens (manifest)" in text  # support-demo.yaml
    at.segmented_control(key="payload_as").set_value("table").run()  # the payload as a table, not chat rows
    payload = next(df.value for df in at.dataframe if {"band", "content"} <= set(getattr(df.value, "columns", [])))
    assert "Acme" not in str(payload.iloc[0]["content"])


def test_opening_a_transcript_leaves_the_agent_switches_as_they_are() -> None:
    """One rule for every way of opening a pair (the policy's, as on the command line);
    opening another transcript never turns a switch the user set back to the transcript's."""
    at = start()
    at.radio(key="agent_source").set_value("manifest").run()
    at.radio(key="model_source").set_value("manifest").run()
    assert "system text from the manifest" in captions(at)
    window = re.search(r"window [\d,]+ tokens \(manifest\)", captions(at))
    assert window is not None
    names = list(at.selectbox(key="transcript_sample").options)
    other = next(n for n in names if "anthropic" in n)
    at.selectbox(key="transcript_sample").set_value(other).run()
    assert not at.exception
    assert at.radio(key="agent_source").value == "manifest"
    assert at.radio(key="model_source").value == "manifest"
    assert window.group(0) in captions(at)  # still the manifest's window


def test_a_trimmed_summary_is_shown_as_not_sent() -> None:
    at = start()  # the demo under its own sample manifest: the summary is trimmed at call 9 (support-demo.yaml)
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.app import inputs
    from inspector.transcripts import load_transcript

    rp = replay(load_manifest(ROOT / "sample_manifests" / inputs.DEFAULT_MANIFEST),
                load_transcript(ROOT / "inspector" / "samples" / "demo_support.json"), summarizer="stand-in")
    k = next(k for k, f in enumerate(rp.frames) if f.not_sent)
    at.slider(key="call").set_value(k).run()
    assert any("Not sent" in w.value and SUMMARY_TRIMMED in plain(w.value) for w in at.warning)
    assert any("computed but not sent" in e.label for e in at.expander)  # its text sits under "not sent" only
    assert "summary block: 0 tokens" in captions(at)


def test_launched_on_a_transcript_alone_the_app_replays_it_as_its_own_agent_like_the_cli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`context-inspector app TRANSCRIPT` (no --manifest) opens what `context-inspector replay
    TRANSCRIPT` replays: the transcript's own prompt, tools, model and window, not a sample's."""
    import subprocess
    import sys

    from inspector.app import inputs

    path = tmp_path / "my_run.json"
    path.write_bytes((ROOT / "inspector" / "samples" / "demo_support.json").read_bytes())
    cli = subprocess.run([sys.executable, "-m", "inspector", "replay", str(path), "--format", "csv"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert cli.returncode == 0, cli.stderr
    cli_agent = next(line.split("agent: ", 1)[1] for line in cli.stderr.splitlines() if line.startswith("agent: "))
    cli_calls = len(cli.stdout.strip().splitlines()) - 1  # one CSV row per call under the header

    monkeypatch.setattr(sys, "argv", ["app.py", "--transcript", str(path)])
    at = start()
    assert at.session_state["manifest_sample"] == inputs.OWN_AGENT
    assert at.session_state["transcript_sample"] == "opened: my_run.json"
    assert at.session_state["n_calls"] == cli_calls
    text = captions(at)
    assert cli_agent in text  # the header states the same sources as the CLI
    assert "(transcript)" in cli_agent and "7,200" not in cli_agent  # not the demo sample manifest's window


def test_started_without_a_transcript_the_demo_keeps_its_sample_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from inspector.app import inputs

    monkeypatch.setattr(sys, "argv", ["app.py"])
    at = start()
    assert at.session_state["manifest_sample"] == inputs.DEFAULT_MANIFEST
    assert "window 7,200 tokens (manifest)" in captions(at)  # support-demo.yaml's window
    # The own-agent entry is there to pick, and picking it shows the transcript's own model and window.
    at.selectbox(key="manifest_sample").select(inputs.OWN_AGENT).run()
    assert not at.exception
    assert "(transcript) · window" in captions(at) and "window 7,200 tokens" not in captions(at)
