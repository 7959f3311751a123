"""Jupyter Enterprise Gateway for the tests of kernels on other machines.

EG 3.3 pins jupyter_server<2 and jupyter_client<7, so it runs from its own environment
(``.venv-gateway``, built by ``make`` from ``tests/gateway/requirements.txt``; built here
when missing). It runs its kernels as local processes, with a kernelspec whose argv is
this environment's python (the kernel imports acp_notebook from this checkout).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_msg_to_ws_v1,
)
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from acp_notebook.server.gateway_socket import PARTS, V1

from .lab import REPO, START_TIMEOUT, TOKEN, free_port
from .processes import terminate
from .user_env import user_env

VENV = REPO / ".venv-gateway"
STAMP = VENV / ".installed"
# The user EG runs kernels as (it refuses root without one), sent by the Lab server.
KERNEL_USERNAME = "acp-gateway-test"


def ensure_venv() -> Path:
    """The gateway's environment, built by the Makefile's rule when missing."""
    if not STAMP.exists():
        subprocess.run(
            ["make", "-C", str(REPO), str(STAMP.relative_to(REPO)), f"PY={sys.executable}"],
            check=True,
        )
    return VENV / "bin" / "jupyter-enterprisegateway"


@dataclass
class Gateway:
    """A running Enterprise Gateway; ``restart()`` stops it and starts it on the same port."""

    base: Path
    port: int
    proc: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kernel_ids(self) -> list[str]:
        with urllib.request.urlopen(f"{self.url}/api/kernels", timeout=5) as response:
            return [k["id"] for k in json.load(response)]

    def stop(self) -> None:
        """SIGTERM: EG shuts down every kernel it runs, then exits."""
        terminate(self.proc, 30)

    def restart(self) -> None:
        self.stop()
        self.proc = start_process(self.base, self.port)
        wait_until_up(self)


def write_kernelspec(data: Path) -> None:
    spec = data / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    # EG gives a kernel only the variables it is told to: the kernelspec's, the request's.
    env = {"PYTHONPATH": str(REPO)}  # this checkout's acp_notebook
    (spec / "kernel.json").write_text(
        json.dumps(
            {"argv": argv, "env": env, "display_name": "Python 3 (gateway)", "language": "python"}
        )
    )


def start_process(base: Path, port: int) -> subprocess.Popen[bytes]:
    dirs = {name: base / name for name in ("data", "runtime", "home", "config")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    env = user_env("JUPYTER", "KERNEL_")
    env.update(
        HOME=str(dirs["home"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_PREFER_ENV_PATH="0",
        EG_LIST_KERNELS="True",  # the Lab server lists kernels (and finds culled ones) by it
    )
    argv = [str(ensure_venv()), "--ip=127.0.0.1", f"--port={port}", "--port_retries=0"]
    with (base / "gateway.log").open("ab") as out:
        return subprocess.Popen(
            argv, env=env, cwd=base, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def wait_until_up(gateway: Gateway) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if gateway.proc.poll() is not None:
            log = (gateway.base / "gateway.log").read_text(errors="replace")
            raise RuntimeError(f"Enterprise Gateway exited ({gateway.proc.returncode}):\n{log}")
        with contextlib.suppress(OSError, urllib.error.URLError):
            gateway.kernel_ids()
            return
        if time.monotonic() > deadline:
            gateway.stop()
            raise RuntimeError(f"Enterprise Gateway did not answer in {START_TIMEOUT} s")
        time.sleep(0.2)


def start_gateway(base: Path) -> Gateway:
    base.mkdir(parents=True, exist_ok=True)
    write_kernelspec(base / "data")
    port = free_port()
    gateway = Gateway(base, port, start_process(base, port))
    wait_until_up(gateway)
    return gateway


class ChannelsClient:
    """A notebook frontend's kernel client over the Lab server's kernel WebSocket
    (``/api/kernels/<id>/channels``): what ``Cells`` drives. The legacy JSON protocol, or
    with ``v1`` the binary one JupyterLab speaks."""

    def __init__(self, ws: WebSocketClientConnection) -> None:
        self.ws = ws
        self.v1 = ws.selected_subprotocol == V1
        self.session = uuid.uuid4().hex
        self._iopub: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(
        cls, port: int, kernel_id: str, headers: dict[str, str] | None = None, v1: bool = False
    ) -> ChannelsClient:
        """Logged in by ``headers`` (a login's cookies), else by the token."""
        url = f"ws://127.0.0.1:{port}/api/kernels/{kernel_id}/channels"
        if headers is None:
            url += f"?token={TOKEN}"
        request = HTTPRequest(url, headers=headers)
        ws = await websocket_connect(request, subprotocols=[V1] if v1 else None)
        return cls(ws)

    async def _read(self) -> None:
        while (raw := await self.ws.read_message()) is not None:
            if isinstance(raw, bytes):  # v1
                channel, parts = deserialize_msg_from_ws_v1(raw)
                msg = dict(zip(PARTS, map(json.loads, parts[: len(PARTS)]), strict=True))
                msg.update(channel=channel, msg_type=msg["header"].get("msg_type"))
            else:
                msg = json.loads(raw)
            if msg.get("channel") == "iopub":
                self._iopub.put_nowait(msg)

    async def get_iopub_msg(self) -> dict[str, Any]:
        return await self._iopub.get()

    def execute(self, code: str) -> str:
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        return self.send("execute_request", content)

    def send(self, msg_type: str, content: dict[str, Any], buffers: Sequence[bytes] = ()) -> str:
        """A shell message; its msg_id."""
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": msg_type,
            "session": self.session,
            "username": "test",
            "date": "",
            "version": "5.3",
        }
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
        if self.v1:
            parts = [json.dumps(message[name]).encode() for name in PARTS]
            self.ws.write_message(serialize_msg_to_ws_v1([*parts, *buffers], "shell"), True)
        else:
            assert not buffers, "buffers need the v1 protocol here"
            self.ws.write_message(json.dumps({**message, "channel": "shell", "buffers": []}))
        return msg_id

    def stop_channels(self) -> None:
        self._reader.cancel()
        self.ws.close()
