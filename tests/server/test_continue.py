"""Continuing a chat through the extension: ``chat:open`` with ``loadSessionId``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from tests.support.server_peers import DEMO


async def test_kernel_opens_a_chat_on_an_earlier_session(
    start_kernel: Any, kernel_socket: Any, tmp_path: Any
) -> None:
    kernel_id = await start_kernel()
    kernel = await kernel_socket(kernel_id)
    opened = await kernel.request(
        {"type": "chat:open", "agent": "demo", "env": DEMO, "cwd": str(tmp_path)}
    )
    first = opened["chatId"]
    assert (await kernel.request({"type": "chat:subscribe", "chatId": first}))["accepted"]
    session_id = (await kernel.event(first, "agent_status", status="ready"))["sessionId"]
    await kernel.request({"type": "chat:prompt", "chatId": first, "text": "hello there"})
    await kernel.event(first, "turn_ended")
    said = kernel.text(first)
    await kernel.request({"type": "chat:close", "chatId": first})

    reopened = await kernel.request(
        {
            "type": "chat:open",
            "agent": "demo",
            "env": DEMO,
            "cwd": str(tmp_path),
            "loadSessionId": session_id,
        }
    )
    second = reopened["chatId"]
    assert second != first
    await kernel.request({"type": "chat:subscribe", "chatId": second})
    ready = await kernel.event(second, "agent_status", status="ready")
    assert ready["sessionId"] == session_id
    assert kernel.text(second) == said  # replayed by session/load

    bad = await kernel.request({"type": "chat:open", "agent": "demo", "loadSessionId": ""})
    assert bad["error"] == "INVALID"
    kernel.close()


async def test_chat_resume_and_fork_from_a_kernel_in_server_mode(
    start_kernel: Any, cells: Any, tmp_path: Any
) -> None:
    kernel = await cells(await start_kernel())
    out = await kernel.run(
        "import json\n"
        "from acp_notebook.kernel.chat import Chat\n"
        f"chat = Chat('demo', env={DEMO!r}, cwd={str(tmp_path)!r})\n"
        "assert chat.mode == 'server', chat.mode\n"
        "chat.wait(chat.send_prompt('hello there'), timeout=30)\n"
        "sid = chat.state['agent']['sessionId']\n"
        "chat.close()\n"
        f"again = Chat.resume(sid, 'demo', env={DEMO!r}, cwd={str(tmp_path)!r})\n"
        "turn = again.wait(again.send_prompt('think'), timeout=30)\n"
        "items = again.state['items']\n"
        "print('resumed:' + json.dumps({'same': again.state['agent']['sessionId'] == sid,"
        " 'first': items[0], 'text': turn.text}))\n"
        # And forked: the request goes through the server's hub like the others.
        "forked = again.fork()\n"
        "turn = forked.wait(forked.send_prompt('plan'), timeout=30)\n"
        "print('forked:' + json.dumps({'apart': forked.state['agent']['sessionId'] != sid,"
        " 'first': forked.state['items'][0], 'mode': forked.mode, 'title': forked.title,"
        " 'ok': turn.ok}))\n"
        "forked.close()\n"
        "again.close()\n"
    )
    resumed = json.loads(out.split("resumed:", 1)[1].splitlines()[0])
    assert resumed == {
        "same": True,
        "first": {"type": "user", "text": "hello there"},
        "text": "Done thinking: the answer is **42**.",
    }
    forked = json.loads(out.split("forked:", 1)[1].splitlines()[0])
    assert forked == {
        "apart": True,
        "first": {"type": "user", "text": "hello there"},
        "mode": "server",
        "title": "hello there",
        "ok": True,
    }


async def test_a_page_continues_only_what_the_agent_lists_here(
    start_kernel: Any, jp_fetch: Any, jp_root_dir: Any, extension: Any, monkeypatch: Any
) -> None:
    """On a plain token server every token holder is the server's account: a session the
    server did not see started (as after a restart) is theirs if the agent lists it."""
    for name, value in DEMO.items():  # agents the server starts get its environment
        monkeypatch.setenv(name, value)
    kernel_id = await start_kernel()
    hub = extension.hubs.attach(kernel_id)
    cwd = str(jp_root_dir.resolve())
    earlier = await hub.open_chat("demo", cwd=cwd)  # no owner: nobody noted it
    await hub.chats[earlier].start_task
    unseen = hub.chats[earlier].session.session_id
    await hub.close_chat(earlier)

    def post(session_id: str) -> Any:
        body = {"kernel": kernel_id, "agent": "demo", "cwd": cwd, "loadSessionId": session_id}
        return jp_fetch("acp-notebook", "api", "chats", method="POST", body=json.dumps(body))

    assert (await post(unseen)).code == 201
    with pytest.raises(HTTPClientError) as failure:
        await post("demo-0123")
    assert failure.value.code == 400 and failure.value.response is not None
    message = json.loads(failure.value.response.body)["message"]
    assert message == f"loadSessionId: the agent lists no session 'demo-0123' in {cwd}"


async def test_one_live_chat_per_session_between_a_page_and_the_kernel(
    start_kernel: Any,
    cells: Any,
    jp_fetch: Any,
    jp_root_dir: Any,
    extension: Any,
    monkeypatch: Any,
) -> None:
    """The quickstart's end: a chat closed, the page's Continue on its saved output, then
    the notebook's resume cell. Both reach the one chat on the session, not two agents."""
    for name, value in DEMO.items():  # the page's chat is started by the server
        monkeypatch.setenv(name, value)
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    cwd = str(jp_root_dir.resolve())
    out = await kernel.run(
        "from acp_notebook.kernel.chat import Chat\n"
        f"chat = Chat('demo', env={DEMO!r}, cwd={cwd!r})\n"
        "chat.wait(chat.send_prompt('hello there'), timeout=30)\n"
        "sid = chat.state['agent']['sessionId']\n"
        "chat.close()\n"
        "print('sid:' + sid)\n"
    )
    session_id = out.split("sid:", 1)[1].split()[0]

    async def page_continues(opened: bool) -> str:
        """Continue in a page: a new chat (201) or the one that has the session (200)."""
        body = {"kernel": kernel_id, "agent": "demo", "cwd": cwd, "loadSessionId": session_id}
        response = await jp_fetch(
            "acp-notebook", "api", "chats", method="POST", body=json.dumps(body)
        )
        assert response.code == (201 if opened else 200)
        return str(json.loads(response.body)["chatId"])

    continued = await page_continues(opened=True)
    out = await kernel.run(
        f"again = Chat.resume(sid, 'demo', env={DEMO!r}, cwd={cwd!r})\n"
        "turn = again.wait(again.send_prompt('think'), timeout=30)\n"
        "print('resumed:' + again.chat_id, turn.ok, again.state['items'][0]['text'])\n"
        # Asked again in the kernel: the same object.
        f"print('same:', Chat.resume(sid, 'demo', cwd={cwd!r}) is again)\n"
    )
    assert f"resumed:{continued} True hello there" in out, out
    assert "same: True" in out, out
    assert await page_continues(opened=False) == continued  # a second Continue shows it
    hub = extension.hubs.attach(kernel_id)
    live = [c for c in hub.chats.values() if c.session.session_id == session_id]
    assert len(live) == 1

    # Once that chat has ended, Continue opens a new one on the session.
    await kernel.run("again.close()\n")
    assert await page_continues(opened=True) != continued
