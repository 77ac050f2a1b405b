"""Installed, not just checked out: the suite builds a wheel of this checkout, installs it
into a fresh virtual environment and runs the README's CLI examples, and every ``--help`` example,
from an empty folder through the installed console script; the results equal a checkout's.

The wheel is built with ``pip wheel --no-deps`` from a copy of the checkout's sources (pip fetches
the build backend once; later builds use pip's cache). The fresh environment gets the wheel with
``pip --python VENV install --no-deps``; the dependencies (pandas, litellm, ...) are the project
environment's, reached through a plain path line in a ``.pth`` file written after the install (so
the project's own editable install of the package is never on the path).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli_run import run
from conftest import ROOT
from tests.package.test_readme import CLI_LINES

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    exe: Path
    """The installed ``context-inspector`` console script."""
    package: Path
    """The installed ``inspector`` package folder."""
    env: dict[str, str]


def _sources(dest: Path) -> None:
    """The files a build reads, as in the checkout (the samples folder stays a link)."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", "app.py"):
        shutil.copy2(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "sample_manifests", dest / "sample_manifests", ignore=ignore)
    shutil.copytree(ROOT / "inspector", dest / "inspector", symlinks=True, ignore=ignore)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("installed")
    src = base / "src"
    _sources(src)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base / "dist"),
                            str(src)], capture_output=True, text=True, env=clean, timeout=600)
    if build.returncode != 0 and re.search(r"No matching distribution|Could not find a version|connection|"
                                           r"Temporary failure in name resolution", build.stderr, re.I):
        pytest.skip(f"the build backend (setuptools>=77) cannot be fetched here: {build.stderr.strip()[-300:]}")
    assert build.returncode == 0, build.stderr
    (wheel,) = (base / "dist").glob("context_inspector-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
                   check=True, capture_output=True, env=clean, timeout=600)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True, env=clean).stdout.strip())
    (site / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = Installed(venv / "bin" / "context-inspector", site / "inspector", clean)
    where = subprocess.run([str(python), "-c", "import inspector; print(inspector.__file__)"], capture_output=True,
                           text=True, env=clean, cwd=base, check=True).stdout.strip()
    assert Path(where).parent == installed.package  # the wheel's copy, not the checkout
    assert not (installed.package / "samples" / "manifests").is_symlink()  # the build resolved the link
    return installed


def run_installed(inst: Installed, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(inst.exe), *args], capture_output=True, text=True, env=inst.env, cwd=cwd, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def normalised(text: str, inst: Installed) -> str:
    """Output with the package's own location written as ``<inspector>`` (a checkout and an
    installed copy differ there and nowhere else)."""
    for root in (str(inst.package), str(ROOT / "inspector"), str((ROOT / "inspector").resolve())):
        text = text.replace(root, "<inspector>")
    text = text.replace(str((ROOT / "sample_manifests").resolve()), "<inspector>/samples/manifests")
    return text


def folder_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_the_readme_examples_give_the_same_results_installed_as_in_a_checkout(installed: Installed,
                                                                             tmp_path: Path) -> None:
    """Every line of the README's CLI block, in order, from an empty folder: the installed console
    script and the checkout's print the same (stdout and stderr) and write the same files."""
    mine, theirs = tmp_path / "installed", tmp_path / "checkout"
    mine.mkdir()
    theirs.mkdir()
    for line in CLI_LINES:
        args = shlex.split(line)[1:]
        a = run_installed(installed, args, mine)
        b = run(*args, cwd=theirs)
        assert a.returncode == b.returncode == 0, (line, a.stderr, b.stderr)
        if args[0] == "app":  # the command names each one's own interpreter and app script
            assert str(installed.package / "_app" / "app.py") in a.stdout
            continue
        assert normalised(a.stdout, installed) == normalised(b.stdout, installed), line
        assert normalised(a.stderr, installed) == normalised(b.stderr, installed), line
    files_a, files_b = folder_files(mine), folder_files(theirs)
    assert files_a.keys() == files_b.keys() and {"my-agent.yaml", "demo.json", "replay.json", "sweep.csv",
                                                 "fleet.csv"} <= files_a.keys()
    for name in files_a:
        assert normalised(files_a[name].decode(), installed) == normalised(files_b[name].decode(), installed), name


def help_examples() -> list[str]:
    from inspector.cli import build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")  # noqa: SLF001
    texts += [p.format_help() for p in action.choices.values()]
    out: list[str] = []
    for text in texts:
        block = text.split("examples:\n", 1)[1] if "examples:\n" in text else ""
        out += [line.strip() for line in block.splitlines() if line.strip().startswith("context-inspector ")]
    return list(dict.fromkeys(out))


def test_every_help_example_runs_from_an_empty_folder_installed(installed: Installed, tmp_path: Path) -> None:
    examples = help_examples()
    assert len(examples) >= 25
    for k, line in enumerate(examples):
        args = shlex.split(line)[1:]
        if args[0] == "app":  # serving blocks: the command it would run is enough here
            args.append("--dry-run")
        folder = tmp_path / f"ex{k}"
        folder.mkdir()
        out = run_installed(installed, args, folder)
        assert out.returncode == 0, (line, out.stderr)
        assert out.stdout or any(folder.iterdir()) or args[:2] == ["samples", "copy"], line


def test_the_installed_sample_gives_the_checkout_numbers(installed: Installed, tmp_path: Path) -> None:
    """Q25: the sample read from the installed package (no ``sample_manifests`` folder beside it)
    keeps the transcript's own system text, as in the checkout; a copy of it in the user's folder too."""
    demo = installed.package / "samples" / "demo_support.json"
    sample = installed.package / "samples" / "manifests" / "small-window.yaml"
    shutil.copy(sample, tmp_path / "copy.yaml")
    args = ["--counter", "estimate", "--format", "csv"]
    checkout = run("replay", str(ROOT / "sample_manifests" / "small-window.yaml"), str(ROOT / "inspector" / "samples"
                                                                                        / "demo_support.json"), *args)
    assert checkout.returncode == 0, checkout.stderr
    for manifest in (str(sample), "copy.yaml", "sample:small-window"):
        out = run_installed(installed, ["replay", manifest, str(demo), *args], tmp_path)
        assert out.returncode == 0, out.stderr
        assert out.stdout == checkout.stdout
        assert re.search(r"agent: system text from the transcript \(message 0, [\d,]+ chars\)", out.stderr)
