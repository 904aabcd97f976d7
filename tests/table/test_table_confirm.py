"""`WebBridgeUI`'s manual entry without a console: whatever the two battle players type, in any
order, the result handed to the bridge is one that both of them stood behind — entered by one and
then confirmed or entered identically by the other — and onlookers never see an entry."""

from __future__ import annotations

import contextlib
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.bridge.resolver import ManualEntry
from hilbridge.game import CombatRequest
from hilbridge.table.confirm import BattleStopped, Unasked, WebBridgeUI

REQUEST = CombatRequest("battle", "ann", "bob", {"energy": {"ann": 300, "bob": 200}})
ACTS = st.lists(
    st.tuples(st.sampled_from(["ann", "bob", "cy"]), st.sampled_from(["enter ann", "enter bob", "yes"])),
    max_size=12,
)


def asking_for_a_result() -> tuple[WebBridgeUI, threading.Thread, list[ManualEntry]]:
    """A bridge waiting in `manual` in a thread of its own, as on the table."""
    ui = WebBridgeUI(lambda: None)
    answers: list[ManualEntry] = []

    def ask() -> None:
        with contextlib.suppress(BattleStopped):  # the table closed without an agreed result
            answers.append(ui.manual(REQUEST, "the screen is garbled"))

    thread = threading.Thread(target=ask)
    thread.start()
    while ui.question is None:
        thread.join(0.001)
    return ui, thread, answers


@settings(max_examples=60, deadline=None)
@given(ACTS)
def test_a_manual_result_is_handed_on_only_when_both_battle_players_stand_behind_it(acts):
    """The rule as a model: an entry stands until the other battle player enters the same result
    or says yes to it; an entry that differs replaces it; onlookers answer nothing."""
    ui, thread, answers = asking_for_a_result()
    shown: tuple[str, str] | None = None  # the entry on the pages: (winner, entered by)
    agreed: ManualEntry | None = None
    for player, act in acts:
        winner = act.removeprefix("enter ")
        if player == "cy" or (act == "yes" and (shown is None or shown[1] == player)):
            with pytest.raises(Unasked):
                if act == "yes":
                    ui.answer_confirm(player, True)
                else:
                    ui.answer_manual(player, {"winner": winner})
            continue
        if act == "yes":
            assert shown is not None
            _, done = ui.answer_confirm(player, True)
            agreed = ManualEntry({"winner": shown[0]}, shown[1], player)
        else:
            _, done = ui.answer_manual(player, {"winner": winner})
            if shown is not None and shown[1] != player and shown[0] == winner:
                agreed = ManualEntry({"winner": winner}, shown[1], player)
            else:
                shown = (winner, player)
        assert done == (agreed is not None)
        if agreed is not None:
            break
        assert ui.asked_of("cy") == {
            "state": "manual",
            "waiting_for": [next(p for p in ["ann", "bob"] if p != player)],
        }
    thread.join(0 if agreed is None else 5)
    ui.close()
    thread.join(5)
    assert answers == ([agreed] if agreed is not None else [])


def test_an_entry_alone_is_not_handed_on_and_the_other_sees_it():
    ui, thread, answers = asking_for_a_result()
    text, done = ui.answer_manual("bob", {"winner": "bob"})
    assert not done and text == "entered; waiting for ann to confirm it"
    assert ui.asked_of("ann")["entry"] == {"result": {"winner": "bob"}, "entered_by": "bob"}
    assert ui.asked_of("cy") == {"state": "manual", "waiting_for": ["ann"]}
    ui.close()
    thread.join(5)
    assert answers == []
