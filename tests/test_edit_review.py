"""The review of notebook edits in the chat session: cards, answers, policies, bounds.

The agent's side is played by feeding a never-started session directly (its replies to
the agent are recorded from what it would write); the edit tools' side by calling
``review_edit`` with a CellEdit, as the chat's notebook endpoint does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from acp_notebook.agent.catalogue import AgentSpec
from acp_notebook.agent.jsonrpc import Notification, Request
from acp_notebook.bridge import chat_session, edit_review
from acp_notebook.bridge.chat_session import ChatSession, SessionConfig
from acp_notebook.bridge.hub import Hub
from acp_notebook.wire import fold as folding
from acp_notebook.wire.contracts import CellEdit, PermissionResolvedEvent
from acp_notebook.wire.review import EditReview, Review
from tests.support.hub_chats import open_demo

EDIT: CellEdit = {
    "op": "insert",
    "path": "work/a.ipynb",
    "cellType": "code",
    "index": 3,
    "before": "",
    "after": "print('hi')\n",
}
OTHER: CellEdit = {**EDIT, "index": 4}


class FakeNotebook:
    """A chat's notebook endpoint: its preview of ``insert_cell`` is ``EDIT``."""

    url = "http://127.0.0.1:9/mcp"
    secret = "secret"

    def __init__(self) -> None:
        self.review: EditReview | None = None
        self.delay = 0.0
        self.fail = False

    def cancel_runs(self) -> None:
        pass

    def close(self) -> None:
        pass

    async def preview(self, tool_call: Mapping[str, Any]) -> CellEdit | None:
        await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("no document")
        return EDIT if tool_call.get("title") == "insert_cell" else None


class Session:
    """A never-started chat session with a fake notebook, its events and its replies."""

    def __init__(self, answer_timeout: float = 30.0) -> None:
        self.events: list[dict[str, Any]] = []
        self.notebook = FakeNotebook()
        self.session = ChatSession(
            "c1",
            AgentSpec("fake", ("fake-agent",)),
            cwd=".",
            config=SessionConfig(answer_timeout=answer_timeout),
            sink=self.events.append,  # type: ignore[arg-type]
            notebook=self.notebook,
        )
        self.sent: list[dict[str, Any]] = []  # what the session wrote to the agent
        self.session.conn._write = lambda data: self.sent.append(json.loads(data))  # type: ignore[method-assign]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]

    def replies(self) -> list[dict[str, Any]]:
        return [m for m in self.sent if "method" not in m]

    async def card(self, count: int = 1) -> dict[str, Any]:
        """The newest edit card, once ``count`` permission requests were shown."""
        for _ in range(200):
            if len(self.of("permission_request")) >= count:
                return self.of("permission_request")[-1]
            await asyncio.sleep(0.01)
        raise AssertionError("no card")

    def ask_permission(self, rpc_id: int, title: str) -> None:
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
        ]
        params = {"sessionId": "s1", "toolCall": {"toolCallId": f"t{rpc_id}", "title": title}}
        self.session._on_request(
            Request(rpc_id, "session/request_permission", {**params, "options": options})
        )

    def start_turn(self) -> None:
        self.session.status = "ready"
        self.session.turn_active = True

    async def end_turn(self) -> None:
        """Ends a turn the way every turn ends (the agent never answers: it never started)."""
        self.session.status = "starting"
        self.session._started.set()
        await self.session._run_turn(1, "hi")


@pytest.fixture
async def chat() -> AsyncIterator[Session]:
    one = Session()
    yield one
    await one.session.close()


async def review(chat: Session, edit: CellEdit = EDIT) -> asyncio.Task[Review]:
    task = asyncio.create_task(chat.session.review_edit(edit))
    await asyncio.sleep(0)
    return task


async def answered(chat: Session, option: str, shown: int = 1, edit: CellEdit = EDIT) -> Review:
    """The review of ``edit`` when alice picks ``option`` on its card (the ``shown``th)."""
    task = await review(chat, edit)
    card = await chat.card(shown)
    chat.session.respond_permission(card["requestId"], option, by="alice")
    return await task


async def test_the_card_and_an_accept(chat: Session) -> None:
    assert chat.notebook.review == chat.session.review_edit
    update = {"sessionUpdate": "tool_call", "toolCallId": "t9", "title": "insert_cell"}
    chat.session._on_notification(Notification("session/update", {"update": update}))
    task = await review(chat)
    card = await chat.card()
    assert card["edit"] == EDIT
    assert card["toolCall"] == {
        "toolCallId": "t9",
        "title": "Insert a code cell at 3",
        "kind": "edit",
    }
    assert [(o["optionId"], o["kind"]) for o in card["options"]] == [
        ("accept", "allow_once"),
        ("accept_turn", "allow_always"),
        ("reject", "reject_once"),
    ]
    assert card["deadline"] > card["ts"]
    chat.session.respond_permission(card["requestId"], "accept", by="alice")
    assert await task == Review(True, "accepted by alice")
    [resolved] = chat.of("permission_resolved")
    assert resolved["optionId"] == "accept" and resolved["by"] == "alice"
    assert chat.replies() == [], "the agent never hears of the chat's own request"
    assert chat.session.ledger.ids() == []


async def test_a_reject(chat: Session) -> None:
    assert await answered(chat, "reject") == Review(False, "rejected by alice")


async def test_an_unanswered_card_times_out() -> None:
    chat = Session(answer_timeout=0.05)
    try:
        assert await chat.session.review_edit(EDIT) == Review(False, "not reviewed within 0.05 s")
        assert chat.of("permission_resolved")[0]["outcome"] == "timeout"
    finally:
        await chat.session.close()


async def test_the_card_is_cancelled_with_the_turn(chat: Session) -> None:
    chat.start_turn()
    task = await review(chat)
    await chat.card()
    chat.session.cancel()
    assert await task == Review(False, "cancelled: the turn was cancelled")
    assert chat.of("permission_resolved")[0]["outcome"] == "cancelled"
    # The session/cancel notification, and no reply: the request was ours.
    assert [m.get("method") for m in chat.sent] == ["session/cancel"]


async def test_the_card_ends_with_the_chat() -> None:
    chat = Session()
    task = await review(chat)
    await chat.card()
    await chat.session.close()
    assert await task == Review(False, "the chat ended")


async def test_no_card_once_the_chat_has_ended() -> None:
    chat = Session()
    await chat.session.close()
    chat.session.status = "exited"  # as the agent's exit leaves it
    assert await chat.session.review_edit(EDIT) == Review(False, "the chat ended")
    assert chat.of("permission_request") == []


async def test_an_abandoned_review_ends_its_card(chat: Session) -> None:
    task = await review(chat)
    await chat.card()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [resolved] = chat.of("permission_resolved")
    assert resolved["outcome"] == "cancelled" and resolved["by"] == "agent"
    assert chat.session.ledger.ids() == []


async def test_accept_all_in_this_turn(chat: Session) -> None:
    tasks = [await review(chat, {**EDIT, "index": n}) for n in (3, 5, 6)]
    card = await chat.card(3)
    chat.session.respond_permission(card["requestId"], "accept_turn", by="alice")
    # The cards already waiting are accepted with it.
    assert [await task for task in tasks] == [Review(True, "accepted by alice")] * 3
    resolved = chat.of("permission_resolved")
    assert [(e["optionId"], e["by"]) for e in resolved] == [("accept_turn", "alice")] * 3
    # The rest of the turn: no card.
    assert await chat.session.review_edit(OTHER) == Review(
        True, "accepted: alice chose to accept all in this turn"
    )
    assert len(chat.of("permission_request")) == 3
    await chat.end_turn()
    # A new turn asks again.
    assert await answered(chat, "reject", shown=4) == Review(False, "rejected by alice")


async def test_the_accept_edits_setting(chat: Session) -> None:
    chat.session.set_accept_edits(True, by="bob")
    [policy] = chat.of("edit_policy")
    assert policy["acceptEdits"] is True and policy["by"] == "bob"
    assert await chat.session.review_edit(EDIT) == Review(
        True, "accepted by the chat's accept-edits setting"
    )
    assert chat.of("permission_request") == []
    # A resync folds to the setting, however old the event is.
    state = folding.initial_state()
    for event in chat.session.resync():
        state = folding.fold(state, event)
    assert folding.snapshot(state).get("acceptEdits") is True
    chat.session.set_accept_edits(False)
    task = await review(chat)
    await chat.card()
    task.cancel()


async def test_an_allow_of_the_agents_request_approves_its_edit_once(chat: Session) -> None:
    chat.ask_permission(7, "insert_cell")
    card = await chat.card()
    assert card["edit"] == EDIT
    chat.ask_permission(8, "Bash")  # no notebook edit: no edit on its card
    plain = await chat.card(2)
    assert "edit" not in plain
    chat.session.respond_permission(card["requestId"], "allow", by="alice")
    assert chat.replies() == [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }
    ]
    # Another edit is not the one allowed: its own card.
    assert await answered(chat, "reject", 3, OTHER) == Review(False, "rejected by alice")
    # The tool call's own review: accepted at once, no second card for one edit.
    assert await chat.session.review_edit(EDIT) == Review(True, "accepted by alice")
    assert len(chat.of("permission_request")) == 3
    # Consumed: the same edit again is asked again.
    task = await review(chat)
    await chat.card(4)
    task.cancel()


async def test_a_rejected_agent_request_approves_nothing(chat: Session) -> None:
    chat.ask_permission(7, "insert_cell")
    card = await chat.card()
    chat.session.respond_permission(card["requestId"], "deny", by="alice")
    task = await review(chat)
    await chat.card(2)
    task.cancel()


async def test_a_slow_or_failing_preview_still_shows_the_card(
    chat: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_session, "PREVIEW_TIMEOUT", 0.05)
    chat.notebook.delay = 5.0
    chat.ask_permission(1, "insert_cell")
    card = await chat.card()
    assert "edit" not in card and card["toolCall"]["toolCallId"] == "t1"
    chat.notebook.delay, chat.notebook.fail = 0.0, True
    chat.ask_permission(2, "insert_cell")
    card = await chat.card(2)
    assert "edit" not in card and card["toolCall"]["toolCallId"] == "t2"
    chat.session.respond_permission(card["requestId"], "allow", by="alice")
    assert [r["id"] for r in chat.replies()] == [2]


async def test_a_request_waiting_for_its_preview_ends_once(chat: Session) -> None:
    chat.notebook.delay = 5.0
    chat.start_turn()
    chat.ask_permission(1, "insert_cell")
    chat.ask_permission(2, "insert_cell")
    await asyncio.sleep(0.01)
    # The agent withdraws one: an error reply; a cancel ends the other: a cancelled reply.
    chat.session._on_notification(Notification("$/cancel_request", {"requestId": 1}))
    chat.session.cancel()
    await asyncio.sleep(0.05)
    replies = chat.replies()
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["error"]["code"] == -32800
    assert replies[1]["result"] == {"outcome": {"outcome": "cancelled"}}
    assert chat.of("permission_request") == []
    assert chat.session._previews == {}


async def test_a_duplicate_id_while_previewing_is_refused(chat: Session) -> None:
    chat.notebook.delay = 0.05
    chat.ask_permission(1, "insert_cell")
    chat.ask_permission(1, "insert_cell")
    card = await chat.card()
    assert card["edit"] == EDIT
    chat.session.respond_permission(card["requestId"], "allow")
    replies = chat.replies()
    assert replies[0] == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32600, "message": "duplicate request id"},
    }
    assert replies[1]["result"]["outcome"]["optionId"] == "allow"
    assert len(replies) == 2


async def test_edits_over_the_cap_are_refused(
    chat: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert edit_review.MAX_EDITS_PER_TURN == 1000
    monkeypatch.setattr(edit_review, "MAX_EDITS_PER_TURN", 3)
    chat.session.set_accept_edits(True)
    reviews = [await chat.session.review_edit(EDIT) for _ in range(5)]
    assert [r.accepted for r in reviews] == [True, True, True, False, False]
    assert "more than 3 edits in one turn" in reviews[3].detail
    assert len(chat.of("agent_error")) == 1, "told once per turn"
    await chat.end_turn()
    assert (await chat.session.review_edit(EDIT)).accepted


async def test_accept_edits_request_is_the_owners(hub: Hub) -> None:
    chat_id, rec = await open_demo(hub, owner="alice")
    ask = {"type": "chat:accept_edits", "chatId": chat_id, "value": True, "id": 3}
    assert (await hub.handle(ask, user="bob"))["error"] == "FORBIDDEN"
    assert (await hub.handle({**ask, "value": "yes"}, user="alice"))["error"] == "INVALID"
    assert await hub.handle(ask, user="alice") == {"ack": 3, "accepted": True}
    policy = await rec.kind("edit_policy")
    assert policy["acceptEdits"] is True and policy["by"] == "alice"
    assert hub.chats[chat_id].session.accept_edits is True
    resync = await hub.handle({"type": "chat:resync", "chatId": chat_id, "id": 4}, user="bob")
    assert any(e["kind"] == "edit_policy" for e in resync["events"])


def test_a_saved_edit_card_keeps_the_start_of_its_sources() -> None:
    from acp_notebook.kernel.transcript import MAX_TEXT, compact

    big: CellEdit = {**EDIT, "op": "edit", "before": "a" * 50_000, "after": "b" * 50_000}
    card = {"kind": "permission_request", "seq": 1, "requestId": "r1", "toolCall": {}}
    state = folding.fold(folding.initial_state(), {**card, "options": [], "edit": big})  # type: ignore[typeddict-item]
    saved = compact(folding.snapshot(state))["permissions"]["r1"]["edit"]
    assert len(saved["before"]) == len(saved["after"]) == MAX_TEXT
    assert saved["after"].startswith("bbb") and saved["after"].endswith("…")
    assert {k: v for k, v in saved.items() if k not in ("before", "after")} == {
        k: v for k, v in big.items() if k not in ("before", "after")
    }


def test_the_history_keeps_the_setting_past_its_bounds() -> None:
    from acp_notebook.bridge.history import History

    history = History(max_events=3)
    history.append({"kind": "edit_policy", "seq": 1, "acceptEdits": True})  # type: ignore[typeddict-item]
    for seq in range(2, 10):
        history.append({"kind": "agent_error", "seq": seq, "message": f"m{seq}"})  # type: ignore[typeddict-item]
    events = history.events()
    assert events[0]["kind"] == "edit_policy" and len(events) == 4
    state = folding.initial_state()
    for event in events:
        state = folding.fold(state, event)
    assert folding.snapshot(state)["acceptEdits"] is True


def test_the_review_decisions_without_io(monkeypatch: pytest.MonkeyPatch) -> None:
    # The pure core: an approval is used once, then the setting, then a card (None).
    reviews = edit_review.EditReviews()
    reviews.approve(EDIT, "ana")
    assert reviews.decide(OTHER) is None
    assert reviews.decide(EDIT) == Review(True, "accepted by ana")
    assert reviews.decide(EDIT) is None
    reviews.accept_edits = True
    assert reviews.decide(EDIT) == Review(True, "accepted by the chat's accept-edits setting")
    # A card's answer: accept-all-in-this-turn holds until the turn ends.
    reviews.accept_edits = False
    chosen: PermissionResolvedEvent = {
        "kind": "permission_resolved",
        "requestId": "r",
        "outcome": "selected",
        "optionId": "accept_turn",
        "by": "ana",
    }
    assert reviews.outcome(chosen, 60, ended=False) == Review(True, "accepted by ana")
    assert reviews.decide(OTHER) == Review(True, "accepted: ana chose to accept all in this turn")
    reviews.end_turn()
    assert reviews.decide(OTHER) is None
    timed_out: PermissionResolvedEvent = {**chosen, "outcome": "timeout"}
    assert reviews.outcome(timed_out, 60, ended=False) == Review(False, "not reviewed within 60 s")
    # Over the cap: refused, and the person is told once per turn.
    monkeypatch.setattr(edit_review, "MAX_EDITS_PER_TURN", 1)
    reviews.end_turn()
    reviews.decide(EDIT)
    for told in (True, False):
        capped = reviews.decide(EDIT)
        assert capped is not None and not capped.accepted
        assert (reviews.notice is not None) is told
