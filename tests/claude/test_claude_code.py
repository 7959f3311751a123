"""``Chat("claude-code")`` through our bridge and Python API, on the real wrapper.

The named agent resolves to the pinned claude-agent-acp (tests/claude/node_modules/.bin
on PATH) and runs its bundled Claude Code CLI against the mock Messages API; only the
model is scripted. Each case checks what the model was sent back (the tool_result the
next request carries) or what landed on disk, not just what the stream said.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import EventLog, ask, finish, next_pending, ready
from tests.support.mock_anthropic import (
    ApiError,
    MessagesRequest,
    MockAnthropic,
    Question,
    Reply,
    ask_user_question,
    task_create,
    task_update,
    text,
    tool_search,
    tool_use,
)

pytestmark = pytest.mark.usefixtures("wrapper_bin")

OpenChat = Callable[..., Chat]

COLOR = Question("Which color do you prefer?", "Color", ["Red", "Blue"])
SIZE = Question("Which size?", "Size", ["Small", "Large"])
TOPPINGS = Question("Which toppings?", "Toppings", ["Cheese", "Ham", "Olives"], multi_select=True)


def field_names(request: dict[str, Any]) -> list[str]:
    return [f["name"] for f in request["fields"]]


async def answer_question(
    chat: Chat, mock: MockAnthropic, prompt: str, reply: Reply, respond: Callable[[str], None]
) -> tuple[dict[str, Any], Any]:
    """Run a turn in which the model asks ``reply``; ``respond(requestId)`` answers it."""
    mock.on_user(prompt, reply)
    mock.on_tool_result("AskUserQuestion", text("Noted"))
    task = asyncio.create_task(chat.ask(prompt))
    request = await next_pending(chat, "elicitation")
    respond(request["requestId"])
    return request, await finish(task)


async def answered(
    claude_chat: OpenChat, mock: MockAnthropic, prompt: str, *questions: Question, values: Any
) -> tuple[dict[str, Any], str]:
    """A turn in which the model asks ``questions``, answered with ``values``: the request,
    and the tool result the model got back."""
    chat = claude_chat()
    request, turn = await answer_question(
        chat, mock, prompt, ask_user_question(*questions), lambda rid: chat.answer(rid, values)
    )
    assert turn.ok
    [result] = mock.tool_results("AskUserQuestion")
    return request, result.text


async def test_session_starts_in_default_mode(claude_chat: OpenChat) -> None:
    chat = claude_chat()
    await ready(chat)
    agent = chat.state["agent"]
    assert agent["info"]["name"] == "@agentclientprotocol/claude-agent-acp"
    assert agent["info"]["version"] == "0.101.0"
    # agents.py sets `default` for claude-code: the wrapper would start in `auto`.
    assert chat.state["modes"]["currentModeId"] == "default"


@pytest.mark.parametrize(
    ("action", "outcome", "model_sees", "is_error"),
    [
        ("decline", "declined", "The user did not answer the questions.", False),
        ("cancel", "cancelled", "Tool use aborted", True),
    ],
)
async def test_ask_user_question_declined_or_cancelled(
    claude_chat: OpenChat,
    mock_api: MockAnthropic,
    action: str,
    outcome: str,
    model_sees: str,
    is_error: bool,
) -> None:
    chat = claude_chat()
    respond = chat.decline if action == "decline" else chat.dismiss
    request, turn = await answer_question(
        chat, mock_api, "Pick a color", ask_user_question(COLOR), respond
    )

    assert turn.stop_reason == "end_turn" and turn.error is None
    assert chat.state["elicitations"][request["requestId"]]["outcome"] == outcome
    [result] = mock_api.tool_results("AskUserQuestion")
    assert model_sees in result.text and result.is_error is is_error
    assert "Red" not in result.text


async def test_multi_select_question(claude_chat: OpenChat, mock_api: MockAnthropic) -> None:
    values = {"question_0": ["Cheese", "Olives"]}
    request, result = await answered(
        claude_chat, mock_api, "Choose toppings", TOPPINGS, values=values
    )

    question = request["fields"][0]
    assert question["type"] == "multi"
    assert [o["value"] for o in question["options"]] == ["Cheese", "Ham", "Olives"]
    assert '"Which toppings?"="Cheese, Olives"' in result


async def test_two_questions_in_one_form(claude_chat: OpenChat, mock_api: MockAnthropic) -> None:
    values = {"question_0": "Blue", "question_1": "Large"}
    request, result = await answered(
        claude_chat, mock_api, "Pick color and size", COLOR, SIZE, values=values
    )

    assert request["message"] == "Please answer the following questions."
    assert field_names(request) == [
        "question_0",
        "question_0_custom",
        "question_1",
        "question_1_custom",
    ]
    # With several questions each field's description holds its question.
    assert request["fields"][2]["description"] == "Which size?"
    assert '"Which color do you prefer?"="Blue"' in result
    assert '"Which size?"="Large"' in result


async def test_other_free_text_answer(claude_chat: OpenChat, mock_api: MockAnthropic) -> None:
    values = {"question_0_custom": "Teal, please"}
    _, result = await answered(claude_chat, mock_api, "Pick a color", COLOR, values=values)

    assert '"Which color do you prefer?"="Teal, please"' in result


def plan_step(req: MessagesRequest) -> Reply:
    """The model's plan work, one tool call per request, chosen from what it already did."""
    steps = [
        task_create("Write the tests"),
        task_create("Run the suite"),
        task_update("1", "completed"),
        task_update("2", "completed"),
    ]
    done = sum(
        1
        for m in req.messages
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_use" and str(b.get("name")).startswith("Task")
    )
    return steps[done] if done < len(steps) else text("All done")


async def test_plan_after_tasks_are_created_and_completed(
    claude_chat: OpenChat, mock_api: MockAnthropic
) -> None:
    chat = claude_chat()
    mock_api.on_user("Plan the work", tool_search("TaskCreate", "TaskUpdate"))
    mock_api.on(
        lambda r: any(
            t.tool_name in ("ToolSearch", "TaskCreate", "TaskUpdate") for t in r.tool_results
        ),
        plan_step,
    )
    log = await EventLog(chat).start()
    try:
        turn = await ask(chat, "Plan the work")
    finally:
        await log.stop()

    assert turn.ok and turn.text == "All done"
    final = [(e["content"], e["status"]) for e in turn.plan]
    assert final == [("Write the tests", "completed"), ("Run the suite", "completed")]
    assert chat.state["plan"] == turn.plan
    # The panel went through the intermediate states too.
    states = [
        [(e["content"], e["status"]) for e in ev["update"]["entries"]]
        for ev in log.of("update")
        if ev["update"]["sessionUpdate"] == "plan"
    ]
    assert [("Write the tests", "pending"), ("Run the suite", "pending")] in states
    assert [("Write the tests", "completed"), ("Run the suite", "pending")] in states
    # Task tools show up only as plan updates, never as tool calls.
    assert [t["title"] for t in turn.tool_calls] == ["ToolSearch"]
    assert mock_api.unmatched == []


async def test_mode_selector_switches_modes(
    claude_chat: OpenChat, mock_api: MockAnthropic, workdir: Path
) -> None:
    chat = claude_chat()
    await ready(chat)
    available = [m["id"] for m in chat.state["modes"]["availableModes"]]
    assert {"default", "acceptEdits", "plan"} <= set(available)

    chat.set_mode("acceptEdits")

    assert chat.state["modes"]["currentModeId"] == "acceptEdits"
    # The switch is real: an edit now runs without asking.
    target = workdir / "auto.txt"
    mock_api.on_user("Write it", tool_use("Write", {"file_path": str(target), "content": "x\n"}))
    mock_api.on_tool_result("Write", text("Written"))
    log = await EventLog(chat).start()
    try:
        turn = await ask(chat, "Write it")
    finally:
        await log.stop()
    assert turn.ok and target.read_text() == "x\n"
    assert log.of("permission_request") == []
    mode_option = next(o for o in chat.state["configOptions"] if o["id"] == "mode")
    assert mode_option["currentValue"] == "acceptEdits"


async def test_api_error_is_a_turn_error_and_the_chat_goes_on(
    claude_chat: OpenChat, mock_api: MockAnthropic
) -> None:
    chat = claude_chat()
    mock_api.on_user("boom", ApiError(400, "the mock refuses this request"))
    mock_api.on_user("again", text("Back to normal"))

    turn = await ask(chat, "boom")

    assert turn.error is not None and not turn.ok
    assert "API Error: 400" in turn.error and "the mock refuses this request" in turn.error
    assert chat.state["turn"]["error"] == turn.error
    assert {"type": "error", "text": turn.error} in chat.state["items"]
    again = await ask(chat, "again")
    assert again.ok and again.text == "Back to normal"
    assert mock_api.main_requests[-1].prompt_text == "again"
