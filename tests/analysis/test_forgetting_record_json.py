"""A forgotten reference as a frame's JSON entry (``Forgotten.to_json``): every field but the call
(the frame's own), ``needed_in`` as a list. Bug class: a field lost from the replay JSON."""

from __future__ import annotations

from inspector.forgetting import Forgotten


def test_a_forgotten_record_as_json_keeps_every_field_but_the_call() -> None:
    x = Forgotten(3, "SEC-88213", "code", ("user_message", "next_reply"), 1, "dropped at the commit of turn 2")
    assert x.to_json() == {"identifier": "SEC-88213", "kind": "code", "needed_in": ["user_message", "next_reply"],
                           "message": 1, "reason": "dropped at the commit of turn 2"}
