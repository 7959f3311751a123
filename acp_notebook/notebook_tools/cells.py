"""The notebook's cells as the agent reads them: pure functions over nbformat dicts.

``notebook_cells`` turns a notebook (as the contents manager returns it) into text
and image parts, paged and bounded; ``history_cells`` does the same from a kernel's
own input/output history when no notebook is known (local mode). Each cell shows its
nbformat 4.5 ``id`` and its ``revision``, which the edit tools check before they write.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from ..wire.clip import clip
from . import bounded
from .last_error import strip_ansi

MAX_COUNT = 50
DEFAULT_COUNT = 20
MAX_SOURCE = 4000
MAX_OUTPUT = 2000
MAX_TEXT = 40_000  # all text parts of one answer
MAX_IMAGES = 4
MAX_IMAGE_BYTES = 512 * 1024  # base64 characters of one image
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # nbformat 4.5's cell id


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImagePart(TypedDict):
    type: Literal["image"]
    data: str  # base64
    mimeType: str


Part = TextPart | ImagePart


def joined(value: Any) -> str:
    """nbformat keeps multiline strings as a string or a list of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return ""


def revision(cell_type: str, source: str) -> str:
    """A short hash of what a cell holds (its type and whole source): equal revisions,
    equal cells, so an edit can tell whether the cell changed since it was read."""
    digest = hashlib.sha256(f"{cell_type}\n{source}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:12]


def cell_id(cell: Mapping[str, Any]) -> str | None:
    """The cell's nbformat id; None for a notebook older than 4.5 (or a malformed id)."""
    value = cell.get("id")
    return value if isinstance(value, str) and CELL_ID.fullmatch(value) else None


class Parts:
    """Collects an answer's parts within the text and image budgets."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.text_left = MAX_TEXT
        self.images = 0

    def text(self, text: str) -> None:
        if self.text_left <= 0:
            return
        text = clip(text, self.text_left)
        self.text_left -= len(text)
        if self.parts and self.parts[-1]["type"] == "text":
            last = self.parts[-1]
            self.parts[-1] = {"type": "text", "text": last["text"] + "\n" + text}
        else:
            self.parts.append({"type": "text", "text": text})

    def image(self, mime: str, data: str) -> None:
        data = "".join(data.split())  # nbformat may wrap base64
        if self.images >= MAX_IMAGES:
            self.text(f"[{mime} image not included: at most {MAX_IMAGES} per answer]")
        elif len(data) > MAX_IMAGE_BYTES:
            self.text(f"[{mime} image not included: {len(data)} bytes of base64 is too large]")
        else:
            self.images += 1
            self.parts.append({"type": "image", "data": data, "mimeType": mime})


def add_output(parts: Parts, output: Mapping[str, Any]) -> None:
    """One nbformat output (or the same shape built from iopub messages)."""
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name", "stdout")
        parts.text(f"[{name}]\n{clip(strip_ansi(joined(output.get('text'))), MAX_OUTPUT)}")
    elif kind == "error":
        tb = strip_ansi("\n".join(t for t in output.get("traceback") or [] if isinstance(t, str)))
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        parts.text(f"[error] {clip(strip_ansi(head), 500)}\n{clip(tb, MAX_OUTPUT)}")
    elif kind in ("execute_result", "display_data"):
        data = output.get("data")
        if not isinstance(data, Mapping):
            return
        image = next((m for m in IMAGE_TYPES if isinstance(data.get(m), str)), None)
        if image is not None:
            parts.image(image, data[image])
        text = joined(data.get("text/plain"))
        if text and (image is None or not text.startswith("<Figure")):
            label = "result" if kind == "execute_result" else "display"
            parts.text(f"[{label}]\n{clip(strip_ansi(text), MAX_OUTPUT)}")


def _page(start: int, count: int, total: int) -> tuple[int, int]:
    start = max(0, start if start >= 0 else total + start)
    count = max(1, min(count, MAX_COUNT))
    return start, min(total, start + count)


def notebook_cells(
    notebook: Mapping[str, Any], start: int = 0, count: int = DEFAULT_COUNT, title: str = ""
) -> list[Part]:
    """Cells ``start`` .. ``start + count`` of an nbformat v4 notebook (negative ``start``
    counts from the end), with their outputs as text and images, after ``title``."""
    cells = notebook.get("cells")
    cells = cells if isinstance(cells, list) else []
    first, end = _page(start, count, len(cells))
    parts = Parts()
    shown = f"; showing {first}..{end - 1}" if end > first else ""
    parts.text(f"{title}{len(cells)} cells{shown}")
    for index in range(first, end):
        cell = cells[index] if isinstance(cells[index], Mapping) else {}
        kind = cell.get("cell_type", "?")
        count_label = f" [{cell.get('execution_count')}]" if kind == "code" else ""
        identity = cell_id(cell)
        label = f"id={identity}" if identity else "(no id)"
        source = joined(cell.get("source"))
        rev = revision(str(kind), source)
        parts.text(
            f"--- cell {index} ({kind}){count_label} {label} rev={rev}\n{clip(source, MAX_SOURCE)}"
        )
        for output in cell.get("outputs") or []:
            if isinstance(output, Mapping):
                add_output(parts, output)
    if end < len(cells):
        parts.text(f"[{len(cells) - end} more cells after {end - 1}: read_cells(start={end})]")
    return parts.parts


def history_cells(
    inputs: Sequence[str], outputs: Mapping[int, Any], start: int = 0, count: int = DEFAULT_COUNT
) -> list[Part]:
    """The kernel's own history (IPython's ``In`` and ``Out``) when no notebook is known.

    ``inputs[0]`` is IPython's empty placeholder; execution count ``n`` is ``inputs[n]``.
    """
    total = max(0, len(inputs) - 1)
    first, end = _page(start, count, total)
    parts = Parts()
    parts.text(
        f"No notebook is known for this kernel: its input history ({total} executions)"
        + (f"; showing In[{first + 1}]..In[{end}]" if end > first else "")
        + ". Executions have no cell ids."
    )
    for number in range(first + 1, end + 1):
        rev = revision("code", inputs[number])
        parts.text(f"--- In[{number}] rev={rev}\n{clip(inputs[number], MAX_SOURCE)}")
        if number in outputs:
            shown = bounded.call(functools.partial(repr, outputs[number]), 0.5)
            parts.text(f"[Out[{number}]]\n{str(shown)[:MAX_OUTPUT]}")
    return parts.parts
