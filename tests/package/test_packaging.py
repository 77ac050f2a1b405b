"""The app from pip: ``context-inspector app [TRANSCRIPT] [--manifest M]`` serves the Streamlit app
with the flags of ``make run``; the sample manifests, the demo transcripts and the app script are
package data, so an installed copy (no checkout around it) has everything it opens by default; the
package metadata builds without deprecation notices (``project.license`` as an SPDX string)."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

import pytest

from cli_run import DEMO, EXE, SMALL, run, tau_bench_file
from conftest import ROOT
from streamlit_server import free_port, wait_healthy
from inspector.bundled import STREAMLIT_FLAGS, app_launch, app_script, sample_manifest, sample_manifest_dir

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def package_data_patterns() -> list[str]:
    return list(PYPROJECT["tool"]["setuptools"]["package-data"]["inspector"])


def shipped(rel: str) -> bool:
    """Whether the wheel's package-data patterns include ``inspector/<rel>``."""
    return any(fnmatch.fnmatch(rel, pat) for pat in package_data_patterns())


# --- what ships -------------------------------------------------------------------------------------

def test_every_sample_manifest_carries_the_sample_marker_and_a_copy_does_not(tmp_path: Path) -> None:
    """Q25: each bundled manifest says it is a sample (``metadata.context-inspector/sample: true``);
    ``samples copy`` removes exactly that line, so the copy is the user's own agent."""
    from inspector.bundled import SAMPLE_MARKER, copy_sample
    from inspector.manifest import load_manifest

    for path in sorted((ROOT / "sample_manifests").glob("*.yaml")):
        loaded = load_manifest(path, mode="validate")
        assert loaded.raw["metadata"][SAMPLE_MARKER] is True and loaded.settings.sample, path.name
        assert not loaded.warnings, path.name  # validate accepts the marker
        copy = copy_sample(path.stem, tmp_path)
        assert not load_manifest(copy).settings.sample
        lines, copied = path.read_text().splitlines(), copy.read_text().splitlines()
        assert [x for x in lines if SAMPLE_MARKER not in x] == copied and len(copied) == len(lines) - 1


def test_every_sample_manifest_ships_and_is_the_checkout_file() -> None:
    checkout = sorted((ROOT / "sample_manifests").glob("*.yaml"))
    assert checkout
    for path in checkout:
        bundled = sample_manifest_dir() / path.name
        assert bundled.read_bytes() == path.read_bytes()
        assert shipped(f"samples/manifests/{path.name}"), path.name
        assert bundled.resolve() == path.resolve(), "one copy in the checkout, reached through the link"


def test_the_demo_transcripts_and_the_app_ship() -> None:
    for demo in (ROOT / "inspector" / "samples").glob("*.json"):
        assert shipped(f"samples/{demo.name}")
    assert shipped("_app/app.py") and app_script().resolve() == (ROOT / "app.py").resolve()


def test_an_unknown_sample_names_the_bundled_ones() -> None:
    with pytest.raises(FileNotFoundError, match="small-window.yaml"):
        sample_manifest("nope.yaml")


def test_outside_a_checkout_the_installed_copy_has_everything(tmp_path: Path) -> None:
    """An installed package, as pip lays it out (links resolved to files, no checkout around it)."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "inspector", site / "inspector", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    code = ("import json; from inspector.bundled import app_script, sample_manifest, sample_manifest_dir; "
            "from inspector.transcripts import sample_path; from inspector.app import inputs; "
            "from inspector.bundled import find_file; "
            "print(json.dumps([str(app_script()), str(sample_manifest()), sorted(inputs.sample_manifests()), "
            "list(inputs.sample_transcripts())[:1], str(find_file('sample_manifests/stack.yaml')), "
            "str(find_file('inspector/samples/demo_support.json'))]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=elsewhere,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    app, manifest, manifests, transcripts, nb_manifest, nb_transcript = json.loads(out.stdout)
    assert Path(app).is_relative_to(site) and Path(manifest).is_relative_to(site)
    # the notebooks' checkout paths resolve to the installed copies
    assert Path(nb_manifest) == site / "inspector" / "samples" / "manifests" / "stack.yaml"
    assert Path(nb_transcript) == site / "inspector" / "samples" / "demo_support.json"
    assert manifests == sorted(p.name for p in (ROOT / "sample_manifests").glob("*.yaml"))
    assert transcripts == ["demo_support.json"]
    args = ["--summarizer", "drop", "--counter", "estimate", "--format", "csv"]
    replay = subprocess.run([sys.executable, "-m", "inspector", "replay", manifest,
                             str(site / "inspector" / "samples" / "demo_support.json"), *args],
                            capture_output=True, text=True, env=env, cwd=elsewhere, timeout=120)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.count("\n") == 28  # header + the demo's 27 replayed calls (the last one the pending next call, if the demo ends on a tool result)
    # Q25: the same numbers as the checkout (the sample is known by its marker, not by its folder)
    checkout = run("replay", str(ROOT / "sample_manifests" / Path(manifest).name), str(DEMO), *args)
    assert checkout.returncode == 0 and replay.stdout == checkout.stdout
    assert replay.stderr.splitlines()[1] == checkout.stderr.splitlines()[1]  # agent: system text from the transcript
    assert "system text from the transcript" in checkout.stderr


# --- metadata ---------------------------------------------------------------------------------------

def test_license_is_an_spdx_expression_and_the_backend_understands_it() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    requires = PYPROJECT["build-system"]["requires"]
    assert any(r.replace(" ", "").startswith("setuptools>=") and int(r.split(">=")[1].split(".")[0]) >= 77
               for r in requires), requires  # SPDX strings need setuptools 77+


def test_rich_is_a_declared_dependency() -> None:
    assert any(d.startswith("rich") for d in PYPROJECT["project"]["dependencies"])


# --- the app subcommand -------------------------------------------------------------------------------

def test_app_runs_streamlit_with_the_make_run_flags(tmp_path: Path) -> None:
    out = run("app", str(DEMO), "--manifest", str(SMALL), "--port", "8765", "--dry-run")
    assert out.returncode == 0, out.stderr
    argv = out.stdout.split()
    assert argv[1:5] == ["-m", "inspector.cli.app_server", "run", str(app_script())]  # streamlit run, warmed up
    flags = argv[5:argv.index("--")]
    assert flags == [*STREAMLIT_FLAGS, "--server.port", "8765"]
    assert argv[argv.index("--") + 1:] == ["--transcript", str(DEMO.resolve()), "--manifest", str(SMALL.resolve())]
    make_run = (ROOT / "Makefile").read_text().split("\nrun:")[1].split("\n\n")[0]
    assert "context-inspector app" in make_run


def test_the_served_flags_equal_the_checkout_config_so_the_app_runs_the_same_from_any_directory() -> None:
    """``.streamlit/config.toml`` is read only when Streamlit starts in the checkout; ``context-inspector
    app`` started anywhere else must still cap uploads, skip the file watcher and hide the deploy button."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    from_file = {f"--{section}.{key}": str(value).lower() if isinstance(value, bool) else str(value)
                 for section, values in config.items() for key, value in values.items()}
    from_flags = dict(zip(STREAMLIT_FLAGS[::2], STREAMLIT_FLAGS[1::2], strict=True))
    assert from_flags == from_file
    assert from_flags["--server.maxUploadSize"] == "50" and from_flags["--client.toolbarMode"] == "minimal"


def test_app_refuses_a_missing_file_like_every_command(tmp_path: Path) -> None:
    out = run("app", str(tmp_path / "nope.json"), "--dry-run")
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "nope.json" in out.stderr


def test_app_serves_the_inspector(tmp_path: Path) -> None:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "inspector"]
    proc = subprocess.Popen([*cmd, "app", str(DEMO), "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        try:
            wait_healthy(port, proc, timeout=120)
        except (RuntimeError, TimeoutError) as e:
            pytest.fail(f"{e}\n{proc.stdout.read().decode() if proc.poll() is not None and proc.stdout else ''}")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
            assert r.status == 200 and b"<html" in r.read().lower()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_app_opens_what_it_was_launched_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    tb = tau_bench_file(tmp_path / "runs.json", 3)
    manifest = tmp_path / "agent.yaml"
    manifest.write_text((ROOT / "sample_manifests" / "stack.yaml").read_text())
    monkeypatch.setattr(sys, "argv", ["app.py", "--transcript", str(tb), "--manifest", str(manifest)])
    assert app_launch() == app_launch(["--transcript", str(tb), "--manifest", str(manifest)])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["transcript_sample"] == "opened: runs.json"
    assert at.session_state["manifest_sample"] == "opened: agent.yaml"
    assert at.session_state["manifest_yaml"] == manifest.read_text()
    assert at.session_state["n_calls"] == 2  # episode 0 of the file: one reply per turn, two turns


def test_the_app_knows_a_sample_by_the_editors_text_not_by_where_the_file_came_from() -> None:
    """Q25 in the app: an uploaded copy that keeps the marker is a sample; the sample itself, edited
    in the editor so that the marker is gone, is the user's own agent although it was read from the
    samples folder."""
    from inspector.app.inputs import ManifestInput, is_sample_input

    text = (ROOT / "sample_manifests" / "small-window.yaml").read_text(encoding="utf-8")
    folder = str(ROOT / "sample_manifests")
    assert is_sample_input(ManifestInput(text, "small-window.yaml", folder, False))
    assert is_sample_input(ManifestInput(text, "uploaded.yaml", None, False))
    unmarked = "\n".join(ln for ln in text.splitlines() if "context-inspector/sample" not in ln)
    assert unmarked != text
    assert not is_sample_input(ManifestInput(unmarked, "small-window.yaml", folder, False))
    assert not is_sample_input(ManifestInput("kind: [", "broken.yaml", folder, False))
