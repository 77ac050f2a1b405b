"""Safe YAML reading for manifests (private): size, encoding, alias bombs, duplicates, line numbers.

Manifests are untrusted input (the app accepts uploads), so reading is defensive:

* only the safe constructor ever runs (no Python tags), via libyaml when available;
* the node graph is *composed first* and checked before any Python object is built: recursive
  aliases, expansion beyond :data:`MAX_NODES` (a "billion laughs" bomb) and nesting deeper than
  :data:`MAX_DEPTH` are rejected in time linear in the file size;
* duplicate mapping keys are reported with both lines (YAML would silently keep the last one);
* every failure is a :class:`~inspector.manifest.settings.ManifestError`, never another type.

The composed nodes are kept in a :class:`LineIndex` so any issue can name the line of its field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from inspector.manifest.settings import Issue, ManifestError, ManifestReadError

MAX_BYTES = 5 * 1024 * 1024
"""Largest manifest (or referenced context file) we read."""
MAX_NODES = 1_000_000
"""Largest node count *after* alias expansion."""
MAX_DEPTH = 200
"""Deepest nesting of collections (real manifests stay under 15)."""

_MERGE_TAG = "tag:yaml.org,2002:merge"

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ManifestLoader(_Base):  # type: ignore[misc]
    """Safe loader (libyaml's CSafeLoader when built, else SafeLoader): SafeConstructor only."""


class LineIndex:
    """Maps field paths to 1-based YAML lines using the composed node trees (one per document)."""

    def __init__(self, roots: Sequence[Node | None]) -> None:
        self._roots = list(roots)

    def line(self, doc: int, parts: Sequence[str | int]) -> int | None:
        """Line of the deepest written node along ``parts`` (the key's line for a mapping entry);
        a path that does not exist in the file gets its nearest written ancestor's line."""
        root = self._roots[doc] if 0 <= doc < len(self._roots) else None
        if root is None:
            return None
        node: Node = root
        best: int = node.start_mark.line + 1
        for part in parts:
            if isinstance(node, MappingNode):
                found: tuple[Node, Node] | None = None
                for key, value in node.value:
                    if isinstance(key, ScalarNode) and key.tag != _MERGE_TAG and key.value == str(part):
                        found = (key, value)  # the last occurrence wins, as in construction
                if found is None:
                    break
                best, node = found[0].start_mark.line + 1, found[1]
            elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                best = node.start_mark.line + 1
            else:
                break
        return best


def _read_error(file: str | None, message: str, line: int | None = None) -> ManifestReadError:
    return ManifestReadError([Issue("", message, line, file)])


def decode(data: str | bytes, file: str | None, *, what: str = "file") -> str:
    """Size and encoding checks shared by manifests and context files."""
    if isinstance(data, (bytes, bytearray)):
        if len(data) > MAX_BYTES:
            raise _read_error(file, f"{what} is too large ({len(data):,} bytes; the limit is {MAX_BYTES:,})")
        raw = bytes(data)
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise _read_error(file, f"{what} is not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset "
                                    f"{exc.start}", line) from None
    size = len(data.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise _read_error(file, f"{what} is too large ({size:,} bytes; the limit is {MAX_BYTES:,})")
    try:
        data.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = data[: exc.start].count("\n") + 1
        raise _read_error(file, f"{what} is not valid UTF-8: unpaired surrogate at character {exc.start}",
                          line) from None
    return data


def _yaml_error(exc: yaml.YAMLError, file: str | None, text: str = "") -> ManifestReadError:
    if isinstance(exc, yaml.reader.ReaderError):
        line = text[: exc.position].count("\n") + 1 if isinstance(exc.position, int) else None
        return _read_error(file, f"invalid YAML: unacceptable character #x{exc.character:04x} "
                                 f"({exc.reason})" if isinstance(exc.character, int) else
                                 f"invalid YAML: {exc.reason}", line)
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(p for p in (exc.context, exc.problem) if p) or "syntax error"
        return _read_error(file, f"invalid YAML: {problem}", mark.line + 1 if mark is not None else None)
    return _read_error(file, f"invalid YAML: {exc}")


class _NodeCheck:
    """One linear pass over the composed node graph: expansion size, depth, cycles, duplicates."""

    def __init__(self, file: str | None) -> None:
        self.file = file
        self.size: dict[int, int] = {}
        self.depth: dict[int, int] = {}
        self.active: set[int] = set()
        self.duplicates: list[Issue] = []

    def visit(self, node: Node, path: str, level: int) -> tuple[int, int]:
        key = id(node)
        if key in self.size:
            return self.size[key], self.depth[key]
        if key in self.active:
            raise _read_error(self.file, f"invalid YAML: recursive alias at {path or 'the top level'}",
                              node.start_mark.line + 1)
        if level > MAX_DEPTH:
            raise _read_error(self.file, f"invalid YAML: nesting deeper than {MAX_DEPTH} levels",
                              node.start_mark.line + 1)
        self.active.add(key)
        size, depth = 1, 0
        if isinstance(node, SequenceNode):
            for i, child in enumerate(node.value):
                s, d = self.visit(child, f"{path}[{i}]", level + 1)
                size, depth = size + s, max(depth, d)
        elif isinstance(node, MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for k, v in node.value:
                if isinstance(k, ScalarNode) and k.tag != _MERGE_TAG:
                    ident = (k.tag, k.value)
                    line = k.start_mark.line + 1
                    if ident in seen:
                        where = f"{path}.{k.value}" if path else str(k.value)
                        self.duplicates.append(Issue(where, f"duplicate key {k.value!r} (first defined on line "
                                                            f"{seen[ident]})", line, self.file))
                    else:
                        seen[ident] = line
                label = k.value if isinstance(k, ScalarNode) else "?"
                child_path = f"{path}.{label}" if path else str(label)
                for child in (k, v):
                    s, d = self.visit(child, child_path, level + 1)
                    size, depth = size + s, max(depth, d)
        self.active.discard(key)
        self.size[key], self.depth[key] = size, depth + 1
        if size > MAX_NODES:
            raise _read_error(self.file, f"invalid YAML: more than {MAX_NODES:,} values after alias expansion "
                                         "(alias bomb?)", node.start_mark.line + 1)
        return size, depth + 1


def parse_documents(data: str | bytes, file: str | None) -> tuple[list[Any], LineIndex, list[Issue]]:
    """Decode, compose, check and construct every document of a YAML stream.

    Returns (documents, line index, duplicate-key issues). Documents that are explicitly empty
    (``---`` with nothing) are returned as None. Raises :class:`ManifestReadError` for unreadable
    input and :class:`ManifestError` for an empty stream.
    """
    text = decode(data, file)
    loader = ManifestLoader(text)
    try:
        try:
            nodes: list[Node] = []
            while loader.check_node():
                nodes.append(loader.get_node())
        except yaml.YAMLError as exc:
            raise _yaml_error(exc, file, text) from None
        except RecursionError:
            raise _read_error(file, f"invalid YAML: nesting deeper than {MAX_DEPTH} levels") from None
        checker = _NodeCheck(file)
        for node in nodes:
            checker.visit(node, "", 0)
        try:
            docs = [loader.construct_document(node) for node in nodes]
        except yaml.YAMLError as exc:
            raise _yaml_error(exc, file) from None
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # e.g. 2021-02-30
            raise _read_error(file, f"invalid YAML value: {exc}") from None
    finally:
        loader.dispose()
    roots: list[Node | None] = list(nodes)
    if not any(d is not None for d in docs):
        raise ManifestError([Issue("", "the file is empty (no YAML document)", None, file)])
    return docs, LineIndex(roots), checker.duplicates


def parse_value(text: str) -> Any:
    """Parse one YAML scalar/collection (a ``--set`` value) with the same safety rules."""
    try:
        docs, _, dups = parse_documents(text, None)
    except ManifestError as exc:
        if exc.issues and exc.issues[0].message.startswith("the file is empty"):
            return None
        raise
    if dups:
        raise ManifestError(dups)
    if len(docs) != 1:
        raise ManifestError("a value must be a single YAML document")
    return docs[0]
