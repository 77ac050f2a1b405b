"""Through the console script: samples named anywhere (``sample:NAME``, ``samples``,
``samples copy``), the sample marker (Q25), exit statuses and pipes, widths and hints, what
``observed`` shows, the pending next call, and retired model ids."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_run import DEMO, EXE, SMALL, run
from conftest import ROOT, TRANSCRIPTS, need_shared
from inspector.bundled import SAMPLE_MARKER, samples

LOG = ROOT / "inspector" / "samples" / "demo_calls.openai-log.jsonl"


# --- the sample marker (Q25) ---------------------------------------------------------------------------

def test_validate_accepts_the_sample_marker_and_show_reports_it() -> None:
    out = run("validate", "sample:small-window", "--show")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert json.loads(out.stdout.split("\n", 1)[1])["sample"] is True
    assert "metadata.context-inspector/sample" in " ".join(run("validate", "--help").stdout.split())


def test_a_sample_marker_that_is_not_true_or_false_is_an_error_naming_its_field(tmp_path: Path) -> None:
    bad = tmp_path / "agent.yaml"
    bad.write_text(f"kind: Agent\nmetadata:\n  name: x\n  {SAMPLE_MARKER}: yes please\nspec: {{}}\n")
    out = run("validate", str(bad))
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: {bad}:4: metadata.{SAMPLE_MARKER}: must be true or false")


def test_a_copy_keeps_the_marker_and_behaves_as_the_sample_wherever_it_lies(tmp_path: Path) -> None:
    """The same file gives the same numbers from the checkout and from the user's folder: the
    transcript's own system text (the demo's), not the manifest's."""
    (tmp_path / "copy.yaml").write_bytes(SMALL.read_bytes())
    args = ["--counter", "estimate", "--summarizer", "drop", "--format", "csv"]
    here = run("replay", str(SMALL), str(DEMO), *args)
    there = run("replay", "copy.yaml", str(DEMO), *args, cwd=tmp_path)
    assert here.returncode == there.returncode == 0
    assert here.stdout == there.stdout and here.stderr == there.stderr
    assert "agent: system text from the transcript (message 0, " in there.stderr


def test_samples_copy_writes_the_users_own_agent_whose_prompt_is_sent(tmp_path: Path) -> None:
    out = run("samples", "copy", "small-window", "mine.yaml", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr.startswith("wrote mine.yaml (without the sample marker")
    assert SAMPLE_MARKER not in (tmp_path / "mine.yaml").read_text()
    replayed = run("replay", "mine.yaml", str(DEMO), "--counter", "estimate", "--format", "csv", cwd=tmp_path)
    assert "agent: system text from the manifest (3 part(s)) · tools 2 schema(s) from the manifest" in replayed.stderr


def test_samples_copy_refuses_to_overwrite_and_an_unknown_name_lists_the_samples(tmp_path: Path) -> None:
    assert run("samples", "copy", "demo_support", cwd=tmp_path).returncode == 0
    again = run("samples", "copy", "demo_support", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr and "--force" in again.stderr
    assert run("samples", "copy", "demo_support", "--force", cwd=tmp_path).returncode == 0
    assert (tmp_path / "demo_support.json").read_bytes() == DEMO.read_bytes()  # a transcript is copied as is
    for args in (["samples", "copy", "nope"], ["replay", "sample:nope"], ["validate", "sample:nope"]):
        out = run(*args, cwd=tmp_path)
        assert out.returncode == 2 and "no bundled sample 'nope'" in out.stderr and "small-window" in out.stderr


# --- samples named anywhere ---------------------------------------------------------------------------

def test_samples_lists_every_bundled_file_by_its_name_within_100_columns() -> None:
    out = run("samples")
    assert out.returncode == 0
    names = [line.split()[0] for line in out.stdout.splitlines()[1:] if line.startswith("sample:")]
    assert names == [f"sample:{s.name}" for s in samples()]
    assert {"sample:small-window", "sample:demo_support", "sample:demo_calls.openai-log"} <= set(names)
    assert len(names) == len(list((ROOT / "sample_manifests").glob("*.yaml"))) + 5
    assert all(len(line) <= 100 for line in out.stdout.splitlines())


def test_a_sample_name_is_the_same_file_as_its_path(tmp_path: Path) -> None:
    args = ["--counter", "estimate", "--summarizer", "drop", "--format", "csv"]
    by_name = run("replay", "sample:small-window", "sample:demo_support", *args, cwd=tmp_path)
    by_path = run("replay", str(SMALL), str(DEMO), *args)
    assert by_name.returncode == 0 and by_name.stdout == by_path.stdout
    assert run("replay", "sample:small-window.yaml", "sample:demo_support.json", *args, cwd=tmp_path).stdout \
        == by_path.stdout  # the whole file name works too


def test_every_help_example_names_no_file_that_an_empty_folder_lacks() -> None:
    """The examples of ``--help`` use ``sample:NAME`` or files an earlier example writes; tests/package/test_installed.py
    runs them all from an empty folder after a wheel install."""
    from tests.package.test_installed import help_examples

    for line in help_examples():
        words = line.split()[2:]
        assert not any(w.endswith((".json", ".jsonl", ".yaml", ".traj", ".af")) and not w.startswith("sample:")
                       and w not in ("my-agent.yaml", "calls.json", "replay.json", "runs.csv")
                       and w != "calls.jsonl"  # app --follow: a live file that need not exist yet
                       and "=" not in w
                       for w in words), line


# --- exit status and pipes ---------------------------------------------------------------------------

def test_a_zip_archive_is_an_unusable_input_exit_2(tmp_path: Path) -> None:
    import zipfile

    log = tmp_path / "run.zip"  # a zip, but not an Inspect AI .eval log (the one zipped format read)
    with zipfile.ZipFile(log, "w") as z:
        z.writestr("notes.txt", "hello")
    out = run("replay", str(log))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "error: run.zip: a zip archive that is not an Inspect AI .eval log (no header.json or " \
                         "_journal/start.json; the only zipped format read): unzip it or export the conversation " \
                         "as JSON\n"
    binary = tmp_path / "blob.json"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    out = run("import", str(binary))
    assert out.returncode == 2 and "not UTF-8 text (invalid byte at offset 0)" in out.stderr


def test_a_transcript_over_the_size_limit_exits_2_naming_the_limit_not_a_flag(tmp_path: Path) -> None:
    from inspector.transcripts.api import DEFAULT_MAX_BYTES

    big = tmp_path / "big.json"
    with big.open("wb") as fh:  # sparse: the size is checked before a byte is read
        fh.truncate(DEFAULT_MAX_BYTES + 1)
    out = run("replay", str(big))
    assert out.returncode == 2
    assert out.stderr == f"error: big.json: file is {DEFAULT_MAX_BYTES + 1:,} bytes, over the " \
                         f"{DEFAULT_MAX_BYTES:,}-byte limit for a transcript\n"
    assert "max_bytes" not in out.stderr


def _console(*args: str) -> subprocess.Popen[bytes]:
    import os

    cmd = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "inspector"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([*cmd, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


@pytest.mark.parametrize("args", [("validate", "sample:small-window", "--show"),
                                  ("replay", "sample:small-window", "sample:demo_support", "--payloads",
                                   "--counter", "estimate")])
def test_a_closed_pipe_ends_quietly(args: tuple[str, ...]) -> None:
    """``... | head -5``: the reader goes away before (or while) the command writes; no error, no
    traceback, the status a shell reports for a tool the pipe stopped."""
    proc = _console(*args)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline() if args[0] == "replay" else None  # read a little, then go away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) in (0, 141)
    assert "error" not in err and "Traceback" not in err and "Exception ignored" not in err


def test_an_unwritable_output_is_reported_before_the_replay_runs(tmp_path: Path) -> None:
    start = time.perf_counter()
    for target, words in ((tmp_path / "no" / "such" / "out.json", "cannot write it (no folder"),
                          (tmp_path, "is a folder; give a FILE")):
        out = run("replay", "sample:small-window", "sample:demo_support", "-o", str(target))
        assert out.returncode == 2 and words in out.stderr
        assert "policy:" not in out.stderr  # said before any replay (which states its policy first)
    out = run("sweep", "sample:demo_support", "--grid", "keep_turns=2", "--format", "csv", "-o", "x.csv",
              "--fleet-summary", str(tmp_path / "missing" / "f.csv"), cwd=tmp_path)
    assert out.returncode == 2 and "f.csv: cannot write it" in out.stderr and not (tmp_path / "x.csv").exists()
    assert time.perf_counter() - start < 60


# --- width and hints ---------------------------------------------------------------------------------

@pytest.mark.parametrize("log", ["sample:demo_calls.openai-log", "sample:demo_session.claude-code"])
def test_calibrate_tables_fit_100_columns_and_wide_shows_every_column(log: str) -> None:
    out = run("calibrate", log)
    assert out.returncode == 0 and out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 100
    assert "fitted line (provider ≈ offset + slope × ours) and correction factor:" in out.stdout
    wide = run("calibrate", log, "--wide")
    calls = out.stdout.split("\nprompt cache")[0]  # the prompt cache's own section names cached tokens
    assert "cached" in wide.stdout and "cached" not in calls


def test_a_swapped_manifest_and_transcript_are_named_which_is_which() -> None:
    out = run("replay", str(DEMO), str(SMALL))
    assert out.returncode == 2
    assert out.stderr == (f"error: the arguments are swapped: {DEMO} is the transcript and {SMALL} the manifest; "
                          f"give the MANIFEST first, then the TRANSCRIPT\n")
    out = run("replay", str(LOG), str(DEMO))  # a JSONL transcript where the manifest belongs
    assert out.returncode == 2 and out.stderr.startswith(f"error: {LOG} is a transcript, not an agent manifest")
    out = run("sweep", str(DEMO), str(SMALL), "--grid", "keep_turns=2")
    assert out.returncode == 2 and f"{SMALL} is a manifest, given after a transcript" in out.stderr
    out = run("validate", str(LOG))
    assert out.returncode == 2 and f"error: {LOG} is a transcript, not an agent manifest" in out.stderr


def test_a_format_mix_up_prints_the_hint_first_then_one_usage_line() -> None:
    out = run("replay", "sample:small-window", "sample:demo_support", "--format", "openai")
    assert out.returncode == 2
    hint, usage = out.stderr.splitlines()
    assert hint.startswith("error: argument --format: 'openai' is a transcript format: use --transcript-format openai")
    assert usage == "usage: context-inspector replay [options] [MANIFEST] TRANSCRIPT " \
                    "(context-inspector replay --help says more)"


# --- observed: what differs, in the default table ------------------------------------------------------

def test_the_observed_table_says_what_differs_and_why() -> None:
    args = ["observed", "sample:small-window", "sample:demo_calls.openai-log", "--system", "manifest"]
    doc = json.loads(run(*args, "--format", "json").stdout)["payloads"]
    assert [p["differs"] for p in doc] == ["system"] * 3
    # the log's system text is 67 characters; the sample's system band (prompt + two context lines) 178
    assert doc[0]["system"] == "different system text (observed 67 chars, ours 178)"
    table = " ".join(run(*args).stdout.split())
    assert table.count("system: different system text (observed 67 chars, ours 178)") == 3
    same = run("observed", "sample:demo_calls.openai-log").stdout
    assert [line.split()[-1] for line in same.splitlines()[2:5]] == ["nothing"] * 3


# --- the pending next call ---------------------------------------------------------------------------

def _chat(tmp_path: Path, ends_on_tool: bool) -> Path:
    msgs = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "order 7?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"id\": 7}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "order 7 ships tomorrow"}]
    if not ends_on_tool:
        msgs.append({"role": "assistant", "content": "It ships tomorrow."})
    path = tmp_path / f"chat_{ends_on_tool}.json"
    path.write_text(json.dumps(msgs))
    return path


def test_a_transcript_ending_on_a_tool_result_counts_only_the_calls_the_agent_made(tmp_path: Path) -> None:
    """Two calls replayed (the tool call, and the one the tool result would prompt); the agent made one."""
    doc = json.loads(run("replay", str(_chat(tmp_path, True)), "--counter", "estimate").stdout)
    assert len(doc["frames"]) == 2 and doc["frames"][1]["pending"] is True and "pending" not in doc["frames"][0]
    t = doc["totals"]
    assert t["frames"] == 1 and t["pending_calls_left_out"] == 1
    assert t["payload_tokens"] == t["max_payload_tokens"] == doc["frames"][0]["payload_tokens"]
    done = json.loads(run("replay", str(_chat(tmp_path, False)), "--counter", "estimate").stdout)
    assert len(done["frames"]) == 2 and done["totals"]["frames"] == 2 and "pending_calls_left_out" not in done["totals"]
    assert not any("pending" in f for f in done["frames"])


def _tool_rounds(tmp_path: Path) -> Path:
    """Three turns of (tool call, result, answer), then a fourth whose tool result ends the file:
    3 × 2 + 1 = 7 calls made, and one pending."""
    msgs: list[dict[str, object]] = [{"role": "system", "content": "be brief"}]
    for t in range(4):
        msgs += [{"role": "user", "content": f"question {t} " + "words " * 40},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": f"c{t}", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": f"c{t}", "content": f"result {t} " + "data " * 60}]
        if t < 3:
            msgs.append({"role": "assistant", "content": f"answer {t}"})
    path = tmp_path / "rounds.json"
    path.write_text(json.dumps(msgs))
    return path


def test_the_pending_call_is_marked_in_the_table_and_left_out_of_sweep_rows(tmp_path: Path) -> None:
    rounds = str(_tool_rounds(tmp_path))
    table = run("replay", "sample:small-window", rounds, "--counter", "estimate", "--format", "table")
    assert table.stdout.splitlines()[0].startswith("rounds.json · conversation 0 · 7 calls + 1 pending · ")
    assert "* call 7 (next call, never made): " in table.stdout
    frames = list(csv.DictReader(io.StringIO(run("replay", "sample:small-window", rounds, "--counter",
                                                 "estimate", "--format", "csv").stdout)))
    counted = [f for f in frames if f["pending"] == "False"]
    assert len(frames) == 8 and len(counted) == 7 and frames[-1]["pending"] == "True"
    sweep = run("sweep", "sample:small-window", rounds, "--grid", "keep_turns=3", "--counter", "estimate",
                "--format", "json")
    (row,) = json.loads(sweep.stdout)["rows"]
    assert row["frames"] == 7 and row["pending_call"] is True
    assert row["tokens_sent"] == sum(int(f["payload_tokens"]) for f in counted)
    assert row["peak_payload"] == max(int(f["payload_tokens"]) for f in counted)
    assert row["peak_payload"] < int(frames[-1]["payload_tokens"])  # the pending call would be the largest
    text = run("sweep", "sample:small-window", rounds, "--grid", "keep_turns=3", "--counter", "estimate").stdout
    assert "1 of 1 run(s) end without a reply: their pending next call" in " ".join(text.split())


def test_the_swe_agent_trajectory_counts_its_eleven_api_calls() -> None:
    traj = need_shared(TRANSCRIPTS / "swe-agent" / "marshmallow-code__marshmallow-1867.traj")
    api_calls = json.loads(traj.read_text())["info"]["model_stats"]["api_calls"]
    doc = json.loads(run("replay", str(traj), "--counter", "estimate").stdout)
    assert api_calls == 11 and len(doc["frames"]) == 12
    assert doc["totals"]["frames"] == api_calls and doc["frames"][-1]["pending"] is True
    assert doc["totals"]["max_payload_tokens"] == max(f["payload_tokens"] for f in doc["frames"][:11])


# --- retired model ids -------------------------------------------------------------------------------

def test_a_retired_claude_id_finds_its_provider_variant_and_says_which() -> None:
    """``claude-sonnet-4-20250514`` left litellm's map; its Bedrock variant (same family, same date) is there."""
    out = run("replay", "sample:demo_session.claude-code", "--counter", "estimate")
    assert out.returncode == 0, out.stderr
    assert "model claude-sonnet-4-20250514 (transcript) · window 200,000 tokens (litellm entry " \
           "anthropic.claude-sonnet-4-20250514-v1:0)" in out.stderr
    frames = json.loads(out.stdout)["frames"]
    assert all(f["cost_usd"] is not None for f in frames)  # priced at the same entry's rates


@pytest.mark.parametrize(("model", "entry", "window"), [
    ("claude-sonnet-4-20250514", "anthropic.claude-sonnet-4-20250514-v1:0", 200_000),  # step 4: a variant
    ("gpt-4o", "gpt-4o", 128_000),  # step 1: the id itself
    ("openai/gpt-4o", "gpt-4o", 128_000),  # step 2: without the provider prefix
    ("claude-3-5-sonnet-20241022", "anthropic.claude-3-5-sonnet-20241022-v2:0", 200_000),  # the -v2:0 variant
])
def test_model_entries_are_found_in_the_stated_order(model: str, entry: str, window: int) -> None:
    from inspector.engine.limits import litellm_model_entry, model_entry_candidates

    found = litellm_model_entry(model)
    assert found is not None and found[0] == entry and found[1]["max_input_tokens"] == window
    first = list(dict.fromkeys([model, model.rsplit("/", 1)[-1]]))  # the id, then without its provider prefix
    assert model_entry_candidates(model)[:len(first)] == first


@pytest.mark.parametrize("model", ["claude-sonnet-4", "claude-sonnet-4-20991231", "claude-sonnet-4-2025"])
def test_no_entry_crosses_to_another_date_or_family(model: str) -> None:
    from inspector.engine.limits import litellm_model_entry, model_entry_candidates

    assert litellm_model_entry(model) is None
    assert all(model in c or model.rsplit("-", 1)[0] in c for c in model_entry_candidates(model))


def test_a_sample_is_known_by_its_marker_in_every_form_it_is_handed_over(tmp_path: Path) -> None:
    from inspector.bundled import copy_sample
    from inspector.manifest import load_manifest
    from inspector.policy import is_sample_manifest

    loaded = load_manifest("sample:stack")
    assert loaded.file is not None and loaded.settings.sample
    for form in (SMALL, str(SMALL), "sample:small-window", loaded, loaded.settings, dict(loaded.raw)):
        assert is_sample_manifest(form), form
    mine = copy_sample("stack", tmp_path / "mine.yaml")
    for form in (mine, load_manifest(mine), "sample:nope", tmp_path / "missing.yaml", None):
        assert not is_sample_manifest(form), form
