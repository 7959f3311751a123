"""Attachments: Python objects -> bounded ACP content blocks, without a kernel."""

from __future__ import annotations

import base64
import io
import mmap
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd
import pytest
from PIL import Image
from pydantic import ValidationError

from acp_notebook.notebook_tools import attachments
from acp_notebook.notebook_tools.attachments import attach, attach_all
from acp_notebook.wire.attachment_blocks import AttachmentError, adapt, summary
from acp_notebook.wire.contracts import MAX_ATTACHMENT_TEXT, MAX_ATTACHMENTS, client_request

matplotlib.use("Agg")
from matplotlib.figure import Figure

CAPABLE = {"promptCapabilities": {"image": True, "embeddedContext": True}}


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def figure(width: float = 4, height: float = 3, dpi: int = 100) -> Figure:
    fig = Figure(figsize=(width, height), dpi=dpi)
    fig.add_subplot().plot([1, 3, 2])
    return fig


def as_request(attached: list[dict[str, Any]]) -> Any:
    return client_request.validate_python(
        {"type": "chat:prompt", "chatId": "c", "text": "look", "attachments": attached}
    )


def test_a_dataframe_is_an_embedded_resource_with_schema_shape_and_head() -> None:
    df = pd.DataFrame({"city": [f"c{i}" for i in range(100)], "temp": range(100)})
    result = attach(df, "df")
    block = result["block"]
    assert block["type"] == "resource"
    resource = block["resource"]
    assert resource["uri"] == "notebook://variables/df"
    text = resource["text"]
    assert text.startswith("pandas DataFrame `df`: 100 rows × 2 columns")
    assert "  city: " in text and "  temp: int64" in text
    assert "first 20 rows (CSV):\ncity,temp\nc0,0\n" in text
    assert "c19,19" in text and "c20,20" not in text
    assert result["label"] == "df · DataFrame 100×2"
    assert summary(result) == {
        "type": "resource",
        "label": "df · DataFrame 100×2",
        "mimeType": "text/plain",
    }
    as_request([result])  # fits the wire contract


def test_a_wide_frame_with_long_cells_stays_bounded() -> None:
    df = pd.DataFrame({f"col{i}": ["x" * 10_000] * 50 for i in range(200)})
    text = attach(df)["block"]["resource"]["text"]
    assert len(text) <= MAX_ATTACHMENT_TEXT
    assert "… and 150 more columns" in text
    assert "x" * 10_000 not in text


def test_a_series_keeps_its_name_and_dtype() -> None:
    result = attach(pd.Series([1.5, 2.5], name="price"))
    text = result["block"]["resource"]["text"]
    assert text.startswith("pandas Series `price`: 2 rows × 1 columns")
    assert "price: float64" in text and "all rows (CSV)" in text


def test_a_figure_is_a_png_image_scaled_to_the_cap() -> None:
    result = attach(figure(), "fig")
    block = result["block"]
    assert block["type"] == "image" and block["mimeType"] == "image/png"
    assert png_size(base64.b64decode(block["data"])) == (400, 300)
    assert result["label"] == "fig · PNG 400×300"
    assert result["thumbnail"].startswith("data:image/jpeg;base64,")
    big = attach(figure(40, 20, 300))["block"]
    width, height = png_size(base64.b64decode(big["data"]))
    assert width <= attachments.MAX_IMAGE_SIDE and abs(width / height - 2) < 0.01
    as_request([result])


def test_a_figure_that_fails_to_render_is_a_clear_error() -> None:
    fig = figure()
    fig.axes[0].set_title(r"$\frac{$")  # mathtext that cannot be parsed
    with pytest.raises(AttachmentError, match="the figure could not be rendered"):
        attach(fig)


def test_pil_images_and_image_bytes() -> None:
    image = Image.new("RGB", (3000, 1000), "red")
    result = attach(image)
    data = base64.b64decode(result["block"]["data"])
    assert png_size(data) == (attachments.MAX_IMAGE_SIDE, 523)
    buffer = io.BytesIO()
    Image.new("RGB", (10, 10)).save(buffer, format="JPEG")
    jpeg = attach(buffer.getvalue(), "photo")
    assert jpeg["block"]["mimeType"] == "image/jpeg" and jpeg["label"].startswith("photo · JPEG")
    assert base64.b64decode(jpeg["block"]["data"]) == buffer.getvalue()
    with pytest.raises(AttachmentError, match="neither a PNG nor a JPEG"):
        attach(b"GIF89a not supported as bytes")


def test_a_gigabyte_of_bytes_is_refused_before_it_is_read() -> None:
    with (
        mmap.mmap(-1, 1 << 30) as huge,  # never touched, so never resident
        pytest.raises(AttachmentError, match="1,073,741,824 bytes; the cap is"),
    ):
        attach(memoryview(huge))


def test_paths_embed_small_text_and_link_the_rest(tmp_path: Path) -> None:
    small = tmp_path / "notes.md"
    small.write_text("# notes\nhello")
    result = attach(small)
    assert result["block"] == {
        "type": "resource",
        "resource": {"uri": small.as_uri(), "mimeType": "text/markdown", "text": "# notes\nhello"},
    }
    big = tmp_path / "data.csv"
    big.write_text("a,b\n" * 50_000)
    link = attach(big)["block"]
    assert link == {
        "type": "resource_link",
        "uri": big.as_uri(),
        "name": "data.csv",
        "size": 200_000,
        "mimeType": "text/csv",
    }
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    assert attach(binary)["block"]["type"] == "resource_link"
    with pytest.raises(AttachmentError, match="cannot attach"):
        attach(tmp_path / "missing.txt")
    with pytest.raises(AttachmentError, match="not a file"):
        attach(tmp_path)
    as_request([result, attach(big)])


def test_strings_and_unsupported_objects() -> None:
    assert attach("some context")["block"] == {"type": "text", "text": "some context"}
    with pytest.raises(AttachmentError, match="the cap is"):
        attach("x" * (MAX_ATTACHMENT_TEXT + 1))
    with pytest.raises(AttachmentError, match=r"cannot attach a builtins\.set: attach a pandas"):
        attach({1, 2})


def test_attach_all_names_and_bounds() -> None:
    df = pd.DataFrame({"a": [1]})
    named = attach_all({"frame": df})
    assert named[0]["label"].startswith("frame ·")
    by_id = attach_all([df], {id(df): "mine"})
    assert by_id[0]["block"]["resource"]["uri"] == "notebook://variables/mine"
    with pytest.raises(AttachmentError, match=f"at most {MAX_ATTACHMENTS}"):
        attach_all(["x"] * (MAX_ATTACHMENTS + 1))
    almost = b"\x89PNG\r\n\x1a\n" + bytes(attachments.MAX_IMAGE_BYTES - 8)
    assert attach(almost)["block"]["type"] == "image"
    with pytest.raises(AttachmentError, match=r"the attachments hold .* the cap is"):
        attach_all([almost] * 3)  # each within its cap, together too large


def test_capabilities_decide_what_is_sent() -> None:
    image = attach(figure())["block"]
    frame = attach(pd.DataFrame({"a": [1]}), "df")["block"]
    assert adapt([image, frame], CAPABLE) == [image, frame]
    with pytest.raises(AttachmentError, match="demo does not accept images"):
        adapt([image], {"promptCapabilities": {"embeddedContext": True}}, "demo")
    fallback = adapt([frame], {"promptCapabilities": {"image": True}})
    assert fallback == [
        {"type": "text", "text": "notebook://variables/df\n" + frame["resource"]["text"]}
    ]


def test_the_wire_contract_rejects_lying_or_oversized_blocks() -> None:
    good = attach(figure())
    lying = {**good, "block": {**good["block"], "mimeType": "image/jpeg"}}
    with pytest.raises(ValidationError, match="not the image/jpeg it says it is"):
        as_request([lying])
    with pytest.raises(ValidationError):
        as_request([{**good, "block": {**good["block"], "data": "not base64!"}}])
    with pytest.raises(ValidationError):
        as_request([{**good, "thumbnail": "javascript:alert(1)"}])
    with pytest.raises(ValidationError):
        as_request([{"label": "x", "block": {"type": "text", "text": "a"}, "extra": 1}])
