"""The pointer a cell shows to a card of its chat shown elsewhere (kernel/card_pointer.py)."""

from __future__ import annotations

from typing import Any

import pytest
from IPython import display as ipython_display

from acp_notebook.kernel.card_pointer import MAX_TITLE, Pointers, pointer_bundle
from acp_notebook.wire.contracts import POINTER_MIME

QUESTION = {"type": "elicitation", "requestId": "r1", "message": "Pick a\ncolour"}
PERMISSION = {"type": "permission", "requestId": "r2", "toolCall": {"title": "Run `ls`"}}


class Handle:
    def __init__(self, shown: list[dict[str, Any]]) -> None:
        self.shown = shown

    def update(self, bundle: dict[str, Any], raw: bool = False) -> None:
        assert raw
        self.shown.append(bundle)


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What the pointers displayed and updated, in order."""
    out: list[dict[str, Any]] = []

    def display(bundle: dict[str, Any], raw: bool = False, display_id: bool = False) -> Handle:
        assert raw and display_id
        out.append(bundle)
        return Handle(out)

    monkeypatch.setattr(ipython_display, "display", display)
    return out


def test_a_bundle_names_the_request_in_bounds() -> None:
    question = pointer_bundle("c1", "demo", QUESTION, settled=False)
    assert question[POINTER_MIME] == {
        "chatId": "c1",
        "requestId": "r1",
        "kind": "question",
        "title": "Pick a colour",
        "agent": "demo",
        "settled": False,
    }
    assert "demo is waiting for you: its question (Pick a colour)" in question["text/plain"]
    permission = pointer_bundle("c1", "demo", PERMISSION, settled=True)
    assert permission[POINTER_MIME]["kind"] == "permission"
    assert permission["text/plain"] == "Answered: demo's permission (Run `ls`)."
    huge = pointer_bundle("c1", "demo", {**QUESTION, "message": "x" * 10_000}, settled=False)
    assert len(huge[POINTER_MIME]["title"]) == MAX_TITLE
    # A request without a title still gets its pointer.
    assert pointer_bundle("c1", "demo", {"requestId": "r3"}, False)[POINTER_MIME]["title"] == ""


def test_each_request_is_pointed_to_once_where_the_chat_is_not(
    shown: list[dict[str, Any]],
) -> None:
    pointers = Pointers()
    pointers.point("c1", "demo", QUESTION, None)  # no cell runs: nowhere to show it
    pointers.shown_in("cell-a")
    pointers.point("c1", "demo", QUESTION, "cell-a")  # that cell shows the chat, card and all
    assert shown == []
    pointers.point("c1", "demo", QUESTION, "cell-b")
    pointers.point("c1", "demo", QUESTION, "cell-c")  # once only
    assert [b[POINTER_MIME]["settled"] for b in shown] == [False]
    pointers.settle("c1", "demo", [QUESTION])  # still waiting
    assert len(shown) == 1
    pointers.settle("c1", "demo", [])
    assert [b[POINTER_MIME]["settled"] for b in shown] == [False, True]
    pointers.settle("c1", "demo", [])  # said once
    assert len(shown) == 2


def test_a_request_settled_while_its_pointer_was_shown_says_so(
    shown: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    pointers = Pointers()
    display = ipython_display.display

    def settling(bundle: dict[str, Any], raw: bool = False, display_id: bool = False) -> Any:
        handle = display(bundle, raw=raw, display_id=display_id)
        pointers.settle("c1", "demo", [])  # the client's thread, meanwhile
        return handle

    monkeypatch.setattr(ipython_display, "display", settling)
    pointers.point("c1", "demo", PERMISSION, "cell-b")
    assert [b[POINTER_MIME]["settled"] for b in shown] == [False, True]
