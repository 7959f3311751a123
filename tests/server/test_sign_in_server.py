"""Signing in from a kernel in server mode: the chat runs in the Jupyter server, the
kernel's ``Chat`` signs in through the demo agent's terminal method (demo/login.py)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

SECRET = "open sesame"  # what the demo login reads


async def test_terminal_sign_in_from_a_kernel_in_server_mode(
    start_kernel: Any, cells: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    env = {"ACP_DEMO_DELAY": "0", "ACP_DEMO_LOGIN": str(tmp_path / "signed-in")}
    kernel = await cells(await start_kernel())
    # The events reach the kernel's Chat on its own thread: the cell may sleep.
    out = await kernel.run(
        "import json, time\n"
        "from acp_notebook.kernel.chat import Chat\n"
        "from acp_notebook.wire.contracts import SAVED_MIME\n"
        "def until(check):\n"
        "    deadline = time.monotonic() + 60\n"
        "    while not check():\n"
        "        assert time.monotonic() < deadline, chat.state.get('auth')\n"
        "        time.sleep(0.05)\n"
        f"chat = Chat('demo', env={env!r}, cwd={str(tmp_path)!r})\n"
        "assert chat.mode == 'server', chat.mode\n"
        "until(lambda: chat.auth_state == 'required')\n"
        "methods = [m['id'] for m in chat.auth_methods]\n"
        "chat.authenticate('demo-terminal')\n"
        "until(lambda: 'Password:' in json.dumps(chat.state['toolCalls']))\n"
        f"chat.auth_input({SECRET!r})\n"
        "until(lambda: chat.status == 'ready')\n"
        "turn = chat.wait(chat.send_prompt('hello there'), timeout=60)\n"
        "chat.logout()\n"
        "until(lambda: chat.auth_state == 'signed_out')\n"
        "state = json.dumps(chat.state)\n"
        "saved = json.dumps(chat._repr_mimebundle_()[0][SAVED_MIME])\n"
        f"secret = {SECRET!r}\n"
        "print('result:' + json.dumps({'methods': methods, 'ok': turn.ok,"
        " 'signed_in': 'Signed in.' in state, 'in_state': secret in state,"
        " 'in_saved': secret in saved}))\n"
        "chat.close()\n",
        timeout=120,
    )
    result = json.loads(out.split("result:", 1)[1].splitlines()[0])
    assert result == {
        "methods": ["demo-agent", "demo-terminal", "demo-key"],
        "ok": True,
        "signed_in": True,
        "in_state": False,
        "in_saved": False,
    }
    # The server, where the line went through, logged nothing of it.
    assert not [r for r in caplog.records if SECRET in r.getMessage()]
