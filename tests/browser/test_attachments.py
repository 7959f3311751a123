"""Attachments in the widget, in a real JupyterLab: a pasted image goes with the prompt
(the demo agent lists what it received) and shows in the transcript as a thumbnail; the
saved chat keeps the attachments' labels."""

from __future__ import annotations

import base64
import io
import re

import nbformat
import pytest
from PIL import Image
from playwright.sync_api import Page, expect

from acp_notebook.wire.contracts import SAVED_MIME
from tests.support.chromium import PageLog
from tests.support.lab import (
    JupyterServer,
    agent_text,
    cell,
    chat,
    open_notebook,
    run_cell,
    save,
    send,
    unique,
    write_notebook,
)

OPEN = (
    'from acp_notebook import Chat\nchat = Chat("demo", env={{"ACP_DEMO_DELAY": "0"}},'
    ' transport="{transport}")\nchat'
)

# Pastes a file into the composer the way a browser does for a screenshot.
PASTE = """([data, type, name]) => {
  const bytes = data === null ? new Uint8Array(40 * 1024 * 1024)
    : Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const box = document.querySelectorAll("textarea.acpnb-composer-input");
  box[box.length - 1].dispatchEvent(
    new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }),
  );
}"""


# Drops a file on the composer the way a browser does for a file dragged in.
DROP = """([data, type, name]) => {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const forms = document.querySelectorAll("form.acpnb-composer");
  const form = forms[forms.length - 1];
  for (const kind of ["dragover", "drop"]) {
    form.dispatchEvent(new DragEvent(kind, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }
}"""


def png(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "teal").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


# Server mode: the JupyterLab extension's renderer shows the chat over the browser
# socket. Local mode: the widget itself, over the kernel's comm.
@pytest.mark.parametrize("transport", ["server", "local"])
def test_a_pasted_image_reaches_the_agent(
    page: Page, server: JupyterServer, page_log: PageLog, transport: str
) -> None:
    filename = write_notebook(server, unique("paste"), [OPEN.format(transport=transport)])
    open_notebook(page, server, filename)
    run_cell(page, 0)
    widget = chat(page)
    # The extension's live view sits in its saved-output host; the widget does not.
    expect(page.locator(".acpnb-saved-host > .acpnb-root")).to_have_count(
        1 if transport == "server" else 0
    )
    expect(widget.locator(".acpnb-status")).to_have_text("idle")
    composer = widget.locator(".acpnb-composer")

    # Not an image, and an image too large to read: clear errors, nothing attached.
    page.evaluate(PASTE, [base64.b64encode(b"%PDF-1.4").decode(), "application/pdf", "a.pdf"])
    error = composer.locator(".acpnb-composer-error")
    expect(error).to_have_text(
        "Not attached: cannot attach application/pdf: only PNG, JPEG, GIF, WebP"
    )
    page.evaluate(PASTE, [None, "image/png", "huge.png"])
    expect(error).to_have_text("Not attached: the image is 40,960 KB; the cap is 32,768 KB")
    expect(composer.locator(".acpnb-attachment")).to_have_count(0)

    # A 2000x1000 screenshot: scaled to 1568 px, shown as a chip with a thumbnail.
    page.evaluate(PASTE, [png(2000, 1000), "image/png", "screenshot.png"])
    chip = composer.locator(".acpnb-attachment")
    expect(chip).to_have_count(1)
    expect(chip).to_contain_text("screenshot.png · PNG 1568×784")
    expect(chip.locator("img.acpnb-thumbnail")).to_have_count(1)

    send(page, "what is in this picture?")
    expect(agent_text(page)).to_contain_text("You said: what is in this picture?")
    received = widget.locator(".acpnb-agent", has_text="Received:")
    expect(received).to_contain_text("image: ")
    expect(received).to_contain_text("PNG 1568×784")
    expect(composer.locator(".acpnb-attachment")).to_have_count(0)
    user = widget.locator(".acpnb-user").last
    expect(user).to_contain_text("what is in this picture?")
    thumbnail = user.locator("img.acpnb-thumbnail")
    expect(thumbnail).to_have_attribute("src", re.compile(r"^data:image/jpeg;base64,"))

    # A dropped image is attached the same way.
    page.evaluate(DROP, [png(20, 10), "image/png", "dropped.png"])
    expect(composer.locator(".acpnb-attachment")).to_contain_text("dropped.png · PNG 20×10")
    assert page_log.errors == [] and page_log.dialogs == []


def test_at_df_completes_and_attaches_the_frame(
    page: Page, server: JupyterServer, page_log: PageLog
) -> None:
    setup = (
        "import pandas as pd\n"
        "df = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp_c': [3, 19]})\n"
        "dfx = 1\n" + OPEN.format(transport="auto")
    )
    filename = write_notebook(server, unique("mention"), [setup])
    open_notebook(page, server, filename)
    run_cell(page, 0)
    widget = chat(page)
    expect(widget.locator(".acpnb-status")).to_have_text("idle")
    box = widget.locator("textarea.acpnb-composer-input")
    box.click()
    box.press_sequentially("which city is warmer in @df")
    options = widget.locator(".acpnb-mention")
    expect(options).to_have_count(2)  # df, dfx: names starting with "df"
    expect(options.first).to_contain_text("pandas.DataFrame")
    box.press("Enter")  # picks the highlighted one, does not send
    expect(box).to_have_value("which city is warmer in @df ")
    chip = widget.locator(".acpnb-composer .acpnb-attachment")
    expect(chip).to_contain_text("df · DataFrame 2×2")

    # A pasted image goes along with the mention.
    page.evaluate(PASTE, [png(40, 30), "image/png", "plot.png"])
    expect(chip).to_have_count(2)
    box.press("Enter")
    received = widget.locator(".acpnb-agent", has_text="Received:")
    # Each attachment by its name and shape, no URI.
    expect(received).to_contain_text("df: pandas DataFrame df: 2 rows × 2 columns")
    expect(received).not_to_contain_text("notebook://")
    expect(received).to_contain_text("PNG 40×30")
    user = widget.locator(".acpnb-user").last
    expect(user.locator(".acpnb-attachment")).to_have_count(2)
    expect(user).to_contain_text("df · DataFrame 2×2")
    expect(user.locator("img.acpnb-thumbnail")).to_have_count(1)
    expect(widget.locator(".acpnb-status")).to_have_text("idle")
    # (Reopened below, the page asks for the ended kernel's chats and logs that 404.)
    assert page_log.errors == [] and page_log.dialogs == []
    save(page)

    # Reopened while the chat lives, the resync (a fold snapshot) brings them back.
    open_notebook(page, server, filename)
    user = chat(page).locator(".acpnb-user").last
    expect(user.locator(".acpnb-attachment")).to_have_count(2)
    expect(user.locator("img.acpnb-thumbnail")).to_have_count(1)

    # Saved, the message keeps the attachments' labels (not the image data): as text in
    # the static transcript, as chips in the saved chat the notebook shows when reopened.
    nb = nbformat.read(server.root / filename, as_version=4)
    [output] = [o for o in nb.cells[0].outputs if SAVED_MIME in o.get("data", {})]
    assert "df · DataFrame 2×2" in output["data"]["text/html"]
    assert "plot.png · PNG 40×30" in output["data"]["text/html"]
    server.shut_down_kernel(filename)
    open_notebook(page, server, filename)
    saved = cell(page, 0).locator(".jp-OutputArea-output")
    expect(saved.locator(".acpnb-continue")).to_be_visible()
    chips = saved.locator(".acpnb-user .acpnb-attachment")
    expect(chips).to_have_text(["📎df · DataFrame 2×2", "🖼plot.png · PNG 40×30"])
