"""``context-inspector import TRANSCRIPT``: print a transcript, in any supported format, as one
normalised OpenAI-shape conversation (JSON), every message with its origin in the source file and
every irregularity reported, never repaired. Secrets are masked.

The module is named ``import_`` because ``import`` is a Python keyword.
"""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli import output as co
from inspector.cli.base import EXIT_OK, SubParsers, add_parser
from inspector.cli.inputs import collect, guard
from inspector.cli.options import add_output_options, add_transcript_options


def add_import(sub: SubParsers) -> None:
    """Add ``import`` and its options to ``sub``."""
    p = add_parser(
        sub, "import", "print the normalised OpenAI-shape transcript (JSON)",
        "Import a transcript in any supported format and print it as one normalised OpenAI-shape "
        "conversation, every message with its origin in the source file and every irregularity "
        "reported (never repaired). Secrets are masked.",
        ["context-inspector import sample:demo_support.anthropic",
         "context-inspector import sample:demo_calls.openai-log --conversation all -o calls.json",
         "context-inspector import sample:demo_session.claude-code --transcript-format claude-code"])
    p.add_argument("transcript", metavar="TRANSCRIPT", help="the transcript file")
    add_transcript_options(p)
    add_output_options(p, default="json", choices=("json",), table=False)
    p.set_defaults(handler=guard(cmd_import))


def cmd_import(args: argparse.Namespace) -> int:
    """Write the selected conversations as JSON: one document for a single conversation, else
    ``{"transcripts": [...]}``; returns 0."""
    from inspector.json_text import masked_document_text
    from inspector.transcripts import transcript_to_json

    items = [transcript_to_json(t) for t in collect(args, [args.transcript])]
    doc: dict[str, Any] = items[0] if args.conversation.single else {"transcripts": items}
    co.write(masked_document_text(doc), args.output)
    return EXIT_OK
