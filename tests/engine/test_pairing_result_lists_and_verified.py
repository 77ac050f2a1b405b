"""What ``sanitize_provider_messages`` hands back when nothing needs repair (docs/design.md §3.8):
``owned`` lists are the result's own lists, anything else is copied; ``clean`` is a list; and
``verified`` says the rows were read as the final check reads them (well paired, provider roles).

Bug class guarded (mutmut survivors of 5 December 2026): the caller's list handed back when it was
not given up (a later edit of one changes the other), a copy made when it was, a tuple where the
result promises a list, and ``verified`` lost (every call reads its payload twice) or claimed for a
payload whose roles the check refuses.
"""

from __future__ import annotations

from builders import ask, tool, user

from inspector.engine.pairing import sanitize_provider_messages

PAIRED = [user("q"), ask("a"), tool("a"), user("next")]


def test_an_owned_payload_and_its_clean_ranges_are_the_results_own_lists() -> None:
    rows, skip = list(PAIRED), [(0, 1)]
    out = sanitize_provider_messages(rows, skip=skip, skip_declares=lambda _rid: False, owned=True)
    assert out.messages is rows and out.clean is skip
    assert (out.repairs, list(out.origin), out.verified) == ([], [0, 1, 2, 3], True)


def test_a_payload_not_given_up_is_copied_with_its_clean_ranges() -> None:
    rows, skip = list(PAIRED), [(0, 1)]
    out = sanitize_provider_messages(rows, skip=skip, skip_declares=lambda _rid: False)
    assert out.messages == rows and out.messages is not rows
    assert out.clean == [(0, 1)] and out.clean is not skip
    assert out.verified is True


def test_without_skip_the_clean_ranges_are_an_empty_list() -> None:
    out = sanitize_provider_messages(tuple(PAIRED))
    assert out.clean == [] and type(out.clean) is list
    assert out.verified is True


def test_a_well_paired_payload_with_a_role_no_provider_accepts_is_not_verified() -> None:
    # the repair leaves roles alone (Q19); the final check must still read it and refuse it
    rows = [user("q"), {"role": "developer", "content": "be brief"}, ask("a"), tool("a"), user("next")]
    out = sanitize_provider_messages(rows)
    assert out.messages == rows and out.messages is not rows
    assert (out.repairs, list(out.origin), out.clean, out.verified) == ([], [0, 1, 2, 3, 4], [], False)
    owned = sanitize_provider_messages(rows, skip=[(0, 1)], skip_declares=lambda _rid: False, owned=True)
    assert owned.messages is rows and owned.clean == [(0, 1)] and owned.verified is False
