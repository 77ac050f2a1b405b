"""The app's server does the script's imports and a first replay before it listens.

Bug class: APP_PRELOAD falls behind app.py's imports (a new view imports a heavy module), and the
first page of a fresh server waits for imports again; or the warm-up breaks the serve command.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def app_imports() -> list[str]:
    """The modules app.py imports at its top level, read from its source."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_after_the_warm_up_the_apps_imports_load_nothing_heavy_and_a_replay_is_warm() -> None:
    code = f"""
import importlib, json, sys, time
import streamlit  # the server has it before anything else
from inspector.cli.app_server import warm_up
warm_up()
before = set(sys.modules)
for name in {app_imports()!r}:
    importlib.import_module(name)
new = sorted(m for m in set(sys.modules) - before
             if m.split('.')[0] in ('pandas', 'numpy', 'plotly', 'pydantic', 'yaml', 'tiktoken', 'inspector'))
from inspector.bundled import sample_manifest
from inspector.manifest import load_manifest
from inspector.replay import replay
from inspector.transcripts import load_transcript, sample_path
import inspector.offline as off
calls = []
real = off.load_encoding
def spy(name):
    enc, source = real(name)
    calls.append(source)
    return enc, source
off.load_encoding = spy
replay(load_manifest(sample_manifest()), load_transcript(sample_path()), summarizer="stand-in")
print(json.dumps({{"new": new, "encoding_sources": calls}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["new"] == []  # every module the script needs is already imported
    # The tokenizer was built by the warm-up: this replay finds it in memory.
    assert result["encoding_sources"] and set(result["encoding_sources"]) == {"memory"}
