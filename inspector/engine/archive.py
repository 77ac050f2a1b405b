"""The committed conversation as an archive tree (docs/design.md Q3).

One **leaf** per committed turn. Every write-back fold (summary, drop, window slide, stack cap)
creates a **fold** node listing the covering-set nodes it replaces; a rolling summary therefore
nests the previous summary node. A stack cap that cuts inside a turn **splits** that leaf into two
part-leaves (the original becomes a ``split`` node) so folds stay whole-node. The **covering set**
is the ordered list of nodes whose projection is ``committed_messages``.

Invariant (tested with hypothesis): the base leaves, in order, hold every message ever committed —
nothing is lost from the archive — and each is in the covering set or under exactly one covering node.

Snapshots are JSON with a SHA-256 checksum over their content: a truncated or hand-edited snapshot
fails to load with :class:`ArchiveError` instead of silently loading a different conversation.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.engine.contracts import EditRecord
from inspector.engine.types import Message
from inspector.errors import InspectorError

SNAPSHOT_VERSION = 1
FoldKind = Literal["summary", "drop", "window", "stack", "rewrite"]


class ArchiveError(InspectorError, ValueError):
    """A snapshot that cannot be trusted (truncated, edited, wrong version, inconsistent tree)."""


@dataclass(slots=True)
class Node:
    """One node of the archive: a ``leaf`` (one committed turn's rows), a ``fold`` (the nodes a manager
    folded, ``fold_kind`` saying how, with the summary block it left in ``messages`` and its ``text``)
    or a ``split`` (a leaf cut in two by a fold, ``children`` its halves)."""

    id: str
    kind: Literal["leaf", "fold", "split"]
    turn: int | None = None
    messages: list[Message] = field(default_factory=list)  # leaf rows; for a fold: its projection
    children: list[str] = field(default_factory=list)
    fold_kind: FoldKind | None = None
    text: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The node as a JSON-ready dict: its id and kind, and only the fields it has (a split keeps no rows)."""
        d: dict[str, Any] = {"id": self.id, "kind": self.kind}
        if self.turn is not None:
            d["turn"] = self.turn
        if self.kind != "split":
            d["messages"] = self.messages
        if self.children:
            d["children"] = self.children
        if self.fold_kind:
            d["fold_kind"] = self.fold_kind
        if self.text is not None:
            d["text"] = self.text
        return d


class Archive:
    """Every committed row, kept: leaves in commit order and the folds over them. The covering set
    (``covering``) is the nodes whose rows make the committed log the next call sees
    (:meth:`projection`); folds never delete a leaf, so :meth:`archived_messages` is the whole record."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.covering: list[str] = []
        self.leaves: list[str] = []  # top-level leaf ids in commit order
        self._seq = 0
        self._counts = {"leaves": 0, "folds": 0, "archived_messages": 0}  # kept incrementally: stats() is O(1)
        self._projection: list[Message] | None = None

    def _new_id(self, prefix: str) -> str:
        self._seq += 1
        return f"{prefix}{self._seq}"

    # -- building -------------------------------------------------------------------------------
    def add_leaf(self, turn: int, messages: Sequence[Message]) -> str:
        """Commit one turn's ``messages`` as a new leaf at the end of the covering set; returns its id. Raises
        :class:`ValueError` for no messages."""
        if not messages:
            raise ValueError("a leaf needs at least one message")
        node = Node(self._new_id("L"), "leaf", turn=turn, messages=list(messages))
        self.nodes[node.id] = node
        self.covering.append(node.id)
        self.leaves.append(node.id)
        self._counts["leaves"] += 1
        self._counts["archived_messages"] += len(node.messages)
        if self._projection is not None:
            self._projection.extend(node.messages)  # append-only growth: no O(history) rebuild per commit
        return node.id

    def projection(self) -> list[Message]:
        """The committed log the next call sees: the rows of the covering set, in order (kept up to date as
        leaves and folds are added; do not change the list)."""
        if self._projection is None:
            self._projection = [m for nid in self.covering for m in self.nodes[nid].messages]
        return self._projection

    def apply_edits(self, edits: EditRecord, fold_kind: FoldKind, text: str | None = None) -> list[str]:
        """Record that the manager bounded the committed log by the edit record ``edits`` (over the
        projection); return the folded node ids.

        A record that keeps the whole log unchanged folds nothing. One of the suffix shape
        (``[block?] + projection[k:]``: :meth:`~inspector.engine.contracts.EditRecord.suffix_start`)
        folds the nodes before ``k`` into one fold node holding the block, and the new projection is
        ``[block?] + projection[k:]``: no rebuild over the covering set. Any other record (rows
        replaced, kept in several runs, blocks placed elsewhere) becomes a ``rewrite`` fold over the
        whole covering set whose projection is the record applied."""
        proj = self.projection()
        if not edits.inserted and not edits.replaced and edits.kept == ((0, len(proj)),) or \
                (not proj and not edits.inserted):
            return []
        shape = edits.suffix_start()
        parts = self._split_at(shape[0]) if shape is not None else None
        if shape is None or parts is None:
            return self._fold(list(self.covering), "rewrite", None, list(edits.apply(proj)))
        k, ins = shape
        block = ins.row if ins is not None else None
        folded, kept = parts
        fold = Node(self._new_id("F"), "fold", children=folded, fold_kind=fold_kind,
                    text=text if block is not None else None, messages=[block] if block is not None else [])
        self.nodes[fold.id] = fold
        self._counts["folds"] += 1
        self.covering = [fold.id, *kept]
        self._projection = ([block] if block is not None else []) + proj[k:]  # = fold.messages + the kept rows
        return folded

    def _split_at(self, k: int) -> tuple[list[str], list[str]] | None:
        """The covering set cut at projection position ``k``: (the node ids before it, which the fold
        takes; the ids from it on, which stay). A leaf that ``k`` falls inside is split in two (its
        head folded, its tail kept); None when ``k`` falls inside a node that is no leaf."""
        folded: list[str] = []
        offset = 0
        for idx, nid in enumerate(self.covering):
            node = self.nodes[nid]
            n = len(node.messages)
            if offset + n <= k:
                folded.append(nid)
                offset += n
                continue
            if offset == k:
                return folded, self.covering[idx:]
            if node.kind != "leaf":  # k falls inside a node that cannot be split
                return None
            cut = k - offset
            head = Node(self._new_id("L"), "leaf", turn=node.turn, messages=node.messages[:cut])
            tail = Node(self._new_id("L"), "leaf", turn=node.turn, messages=node.messages[cut:])
            self.nodes[head.id] = head
            self.nodes[tail.id] = tail
            node.kind, node.children, node.messages = "split", [head.id, tail.id], []
            self._counts["leaves"] += 1
            return [*folded, head.id], [tail.id, *self.covering[idx + 1:]]
        return folded, []

    def _fold(self, ids: list[str], kind: FoldKind, text: str | None, messages: list[Message]) -> list[str]:
        fold = Node(self._new_id("F"), "fold", children=ids, fold_kind=kind, text=text, messages=messages)
        self.nodes[fold.id] = fold
        self._counts["folds"] += 1
        self.covering = [fold.id]
        self._projection = None
        return ids

    # -- reading --------------------------------------------------------------------------------
    def base_leaves(self) -> list[Node]:
        """Leaves in commit order (split nodes expanded): the whole committed record."""
        out: list[Node] = []

        def walk(nid: str) -> None:
            node = self.nodes[nid]
            if node.kind == "split":
                for c in node.children:
                    walk(c)
            elif node.kind == "leaf":
                out.append(node)

        for nid in self.leaves:
            walk(nid)
        return out

    def archived_messages(self) -> list[Message]:
        """Every row ever committed, in commit order (the leaves under every fold and split)."""
        return [m for leaf in self.base_leaves() for m in leaf.messages]

    def stats(self) -> dict[str, int]:
        """Counts: leaves, folds, nodes in the covering set, rows in the committed log and rows ever archived."""
        return {
            "leaves": self._counts["leaves"],
            "folds": self._counts["folds"],
            "covering": len(self.covering),
            "committed_messages": len(self.projection()),
            "archived_messages": self._counts["archived_messages"],
        }

    # -- snapshots ------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The archive as a JSON-ready dict with a checksum, which :meth:`load` reads back."""
        body = {"version": SNAPSHOT_VERSION, "seq": self._seq,
                "nodes": [self.nodes[k].to_json() for k in sorted(self.nodes, key=lambda s: (s[0], int(s[1:])))],
                "covering": list(self.covering), "leaves": list(self.leaves)}
        return {**body, "checksum": _checksum(body)}

    @classmethod
    def load(cls, data: Any, *, source: str = "snapshot") -> Archive:
        """Rebuild an archive from :meth:`snapshot` output (a dict, or its JSON text/bytes).

        Refused with :class:`ArchiveError`: text that is not JSON (e.g. a truncated file), another
        version, a checksum that does not match the content (truncated or hand-edited), and a tree
        that is inconsistent even with a matching checksum (unknown or duplicate ids, cycles, a leaf
        covered twice or lost), so a bad snapshot never loads as some other conversation.
        """
        if isinstance(data, (str, bytes, bytearray)):
            try:
                data = json.loads(data)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError and bad UTF-8 are ValueErrors
                raise ArchiveError(f"{source}: not valid JSON (truncated?): {exc}") from None
        if not isinstance(data, dict):
            raise ArchiveError(f"{source}: not an archive snapshot (expected a JSON object)")
        version = data.get("version")
        if type(version) is not int or version != SNAPSHOT_VERSION:
            raise ArchiveError(f"{source}: unsupported snapshot version {version!r} (expected {SNAPSHOT_VERSION})")
        body = {k: data.get(k) for k in ("version", "seq", "nodes", "covering", "leaves")}
        try:
            expected = _checksum(body)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ArchiveError(f"{source}: unreadable snapshot content ({exc})") from None
        if data.get("checksum") != expected:
            raise ArchiveError(f"{source}: checksum mismatch — the snapshot was truncated or edited")
        arch = cls()
        try:
            _check_tree(body, arch)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ArchiveError(f"{source}: inconsistent archive tree ({exc})") from None
        return arch


_ID = re.compile(r"^[LF][0-9]+$")


def _ids(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise TypeError(f"{what} must be a list of node ids")
    return list(value)


def _check_tree(body: dict[str, Any], arch: Archive) -> None:
    """Fill ``arch`` from a checksummed snapshot body, raising on any structural inconsistency.

    Five named checks, in the order each one's precondition is established: the sequence number,
    every node on its own, references between nodes, no cycle, then the committed record (leaves,
    orphans, the covering set)."""
    seq = _check_seq(body["seq"])
    for k, nd in enumerate(_check_list(body["nodes"], "nodes")):
        node = _check_node(k, nd, seq, arch.nodes)
        arch.nodes[node.id] = node
    arch.covering = _ids(body["covering"], "covering")
    arch.leaves = _ids(body["leaves"], "leaves")
    arch._seq = seq
    _check_references(arch)
    _check_acyclic(arch)
    _check_committed_record(arch)
    base_nodes = arch.base_leaves()
    arch._counts = {"leaves": len(base_nodes), "folds": sum(1 for n in arch.nodes.values() if n.kind == "fold"),
                    "archived_messages": sum(len(n.messages) for n in base_nodes)}


def _check_seq(seq: Any) -> int:
    if type(seq) is not int or seq < 0:
        raise ValueError(f"seq must be a non-negative integer, got {seq!r}")
    return seq


def _check_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{what} must be a list")
    return value


def _check_node(k: int, nd: Any, seq: int, known: Mapping[str, Node]) -> Node:
    """One node object on its own: id form and uniqueness, kind, turn, messages, children, text."""
    if not isinstance(nd, dict):
        raise TypeError(f"nodes[{k}] must be an object")
    nid, kind = nd.get("id"), nd.get("kind")
    if not isinstance(nid, str) or not _ID.match(nid):
        raise ValueError(f"nodes[{k}].id {nid!r} is not a node id")
    if nid in known:
        raise ValueError(f"node id {nid!r} appears twice")
    if int(nid[1:]) > seq:
        raise ValueError(f"node id {nid!r} is beyond seq {seq}")
    if kind not in ("leaf", "fold", "split"):
        raise ValueError(f"node {nid!r} has unknown kind {kind!r}")
    turn = nd.get("turn")
    if turn is not None and type(turn) is not int:
        raise TypeError(f"node {nid!r}: turn must be an integer")
    messages = nd.get("messages", [])
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise TypeError(f"node {nid!r}: messages must be a list of message objects")
    children = _ids(nd.get("children", []), f"node {nid!r}: children")
    if kind == "leaf" and (children or not messages):
        raise ValueError(f"leaf {nid!r} must hold messages and no children")
    if kind == "split" and (not children or messages):
        raise ValueError(f"split node {nid!r} must have children and no messages")
    text = nd.get("text")
    if text is not None and not isinstance(text, str):
        raise TypeError(f"node {nid!r}: text must be a string")
    return Node(nid, kind, turn=turn, messages=list(messages), children=children, fold_kind=nd.get("fold_kind"),
                text=text)


def _check_references(arch: Archive) -> None:
    """Every id the covering set, the leaves list and the children name is a node."""
    for nid in [*arch.covering, *arch.leaves, *(c for n in arch.nodes.values() for c in n.children)]:
        if nid not in arch.nodes:
            raise ValueError(f"unknown node id {nid!r}")


def _check_acyclic(arch: Archive) -> None:
    """No node is its own descendant (so every walk down the tree ends)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for root in arch.nodes:
        if state.get(root):
            continue
        stack = [(root, iter(arch.nodes[root].children))]
        state[root] = 1
        while stack:
            nid, it = stack[-1]
            child = next(it, None)
            if child is None:
                state[nid] = 2
                stack.pop()
            elif state.get(child) == 1:
                raise ValueError(f"node {child!r} is its own descendant")
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(arch.nodes[child].children)))


def _check_committed_record(arch: Archive) -> None:
    """The leaves list names no fold; each committed leaf appears once, no leaf is outside the
    record, and every committed leaf is covered exactly once (nothing lost or doubled)."""
    for nid in arch.leaves:
        if arch.nodes[nid].kind == "fold":
            raise ValueError(f"leaves lists the fold node {nid!r}")
    base = [n.id for n in arch.base_leaves()]
    if len(set(base)) != len(base):
        raise ValueError("a leaf appears twice in the committed record")
    orphans = sorted({n.id for n in arch.nodes.values() if n.kind == "leaf"} - set(base))
    if orphans:
        raise ValueError(f"leaves outside the committed record: {', '.join(orphans)}")
    seen: list[str] = []
    for nid in arch.covering:
        todo = [nid]
        while todo:
            node = arch.nodes[todo.pop()]
            if node.kind == "leaf":
                seen.append(node.id)
            if node.kind == "fold" or node.kind == "split":
                todo.extend(node.children)
    if sorted(seen) != sorted(base):
        raise ValueError("the covering set does not cover every committed leaf exactly once")


def _checksum(body: dict[str, Any]) -> str:
    raw = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()

