"""The Python API in local mode, against the real demo agent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_notebook.kernel.chat import CANCEL, DECLINE, Chat, NeedsAnswer
from acp_notebook.kernel.transcript import render_html
from tests.support.agents import DEMO_FAULTS
from tests.support.chat_waits import refuses_prompts
from tests.support.demo_answers import demo_answer


@pytest.fixture
def chat(request: pytest.FixtureRequest) -> Any:
    """A demo chat; ``indirect`` parametrization gives the agent another command line."""
    command = getattr(request, "param", None)
    c = Chat("demo", command=command, env={"ACP_DEMO_DELAY": "0"}, transport="local")
    yield c
    c.close()


async def wait_pending(chat: Chat, timeout: float = 10) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while not chat.pending:
            await asyncio.sleep(0.01)
    return chat.pending[0]


async def test_ask_returns_the_finished_turn(chat: Chat) -> None:
    assert chat.mode == "local" and repr(chat) == "Chat(agent='demo')"
    turn = await chat.ask("hello there")
    assert turn.ok and turn.stop_reason == "end_turn"
    assert "demo agent" in turn.text and "hello there" in turn.text
    assert turn.usage is not None and turn.usage["size"] == 200000
    assert chat.state["items"][0] == {"type": "user", "text": "hello there"}
    assert chat.snapshot["items"], "the compact snapshot is saved at the end of a turn"


async def test_tool_calls_and_plan_in_the_turn(chat: Chat) -> None:
    turn = await chat.ask("tool")
    assert [t["status"] for t in turn.tool_calls] == ["completed"]
    assert turn.tool_calls[0]["content"][0]["type"] == "diff"
    turn = await chat.ask("plan")
    assert turn.plan and all(e["status"] == "completed" for e in turn.plan)


async def test_policies_answer_questions_and_permissions(chat: Chat) -> None:
    seen: list[dict[str, Any]] = []

    def policy(request: dict[str, Any]) -> Any:
        seen.append(request)
        return {"question_0": "red", "count": 5}

    chat.on_elicitation(policy)
    chat.on_permission(lambda request: "allow-always")
    turn = await chat.ask("ask-user")
    assert demo_answer(turn.text)["content"] == {"question_0": "red", "count": 5}
    assert len(seen) == 1
    turn = await chat.ask("permission")
    assert "permission: allow-always" in turn.text
    chat.on_elicitation(lambda request: DECLINE)
    assert demo_answer((await chat.ask("ask-user")).text) == {"action": "decline"}
    chat.on_elicitation(lambda request: CANCEL)
    assert demo_answer((await chat.ask("ask-user")).text) == {"action": "cancel"}
    chat.on_permission(lambda request: CANCEL)
    assert "permission: cancelled" in (await chat.ask("permission")).text


async def test_policy_returning_none_leaves_it_to_a_person(chat: Chat) -> None:
    chat.on_permission(lambda request: None)
    task = asyncio.create_task(chat.ask("permission"))
    request = await wait_pending(chat)
    chat.reject(request["requestId"])
    assert "permission: reject" in (await task).text


async def test_dismiss(chat: Chat) -> None:
    task = asyncio.create_task(chat.ask("permission"))
    request = await wait_pending(chat)
    chat.dismiss(request["requestId"])
    assert "permission: cancelled" in (await task).text


async def test_url_question_from_python(chat: Chat) -> None:
    """A URL question shows its url and host in ``pending``; ``answer`` accepts it, and the
    agent's elicitation/complete shows in the folded state."""
    task = asyncio.create_task(chat.ask("url-login https://Bücher.example/login"))
    request = await wait_pending(chat)
    assert request["type"] == "elicitation" and request["fields"] == []
    assert request["url"] == "https://Bücher.example/login"
    assert request["host"] == "xn--bcher-kva.example"
    chat.answer(request["requestId"])
    assert demo_answer((await task).text) == {"action": "accept"}
    assert chat.state["elicitations"][request["requestId"]]["outcome"] == "completed"
    # The saved transcript names the host, as text.
    assert "Sign in to the demo service. (xn--bcher-kva.example)" in render_html(chat.snapshot)
    task = asyncio.create_task(chat.ask("url-login"))
    chat.decline((await wait_pending(chat))["requestId"])
    assert demo_answer((await task).text) == {"action": "decline"}


async def test_blocking_wait_raises_instead_of_hanging(chat: Chat) -> None:
    await chat.ready()
    number = chat.send_prompt("ask-user")
    with pytest.raises(NeedsAnswer, match=r"await chat\.ask"):
        await asyncio.to_thread(chat.wait, number, 10)
    chat.dismiss(chat.pending[0]["requestId"])
    turn = await asyncio.to_thread(chat.wait, number, 10)
    assert demo_answer(turn.text) == {"action": "cancel"}


async def test_events_stream(chat: Chat) -> None:
    await chat.ready()
    kinds: list[str] = []

    async def collect() -> None:
        async for event in chat.events():
            kinds.append(event["kind"])
            if event["kind"] == "turn_ended":
                return

    collector = asyncio.create_task(collect())
    await asyncio.sleep(0.05)
    await chat.ask("think")
    await asyncio.wait_for(collector, 5)
    assert kinds[0] == "turn_started" and kinds[-1] == "turn_ended" and "update" in kinds


# The demo agent that adds the test-only behaviours (crash).
@pytest.mark.parametrize("chat", [DEMO_FAULTS], indirect=True)
async def test_crash_ends_the_turn_with_an_error(chat: Chat) -> None:
    turn = await chat.ask("crash")
    assert turn.error and not turn.ok
    assert chat.status == "exited"
    await refuses_prompts(chat)


async def test_unknown_agent_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        Chat("nope", transport="local")


async def test_next_request_waits_for_the_agent(chat: Chat) -> None:
    await chat.ready()
    with pytest.raises(TimeoutError):
        await chat.next_request(timeout=0.1)
    number = chat.send_prompt("permission")
    request = await chat.next_request()
    assert request["type"] == "permission" and request["toolCall"]["title"]
    chat.allow(request["requestId"])
    assert "permission: allow-once" in (await asyncio.to_thread(chat.wait, number, 10)).text


async def test_a_view_that_falls_back_to_the_comm_gets_events_there(chat: Chat) -> None:
    # As in server mode when the page's WebSocket to the extension fails.
    chat.transport = "server"
    sent: list[dict[str, Any]] = []
    chat.send = sent.append  # type: ignore[method-assign]
    await chat.ask("hello")
    assert sent == []  # the widget has its own socket
    chat._on_widget_msg(chat, {"type": "chat:resync", "id": "v1"}, [])
    await chat.ask("hello again")
    await asyncio.sleep(0.1)
    acks = [m for m in sent if m.get("ack") == "v1"]
    assert len(acks) == 1 and acks[0]["reset"] and acks[0]["events"]
    frames = [m for m in sent if "events" in m and "ack" not in m]
    assert any(e["kind"] == "turn_ended" and e["turn"] == 2 for f in frames for e in f["events"])


async def test_an_edit_policy_answers_edit_reviews_before_the_permission_policy(
    chat: Chat,
) -> None:
    """``on_edit`` decides the cards that carry an edit; ``on_permission`` the others and
    the edits it leaves (None); ``accept_edits`` is the chat's folded setting."""
    from acp_notebook.kernel.local_transport import LocalClient
    from acp_notebook.wire.contracts import CellEdit

    await chat.ready()
    assert isinstance(chat._client, LocalClient)
    session = chat._client.hub.chats[chat.chat_id].session
    edit: CellEdit = {
        "op": "edit",
        "path": "a.ipynb",
        "cellType": "code",
        "index": 0,
        "before": "x = 1",
        "after": "x = 2",
    }

    def review() -> Any:
        return chat._client.thread.submit(session.review_edit(edit)).result(10)

    seen: list[dict[str, Any]] = []

    def on_edit(change: dict[str, Any]) -> Any:
        seen.append(change)
        return "reject" if change["after"] == "x = 2" else None

    chat.on_edit(on_edit)
    chat.on_permission(lambda request: "accept")
    assert (await asyncio.to_thread(review)).accepted is False
    assert seen == [edit]
    assert chat.state["permissions"][next(iter(chat.state["permissions"]))]["by"] == "kernel"
    edit["after"] = "x = 3"  # the edit policy leaves it: the permission policy accepts
    assert (await asyncio.to_thread(review)).accepted is True
    # The setting, set from Python, folded back.
    assert chat.accept_edits is False
    chat.accept_edits = True
    async with asyncio.timeout(5):
        while not chat.accept_edits:
            await asyncio.sleep(0.01)
    assert session.accept_edits is True
    assert chat.state.get("acceptEdits") is True


async def test_sharing_set_from_python_is_folded_back(chat: Chat) -> None:
    # Local mode: the kernel's user owns every chat, named by no one.
    assert chat.owner is None and chat.share is None
    chat.share = "anyone"
    async with asyncio.timeout(5):
        while chat.share != "anyone":
            await asyncio.sleep(0.01)
    assert chat.state["access"] == {"owner": None, "ownerName": None, "share": "anyone"}
    with pytest.raises(ValueError, match="anyone"):
        chat.share = "everyone"  # type: ignore[assignment]
    chat.share = None
    async with asyncio.timeout(5):
        while chat.share is not None:
            await asyncio.sleep(0.01)


async def test_a_prompt_during_a_turn_is_queued_and_waits_for_its_own_turn(chat: Chat) -> None:
    await chat.ready()
    first = chat.send_prompt("ask-user")  # waits for an answer: a long turn
    request = await chat.next_request()
    second = asyncio.ensure_future(chat.ask("think"))
    await chat._until(lambda: chat.queue or None, 10)
    third = chat.send_prompt("hello")
    assert (first, third) == (1, 3)
    assert [(q["turn"], q["prompt"]) for q in chat.queue] == [(2, "think"), (3, "hello")]
    chat.unqueue(third)
    removed = await asyncio.to_thread(chat.wait, third, 10)
    assert removed.error == "removed from the queue (removed)" and not removed.ok
    assert not second.done()  # its turn has not run yet
    chat.decline(request["requestId"])
    turn = await asyncio.wait_for(second, 10)
    assert turn.number == 2 and turn.ok and "Done thinking" in turn.text
    assert chat.queue == []


async def test_a_cancel_ends_the_queued_turns_saying_so(chat: Chat) -> None:
    await chat.ready()
    chat.send_prompt("ask-user")
    await chat.next_request()
    queued = asyncio.ensure_future(chat.ask("think"))
    await chat._until(lambda: chat.queue or None, 10)
    chat.cancel()
    turn = await asyncio.wait_for(queued, 10)
    assert (turn.number, turn.error) == (2, "removed from the queue (cancelled)")


async def test_a_stopped_answer_says_so_in_the_saved_transcript(chat: Chat) -> None:
    await chat.ready()
    chat.send_prompt("ask-user")
    await chat.next_request()
    chat.cancel()
    await chat._until(lambda: chat.state["items"][-1]["type"] == "stopped" or None, 10)
    assert chat.state["items"][-1] == {"type": "stopped", "reason": "cancelled"}
    assert "<i><bdi>Stopped</bdi></i>" in render_html(chat.snapshot)


async def test_commands_are_the_agents_slash_commands() -> None:
    env = {"ACP_DEMO_DELAY": "0", "ACP_DEMO_COMMANDS": "1"}
    chat = Chat("demo", env=env, transport="local")
    try:
        await chat.ready()
        commands = await chat._until(lambda: chat.commands or None, 10)
        assert [c["name"] for c in commands][:2] == ["slow", "plan"]
        assert commands[2]["input"] == {"hint": "how many chunks (default 1000)"}
        assert chat.commands is not chat.commands  # a copy each time
        assert (await chat.ask("/plan")).plan
    finally:
        chat.close()
