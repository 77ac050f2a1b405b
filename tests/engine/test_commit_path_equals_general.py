"""The commit path: each shortcut equals the general one it stands for.

* :func:`~inspector.engine.history.call_ids` checks the usual shape by exact type before
  ``isinstance``: the same ids as the plain ``isinstance`` loop for every shape. (A C-level read of
  the usual shape, ``map(dict.get, ...)`` checked with ``frozenset.issuperset``, was tried and
  dropped: fewer executed lines, but about four times slower for asks of one or two calls.)
* :meth:`~inspector.engine.archive.Archive.apply_edits` keeps its copy of the record applied as the new
  projection after a fold instead of rebuilding it from the covering set: it must be the rebuilt
  projection, row for row by identity, also after later commits and a snapshot round trip.
* :func:`~inspector.engine.budget.compute_budget` builds the record through ``tuple.__new__``: the
  same numbers as :func:`~inspector.engine.budget.hysteresis_ceiling` and an ordinary :class:`Budget`.
* :func:`~inspector.engine.managers.base.budget_terms` and :func:`~inspector.engine.managers.base.manage`
  tell a manager from a duck-typed one as :func:`~inspector.engine.managers.base.is_manager` does.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.archive import Archive
from inspector.engine.contracts import EditRecord, record_of
from inspector.engine.budget import Budget, compute_budget, hysteresis_ceiling
from inspector.engine.history import call_ids
from inspector.engine.limits import ModelLimits
from inspector.engine.managers.base import NO_TERMS, CMDecision, budget_terms, is_manager, manage
from inspector.engine.managers.sliding_window import SlidingWindowConversation
from inspector.engine.managers.summarising import SummarizingConversation
from inspector.manifest import TrimmerSettings


class _Str(str):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    def get(self, key: Any, default: Any = None) -> Any:  # a subclass's own get is what the loop reads
        return "sub-" + str(dict.get(self, key, default))


def general_call_ids(msg: dict[str, Any]) -> list[str]:
    """The definition: ``isinstance`` checks only."""
    calls = msg.get("tool_calls")
    if not isinstance(calls, list):
        return []
    out: list[str] = []
    for call in calls:
        if isinstance(call, dict):
            cid = call.get("id")
            if isinstance(cid, str) and cid:
                out.append(cid)
    return out


IDS = st.one_of(st.text(max_size=4), st.none(), st.integers(-1, 2), st.builds(_Str, st.text(max_size=3)))
CALL = st.one_of(
    st.builds(lambda i: {"id": i, "type": "function"}, IDS),
    st.just({"type": "function"}),  # no id at all
    st.builds(lambda i: _Dict(id=i), IDS),
    st.sampled_from([None, "call", 3, ("id", "x")]),
)
CALLS = st.one_of(st.lists(CALL, max_size=4), st.none(), st.just("calls"), st.builds(tuple, st.lists(CALL, max_size=2)),
                  st.builds(lambda xs: type("L", (list,), {})(xs), st.lists(CALL, max_size=3)))


@settings(max_examples=400, deadline=None)
@given(calls=CALLS)
def test_call_ids_equals_the_general_loop_for_every_shape(calls: Any) -> None:
    msg = {"role": "assistant", "content": "", "tool_calls": calls}
    got = call_ids(msg)
    assert got == general_call_ids(msg)
    assert type(got) is list and all(type(x) in (str, _Str) for x in got)


def test_call_ids_usual_shape_is_a_new_list() -> None:
    calls = [{"id": "a"}, {"id": "b"}]
    ids = call_ids({"role": "assistant", "tool_calls": calls})
    assert ids == ["a", "b"]
    ids.append("c")  # the caller's own list
    assert call_ids({"role": "assistant", "tool_calls": calls}) == ["a", "b"]


def rebuilt(arch: Archive) -> list[Any]:
    """The projection as the covering set defines it (what ``projection()`` rebuilds)."""
    return [m for nid in arch.covering for m in arch.nodes[nid].messages]


def same_rows(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


@settings(max_examples=200, deadline=None)
@given(turns=st.lists(st.integers(1, 4), min_size=1, max_size=8),
       folds=st.lists(st.tuples(st.integers(0, 40), st.booleans(), st.integers(0, 3)), max_size=5))
def test_projection_after_a_fold_is_the_covering_sets(turns: list[int], folds: list[tuple[int, bool, int]]) -> None:
    """Leaves of random sizes; folds to ``[block?] + a suffix`` cutting anywhere (between nodes, inside
    a leaf: a split, inside a fold: a rewrite), each followed by more commits."""
    arch = Archive()
    t = 0

    def commit(n: int) -> None:
        nonlocal t
        t += 1
        arch.add_leaf(t, [{"role": "user" if i == 0 else "assistant", "content": f"{t}.{i}"} for i in range(n)])

    for n in turns:
        commit(n)
    for cut, block, later in folds:
        proj = arch.projection()
        k = min(cut, len(proj))
        row = {"role": "system", "content": f"summary {t}"}
        managed = ([row] if block else []) + proj[k:]
        edits = EditRecord.suffix(len(proj), k, row if block else None)
        arch.apply_edits(edits, "summary" if block else "drop", "s" if block else None)
        assert same_rows(arch.projection(), managed)
        assert arch.projection() is not managed  # the archive's own copy: it grows in place
        assert same_rows(arch.projection(), rebuilt(arch))
        for _ in range(later):
            commit(2)
            assert same_rows(arch.projection(), rebuilt(arch))
        assert Archive.load(arch.snapshot()).projection() == arch.projection()
        assert sum(len(leaf.messages) for leaf in arch.base_leaves()) == arch.stats()["archived_messages"]


def test_a_rewrite_fold_projection_is_the_managed_rows() -> None:
    """Rows the projection does not hold (a record that is not ``[block?] + a suffix``): a rewrite over everything."""
    arch = Archive()
    arch.add_leaf(1, [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    other = [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]
    arch.apply_edits(record_of(arch.projection(), other), "drop")
    assert same_rows(arch.projection(), other) and same_rows(arch.projection(), rebuilt(arch))
    assert arch.nodes[arch.covering[0]].fold_kind == "rewrite"


LIMITS = ModelLimits("m", "m", 128_000, "manifest", 4_096, "manifest", None, None, None)


@settings(max_examples=300, deadline=None)
@given(fixed=st.integers(-1_000, 200_000), summarizing=st.booleans(), cents=st.integers(-20, 130),
       threshold=st.one_of(st.integers(-5, 150_000), st.just(True), st.none()),
       max_tokens=st.one_of(st.none(), st.integers(1, 200_000)), reserve=st.one_of(st.none(), st.integers(0, 9_000)),
       calibration=st.one_of(st.none(), st.sampled_from([0.5, 1.0, 1.3])))
def test_budget_numbers_equal_the_one_formula(fixed: int, summarizing: bool, cents: int, threshold: Any,
                                              max_tokens: int | None, reserve: int | None,
                                              calibration: float | None) -> None:
    ratio = cents / 100
    b = compute_budget(LIMITS, TrimmerSettings(max_tokens, reserve, 0.05), fixed=fixed, tool_tokens=7,
                       summarizing=summarizing, hysteresis_ratio=ratio, summary_threshold=threshold,
                       calibration=calibration, calibration_source="here" if calibration else None)
    assert type(b) is Budget and b == Budget(*b) and b._asdict()["fixed"] == fixed
    assert b.hard == max(1, b.max_tokens - b.reserve - b.margin - fixed)
    assert b.hint >= 1
    if summarizing:
        assert b.ceiling == hysteresis_ceiling(b.hint, ratio)
    else:
        assert b.ceiling == b.hint
    assert b.calibration_source == ("here" if calibration else None)


class _Duck:
    """A third-party manager that does not subclass ContextManager."""

    last_decision = CMDecision("window-slid", kept_turns=1)

    def manage_history(self, past: list[Any], hint: int) -> list[Any]:
        return list(past[-1:])

    def budget_terms(self) -> Any:  # never read: only a ContextManager's terms count
        raise AssertionError("read")


def test_budget_terms_and_manage_tell_managers_as_is_manager_does() -> None:
    summ, duck = SummarizingConversation(keep_turns=1), _Duck()
    past = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert is_manager(summ) and not is_manager(duck)
    assert budget_terms(summ).summarizing and budget_terms(duck) is NO_TERMS
    assert manage(duck, past, 10).decision.action == "window-slid"
    assert list(manage(duck, past, 10).messages) == past[-1:]
    assert manage(summ, past, 10**6).decision.action == "unchanged-under-budget"


def test_sliding_window_hands_out_its_own_lists() -> None:
    """The slices of a list log are taken as they are (no second copy): still new lists, never the log."""
    past = [{"role": "user", "content": str(i)} for i in range(5)]
    managed = SlidingWindowConversation(keep_turns=2).decide(past, 1)
    assert managed.messages == past[3:] and managed.messages is not past
    assert managed.decision.folded == past[:3] and managed.decision.folded is not past
    assert managed.decision.action == "window-slid" and managed.decision.dropped_turns == 3

