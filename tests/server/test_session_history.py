"""The Agent panel's history through the extension: ``acp-notebook/api/sessions`` lists the
agent's past sessions in the notebook's directory (paged, titled), forks and deletes them;
``POST acp-notebook/api/chats`` keeps one live chat per session. The demo agent, started
by the server as the panel's requests start it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from acp_notebook.server import api as endpoints
from tests.server.test_api import api, fails, post_chat
from tests.support.past_sessions import last_used, past_session
from tests.support.server_peers import DEMO, TwoUsers


async def test_list_page_fork_open_and_delete_past_sessions(
    start_kernel: Any, jp_fetch: Any, jp_root_dir: Any, monkeypatch: Any
) -> None:
    for name, value in {**DEMO, "ACP_DEMO_LIST_PAGE": "2"}.items():
        monkeypatch.setenv(name, value)  # agents the server starts get its environment
    monkeypatch.setattr(endpoints, "HISTORY_PAGE", 1)  # one agent page (2 sessions) a request
    cwd = jp_root_dir.resolve()
    older = await past_session(cwd, "plot the rainfall")
    newer = [await past_session(cwd, f"question {n}") for n in (1, 2)]
    # Stored to the second: apart by an hour each, in the order they were made.
    for hours, session_id in enumerate([newer[1], newer[0], older], 1):
        last_used(session_id, timedelta(hours=hours))
    kernel_id = await start_kernel()

    async def call(method: str = "GET", body: Any = None, **query: str) -> Any:
        params = {"kernel": kernel_id, "agent": "demo", **query}
        options = {"body": json.dumps(body)} if body is not None else {"params": params}
        response = await api(jp_fetch, "sessions", method=method, **options)
        return json.loads(response.body or b"null"), response.code

    async def listed() -> dict[str, str | None]:
        titles: dict[str, str | None] = {}
        cursor: dict[str, str] = {}
        while True:
            page, _ = await call(**cursor)
            titles.update({s["sessionId"]: s["title"] for s in page["sessions"]})
            if page["nextCursor"] is None:
                return titles
            cursor = {"cursor": page["nextCursor"]}

    first, code = await call()
    assert code == 200
    # The newest first, a page at a time, each with its title and when it was last used.
    assert [s["sessionId"] for s in first["sessions"]] == newer[::-1]
    assert [s["title"] for s in first["sessions"]] == ["question 2", "question 1"]
    assert all(s["updatedAt"].startswith("20") for s in first["sessions"])
    assert first["nextCursor"] == "2"
    assert {"load", "resume", "fork", "delete"} <= set(first["offers"])
    rest, _ = await call(cursor=first["nextCursor"])
    assert [(s["sessionId"], s["title"]) for s in rest["sessions"]] == [
        (older, "plot the rainfall")
    ]
    assert rest["nextCursor"] is None

    # A fork of a stored session: both are listed, under the same title.
    forked, code = await call("POST", {"kernel": kernel_id, "agent": "demo", "fork": older})
    assert code == 201 and forked["sessionId"] not in (older, *newer)
    titles = await listed()
    assert titles[older] == titles[forked["sessionId"]] == "plot the rainfall"

    # Open it: the chat loads it; opening it again shows that same chat (one live chat).
    async def open_chat() -> Any:
        body = {"kernel": kernel_id, "agent": "demo", "loadSessionId": older}
        response = await post_chat(jp_fetch, body)
        return json.loads(response.body)["chatId"], response.code

    chat_id, code = await open_chat()
    assert code == 201
    assert await open_chat() == (chat_id, 200)

    # A session a chat has open is forked by that chat's agent, and is not deleted.
    live_fork, code = await call("POST", {"kernel": kernel_id, "agent": "demo", "fork": older})
    assert code == 201 and live_fork["sessionId"] not in titles
    assert (await fails(call("DELETE", session=older)))[0] == 409
    assert (await listed()).keys() == {*titles, live_fork["sessionId"]}

    # Deleted: gone from the list, and a second delete finds nothing to delete.
    assert (await call("DELETE", session=forked["sessionId"]))[1] == 204
    assert forked["sessionId"] not in await listed()
    code, text = await fails(call("DELETE", session=forked["sessionId"]))
    assert code == 409 and "no stored session" in text


async def test_history_requests_are_bounded(start_kernel: Any, jp_fetch: Any) -> None:
    kernel_id = await start_kernel()
    known = {"kernel": kernel_id, "agent": "demo"}

    async def refused(method: str, body: Any = None, **query: str) -> int:
        options = {"body": json.dumps(body)} if body is not None else {"params": query}
        return (await fails(api(jp_fetch, "sessions", method=method, **options)))[0]

    assert await refused("GET", **known, cursor="c" * 1025) == 400
    assert await refused("GET", kernel=kernel_id, agent="no-such-agent") == 400
    assert await refused("GET", kernel="no-such-kernel", agent="demo") == 404
    assert await refused("DELETE", **known, session="../../etc/passwd") == 400
    assert await refused("POST", {**known, "fork": "x" * 300}) == 400
    assert await refused("POST", {**known, "fork": "demo-1", "extra": 1}) == 400


@pytest.mark.acp_config(ServerApp={"identity_provider_class": TwoUsers})
async def test_a_login_sees_and_changes_only_its_own_sessions(
    start_kernel: Any, jp_fetch: Any, jp_root_dir: Any, monkeypatch: Any
) -> None:
    for name, value in DEMO.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("JUPYTERHUB_USER", "alice")  # her single-user server: her account
    earlier = await past_session(jp_root_dir.resolve(), "alice's notes")
    kernel_id = await start_kernel()
    bob = {"Authorization": "token bob"}
    known = {"kernel": kernel_id, "agent": "demo"}

    async def listed(**headers: str) -> set[str]:
        page = json.loads((await api(jp_fetch, "sessions", params=known, headers=headers)).body)
        return {s["sessionId"] for s in page["sessions"]}

    def fork(session_id: str, **headers: str) -> Any:
        body = json.dumps({**known, "fork": session_id})
        return api(jp_fetch, "sessions", method="POST", body=body, headers=headers)

    def delete(session_id: str, **headers: str) -> Any:
        params = {**known, "session": session_id}
        return api(jp_fetch, "sessions", method="DELETE", params=params, headers=headers)

    # The account's stored sessions are alice's; bob, another user, sees and changes none.
    assert await listed() == {earlier}
    assert await listed(**bob) == set()
    assert (await fails(fork(earlier, **bob)))[0] == 403
    assert (await fails(delete(earlier, **bob)))[0] == 403
    # Her fork is noted as hers: still nothing of it for bob.
    forked = json.loads((await fork(earlier)).body)["sessionId"]
    assert await listed() == {earlier, forked}
    assert await listed(**bob) == set()
    code, text = await fails(delete(forked, **bob))
    assert code == 403 and "started by another user" in text
    assert (await delete(forked)).code == 204
    assert await listed() == {earlier}
