"""The open page as a live document: the registry of page sockets and PageDocument,
with a fake page that answers (or does not) as the lab extension would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from acp_notebook.notebook_tools import page_document
from acp_notebook.notebook_tools.documents import EditRefused, LiveDocument
from acp_notebook.notebook_tools.page_document import Page, PageDocument, Pages, TooManyPages
from acp_notebook.wire.contracts import CellEdit
from tests.support.page_edits import INSERT

Answer = Callable[[dict[str, Any]], dict[str, Any] | None]


class FakePage:
    """A page on the socket: it reports its notebooks and answers requests with ``answer``
    (None: it never answers)."""

    def __init__(self, pages: Pages, answer: Answer, *paths: str) -> None:
        self.pages = pages
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.page: Page = pages.connect(self.send)
        self.report(*paths)

    def report(self, *paths: str) -> None:
        notebooks = [{"path": p, "kernelId": "k1"} for p in paths]
        self.frame({"type": "page:notebooks", "notebooks": notebooks})

    def frame(self, frame: dict[str, Any]) -> None:
        self.pages.receive(self.page, json.dumps(frame))

    def send(self, request: dict[str, Any]) -> None:
        self.requests.append(request)
        reply = self.answer(request)
        if reply is not None:
            # As a socket does: the answer arrives later, never inside send.
            loop = asyncio.get_running_loop()
            loop.call_soon(self.frame, {"type": "page:reply", "id": request["id"], **reply})


def answers(result: Any) -> Answer:
    return lambda request: {"result": result}


async def document(pages: Pages, path: str = "a.ipynb") -> PageDocument:
    opened = await pages.open(path, "demo")
    assert opened is not None
    return opened


async def test_open_finds_a_notebook_only_while_a_page_holds_it() -> None:
    pages = Pages()
    assert await pages.open("a.ipynb", "demo") is None
    page = FakePage(pages, answers([]), "a.ipynb")
    doc: LiveDocument = await document(pages)
    assert "page" in doc.where
    assert await pages.open("b.ipynb", "demo") is None
    page.report("b.ipynb")  # the page closed a.ipynb, opened b.ipynb
    assert await pages.open("a.ipynb", "demo") is None
    assert await pages.open("b.ipynb", "demo") is not None
    pages.disconnect(page.page)
    assert await pages.open("b.ipynb", "demo") is None


async def test_apply_sends_the_edit_and_returns_where_the_cell_is() -> None:
    pages = Pages()
    page = FakePage(pages, answers({"cellId": "new-1", "index": 0}), "a.ipynb")
    applied = await (await document(pages)).apply(INSERT)
    assert applied == {"cellId": "new-1", "index": 0}
    (request,) = page.requests
    assert request["type"] == "page:request" and request["op"] == "apply"
    assert request["path"] == "a.ipynb" and request["edit"] == INSERT


async def test_a_changed_cell_is_refused_with_its_current_source() -> None:
    pages = Pages()
    refuse = {"error": "the cell changed since it was read", "source": "y = 2  # typed"}
    FakePage(pages, lambda request: refuse, "a.ipynb")
    edit: CellEdit = {**INSERT, "op": "edit", "cellId": "c1", "before": "y = 1"}
    with pytest.raises(EditRefused, match="changed") as refused:
        await (await document(pages)).apply(edit)
    assert "y = 2  # typed" in str(refused.value)


@pytest.mark.parametrize(
    "result", [None, [], {"cellId": "bad id!", "index": 0}, {"cellId": "c1", "index": "0"}]
)
async def test_a_malformed_answer_to_an_edit_is_refused(result: Any) -> None:
    pages = Pages()
    FakePage(pages, answers(result), "a.ipynb")
    with pytest.raises(EditRefused, match="page answered"):
        await (await document(pages)).apply(INSERT)


async def test_a_page_that_never_answers_ends_the_request_with_a_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(page_document, "TIMEOUT", 0.2)
    pages = Pages()
    page = FakePage(pages, lambda request: None, "a.ipynb")
    with pytest.raises(EditRefused, match=r"did not answer within 0\.2 s"):
        await (await document(pages)).cells()
    assert page.page.waiting == {}


async def test_a_page_that_closes_mid_request_ends_it_with_the_reason() -> None:
    pages = Pages()
    page = FakePage(pages, lambda request: None, "a.ipynb")
    doc = await document(pages)
    asking = asyncio.ensure_future(doc.apply(INSERT))
    await asyncio.sleep(0.01)
    pages.disconnect(page.page)
    with pytest.raises(EditRefused, match="page closed"):
        await asking
    # The next request finds no page.
    with pytest.raises(EditRefused, match=r"no open page holds a\.ipynb"):
        await doc.cells()


async def test_a_notebook_closed_in_the_page_mid_request_ends_it_with_the_reason() -> None:
    pages = Pages()
    page = FakePage(pages, lambda request: None, "a.ipynb", "b.ipynb")
    asking_a = asyncio.ensure_future((await document(pages)).apply(INSERT))
    asking_b = asyncio.ensure_future((await document(pages, "b.ipynb")).cells())
    await asyncio.sleep(0.01)
    page.report("b.ipynb")
    with pytest.raises(EditRefused, match=r"a\.ipynb was closed in the page"):
        await asking_a
    assert not asking_b.done()  # b.ipynb is still open: its request waits on
    asking_b.cancel()


async def test_two_pages_with_one_notebook_the_last_one_the_user_was_in_gets_it() -> None:
    pages = Pages()
    first = FakePage(pages, answers({"cellId": "c1", "index": 0}), "a.ipynb")
    second = FakePage(pages, answers({"cellId": "c1", "index": 0}), "a.ipynb")
    doc = await document(pages)
    await doc.apply(INSERT)
    first.frame({"type": "page:focus", "path": "a.ipynb"})
    await doc.apply(INSERT)
    assert len(second.requests) == 1 and len(first.requests) == 1
    # The first closes: the same document goes on in the other.
    pages.disconnect(first.page)
    await doc.apply(INSERT)
    assert len(second.requests) == 2


async def test_cells_keeps_only_cells_with_ids() -> None:
    pages = Pages()
    cells = [
        {"id": "c1", "cell_type": "code", "source": "x", "outputs": [], "metadata": {}},
        {"cell_type": "code", "source": "no id"},
        "not a cell",
    ]
    FakePage(pages, answers(cells), "a.ipynb")
    assert await (await document(pages)).cells() == cells[:1]


async def test_run_returns_the_outputs_bounded_as_run_code_does() -> None:
    pages = Pages()
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": "hello\n"},
        {"output_type": "execute_result", "data": {"text/plain": "x" * 100_000}},
    ]
    page = FakePage(pages, answers({"outputs": outputs, "executionCount": 3}), "a.ipynb")
    notes: list[str] = []

    async def progress(note: str) -> None:
        notes.append(note)

    parts = await (await document(pages)).run("c1", 30.0, progress)
    text = "\n".join(p["text"] for p in parts if p["type"] == "text")
    assert "[execution count 3]" in text and "hello" in text
    assert len(text) < 10_000  # clipped as run_code's outputs are
    assert page.requests[0]["cellId"] == "c1" and page.requests[0]["timeout"] == 30.0
    assert notes


async def test_a_run_that_times_out_in_the_page_says_so() -> None:
    pages = Pages()
    FakePage(pages, answers({"outputs": [], "executionCount": None, "timedOut": True}), "a.ipynb")

    async def progress(note: str) -> None:
        pass

    parts = await (await document(pages)).run("c1", 1.0, progress)
    assert "interrupted" in parts[-1]["text"]  # type: ignore[typeddict-item]


async def test_active_cell_and_selection() -> None:
    pages = Pages()
    selection = "s" * 20_000
    FakePage(pages, answers({"cellId": "c2", "index": 1, "selection": selection}), "a.ipynb")
    active = await (await document(pages)).active_cell()
    assert active is not None
    assert active["cellId"] == "c2" and active["index"] == 1
    assert len(active["selection"]) == 10_000
    pages2 = Pages()
    FakePage(pages2, answers(None), "a.ipynb")
    assert await (await document(pages2)).active_cell() is None


async def test_bounds_pages_notebooks_requests_and_frames() -> None:
    pages = Pages(max_pages=2)
    page = FakePage(pages, lambda request: None, "a.ipynb")
    FakePage(pages, lambda request: None)
    with pytest.raises(TooManyPages):
        pages.connect(lambda frame: None)
    with pytest.raises(ValueError):
        page.report(*(f"{n}.ipynb" for n in range(65)))
    for bad in ("[]", "{", '{"type": "page:reply", "id": "1"}', '{"type": "other"}'):
        with pytest.raises(ValueError):
            pages.receive(page.page, bad)
    doc = await document(pages)
    waiting = [asyncio.ensure_future(doc.cells()) for _ in range(page_document.MAX_WAITING)]
    await asyncio.sleep(0.01)
    with pytest.raises(EditRefused, match="wait on the page already"):
        await doc.cells()
    pages.disconnect(page.page)
    for asked in waiting:
        with pytest.raises(EditRefused):
            await asked


async def test_a_kernel_restart_ends_the_runs_in_its_notebooks() -> None:
    pages = Pages()
    FakePage(pages, lambda request: None, "a.ipynb")  # its kernel is k1
    doc = await document(pages)

    async def progress(note: str) -> None:
        pass

    run = asyncio.ensure_future(doc.run("c1", 30.0, progress))
    reading = asyncio.ensure_future(doc.cells())
    await asyncio.sleep(0.01)
    pages.restarted("k2")
    await asyncio.sleep(0.01)
    assert not run.done()
    pages.restarted("k1")
    parts = await asyncio.wait_for(run, 1)
    assert "kernel was restarted" in parts[-1]["text"]  # type: ignore[typeddict-item]
    assert not reading.done()  # only runs end
    reading.cancel()
