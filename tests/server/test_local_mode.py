"""Without a reachable extension a Chat runs its hub in the kernel (local mode)."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.kernel.chat import NOTEBOOK_USER
from acp_notebook.wire.kernel_auth import KERNEL_URL_ENV, KEY_ENV, SECRET_ENV, URL_ENV
from tests.support.frontend import Cells, Frontend, kernel_manager, local_kernel


@pytest.fixture
async def outside_kernel(tmp_path: Path) -> AsyncIterator[tuple[str, Cells]]:
    """A kernel no Jupyter server started: no extension env."""
    manager = kernel_manager(tmp_path)
    kernel_id, cells = await local_kernel(manager)
    yield kernel_id, cells
    await cells.stop()
    await manager.shutdown_all(now=True)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_local_mode_without_the_extension(outside_kernel: tuple[str, Cells]) -> None:
    kernel_id, kernel = outside_kernel
    out = await kernel.run(
        "import json, os, time\n"
        "from acp_notebook.kernel.chat import Chat\n"
        "from acp_notebook.kernel.server_transport import connect\n"
        "from acp_notebook.kernel import server_transport as server_client\n"
        "chat = Chat('demo', env={'ACP_DEMO_DELAY': '0'})\n"
        "print(json.dumps({'mode': chat.mode, 'connect': connect().mode, "
        "'identity': server_client.kernel_identity()[0], 'why': chat.local_reason}))\n"
    )
    seen = json.loads(out)
    assert seen == {
        "mode": "local",
        "connect": "local",
        "identity": kernel_id,
        "why": "no-variables",
    }

    # The variables of a server that is not there: local mode again, within the connect timeout.
    out = await kernel.run(
        f"os.environ[{URL_ENV!r}] = 'http://127.0.0.1:{closed_port()}/'\n"
        f"os.environ[{SECRET_ENV!r}] = 'secret'\n"
        "started = time.monotonic()\n"
        "unreached = Chat('demo', env={'ACP_DEMO_DELAY': '0'})\n"
        "mode, why = unreached.mode, unreached.local_reason\n"
        "took = time.monotonic() - started\n"
        "try:\n"
        "    Chat('demo', transport='server')\n"
        "    refused = None\n"
        "except RuntimeError as exc:\n"
        "    refused = str(exc)\n"
        "print(json.dumps({'mode': mode, 'why': why, 'took': took, 'refused': refused}))\n"
    )
    seen = json.loads(out)
    assert seen["mode"] == "local" and seen["took"] < 5
    assert seen["why"] == "unreachable"
    assert "not reachable" in seen["refused"]


async def test_a_refused_proof_says_so(start_kernel: Any, cells: Any) -> None:
    """A kernel of this server whose key is wrong: local mode, and the chat says why."""
    kernel = await cells(await start_kernel())
    out = await kernel.run(
        "import os\n"
        f"os.environ[{KEY_ENV!r}] = 'not-the-issued-key'\n"
        "from acp_notebook.kernel.chat import Chat\n"
        "chat = Chat('demo', env={'ACP_DEMO_DELAY': '0'})\n"
        "print(chat.mode, chat.local_reason)\n"
    )
    assert out.split() == ["local", "refused"]


# No server listens there (the port of a socket just closed).
ELSEWHERE = f"http://127.0.0.1:{closed_port()}/"


@pytest.mark.acp_config(AcpNotebookApp={"kernel_url": ELSEWHERE})
async def test_kernels_get_the_configured_url(start_kernel: Any, cells: Any) -> None:
    """``kernel_url``: where kernels on other machines reach the server; they get it."""
    kernel = await cells(await start_kernel())
    out = await kernel.run(
        "import os\n"
        "from acp_notebook.kernel.chat import Chat\n"
        "chat = Chat('demo', env={'ACP_DEMO_DELAY': '0'})\n"
        f"print(os.environ[{KERNEL_URL_ENV!r}], chat.mode, chat.local_reason)\n"
    )
    assert out.split() == [ELSEWHERE, "local", "unreachable"]


async def test_a_click_in_a_local_mode_widget_is_a_persons(local_frontend: Frontend) -> None:
    # Not "by kernel": the click names the user its frontend puts in the message's
    # header; JupyterLab puts none (an empty username).
    kernel = local_frontend
    cell = kernel.client.execute("from acp_notebook import Chat\nchat = Chat('demo')\nchat")
    await kernel.finished(cell)
    comm = kernel.chat_comm(cell)
    for username, shown in (("", NOTEBOOK_USER), ("ada", "ada")):
        asked = kernel.client.execute(
            "chat.send_prompt('ask-user')\nrequest = await chat.next_request()\n"
            "print(request['requestId'])"
        )
        await kernel.finished(asked)
        (out,) = kernel.of(asked, "stream")
        request_id = out["text"].strip()
        kernel.client.session.username = username
        kernel.send_to_widget(
            comm, {"type": "chat:elicitation.respond", "requestId": request_id, "action": "decline"}
        )
        told = kernel.client.execute(
            f"import time\nwhile chat.state['elicitations'][{request_id!r}]['outcome'] is None:\n"
            f"    time.sleep(0.05)\nprint(chat.state['elicitations'][{request_id!r}]['by'])"
        )
        await kernel.finished(told)
        assert kernel.of(told, "stream")[0]["text"].strip() == shown
