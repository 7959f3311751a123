"""Side by side with the incumbent: acp_notebook and jupyter-ai-acp-client driving the same
demo agent, in the same run (``bench/run.py peers [--chunks N] [--runs N]``; opt-in).

jupyter-ai-acp-client 0.3.3 (with jupyterlab-chat, jupyter-collaboration and a JupyterLab it
accepts) goes into a virtual environment of its own under ~/.cache/acp-notebook/, with a
persona for our demo agent registered by entry point (bench/peer_persona). Each system runs
in its own JupyterLab server; one Chromium drives both pages. The answer to
``stream N`` is timed in the page from Enter until the whole text is rendered, alternating
the systems (A B A B …); for each run: the longest main-thread task (Chromium trace) and
the CPU time of the server process and its children (the agent; for acp_notebook also the
notebook's kernel) over the answer. Then each system is asked to show a question form, a
permission request, and a permission request again after a page reload; what happened is
the support matrix.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from playwright.sync_api import Browser, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.lab import JupyterServer, chat, permission_card, question_card, run_cell, save
from tests.support.lab import start_server as start_lab

from .browser import (
    AFTER_CELLS,
    ANSWER_DONE,
    CONTEXT_CELLS,
    LONG_TASKS,
    OPEN_CHAT,
    chromium,
    main_thread,
    open_page,
    progress,
    prompt_and_time,
    send_and_time,
    type_prompt,
    wait_ready,
    write_cells,
)
from .common import DEMO_AGENT, REPO, Context, cpu_seconds, print_columns, stream_text

PEER = "jupyter-ai-acp-client"
PEER_VERSION = "0.3.3"
OURS = "acp_notebook"
VENV = Path.home() / ".cache" / "acp-notebook" / "peers-venv"
INSTALL_LOG = VENV.parent / "peers-install.log"
# Screenshots of the attempts that could not be made, from the last run.
FAILURES = VENV.parent / "peers-failures"
PERSONA = REPO / "bench" / "peer_persona"
PERSONA_ID = "jupyter-ai-personas::acp_notebook_bench_persona::DemoAcpPersona"
# What the peer needs besides itself: its chat UI, the collaboration it runs on, and a
# JupyterLab that jupyterlab-chat accepts.
REQUIREMENTS = [
    f"{PEER}=={PEER_VERSION}",
    "jupyterlab>=4.4,<5",
    "jupyterlab-chat>=0.25,<0.26",
    "jupyter-collaboration>=4,<6",
]
CHECK = f"""
import importlib.metadata as m, jupyterlab, jupyter_collaboration, jupyterlab_chat
import jupyter_ai_acp_client
assert m.version({PEER!r}) == {PEER_VERSION!r}
"""
CHUNKS = 10_000
QUICK_CHUNKS = 500
# The peer's composer, and the element whose last child is the newest message.
PEER_COMPOSER = "textarea[placeholder^='Type a chat message']"
PEER_MESSAGES = ".jp-chat-messages-container"
PEER_ANSWER_DONE = """
    const items = root.querySelectorAll(".jp-chat-rendered-message");
    const item = items[items.length - 1];
    if (item === undefined) return false;
    const text = item.textContent.trim();
    return text.length === arg.length && text === arg;
"""
PEER_ALLOW = ".jp-jupyter-ai-acp-client-permission-btn-allow-once"
CARD_TIMEOUT = 60_000


# ---------------------------------------------------------------- the peer's environment


def ensure_venv() -> Path:
    """The peer's Python: the cached environment when it holds the peer, else a new one.
    Our persona is reinstalled every time (cheap), so its source here is what runs."""
    python = VENV / "bin" / "python"
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with INSTALL_LOG.open("a") as log:
        if not (python.exists() and _run([str(python), "-c", CHECK], log) == 0):
            progress(f"installing {PEER} {PEER_VERSION} into {VENV} (log: {INSTALL_LOG})")
            _must([sys.executable, "-m", "venv", "--clear", str(VENV)], log)
            _must([str(python), "-m", "pip", "install", *REQUIREMENTS], log)
        args = ["-m", "pip", "install", "--no-deps", "--force-reinstall", str(PERSONA)]
        _must([str(python), *args], log)
        _must([str(python), "-c", CHECK], log)
    return python


def _run(argv: list[str], log: TextIO) -> int:
    return subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=False).returncode


def _must(argv: list[str], log: TextIO) -> None:
    if _run(argv, log) != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}… failed; see {INSTALL_LOG}")


def start_peer(base: Path, python: Path) -> JupyterServer:
    """JupyterLab of the peer's environment, our persona the chats' default."""
    return start_lab(
        base,
        extra_env={"ACP_BENCH_AGENT": json.dumps(DEMO_AGENT)},
        python=str(python),
        extra_args=[f"--PersonaManager.default_persona_id={PERSONA_ID}"],
    )


# ---------------------------------------------------------------- CPU of a process tree


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and every live descendant (user + system)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError):
            total += cpu_seconds(current)
        todo += children.get(current, [])
    return total


# ---------------------------------------------------------------- the two systems


@dataclass
class Run:
    chunks: int
    seconds: float
    longest_ms: float
    cpu_s: float


@dataclass
class System:
    """One system's page, how to prompt it, and what it showed."""

    name: str
    page: Page
    server: JupyterServer
    composer: Locator | None  # None: acp_notebook's own
    root: str
    answer_done: str
    runs: list[Run] = field(default_factory=list)
    support: dict[str, str] = field(default_factory=dict)
    dialogs: list[str] = field(default_factory=list)

    def dismiss_dialogs(self) -> None:
        """Closes JupyterLab's modal dialogs (they block every click), keeping their titles.
        The peer's page shows "Directory not found" when the collaboration store's journal
        in the server's root vanishes between the listing of the root and its stat (404)."""
        dialog = self.page.locator("dialog.jp-Dialog")
        while dialog.count():
            self.dialogs.append(dialog.first.get_attribute("aria-label") or "a dialog")
            dialog.first.locator("button.jp-Dialog-button").last.click()
            self.page.wait_for_timeout(200)

    def send(self, prompt: str) -> None:
        self.dismiss_dialogs()
        box = self.composer or chat(self.page).locator("textarea.acpnb-composer-input")
        box.click()
        box.fill(prompt)
        box.press("Enter")

    def answer(self, browser: Browser, count: int) -> Run:
        expected = stream_text(count).strip()
        self.dismiss_dialogs()
        before = tree_cpu(self.server.proc.pid)
        box = type_prompt(self.page, f"stream {count}", expected, self.composer)
        with main_thread(browser, self.page) as tasks:
            seconds = send_and_time(self.page, box, self.answer_done, root=self.root)
        cpu = tree_cpu(self.server.proc.pid) - before
        return Run(count, seconds, tasks[0].longest_ms, cpu)


@contextlib.contextmanager
def ours(ctx: Context, browser: Browser) -> Iterator[System]:
    server = start_lab(ctx.work / "ours")
    try:
        filename = write_cells(server, [*CONTEXT_CELLS, ("code", OPEN_CHAT), *AFTER_CELLS])
        with open_page(browser, server, filename) as page:
            for index in (1, 2, len(CONTEXT_CELLS)):  # the code cells above, then the chat
                run_cell(page, index)
            wait_ready(page)
            yield System(OURS, page, server, None, ".acpnb-root", ANSWER_DONE)
    finally:
        server.stop()


@contextlib.contextmanager
def peer(ctx: Context, browser: Browser, python: Path) -> Iterator[System]:
    server = start_peer(ctx.work / "peer", python)
    try:
        (server.root / "bench.chat").write_text("")
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        try:
            page = context.new_page()
            page.add_init_script(LONG_TASKS)
            page.goto(server.url("lab/tree/bench.chat?reset"))
            composer = page.locator(PEER_COMPOSER)
            expect(composer).to_be_visible(timeout=CARD_TIMEOUT)
            yield System(PEER, page, server, composer, PEER_MESSAGES, PEER_ANSWER_DONE)
        finally:
            context.close()
    finally:
        server.stop()


def warm_up(system: System) -> None:
    """A first short answer: the agent started and the session made. The peer drops a
    message sent before its persona picker is ready, so the prompt is repeated until
    answered."""
    expected = stream_text(10).strip()
    for _ in range(5):
        with contextlib.suppress(PlaywrightTimeoutError):
            prompt_and_time(
                system.page,
                "stream 10",
                system.answer_done,
                expected,
                timeout=20,
                composer=system.composer,
                root=system.root,
            )
            return
    raise RuntimeError(f"{system.name} never answered `stream 10`")


# ---------------------------------------------------------------- the support matrix


def answered(system: System, text: str, timeout: float = CARD_TIMEOUT) -> Locator:
    """The newest place in the chat showing ``text`` (the agent's reply), once it is there."""
    where = system.page.locator(system.root).last.get_by_text(text).last
    expect(where).to_be_visible(timeout=timeout)
    return where


def try_question(system: System) -> str:
    system.send("ask-user")
    if system.name == OURS:
        card = question_card(system.page)
        expect(card).to_be_visible(timeout=CARD_TIMEOUT)
        card.get_by_role("radio", name="Green").check()
        card.get_by_role("button", name="Answer").click()
        answered(system, '"question_0":"green"')
        return "yes: form shown, answer reached the agent"
    # The peer has no form to look for: the turn ends with what the agent got instead.
    reply = answered(system, "elicitation answered:").text_content() or ""
    forms = system.page.locator(system.root).last.locator("input[type=radio]").count()
    return f"no: no form ({forms} choice inputs); the agent got `{reply.strip()[-40:]}`"


def _allow(system: System) -> Locator:
    """The Allow button of the pending permission card."""
    if system.name == OURS:
        return permission_card(system.page).get_by_role("button", name="Allow", exact=True)
    return system.page.locator(PEER_ALLOW).last


def _replies(system: System) -> int:
    return system.page.locator(system.root).last.get_by_text("permission: allow-once").count()


def try_permission(system: System, reload: bool) -> str:
    done = _replies(system)
    system.send("permission")
    allow = _allow(system)
    expect(allow).to_be_visible(timeout=CARD_TIMEOUT)
    if reload:
        if system.name == OURS:
            save(system.page)  # JupyterLab restores a widget output only from the file
        system.page.reload()
        allow = _allow(system)
        try:
            expect(allow).to_be_visible(timeout=CARD_TIMEOUT)
        except AssertionError:
            return "no: the card did not come back after the reload"
    system.dismiss_dialogs()
    allow.click()
    expect(
        system.page.locator(system.root).last.get_by_text("permission: allow-once")
    ).to_have_count(done + 1, timeout=CARD_TIMEOUT)
    return (
        "yes: card shown"
        + (" again after the reload" if reload else "")
        + ", Allow reached the agent"
    )


SUPPORT: list[tuple[str, Callable[[System], str]]] = [
    ("question card (elicitation form)", try_question),
    ("permission card", lambda s: try_permission(s, reload=False)),
    ("reload with a pending permission card", lambda s: try_permission(s, reload=True)),
]


def support(system: System) -> None:
    """Each capability tried in turn. An attempt that broke off before the capability
    could show itself (the page did not respond, say) is "not tried", with its error and
    a screenshot, not a "no"."""
    for number, (name, attempt) in enumerate(SUPPORT):
        progress(f"{system.name}: trying {name}")
        try:
            system.support[name] = attempt(system)
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [""])[0]
            shot = FAILURES / f"{system.name}-{number}.png"
            with contextlib.suppress(Exception):
                system.page.screenshot(path=str(shot))
            system.support[name] = f"not tried: {type(exc).__name__} {first[:80]} ({shot})"


# ---------------------------------------------------------------- the run and its table


def number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def spread(values: list[float], unit: str) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{number(low)} / {number(mid)} / {number(high)} {unit}".rstrip()


def ratios(peer_values: list[float], our_values: list[float]) -> str:
    pairs = [
        (min(peer_values), min(our_values)),
        (statistics.median(peer_values), statistics.median(our_values)),
        (max(peer_values), max(our_values)),
    ]
    return " / ".join(number(p / o) if o else "n/a" for p, o in pairs)


def table(count: int, systems: list[System]) -> list[tuple[str, ...]]:
    us, them = (next(s for s in systems if s.name == n) for n in (OURS, PEER))
    measures: list[tuple[str, str, Callable[[Run], float]]] = [
        (f"{count:,}-chunk answer, Enter to all rendered", "s", lambda r: r.seconds),
        ("chunks/s", "", lambda r: r.chunks / r.seconds),
        ("longest main-thread task", "ms", lambda r: r.longest_ms),
        ("server CPU over the answer (server + its children)", "s", lambda r: r.cpu_s),
    ]
    lines: list[tuple[str, ...]] = []
    for name, unit, get in measures:
        a, b = [get(r) for r in us.runs], [get(r) for r in them.runs]
        lines.append((name, spread(a, unit), spread(b, unit), ratios(b, a)))
    for name, _ in SUPPORT:
        lines.append(
            (name, us.support.get(name, "not tried"), them.support.get(name, "not tried"), "")
        )
    lines.append(("JupyterLab dialogs in the way (closed)", _dialogs(us), _dialogs(them), ""))
    return lines


def _dialogs(system: System) -> str:
    if not system.dialogs:
        return "none"
    return f"{len(system.dialogs)}: " + "; ".join(sorted(set(system.dialogs)))


def run(ctx: Context, count: int, runs: int) -> int:
    python = ensure_venv()
    shutil.rmtree(FAILURES, ignore_errors=True)
    FAILURES.mkdir(parents=True)
    systems: list[System] = []
    with chromium() as browser, contextlib.ExitStack() as stack:
        progress(f"starting {OURS}")
        systems.append(stack.enter_context(ours(ctx, browser)))
        progress(f"starting {PEER} {PEER_VERSION}")
        systems.append(stack.enter_context(peer(ctx, browser, python)))
        for system in systems:
            warm_up(system)
        for number in range(1, runs + 1):
            # One chunk more each run: no answer equals the one before it on the page.
            size = count + number - 1
            for system in systems:  # interleaved: A B A B …
                progress(f"run {number}/{runs}: {system.name}, stream {size:,}")
                system.runs.append(system.answer(browser, size))
                last = system.runs[-1]
                progress(
                    f"  {last.seconds:.2f} s, longest task {last.longest_ms:.0f} ms, CPU {last.cpu_s:.2f} s"
                )
        for system in systems:
            support(system)
    print(
        f"{OURS} vs {PEER} {PEER_VERSION}, the same demo agent (`stream {count:,}`, one chunk "
        "more each run so no answer equals the one before it), "
        f"{runs} runs each, interleaved; min / median / max; ratio = {PEER} / {OURS}. "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d', time.gmtime())}."
    )
    print_columns(
        ("measure", OURS, f"{PEER} {PEER_VERSION}", "ratio (min / median / max)"),
        table(count, systems),
    )
    return 0
