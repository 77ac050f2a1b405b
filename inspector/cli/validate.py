"""``context-inspector validate FILE``: check a manifest strictly and say every problem with its
file, line and field path.

Prints ``OK`` on stdout and any warnings on stderr (exit 0), or one ``error:`` line per problem
(exit 1 for invalid content, 2 for a file that cannot be read or parsed as YAML). ``--show`` adds
the normalised settings, every default resolved, as JSON (secrets masked).
"""

from __future__ import annotations

import argparse
import json
import sys

from inspector.cli.base import EXIT_OK, SubParsers, add_manifest_options, add_parser, load_manifest_from_args, \
    print_issues
from inspector.cli.inputs import not_a_manifest, resolve_samples
from inspector.manifest import ManifestError, ManifestReadError


def add_validate(subparsers: SubParsers) -> None:
    """Add ``validate`` and its options to ``subparsers``."""
    p = add_parser(
        subparsers, "validate", "check a manifest strictly (every error with its field path and line)",
        "Validate an Agent manifest. Prints OK on stdout and any warnings on stderr (exit 0), or one "
        "'error: FILE:LINE: field.path: message' line per error on stderr (exit 1). A missing, "
        "unreadable or syntactically invalid file exits 2. The key metadata.context-inspector/sample "
        "(true or false) marks a bundled sample: replays under it keep the transcript's own system "
        "text and tools; `context-inspector samples copy` writes a copy without it.",
        ["context-inspector validate sample:default",
         "context-inspector validate sample:small-window --show",
         "context-inspector validate sample:stack --set spec.context_manager.params.max_messages=20"])
    p.add_argument("file", metavar="FILE", help="manifest YAML file")
    p.add_argument("--show", action="store_true",
                   help="after OK, print the normalised settings (every default resolved) as JSON")
    add_manifest_options(p)
    p.set_defaults(handler=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate ``args.file``; returns 0, or the :class:`inspector.manifest.ManifestError`'s exit
    status after printing its issues (and, for a transcript given as the manifest, a hint)."""
    resolve_samples(args)
    try:
        loaded = load_manifest_from_args(args, args.file, mode="validate")
    except ManifestError as exc:
        print_issues(exc.issues)
        if not isinstance(exc, ManifestReadError):
            print_issues(exc.warnings, prefix="warning: ")
        hint = not_a_manifest(args.file)
        if hint is not None:
            print(f"error: {hint}", file=sys.stderr)
        return exc.exit_status
    print("OK")
    print_issues(loaded.warnings, prefix="warning: ")
    if args.show:
        from inspector.redact import mask_secrets

        print(json.dumps(mask_secrets(loaded.settings.to_dict()), indent=2, ensure_ascii=False))
    return EXIT_OK
