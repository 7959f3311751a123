"""What the benchmarks share: sizes, result rows, the reference loop, a real Jupyter server.

Every figure is measured next to its reference in the same run, on the same machine,
so the ratio stays meaningful on a loaded two-core box where absolute figures are not.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from acp_notebook.agent.connection import READ_CHUNK
from acp_notebook.wire.kernel_auth import KERNEL_SECRET_ENV, KEY_ENV, auth_headers
from tests.support.lab import TOKEN, JupyterServer, start_server

REPO = Path(__file__).resolve().parents[1]
DEMO_ENV = {"ACP_DEMO_DELAY": "0"}
DEMO_AGENT = [sys.executable, "-m", "acp_notebook.demo.agent"]

Frame = dict[str, Any]
Event = dict[str, Any]


@dataclass(frozen=True)
class Sizes:
    stream: int = 200_000
    repeats: int = 3
    questions: int = 1_000
    fold_events: int = 200_000
    memory_chunks: int = 1_000_000
    chats: int = 50
    chat_chunks: int = 20_000
    browser_chunks: int = 20_000
    turns: int = 200
    many_chats: int = 200
    resync_events: int = 50_000


FULL = Sizes()
QUICK = Sizes(
    stream=20_000,
    repeats=2,
    questions=100,
    fold_events=20_000,
    memory_chunks=100_000,
    chats=10,
    chat_chunks=2_000,
    browser_chunks=2_000,
    turns=20,
    many_chats=30,
    resync_events=5_000,
)


@dataclass(frozen=True)
class Row:
    """One line of the table: a figure, its reference from the same run, and the verdict."""

    benchmark: str
    figure: str
    value: str
    reference: str
    ratio: float | None
    target: str
    ok: bool


@dataclass
class Context:
    sizes: Sizes
    work: Path
    # Only the rows whose benchmark name contains this (``--case``); "" runs them all.
    case: str = ""
    _server: Server | None = None
    _captures: dict[int, Path] = field(default_factory=dict)

    def wanted(self, name: str) -> bool:
        """Whether the row named ``name`` is to be measured in this run."""
        return self.case in name

    def server(self) -> Server:
        """The shared Jupyter server (JupyterLab with the extension), started on first use."""
        if self._server is None:
            self._server = Server.start(self.work / "server")
        return self._server

    def capture(self, count: int) -> Path:
        """The demo agent's stdout for ``stream <count>``, captured once per run."""
        if count not in self._captures:
            self._captures[count] = capture_stream(count, self.work / f"stream-{count}.jsonl")
        return self._captures[count]

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None


def fmt(value: float, unit: str) -> str:
    if value >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.3g} {unit}"


def print_table(rows: list[Row]) -> None:
    head = ("benchmark", "figure", "measured", "reference", "ratio", "target", "result")
    lines = [
        (
            r.benchmark,
            r.figure,
            r.value,
            r.reference,
            "" if r.ratio is None else f"{r.ratio:.2f}",
            r.target,
            "pass" if r.ok else "FAIL",
        )
        for r in rows
    ]
    print_columns(head, lines)


def print_columns(head: tuple[str, ...], lines: Sequence[tuple[str, ...]]) -> None:
    """A plain-text table: ``head``, then ``lines``, columns padded to their widest cell."""
    widths = [max(len(str(c)) for c in col) for col in zip(head, *lines, strict=True)]
    rule = "  ".join("-" * w for w in widths)
    print(rule)
    for line in (head, *lines):
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
        if line is head:
            print(rule)
    print(rule)


# ---------------------------------------------------------------- the stream and its limit


def stream_text(count: int) -> str:
    """What ``stream <count>`` says, all chunks joined."""
    return "".join(f"{i} " for i in range(count))


def rpc(
    proc: subprocess.Popen[bytes],
    request_id: int,
    method: str,
    params: Any,
    keep: list[bytes] | None = None,
    answer: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """One request to an agent on pipes; what it writes meanwhile goes to ``keep``, and
    its own requests are answered with ``answer(request)``."""
    assert proc.stdin is not None and proc.stdout is not None

    def write(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        proc.stdin.flush()

    write({"id": request_id, "method": method, "params": params})
    while True:
        raw = proc.stdout.readline()
        if keep is not None:
            keep.append(raw)
        message = json.loads(raw)
        if "method" not in message and message.get("id") == request_id:
            return message["result"]
        if "method" in message and "id" in message and answer is not None:
            write({"id": message["id"], "result": answer(message)})


def capture_stream(count: int, path: Path) -> Path:
    """Runs the demo agent with its stdout on a pipe and keeps what ``stream <count>`` writes."""
    proc = subprocess.Popen(
        DEMO_AGENT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, **DEMO_ENV},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        rpc(proc, 1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = rpc(proc, 2, "session/new", {"cwd": str(REPO), "mcpServers": []})
        prompt = [{"type": "text", "text": f"stream {count}"}]
        # Everything the turn writes: the chunks, the usage update and the response.
        lines: list[bytes] = []
        params = {"sessionId": session["sessionId"], "prompt": prompt}
        rpc(proc, 3, "session/prompt", params, keep=lines)
        path.write_bytes(b"".join(lines))
    finally:
        proc.stdin.close()
        proc.wait(10)
    return path


def _reference_loop(path: Path) -> tuple[int, float, float]:
    """The limit: the capture read from a pipe and json.loads-ed line by line by a bare
    loop. Returns the lines, and the wall and CPU seconds it took."""
    wall, cpu = time.perf_counter(), time.process_time()
    proc = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    fd, rest, lines, loads = proc.stdout.fileno(), b"", 0, json.loads
    while data := os.read(fd, READ_CHUNK):
        parts = (rest + data).split(b"\n")
        rest = parts.pop()
        for line in parts:
            loads(line)
        lines += len(parts)
    proc.wait()
    return lines, time.perf_counter() - wall, time.process_time() - cpu


def reference_rate(path: Path) -> float:
    """Lines per second of the bare loop."""
    lines, wall, _ = _reference_loop(path)
    return lines / wall


def reference_cpu(path: Path, runs: int = 3) -> float:
    """CPU seconds per line of the bare loop, best of ``runs``."""
    best = float("inf")
    for _ in range(runs):
        lines, _, cpu = _reference_loop(path)
        best = min(best, cpu / lines)
    return best


class StreamCheck:
    """Rebuilds a streamed answer from the events a client receives, however merged.

    Anything out of order (a seq that does not increase, a chunk that is not the next
    piece of the expected answer) is a ``problem``, and ends the wait like the turn's end.
    """

    def __init__(self, count: int) -> None:
        self.expected = stream_text(count)
        self.parts: list[str] = []
        self.size = 0
        self.seq = 0
        self.problem: str | None = None
        self.ended = asyncio.Event()

    def frame(self, frame: Frame) -> None:
        if frame.get("reset"):
            # The client fell behind and got the whole history: start over from it.
            self.parts, self.size, self.seq = [], 0, 0
        for event in frame["events"]:
            self.event(event)

    def event(self, event: Event) -> None:
        kind, seq = event["kind"], event["seq"]
        # A resync re-sends pending requests with their old seq.
        if seq <= self.seq and not kind.endswith("_request"):
            self.fail(f"seq {seq} after {self.seq}")
        self.seq = max(self.seq, seq)
        if kind == "update" and event["update"].get("sessionUpdate") == "agent_message_chunk":
            text = event["update"]["content"]["text"]
            if self.expected[self.size : self.size + len(text)] != text:
                self.fail(f"chunk out of order at offset {self.size}: {text[:40]!r}")
            self.parts.append(text)
            self.size += len(text)
        elif kind == "turn_ended":
            self.ended.set()

    def fail(self, problem: str) -> None:
        self.problem = self.problem or problem
        self.ended.set()

    def verdict(self) -> str | None:
        """None when the whole answer arrived in order, else what went wrong."""
        if self.problem is None and "".join(self.parts) != self.expected:
            return f"{self.size} of {len(self.expected)} characters arrived"
        return self.problem


# ---------------------------------------------------------------- processes


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process (not its children)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def stream_turn(server: Server, chat_id: str, count: int) -> tuple[float, float]:
    """One ``stream count`` turn read on a new browser socket and checked whole and in
    order: the server's CPU seconds and the wall seconds it took."""
    peer = await server.browser_socket(chat_id)
    try:
        check = StreamCheck(count)
        peer.on_frame = check.frame
        cpu, start = cpu_seconds(server.pid), time.perf_counter()
        await peer.send({"type": "chat:prompt", "chatId": chat_id, "text": f"stream {count}"})
        await asyncio.wait_for(check.ended.wait(), 600)
        cpu, wall = cpu_seconds(server.pid) - cpu, time.perf_counter() - start
    finally:
        await peer.close()
    assert check.verdict() is None, check.verdict()
    return cpu, wall


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# ---------------------------------------------------------------- a real Jupyter server


class Peer:
    """A client of one of the extension's sockets: acks by id, frames to ``on_frame``."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.on_frame: Callable[[Frame], None] = lambda frame: None
        self._acks: dict[int, asyncio.Future[Frame]] = {}
        self._ids = itertools.count(1)
        self._posts: set[asyncio.Task[None]] = set()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                frame = json.loads(raw)
                if "ack" in frame:
                    future = self._acks.pop(frame["ack"], None)
                    if future is not None and not future.done():
                        future.set_result(frame)
                else:
                    self.on_frame(frame)

    async def send(self, message: dict[str, Any]) -> None:
        """Sends a request without waiting for its ack."""
        await self.ws.send(json.dumps(message))

    def post(self, message: dict[str, Any]) -> None:
        """Sends a request from a frame handler (which cannot await)."""
        task = asyncio.get_running_loop().create_task(self.send(message))
        self._posts.add(task)
        task.add_done_callback(self._posts.discard)

    async def request(self, message: dict[str, Any], timeout: float = 60) -> Frame:
        number = next(self._ids)
        future: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        self._acks[number] = future
        await self.send({**message, "id": number})
        ack = await asyncio.wait_for(future, timeout)
        if ack.get("error"):
            raise RuntimeError(f"{message['type']} refused: {ack}")
        return ack

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()


@dataclass
class Server:
    """JupyterLab with the extension in its own process, and one kernel to own the chats."""

    lab: JupyterServer
    kernel_id: str
    secret: str
    key: bytes

    @property
    def pid(self) -> int:
        return self.lab.proc.pid

    @classmethod
    def start(cls, base: Path) -> Server:
        # Benchmark 9 opens hundreds of chats: past the server's default cap.
        lab = start_server(base, extra_args=["--AcpNotebookApp.max_chats=10000"])
        try:
            request = urllib.request.Request(
                lab.url("api/kernels"), data=b'{"name": "python3"}', method="POST"
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                kernel_id = json.load(response)["id"]
            connection = base / "runtime" / f"kernel-{kernel_id}.json"
            client = BlockingKernelClient(connection_file=str(connection))
            client.load_connection_file()
            client.start_channels()
            try:
                client.wait_for_ready(timeout=60)
                # The kernel got the extension's secret and the key issued to it at its
                # start (kernel_keys.py); the benchmark speaks as the kernel.
                secret, key = kernel_stdout(
                    client,
                    f"import os; print(os.environ[{KERNEL_SECRET_ENV!r}], os.environ[{KEY_ENV!r}])",
                ).split()
            finally:
                client.stop_channels()
        except BaseException:
            lab.stop()
            raise
        return cls(lab, kernel_id, secret, key.encode())

    def stop(self) -> None:
        self.lab.stop()

    def _ws_url(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.lab.port}/{path}"

    async def kernel_socket(self) -> Peer:
        """The kernel socket, as the kernel's ``Chat`` opens it: chats opened there are trusted."""
        headers = auth_headers(self.secret, self.key, self.kernel_id, time.time())
        return Peer(await _connect(self._ws_url("acp-notebook/ws/kernel"), headers))

    async def browser_socket(self, chat_id: str) -> Peer:
        """The widget's socket to one chat, with the server's token."""
        url = self._ws_url(f"acp-notebook/ws/browser?kernel={self.kernel_id}&chat={chat_id}")
        return Peer(await _connect(url, {"Authorization": f"token {TOKEN}"}))

    @contextlib.asynccontextmanager
    async def chats(self, count: int, **options: Any) -> AsyncIterator[list[str]]:
        """Opens ``count`` chats (``chat:open`` options), ready; closes them afterwards."""
        kernel = await self.kernel_socket()
        ids: list[str] = []
        try:
            for _ in range(count):
                ack = await kernel.request({"type": "chat:open", **options})
                ids.append(ack["chatId"])
            await asyncio.gather(*(self._ready(chat_id) for chat_id in ids))
            yield ids
        finally:
            for chat_id in ids:
                with contextlib.suppress(Exception):
                    await kernel.request({"type": "chat:close", "chatId": chat_id})
            await kernel.close()

    async def _ready(self, chat_id: str, timeout: float = 60) -> None:
        peer = await self.browser_socket(chat_id)
        try:
            deadline = time.monotonic() + timeout
            while True:
                ack = await peer.request({"type": "chat:resync", "chatId": chat_id})
                statuses = [e["status"] for e in ack["events"] if e["kind"] == "agent_status"]
                if statuses and statuses[-1] != "starting":
                    assert statuses[-1] == "ready", ack
                    return
                if time.monotonic() > deadline:
                    raise TimeoutError(f"chat {chat_id} did not start")
                await asyncio.sleep(0.05)
        finally:
            await peer.close()


async def _connect(url: str, headers: dict[str, str]) -> ClientConnection:
    return await connect(
        url,
        additional_headers=headers,
        max_size=None,
        compression=None,  # the extension does not negotiate it either
        proxy=None,
        ping_interval=None,
    )


def kernel_stdout(client: BlockingKernelClient, code: str, timeout: float = 60) -> str:
    """What ``code`` printed; a cell error raises."""
    out: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"]))

    client.execute_interactive(code, output_hook=hook, timeout=timeout)
    return "".join(out)


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        yield Path(tmp)
