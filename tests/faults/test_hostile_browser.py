"""Hostile content rendered in Chromium: inert wherever the widget shows it.

``tests/browser`` covers markup in the message, the tool title, option names and the
question's field labels. These cases cover the rest: thoughts, diffs, the plan, the
session title, a 10 MB tool title, capped options and fields, unterminated right-to-left
overrides, and the static HTML transcript a notebook keeps for viewers without a kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from acp_notebook.kernel import transcript
from acp_notebook.wire import fold as folding
from tests.support.agents import FAULT_AGENT
from tests.support.agents.fault_agent import HOSTILE
from tests.support.chromium import PageLog
from tests.support.lab import (
    JupyterServer,
    chat,
    command_chat,
    open_chat_notebook,
    permission_card,
    question_card,
    send,
)

# Script that ran, elements that could run script or load something, and text that a
# right-to-left override reorders outside the element holding it.
CHECK = """
(root) => {
  const isolating = (el) => {
    const style = getComputedStyle(el);
    return style.display !== "inline" || /isolate|plaintext/.test(style.unicodeBidi);
  };
  const leaks = [];
  let overrides = 0;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.data.includes("\\u202e")) continue;
    overrides += 1;
    // The agent's strings end with the override, "evil" and filler (cut with "…"):
    // anything else after it in the same text is someone else's text, reordered.
    const tail = node.data.slice(node.data.indexOf("\\u202e") + 1);
    if (!/^evil[A-Z]*…?$/.test(tail)) leaks.push(["(same text)", tail.slice(0, 40)]);
    // The bidi paragraph (or isolate) the override lives in...
    let box = node.parentElement;
    while (box !== root && !isolating(box)) box = box.parentElement;
    // ...and the visible text after it there, outside nested isolates.
    const after = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    after.currentNode = node;
    // A long string is cut by <wbr>s (no character of its own): the same string goes on.
    let same = node.nextSibling;
    while (same && (same.nodeName === "WBR" || (same.nodeType === 3 && /^[A-Z]*…?$/.test(same.data)))) {
      same = same.nextSibling;
    }
    for (let next = after.nextNode(); next; next = after.nextNode()) {
      if (next.parentNode === node.parentNode && (same === null || next.compareDocumentPosition(same) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
      let inner = next.parentElement, nested = false;
      while (inner !== box) { if (isolating(inner)) { nested = true; break; } inner = inner.parentElement; }
      if (!nested && next.data.trim()) leaks.push([box.className, next.data.slice(0, 40)]);
    }
  }
  return {
    pwned: window.__pwned ?? null,
    active: root.querySelectorAll(
      "script, img, iframe, svg, object, embed, [onerror], [onload], [onclick], [onmouseover], " +
      "a[href^='javascript' i], [src^='javascript' i]").length,
    leaks,
    overrides,
  };
}
"""


def check_inert(root: Any) -> int:
    """Asserts nothing ran, could run, or leaked its direction; how many overrides it saw."""
    result: dict[str, Any] = root.evaluate(CHECK)
    assert result["pwned"] is None and result["active"] == 0, result
    assert result["leaks"] == [], result["leaks"]
    return int(result["overrides"])


@pytest.mark.fault(
    "hostile content in the widget (thoughts, diffs, plan, titles, RTL), in Chromium"
)
def test_hostile_content_in_the_widget(
    page: Page,
    server: JupyterServer,
    page_log: PageLog,
    tmp_path: Path,
) -> None:
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    agent = [sys.executable, str(FAULT_AGENT), "none", "stream", str(tmp_path / "agent.jsonl")]
    open_chat_notebook(page, server, "hostile", command_chat(agent))
    send(page, "hostile")

    root = chat(page)
    permission = permission_card(page)
    expect(permission).to_be_visible()
    assert permission.locator("button.acpnb-btn").count() == 16  # 102 offered, 16 shown
    # The card's title and its 16 option names carry the override.
    assert check_inert(permission) == 17
    permission.locator("button.acpnb-reject").first.click()
    question = question_card(page)
    expect(question).to_be_visible()
    assert question.locator(".acpnb-field").count() == 16  # 40 asked, 16 shown
    # The message, and each field's title, description and 32 option labels.
    assert check_inert(question) >= 16 * 34
    question.get_by_role("button", name="Decline").click()
    expect(root.locator(".acpnb-agent").last).to_contain_text("hostile question answered")

    # Everything arrived as text: the markup is there to read, and nothing of it ran.
    expect(root.locator(".acpnb-diff").first).to_contain_text("<script>window.__pwned=1</script>")
    expect(root.locator(".acpnb-plan")).to_contain_text("onerror")
    title = root.locator(".acpnb-tool-title").first
    assert len(title.inner_text()) <= 256 * 1024 + 1  # the 10 MB title was cut
    assert check_inert(root) >= 5  # the message, thought, tool title, diff, plan
    # The huge title does not blow the notebook up sideways.
    assert root.bounding_box()["width"] <= page.viewport_size["width"]  # type: ignore[index]
    assert [url for url in fetched if "pwned" in url or url.endswith("/x")] == []
    assert page_log.dialogs == [] and page_log.errors == [], page_log


@pytest.mark.fault("hostile content in the static transcript, in Chromium")
def test_static_transcript_in_chromium(page: Page, page_log: PageLog) -> None:
    events: list[dict[str, Any]] = [
        {"kind": "turn_started", "seq": 1, "turn": 1, "prompt": HOSTILE},
        *(
            {"kind": "update", "seq": 2 + i, "update": update}
            for i, update in enumerate(
                [
                    {
                        "sessionUpdate": "agent_thought_chunk",
                        "content": {"type": "text", "text": HOSTILE},
                    },
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": HOSTILE},
                    },
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "t",
                        "title": HOSTILE,
                        "status": "failed",
                    },
                ]
            )
        ),
        {
            "kind": "permission_request",
            "seq": 9,
            "requestId": "p",
            "toolCall": {"title": HOSTILE},
            "options": [{"optionId": HOSTILE, "name": HOSTILE, "kind": "allow_once"}],
        },
        {
            "kind": "elicitation_request",
            "seq": 10,
            "requestId": "q",
            "message": HOSTILE,
            "fields": [],
        },
        {"kind": "turn_ended", "seq": 11, "turn": 1, "error": HOSTILE},
    ]
    state = folding.initial_state()
    for event in events:
        state = folding.fold(state, event)
    page.set_content(f"<main>{transcript.render_html(folding.snapshot(state))}</main>")
    assert check_inert(page.locator("main")) == 7
    assert page_log.dialogs == [] and page_log.errors == []


# Before the override, what ends an isolate around the string in Chromium (it isolates a
# <bdi> with the same characters): a POP DIRECTIONAL ISOLATE of its own, an isolate it
# leaves open, a paragraph separator.
ESCAPING = "x\u2069\u2067\u2029\u202eevil"

# Rows of the static transcript whose text is out of order: a string that comes after
# another one in a row must show after it (on its line, to its right, or on a later line).
ORDER = """(root) => {
  const letter = (el, last) => {
    const found = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode())
      for (let i = 0; i < n.data.length; i++) if (/\\p{L}/u.test(n.data[i])) found.push([n, i]);
    const [node, i] = found[last ? found.length - 1 : 0];
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    return range.getBoundingClientRect();
  };
  const wrong = [];
  for (const row of root.querySelectorAll("div")) {
    const parts = [...row.children].filter((c) => c.nodeName === "BDI" && /\\p{L}/u.test(c.textContent));
    for (let k = 1; k < parts.length; k++) {
      const a = letter(parts[k - 1], true), b = letter(parts[k], false);
      const sameLine = Math.abs(a.top - b.top) < a.height / 2;
      if (b.top < a.top - a.height / 2 || (sameLine && b.left < a.right - 0.5)) wrong.push(row.textContent);
    }
  }
  return wrong;
}"""


@pytest.mark.fault("a stray PDI, an open isolate and U+2029 before an override, in Chromium")
def test_isolates_hold_whatever_the_string_holds(page: Page, page_log: PageLog) -> None:
    events: list[dict[str, Any]] = [
        {"kind": "turn_started", "seq": 1, "turn": 1, "prompt": "p"},
        {
            "kind": "update",
            "seq": 2,
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "t",
                "title": ESCAPING,
                "status": "failed",
            },
        },
        {
            "kind": "permission_request",
            "seq": 3,
            "requestId": "p",
            "toolCall": {"title": ESCAPING},
            "options": [{"optionId": "o", "name": "n", "kind": "allow_once"}],
        },
        {"kind": "elicitation_request", "seq": 4, "requestId": "q", "message": ESCAPING},
    ]
    state = folding.initial_state()
    for event in events:
        state = folding.fold(state, event)
    page.set_content(f"<main>{transcript.render_html(folding.snapshot(state))}</main>")
    main = page.locator("main")
    assert main.evaluate("m => m.querySelectorAll('div > bdi').length") >= 6
    assert main.evaluate(ORDER) == []
    assert page_log.dialogs == [] and page_log.errors == []
