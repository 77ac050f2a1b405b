"""The CLI contract of `import`, `replay` and `compare`, through the real console script in a subprocess."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

EXE = Path(sys.executable).with_name("context-inspector")
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"
SMALL = ROOT / "sample_manifests" / "small-window.yaml"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "inspector"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=180, cwd=cwd)


def test_replay_json_contract() -> None:
    out = run("replay", str(SMALL), str(DEMO), "--summarizer", "stand-in", "--payloads")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"transcript", "settings", "frames", "commits", "totals"} <= set(data)
    assert data["transcript"]["format"] == "openai" and data["transcript"]["turns"] > 0
    assert data["settings"]["summarizer_label"].startswith("offline stand-in")
    f = data["frames"][0]
    assert {"turn", "step", "budget", "bands", "payload_tokens", "headroom", "cm", "trimmed", "repairs", "check",
            "cost_usd", "payload"} <= set(f)
    assert {"window", "window_source", "reserve", "margin", "max_tokens", "fixed", "hard", "hint", "ceiling"} <= set(f["budget"])
    assert set(f["bands"]) == {"system", "summary", "history", "user", "working_memory", "tool_schemas"}
    assert {"action", "compressed_turns", "kept_turns"} <= set(f["cm"])
    row = f["payload"][0]
    assert {"role", "content", "ref", "synthetic"} <= set(row)
    assert all(fr["check"] == "ok" for fr in data["frames"])
    t = data["totals"]
    assert {"frames", "payload_tokens", "max_payload_tokens", "summarizer_calls", "repairs", "trimmed", "cost_usd"} <= set(t)
    assert set(t["summarizer_calls"]) == {"in_turn", "commit"}
    c = data["commits"][0]
    assert {"turn", "cm", "summarizer_called", "archive"} <= set(c)


def test_replay_set_overrides_the_manifest() -> None:
    a = json.loads(run("replay", str(SMALL), str(DEMO), "--counter", "estimate", "--summarizer", "drop").stdout)
    b = json.loads(run("replay", str(SMALL), str(DEMO), "--counter", "estimate", "--summarizer", "drop",
                       "--set", "spec.context_manager=sliding-window").stdout)
    assert a["settings"]["context_manager"]["type"] == "summarising"
    assert b["settings"]["context_manager"]["type"] == "sliding-window"
    c = json.loads(run("replay", str(SMALL), str(DEMO), "--counter", "estimate", "--summarizer", "drop",
                       "--set", "spec.context_manager.params.keep_turns=1").stdout)
    assert c["settings"]["context_manager"]["params"]["keep_turns"] == 1


def test_replay_is_deterministic_and_writes_files(tmp_path: Path) -> None:
    o1, o2 = tmp_path / "a.json", tmp_path / "b.json"
    assert run("replay", str(SMALL), str(DEMO), "--summarizer", "stand-in", "-o", str(o1)).returncode == 0
    assert run("replay", str(SMALL), str(DEMO), "--summarizer", "stand-in", "-o", str(o2)).returncode == 0
    assert o1.read_bytes() == o2.read_bytes()


def test_replay_csv_and_table() -> None:
    out = run("replay", str(SMALL), str(DEMO), "--format", "csv", "--summarizer", "drop")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert rows and {"turn", "step", "payload_tokens", "cm_action"} <= set(rows[0])
    table = run("replay", str(SMALL), str(DEMO), "--format", "table", "--summarizer", "drop")
    lines = table.stdout.splitlines()
    assert table.returncode == 0 and lines[0].startswith("demo_support.json · conversation 0 · ")
    assert "tokens" in lines[1] and any(line.startswith("total") for line in lines)
    if rows[-1]["pending"] == "True":  # the demo ends on a tool result
        assert " ".join(lines[-2:]) == (f"* call {len(rows) - 1} (next call, never made): the transcript ends before its reply, "
                                        "so the agent never made it; it is shown, and left out of the totals row")


def test_compare_prints_one_row_per_strategy() -> None:
    out = run("compare", str(SMALL), str(DEMO), "--summarizer", "stand-in", "--format", "json",
              "--strategy", "sum=summarising", "--strategy", "win={type: sliding-window, params: {keep_turns: 2}}",
              "--strategy", f"file={ROOT / 'sample_manifests' / 'stack.yaml'}")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["strategies"]
    assert [r["strategy"] for r in rows] == ["sum", "win", "file"]
    assert rows[0]["summarizer_commit"] + rows[0]["summarizer_in_turn"] > 0
    assert rows[1]["summarizer_commit"] == 0
    csv_out = run("compare", str(SMALL), str(DEMO), "--format", "csv", "--strategy", "a=stack", "--strategy", "b=stack")
    assert len(list(csv.DictReader(io.StringIO(csv_out.stdout)))) == 2


def test_import_prints_the_normalised_transcript() -> None:
    out = run("import", str(DEMO))
    data = json.loads(out.stdout)
    assert out.returncode == 0 and data["format"] == "openai"
    assert len(data["messages"]) == len(json.loads(DEMO.read_text())["messages"])


@pytest.mark.parametrize(("content", "needle"), [
    ('{"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}]}', "1"),
    ('[{"role": "user", "content": "hi"}', "line"),
])
def test_bad_transcript_exits_1_with_file_and_location(tmp_path: Path, content: str, needle: str) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text(content)
    out = run("replay", str(SMALL), str(bad))
    assert out.returncode == 1
    assert "broken.json" in out.stderr and needle in out.stderr and "Traceback" not in out.stderr


def test_usage_errors_exit_2() -> None:
    assert run("replay", str(SMALL)).returncode == 2
    assert run("compare", str(SMALL), str(DEMO), "--strategy", "nonsense").returncode == 2
    missing = run("replay", str(SMALL), "/nonexistent/file.json")
    assert missing.returncode in (1, 2) and "Traceback" not in missing.stderr


def test_sweep_through_the_console_script() -> None:
    out = run("sweep", str(SMALL), str(DEMO), "--grid", "keep_turns=1,3", "--format", "csv", "--processes", "1")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["keep_turns"] for r in rows] == ["1", "3"]
    assert all(int(r["frames"]) > 0 for r in rows)


def test_compare_keeps_the_infra_document_of_a_multi_document_manifest(tmp_path: Path) -> None:
    manifest = tmp_path / "agent.yaml"
    manifest.write_text("kind: Agent\nspec:\n  models: [{model: default}]\n---\nkind: LLMProxy\nspec:\n"
                        "  models:\n    mappings: {default: gpt-4o}\n    generation: {context_window: 3000}\n")
    from inspector.compare import compare
    from inspector.transcripts import load_transcript

    out = compare(str(manifest), load_transcript(DEMO), {"win": "sliding-window", "stack": "stack"},
                  counter="estimate")
    for rp in out.values():
        assert rp.frames[0].budget.window == 3000 and rp.frames[0].budget.window_source == "infra"
