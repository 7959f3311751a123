"""The permission, question and cancel round trips, one suite over the real agents.

Each agent runs as its own suite runs it (claude-code, codex and opencode on their mock
model APIs on 127.0.0.1, the demo agent on its keywords); ``drivers.py`` holds what differs
between them. A round trip an agent cannot make is left out of its parametrization.
"""

from __future__ import annotations

import asyncio

import pytest

from acp_notebook.kernel.chat import ChatError
from tests.support.chat_waits import EventLog, ask, finish, next_pending

from .drivers import Driver

ALL = ["claude-code", "codex", "opencode", "demo"]
# opencode asks only through session/request_permission (it has no elicitation call site).
QUESTIONS = ["claude-code", "codex", "demo"]
# The agents whose cancel while a question is open is scripted.
CANCELS = ["claude-code", "demo"]


@pytest.mark.parametrize("decision", ["allow", "reject"])
@pytest.mark.parametrize("agent", ALL, indirect=True)
async def test_permission_round_trip(agent: Driver, decision: str) -> None:
    chat = await agent.open_for_permission()
    task = asyncio.create_task(chat.ask(agent.script_permission()))
    request = await next_pending(chat, "permission")

    assert request["toolCall"]["kind"] == agent.permission_kind
    agent.check_permission(request)
    assert not agent.target.exists()
    (chat.allow if decision == "allow" else chat.reject)(request["requestId"])
    turn = await finish(task)

    (agent.allowed if decision == "allow" else agent.rejected)(chat, request, turn)


@pytest.mark.parametrize("agent", QUESTIONS, indirect=True)
async def test_question_round_trip(agent: Driver) -> None:
    chat = await agent.open_for_question()
    task = asyncio.create_task(chat.ask(agent.script_question()))
    request = await next_pending(chat, "elicitation")

    agent.check_question(chat, request)
    agent.answer(chat, request)
    turn = await finish(task)

    agent.answered(chat, request, turn)
    with pytest.raises(ChatError) as err:
        chat.decline(request["requestId"])
    assert err.value.code == "ELICITATION_NOT_FOUND"


@pytest.mark.parametrize("agent", CANCELS, indirect=True)
async def test_cancel_while_a_question_is_open(agent: Driver) -> None:
    chat = await agent.open()
    prompt, next_prompt = agent.script_cancel()
    log = await EventLog(chat).start()
    try:
        task = asyncio.create_task(chat.ask(prompt))
        request = await next_pending(chat, "elicitation")
        chat.cancel()
        turn = await finish(task)

        assert turn.stop_reason == "cancelled"
        assert chat.pending == []
        # The card closed exactly once, although an agent may also withdraw the question
        # ($/cancel_request) after session/cancel.
        resolved = log.of("elicitation_resolved")
        assert [(e["requestId"], e["outcome"]) for e in resolved] == [
            (request["requestId"], "cancelled")
        ]
        agent.cancelled(chat, request)

        again = await ask(chat, next_prompt)

        assert again.ok
        agent.after_cancel(request, again)
        assert len(log.of("elicitation_resolved")) == 1
    finally:
        await log.stop()
