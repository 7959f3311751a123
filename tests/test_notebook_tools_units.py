"""The notebook tools' pure parts: deadlines on user code, the cells' paging and caps,
and the server's questions to kernels (answers matched to the kernel that was asked)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, cast

import pytest

from acp_notebook.notebook_tools import bounded
from acp_notebook.notebook_tools.cells import (
    MAX_IMAGES,
    history_cells,
    notebook_cells,
    revision,
)
from acp_notebook.notebook_tools.gate import MAX_UNTRUSTED, MIN_UNTRUSTED, Gate, untrusted_bound
from acp_notebook.server.kernel_queries import KernelQueries, KernelUnavailable

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_map_bounded_skips_a_stuck_value_and_goes_on() -> None:
    release = threading.Event()

    def preview(value: int) -> str:
        if value == 1:
            release.wait(30)  # a __repr__ that sleeps
        if value == 2:
            raise RuntimeError("repr exploded")
        return f"<{value}>"

    started = time.monotonic()
    results = bounded.map_bounded(preview, [0, 1, 2, 3], per_item=0.2, total=5)
    release.set()
    assert time.monotonic() - started < 2
    assert results[0] == "<0>" and results[1] is bounded.TIMED_OUT and results[3] == "<3>"
    assert (
        isinstance(results[2], bounded.Failed) and results[2].error == "RuntimeError: repr exploded"
    )


def test_map_bounded_stops_at_its_total_budget() -> None:
    results = bounded.map_bounded(lambda v: time.sleep(0.05) or v, list(range(100)), 1, 0.3)
    assert bounded.SKIPPED in results and results[0] == 0


def notebook(cells: int, images_per_cell: int = 0) -> dict[str, Any]:
    image = {"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"}}
    return {
        "cells": [
            {
                "cell_type": "code",
                "source": [f"x = {i}\n", "x"],
                "execution_count": i,
                "outputs": [image] * images_per_cell
                + [{"output_type": "stream", "name": "stdout", "text": "\x1b[31mred\x1b[0m"}],
            }
            for i in range(cells)
        ]
    }


def test_cells_are_paged_and_images_capped() -> None:
    parts = notebook_cells(notebook(100, images_per_cell=3), start=10, count=5)
    text = "\n".join(p["text"] for p in parts if p["type"] == "text")
    rev = revision("code", "x = 10\nx")
    assert "100 cells; showing 10..14" in text
    assert f"--- cell 10 (code) [10] (no id) rev={rev}\nx = 10\nx" in text
    assert "--- cell 15" not in text and "read_cells(start=15)" in text
    assert "red" in text and "\x1b" not in text
    assert sum(p["type"] == "image" for p in parts) == MAX_IMAGES
    assert "at most 4 per answer" in text
    last = notebook_cells(notebook(100), start=-2, count=50)
    assert "showing 98..99" in last[0]["text"]  # type: ignore[typeddict-item]


def test_history_cells_without_a_notebook() -> None:
    parts = history_cells(["", "a = 1", "a + 1"], {2: 2}, start=0, count=10)
    text = parts[0]["text"]  # type: ignore[typeddict-item]
    rev = revision("code", "a + 1")
    assert "No notebook is known" in text and f"--- In[2] rev={rev}\na + 1\n[Out[2]]\n2" in text
    assert "no cell ids" in text


def test_a_revision_follows_the_cells_type_and_whole_source() -> None:
    rev = revision("code", "x = 1")
    assert len(rev) == 12 and int(rev, 16) >= 0
    assert revision("code", "x = 1") == rev
    assert revision("code", "x = 2") != rev and revision("markdown", "x = 1") != rev
    # The source is clipped for reading, never for the revision.
    long = "y" * 10_000
    assert revision("code", long) != revision("code", long[:-1] + "z")
    assert revision("code", "\ud800") != rev  # a lone surrogate (valid JSON) does not raise


def test_cells_show_their_ids_and_revisions() -> None:
    cells = [
        {"cell_type": "markdown", "id": "intro-1", "source": ["# Title\n", "text"]},
        {"cell_type": "code", "id": "bad id!", "source": "x", "outputs": []},
        {"cell_type": "code", "source": "y", "execution_count": None, "outputs": []},
    ]
    text = "\n".join(p["text"] for p in notebook_cells({"cells": cells}) if p["type"] == "text")
    title = revision("markdown", "# Title\ntext")
    assert f"--- cell 0 (markdown) id=intro-1 rev={title}\n# Title\ntext" in text
    # An id nbformat does not allow is no id to address the cell by: its index is.
    assert f"--- cell 1 (code) [None] (no id) rev={revision('code', 'x')}\nx" in text
    assert f"--- cell 2 (code) [None] (no id) rev={revision('code', 'y')}\ny" in text
    assert "bad id" not in text


async def test_a_kernel_answers_only_its_own_queries() -> None:
    queries = KernelQueries()
    sent: list[dict[str, Any]] = []
    queries.attach("k1", sent.append)
    asking = asyncio.create_task(queries.ask("k1", "list_variables", {}, timeout=5))
    await asyncio.sleep(0)
    [query] = sent
    queries.answered("k2", {"type": "kernel:answer", "query": query["query"], "text": "forged"})
    queries.answered("k1", {"type": "kernel:answer", "query": 999, "text": "unknown"})
    queries.answered("k1", {"type": "kernel:answer", "query": query["query"], "text": "x" * 10**6})
    assert len(await asking) == 64 * 1024
    # An answer of another shape fails its query with why, never the reader.
    asking = asyncio.create_task(queries.ask("k1", "list_variables", {}, timeout=5))
    await asyncio.sleep(0)
    queries.answered("k1", {"type": "kernel:answer", "query": sent[-1]["query"], "text": 5})
    with pytest.raises(KernelUnavailable, match=r"malformed answer \(text: "):
        await asking

    with pytest.raises(KernelUnavailable, match="not connected"):
        await queries.ask("k2", "list_variables", {})
    with pytest.raises(KernelUnavailable, match="did not answer within"):
        await queries.ask("k1", "last_error", {}, timeout=0.05)
    waiting = asyncio.create_task(queries.ask("k1", "last_error", {}, timeout=5))
    await asyncio.sleep(0)
    queries.detach("k1", sent.append)
    with pytest.raises(KernelUnavailable, match="socket closed"):
        await waiting


def test_the_tool_host_leaves_the_processs_logging_alone() -> None:
    import logging

    from acp_notebook.notebook_tools.mcp_endpoint import ToolHost

    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    ToolHost()
    assert (list(root.handlers), root.level) == before


class _FakeTransport:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class _FakeConnection:
    """What the gate reads of a connection: its peer, whether it is idle, its transport."""

    def __init__(self, port: int, idle: bool = True) -> None:
        self.client = ("127.0.0.1", port)
        self.transport = _FakeTransport()
        self._idle = idle

    def idle(self) -> bool:
        return self._idle


def test_the_gate_closes_the_oldest_idle_untrusted_connection_over_its_bound() -> None:
    gate = Gate(max_untrusted=2)
    busy, old, new = _FakeConnection(1, idle=False), _FakeConnection(2), _FakeConnection(3)
    for connection in (busy, old, new):
        gate.opened(cast(Any, connection))
    # The oldest is reading a request: the oldest idle one goes, never the newcomer.
    assert (busy.transport.closed, old.transport.closed, new.transport.closed) == (
        False,
        True,
        False,
    )
    assert gate.untrusted() == 2
    gate.trust(busy.client)  # a secret shown: no longer counted
    gate.opened(cast(Any, _FakeConnection(4)))
    assert not new.transport.closed and gate.untrusted() == 2


def test_the_untrusted_bound_follows_the_open_files_limit() -> None:
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    bound = untrusted_bound()
    assert MIN_UNTRUSTED <= bound <= MAX_UNTRUSTED
    if soft != resource.RLIM_INFINITY:
        assert bound == max(MIN_UNTRUSTED, min(MAX_UNTRUSTED, soft // 4))
