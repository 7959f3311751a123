"""The owner gate on any Jupyter server (issue 12, item 6).

Two identities on one server (an identity provider of the test's own, no JupyterHub):
each runs cells through the server's kernel WebSocket as a browser does, and owns the
chats its cells open. Anyone may read a chat; acting is its owner's, unless the chat
is shared; every ``*_resolved`` says who answered.

The server fixtures are ``tests/server``'s (imported, not copied).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp
from jupyter_server.services.kernels.connection.base import serialize_msg_to_ws_v1

from acp_notebook.server.identity import Principal
from acp_notebook.server.owners import Executions, _execute_header
from tests.server.conftest import *  # noqa: F403  (pytest-jupyter's and tests/server's fixtures)
from tests.support.memory import peak_rss, reset_peak_rss
from tests.support.server_peers import OPEN, TwoUsers, chat_of, click_as, run_as

# Alice is the server's token; bob is the other identity TwoUsers knows.
pytestmark = pytest.mark.acp_config(ServerApp={"identity_provider_class": TwoUsers})


ALICE, BOB = Principal("alice", "alice"), Principal("bob", "bob")


@pytest.fixture(autouse=True)
def not_a_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a JupyterHub: the server's own identities own chats."""
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)


@pytest.fixture
def alice_token(jp_serverapp: ServerApp) -> str:
    token: str = jp_serverapp.identity_provider.token
    return token


@pytest.mark.fault("another user answers, prompts and cancels someone else's chat")
async def test_the_user_whose_cell_opened_a_chat_owns_it(
    start_kernel: Any,
    browser: Any,
    ws_url: Any,
    jp_fetch: Any,
    alice_token: str,
) -> None:
    kernel_id = await start_kernel()

    opened = await run_as(
        ws_url, alice_token, kernel_id, OPEN.format(name="mine", share="", prompt="ask-user")
    )
    chat_id = chat_of(opened)
    alice = await browser(kernel_id, chat_id, {"Authorization": f"token {alice_token}"})
    bob = await browser(kernel_id, chat_id, {"Authorization": "token bob"})
    card = await bob.card(chat_id)  # reading is open to whoever may use the kernel
    answer = {"chatId": chat_id, "requestId": card["requestId"]}
    answer |= {"type": "chat:elicitation.respond", "action": "decline"}
    for request in (
        answer,
        {"type": "chat:cancel", "chatId": chat_id},
        {"type": "chat:prompt", "chatId": chat_id, "text": "hi"},
        {"type": "chat:set_mode", "chatId": chat_id, "modeId": "plan"},
    ):
        assert (await bob.request(request))["error"] == "FORBIDDEN", request
    assert (await alice.request(answer))["accepted"]
    resolved = await bob.event(chat_id, "elicitation_resolved", requestId=card["requestId"])
    assert resolved["by"] == "alice" and resolved["outcome"] == "declined"

    # An answer from a cell carries the login of whoever ran the cell.
    await alice.event(chat_id, "turn_ended", turn=1)
    await run_as(
        ws_url,
        alice_token,
        kernel_id,
        'mine.send_prompt("permission")\nrequest = await mine.next_request()\n'
        'mine.allow(request["requestId"])\n',
    )
    by_cell = await alice.event(chat_id, "permission_resolved")
    assert by_cell["by"] == "alice" and by_cell["outcome"] == "selected"

    # Bob's cell opens a chat of his own; alice may only watch it.
    bobs_id = chat_of(
        await run_as(ws_url, "bob", kernel_id, OPEN.format(name="his", share="", prompt="ask-user"))
    )
    alice_on_his = await browser(kernel_id, bobs_id, {"Authorization": f"token {alice_token}"})
    his_card = await alice_on_his.card(bobs_id)
    refused = {"type": "chat:elicitation.respond", "chatId": bobs_id, "action": "cancel"}
    refused["requestId"] = his_card["requestId"]
    assert (await alice_on_his.request(refused))["error"] == "FORBIDDEN"
    listed = json.loads(
        (await jp_fetch("acp-notebook", "api", "chats", params={"kernel": kernel_id})).body
    )
    owners = {chat["chatId"]: chat["owner"] for chat in listed["chats"]}
    assert owners[chat_id] == "alice" and owners[bobs_id] == "bob"

    # Shared: anyone who may read it may act on it.
    shared_id = chat_of(
        await run_as(
            ws_url,
            alice_token,
            kernel_id,
            OPEN.format(name="shared", share=', share="anyone"', prompt="ask-user"),
        )
    )
    bob_on_shared = await browser(kernel_id, shared_id, {"Authorization": "token bob"})
    shared_card = await bob_on_shared.card(shared_id)
    ack = await bob_on_shared.request(
        {
            "type": "chat:elicitation.respond",
            "chatId": shared_id,
            "requestId": shared_card["requestId"],
            "action": "decline",
        }
    )
    assert ack["accepted"], ack
    by_bob = await bob_on_shared.event(shared_id, "elicitation_resolved")
    assert by_bob["by"] == "bob"


@pytest.mark.fault(
    "another user answers the owner's card from a cell, or through the widget's comm"
)
async def test_a_click_relayed_by_the_kernel_is_its_pages(
    start_kernel: Any, browser: Any, ws_url: Any, alice_token: str
) -> None:
    # A page whose socket to the extension fails sends its clicks over the widget's comm;
    # the kernel relays them naming the comm message, whose sender the server saw.
    kernel_id = await start_kernel()
    opened = await run_as(
        ws_url, alice_token, kernel_id, OPEN.format(name="mine", share="", prompt="ask-user")
    )
    chat_id = chat_of(opened)
    comm_id = (await run_as(ws_url, alice_token, kernel_id, "print(mine.comm.comm_id)")).strip()
    watcher = await browser(kernel_id, chat_id, {"Authorization": f"token {alice_token}"})
    card = await watcher.card(chat_id)
    answer = {"type": "chat:elicitation.respond", "requestId": card["requestId"]}
    await click_as(ws_url, "bob", kernel_id, comm_id, {**answer, "id": 1, "action": "decline"})
    # Nor may a cell bob runs in alice's kernel answer for her.
    with pytest.raises(AssertionError, match="only the chat's owner"):
        await run_as(ws_url, "bob", kernel_id, f"mine.decline({card['requestId']!r})")
    await click_as(ws_url, alice_token, kernel_id, comm_id, {**answer, "id": 2, "action": "cancel"})
    resolved = await watcher.event(chat_id, "elicitation_resolved")
    assert (resolved["outcome"], resolved["by"]) == ("cancelled", "alice")


@pytest.mark.fault("another user re-sends the msg_id of the cell that opens a chat")
async def test_a_copied_execute_id_does_not_change_the_owner(
    start_kernel: Any,
    browser: Any,
    ws_url: Any,
    alice_token: str,
) -> None:
    # Every client of a kernel sees the msg_id of the cell that runs (in its iopub
    # messages' parent header): bob sends an execute_request of his own under the id of
    # alice's cell while it runs, before it opens its chat.
    kernel_id = await start_kernel()
    msg_id = uuid.uuid4().hex
    code = "import time\ntime.sleep(1)\n" + OPEN.format(name="mine", share="", prompt="ask-user")
    running = asyncio.Event()
    alices = asyncio.create_task(run_as(ws_url, alice_token, kernel_id, code, msg_id, running))
    await running.wait()
    await run_as(ws_url, "bob", kernel_id, "pass", msg_id)
    chat_id = chat_of(await alices)
    bob = await browser(kernel_id, chat_id, {"Authorization": "token bob"})
    card = await bob.card(chat_id)
    refused = {"type": "chat:elicitation.respond", "chatId": chat_id, "action": "decline"}
    refused["requestId"] = card["requestId"]
    assert (await bob.request(refused))["error"] == "FORBIDDEN"
    assert (await bob.request({"type": "chat:cancel", "chatId": chat_id}))["error"] == "FORBIDDEN"


@pytest.mark.fault("an 8 MB execute_request header of [{{}},{{}},...] on the kernel WebSocket (v1)")
def test_a_huge_header_costs_the_server_nothing() -> None:
    # The server reads no v1 header itself; the owner gate's look at it is the only parse.
    good = json.dumps({"msg_id": "m1", "msg_type": "execute_request"}).encode()
    frame = serialize_msg_to_ws_v1([good, b"{}", b"{}", b"{}"], "shell")
    assert _execute_header(frame, v1=True) == {"msg_id": "m1", "msg_type": "execute_request"}

    huge = b"[" + b"{}," * 2_800_000 + b"{}]"
    frame = serialize_msg_to_ws_v1([huge, b"{}", b"{}", b"{}"], "shell")
    before = reset_peak_rss()
    start = time.monotonic()
    assert _execute_header(frame, v1=True) is None
    assert time.monotonic() - start < 1.0
    assert peak_rss() - before < 32 * 1024 * 1024


@pytest.mark.fault("another user sends 20,000 executions while a cell of alice's opens a chat")
def test_a_flood_of_executions_evicts_only_the_flooders() -> None:
    # Evicting the oldest ids of all users, bob's flood would drop alice's running cell,
    # and the chat it opens would have no owner (anyone may drive it).
    executions = Executions(limit=10_000)
    executions.note("alices-cell", ALICE)
    for n in range(20_000):
        executions.note(f"bob-{n}", BOB)
    assert executions.owner("alices-cell") == ALICE
    assert executions.owner("bob-19999") == BOB
    assert executions.owner("bob-0") is None  # his own oldest went


@pytest.mark.fault(
    "execute_requests whose msg_id is 60 KB, or not a string, noted by the owner gate"
)
def test_an_execution_id_no_chat_can_name_is_not_kept() -> None:
    # 10,000 such ids (a v1 header holds 64 KB) would have kept 600 MB in the server, for
    # ids that no chat:open can name (its executeId is at most 256 characters).
    executions = Executions(limit=10_000)
    long = "x" * 60_000
    executions.note(long, BOB)
    executions.note(None, BOB)
    executions.note(123, BOB)
    assert executions.owner(long) is None
    assert executions.owner("None") is None and executions.owner("123") is None
    executions.note("m" * 256, ALICE)
    assert executions.owner("m" * 256) == ALICE
