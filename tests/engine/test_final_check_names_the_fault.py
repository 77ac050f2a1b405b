"""The final check names what a provider would reject (docs/design.md §3.8 "Final check", Q19),
read whole or around clean ranges (``skip`` / ``skip_declares``).

Bug class guarded (mutmut survivors of 5 December 2026): a role no provider accepts let through
when the rows are otherwise well paired; an error that names the wrong fault (an orphan where the
result is declared inside a clean range, or the reverse); ``check_pairing`` with ``skip`` never
called; an id check that stops at the first row that is not a dict, or crashes on a call that is
not one. Each expected message is written out from the rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from builders import ask, tool, user

from inspector.engine.pairing import check_pairing, check_provider_payload, check_roles
from inspector.engine.types import ProviderPayloadError

ROLE_ERROR = "messages[1] has role 'developer': a provider accepts only system, user, assistant and tool rows"


def _raises(message: str) -> Any:
    return pytest.raises(ProviderPayloadError, match=f"^{re.escape(message)}$")


def test_a_well_paired_payload_with_a_role_no_provider_accepts_is_refused() -> None:
    with _raises(ROLE_ERROR):
        check_provider_payload([user("q"), {"role": "developer", "content": "be brief"}])


def test_check_roles_names_the_row_outside_the_skipped_ranges_and_does_not_read_inside() -> None:
    with _raises(ROLE_ERROR):
        check_roles([user("q"), {"role": "developer", "content": "be brief"}])
    with _raises(ROLE_ERROR):
        check_roles([user("q"), {"role": "developer", "content": "be brief"}], skip=[(0, 1)])
    check_roles([{"role": "developer"}, user("q")], skip=[(0, 1)])  # declared clean: not read


def test_orphans_are_listed_sorted_and_comma_separated() -> None:
    with _raises("orphan tool results: {'x', 'y'}"):
        check_pairing([user("q"), tool("y"), tool("x")])


# the ask(a) and its result are a clean range; outside it, ask(b) is answered by a result for a:
# a is declared (inside the range), so this is not an orphan but a wrong answer to b
DECLARED_INSIDE = [user("q"), ask("a"), tool("a"), user("next"), ask("b"), tool("a", "late")]
WRONG_ANSWER = "tool results at messages[5:6] do not answer the tool calls at messages[4]: unanswered {'b'}"


@pytest.mark.parametrize("check", [check_pairing, check_provider_payload])
def test_a_result_declared_inside_a_clean_range_is_a_wrong_answer_not_an_orphan(check: Callable[..., None]) -> None:
    with _raises(WRONG_ANSWER):
        check(DECLARED_INSIDE, skip=[(0, 3)], skip_declares=lambda rid: rid == "a")
    with _raises(WRONG_ANSWER):  # the whole read gives the same verdict
        check(DECLARED_INSIDE)


def test_without_skip_declares_nothing_inside_the_ranges_is_declared() -> None:
    # z is declared nowhere: the orphan rule speaks first, before "follows role='user'"
    with _raises("orphan tool results: {'z'}"):
        check_pairing([user("q"), user("next"), tool("z")], skip=[(0, 1)])


NUMERIC_CALL = {"role": "assistant", "content": "",
                "tool_calls": [{"id": 2, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}


def test_a_numeric_call_id_after_a_row_that_is_not_a_dict_is_still_refused() -> None:
    with _raises("tool call id 2 at messages[1] is not a string"):
        check_pairing(["junk", NUMERIC_CALL, tool("2")])


def test_a_call_that_is_not_a_dict_is_ignored_not_a_crash() -> None:
    # rule: an ask with k id-bearing calls is followed by k results; "junk" bears no id, so k = 0
    check_pairing([user("q"), {"role": "assistant", "content": "thinking", "tool_calls": ["junk"]}, user("more")])
