"""Attachments: Python objects -> bounded ACP content blocks for a prompt.

``attach(obj)`` turns what a notebook user has at hand into one wire ``Attachment``
(``{"label", "block", "thumbnail"?}``, see ``contracts.py``):

- a pandas DataFrame or Series -> an embedded text resource: shape, columns and dtypes,
  and the first ``MAX_HEAD_ROWS`` rows as CSV;
- a matplotlib figure, a PIL image, or PNG/JPEG bytes -> an image block (base64),
  a figure or PIL image scaled down to ``MAX_IMAGE_SIDE`` px on its longest side;
- a path -> an embedded text resource when it is a UTF-8 file of at most
  ``MAX_EMBED_FILE`` bytes, else a resource link;
- a string -> a text block.

Every result fits the caps in ``contracts.py`` (an image at most ``MAX_IMAGE_BYTES``,
a text at most ``MAX_ATTACHMENT_TEXT`` characters); anything else raises
``AttachmentError`` before a request is made. pandas, matplotlib and PIL are only used
when the object comes from them (none is a dependency of this package).
"""

from __future__ import annotations

import base64
import io
import math
import mimetypes
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..wire.attachment_blocks import Attachment, AttachmentError, text_resource, variable_uri
from ..wire.clip import clip
from ..wire.contracts import (
    MAX_ATTACHMENT_TEXT,
    MAX_ATTACHMENTS,
    MAX_IMAGE_DATA,
    MAX_LABEL,
    MAX_THUMBNAIL,
    MAX_URI,
    wire_problem,
)
from .variables import ipython_shell

MAX_IMAGE_BYTES = MAX_IMAGE_DATA // 4 * 3  # one image file, before base64 (~1 MB)
MAX_IMAGE_SIDE = 1568  # px; larger images cost the model more and gain little
MAX_HEAD_ROWS = 20
MAX_COLUMNS = 50
MAX_CELL = 200  # characters of one cell in the CSV head
MAX_EMBED_FILE = 64_000  # bytes of a file embedded as text; larger ones are linked
THUMBNAIL_SIDE = 96

_MAGIC = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}


def attach_all(
    objects: Iterable[Any] | Mapping[str, Any], names: Mapping[int, str] = {}
) -> list[Attachment]:
    """Convert every object (``{name: obj}`` names them); one bad object fails them all."""
    pairs = (
        list(objects.items())
        if isinstance(objects, Mapping)
        else [(names.get(id(o)), o) for o in objects]
    )
    if len(pairs) > MAX_ATTACHMENTS:
        raise AttachmentError(f"{len(pairs)} attachments; at most {MAX_ATTACHMENTS} per prompt")
    result = [attach(obj, name) for name, obj in pairs]
    problem = wire_problem([a["block"] for a in result])
    if problem is not None:
        raise AttachmentError(problem)
    return result


def user_names() -> dict[int, str]:
    """The notebook's variable names by object id, so ``attach=[df]`` is labelled ``df``."""
    shell = ipython_shell()
    main = getattr(sys.modules.get("__main__"), "__dict__", {})
    namespace = shell.user_ns if shell is not None else main
    return {id(v): k for k, v in namespace.items() if not k.startswith("_")}


def attach(obj: Any, name: str | None = None) -> Attachment:
    """One object as a bounded attachment (see the module doc for what is accepted)."""
    result = _convert(obj, name)
    result["label"] = _one_line(result["label"], MAX_LABEL)
    return result


def _convert(obj: Any, name: str | None) -> Attachment:
    if isinstance(obj, str):
        if len(obj) > MAX_ATTACHMENT_TEXT:
            raise AttachmentError(
                f"a text of {len(obj):,} characters; the cap is {MAX_ATTACHMENT_TEXT:,}"
            )
        return {"label": name or _one_line(obj, 40), "block": {"type": "text", "text": obj}}
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return _image_bytes(obj, name)
    if isinstance(obj, os.PathLike):
        return _path(Path(obj), name)
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(obj, (pandas.DataFrame, pandas.Series)):
        return _frame(pandas, obj, name)
    figure = sys.modules.get("matplotlib.figure")
    if figure is not None and isinstance(obj, (figure.Figure, figure.SubFigure)):
        return _figure(obj, name)
    pil = sys.modules.get("PIL.Image")
    if pil is not None and isinstance(obj, pil.Image):
        return _pil(obj, name)
    raise AttachmentError(
        f"cannot attach a {type(obj).__module__}.{type(obj).__qualname__}: attach a pandas "
        "DataFrame or Series, a matplotlib figure, a PIL image, PNG/JPEG bytes, a path or a string"
    )


# ---------------------------------------------------------------- conversions


def _one_line(text: str, limit: int) -> str:
    return clip(" ".join(text.split()), limit)


def _image(name: str, data: bytes, mime: str, detail: str) -> Attachment:
    """An image block labelled ``name · PNG 400x300`` (the format from ``mime``, then ``detail``)."""
    block = {"type": "image", "mimeType": mime, "data": base64.b64encode(data).decode("ascii")}
    label = f"{name} · {mime.removeprefix('image/').upper()} {detail}"
    return {"label": label, "block": block, **_thumbnail(data)}


def _image_bytes(obj: bytes | bytearray | memoryview, name: str | None) -> Attachment:
    size = obj.nbytes if isinstance(obj, memoryview) else len(obj)
    if size > MAX_IMAGE_BYTES:
        raise AttachmentError(
            f"image bytes of {size:,} bytes; the cap is {MAX_IMAGE_BYTES:,} "
            "(attach a PIL image or a figure to have it scaled down)"
        )
    data = bytes(obj)
    mime = next((m for magic, m in _MAGIC.items() if data.startswith(magic)), None)
    if mime is None:
        raise AttachmentError("bytes that are neither a PNG nor a JPEG image")
    return _image(name or "image", data, mime, _kb(size))


def _figure(fig: Any, name: str | None) -> Attachment:
    width, height = fig.get_size_inches()
    dpi = min(float(fig.dpi), MAX_IMAGE_SIDE / max(width, height, 0.01))
    for _ in range(4):
        buffer = io.BytesIO()
        try:
            fig.savefig(buffer, format="png", dpi=dpi)
        except Exception as exc:  # any artist may fail to draw
            raise AttachmentError(f"the figure could not be rendered: {exc}") from exc
        data = buffer.getvalue()
        if len(data) <= MAX_IMAGE_BYTES:
            px = f"{round(width * dpi)}×{round(height * dpi)}"
            return _image(name or "figure", data, "image/png", px)
        dpi *= 0.6
    raise AttachmentError(f"the figure does not fit in {MAX_IMAGE_BYTES:,} bytes as a PNG")


def _pil(image: Any, name: str | None) -> Attachment:
    image = image.copy()
    image.thumbnail((MAX_IMAGE_SIDE, MAX_IMAGE_SIDE))
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    mime = "image/png"
    if buffer.tell() > MAX_IMAGE_BYTES:
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="JPEG", quality=85)
        mime = "image/jpeg"
    data = buffer.getvalue()
    if len(data) > MAX_IMAGE_BYTES:
        raise AttachmentError(f"the image does not fit in {MAX_IMAGE_BYTES:,} bytes")
    return _image(name or "image", data, mime, f"{image.width}×{image.height}")


def _thumbnail(data: bytes) -> dict[str, str]:
    """``{"thumbnail": data URL}`` when PIL is installed and the image decodes, else {}."""
    try:
        from PIL import Image
    except ImportError:
        return {}
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, format="JPEG", quality=70)
    except Exception:  # a preview is optional; the image itself was checked
        return {}
    url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
    return {"thumbnail": url} if len(url) <= MAX_THUMBNAIL else {}


def _frame(pd: Any, obj: Any, name: str | None) -> Attachment:
    is_series = isinstance(obj, pd.Series)
    frame = obj.to_frame() if is_series else obj
    rows, cols = frame.shape
    kind = "Series" if is_series else "DataFrame"
    label = name or (str(obj.name) if is_series and obj.name is not None else kind.lower())
    lines = [f"pandas {kind} `{label}`: {rows:,} rows × {cols:,} columns", "columns (dtype):"]
    for column, dtype in list(frame.dtypes.items())[:MAX_COLUMNS]:
        lines.append(f"  {_one_line(str(column), MAX_CELL)}: {dtype}")
    if cols > MAX_COLUMNS:
        lines.append(f"  … and {cols - MAX_COLUMNS:,} more columns")
    head = frame.iloc[:MAX_HEAD_ROWS, :MAX_COLUMNS]
    head = head.map(lambda v: _one_line(v, MAX_CELL) if isinstance(v, str) else v)
    keep_index = not isinstance(frame.index, pd.RangeIndex)
    shown = min(rows, MAX_HEAD_ROWS)
    lines.append(f"first {shown} rows (CSV):" if shown < rows else "all rows (CSV):")
    lines.append(head.to_csv(index=keep_index).rstrip("\n"))
    text = clip("\n".join(lines), MAX_ATTACHMENT_TEXT)
    return text_resource(f"{label} · {kind} {rows:,}×{cols:,}", variable_uri(label), text)


def _path(path: Path, name: str | None) -> Attachment:
    try:
        resolved = path.expanduser().resolve(strict=True)
        size = resolved.stat().st_size
    except OSError as exc:
        raise AttachmentError(f"cannot attach {path}: {exc.strerror or exc}") from exc
    if not resolved.is_file():
        raise AttachmentError(f"cannot attach {path}: not a file")
    uri = resolved.as_uri()
    if len(uri) > MAX_URI:
        raise AttachmentError(
            f"cannot attach {path}: its path is longer than {MAX_URI:,} characters"
        )
    mime = mimetypes.guess_type(resolved.name)[0]
    label = name or resolved.name
    if size <= MAX_EMBED_FILE:
        try:
            text = resolved.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
        if text is not None:
            return text_resource(label, uri, text, mime or "text/plain")
    link: dict[str, Any] = {
        "type": "resource_link",
        "uri": uri,
        "name": _one_line(resolved.name, MAX_LABEL),
        "size": size,
    }
    if mime:
        link["mimeType"] = mime
    return {"label": f"{label} · {_kb(size)}", "block": link}


def _kb(size: int) -> str:
    return f"{size} B" if size < 1024 else f"{math.ceil(size / 1024):,} KB"
