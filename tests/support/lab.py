"""A real Jupyter server for the browser tests, and helpers to drive notebooks in it.

One server per test session (JupyterLab and Notebook 7 both serve from it), with its own
config, runtime, data, settings and workspace directories, so nothing of the machine's
Jupyter setup leaks in and a restored layout can't get in the way. The acp_notebook
extension is not enabled here: installing the package enables it, and the fixture checks
that it was. Real-time collaboration is off unless ``start_server(rtc=True)``
(``support.collaboration``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from playwright.sync_api import Locator, Page, expect

from . import collaboration
from .processes import terminate
from .user_env import user_env

REPO = Path(__file__).resolve().parents[2]
TOKEN = "acp-e2e-token"
START_TIMEOUT = 60.0
THEMES_SETTINGS = "@jupyterlab/apputils-extension/themes.jupyterlab-settings"
# The demo agent (started by the server in server mode) answers without pacing.
SERVER_ENV = {"ACP_DEMO_DELAY": "0"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class JupyterServer:
    """A running ``jupyter lab`` process; ``url(path)`` adds the token."""

    root: Path
    settings: Path
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    def url(self, path: str, token: str = TOKEN) -> str:
        """``path`` on this server, logged in with ``token`` (another person's, say)."""
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}{sep}token={token}"

    def status(self, path: str) -> int:
        try:
            with urllib.request.urlopen(self.url(path), timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return error.code

    def get_json(self, path: str) -> Any:
        with urllib.request.urlopen(self.url(path), timeout=5) as response:
            return json.load(response)

    def shut_down_kernel(self, filename: str) -> None:
        """Ends the notebook's session and its kernel (the chats go with it), as a user would."""
        [session] = [s for s in self.get_json("api/sessions") if s["path"] == filename]
        request = urllib.request.Request(self.url(f"api/sessions/{session['id']}"), method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def set_theme(self, theme: str | None) -> None:
        """JupyterLab's theme for pages loaded from now on (None: the default, light)."""
        path = self.settings / THEMES_SETTINGS
        if theme is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"theme": theme}))

    def stop(self) -> None:
        # SIGTERM lets the server shut its kernels (and their agents) down cleanly.
        terminate(self.proc, 20)


def checkout_env() -> dict[str, str]:
    """``extra_env`` for a server that imports a module of this checkout (a test extension,
    a test identity provider): the checkout first on its path."""
    return {
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    }


def start_server(
    base: Path,
    port: int | None = None,
    extra_env: Mapping[str, str] | None = None,
    python: str = sys.executable,
    extra_args: Sequence[str] = (),
    rtc: bool = False,
    extensions: Mapping[str, bool] | None = None,
) -> JupyterServer:
    """A server on ``base``'s directories; ``port`` (and the same ``base``) to restart one;
    ``extra_env`` on top of the server's own (an agent's settings); ``python`` of another
    environment and ``extra_args`` to its command line (the peer benchmark's JupyterLab);
    ``rtc``: real-time collaboration on (jupyter-collaboration installed); ``extensions``:
    more server extensions on or off (the server must be able to import them)."""
    root, settings, workspaces = base / "root", base / "settings", base / "workspaces"
    dirs = {name: base / name for name in ("config", "runtime", "data", "ipython", "home")}
    for path in (root, settings, workspaces, *dirs.values()):
        path.mkdir(parents=True, exist_ok=True)
    # No news toast, no update check: they would cover the notebook.
    notification = settings / "@jupyterlab/apputils-extension/notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # Questions stay open long enough for the slow cases (a blocked kernel, a reload);
    # collaboration on or off for the server (its extensions) and the pages (theirs).
    server_config = {
        "AcpNotebookApp": {"answer_timeout": 180},
        "ServerApp": {
            "jpserver_extensions": {**collaboration.server_extensions(rtc), **(extensions or {})}
        },
    }
    (dirs["config"] / "jupyter_server_config.json").write_text(json.dumps(server_config))
    labconfig = dirs["config"] / "labconfig"
    labconfig.mkdir(exist_ok=True)
    (labconfig / "page_config.json").write_text(json.dumps(collaboration.page_config(rtc)))
    env = user_env("JUPYTER")  # this machine's Jupyter paths and settings stay out too
    env.update(SERVER_ENV)
    env.update(
        HOME=str(dirs["home"]),
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        IPYTHONDIR=str(dirs["ipython"]),
    )
    # This checkout's own build of the lab extension, ahead of the installed one (an
    # editable install of another checkout would serve that checkout's build).
    built = REPO / "acp_notebook" / "labextension"
    link = dirs["data"] / "labextensions" / "acp-notebook"
    if (built / "package.json").exists() and not link.is_symlink():
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(built)
    env["JUPYTER_PREFER_ENV_PATH"] = "0"  # the data directory above before the environment's
    env.update(extra_env or {})
    port = port or free_port()
    log = base / "server.log"
    argv = [
        python,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={workspaces}",
        *extra_args,
    ]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            argv, env=env, cwd=root, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = JupyterServer(root, settings, port, proc, log)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited ({proc.returncode}):\n{server.log_text()}")
        with contextlib.suppress(OSError):
            if server.status("api/status") == 200:
                return server
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"jupyter lab did not answer in {START_TIMEOUT} s")
        time.sleep(0.2)


def collaborative_server(base: Path) -> Iterator[JupyterServer]:
    """A server with real-time collaboration on (a module fixture yields from it)."""
    lab = start_server(base, rtc=True)
    try:
        assert "jupyter_server_ydoc | extension was successfully loaded" in lab.log_text()
        yield lab
    finally:
        lab.stop()


# ---------------------------------------------------------------- notebooks


def unique(name: str) -> str:
    """``name`` made unique, for a notebook no other test writes."""
    return f"{name}-{uuid.uuid4().hex[:6]}"


def write_notebook(server: JupyterServer, name: str, cells: Sequence[str]) -> str:
    """A notebook of code cells in the server's root; returns its file name."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in cells],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    filename = f"{name}.ipynb"
    nbformat.write(nb, server.root / filename)
    return filename


def code_cells(path: Path) -> list[int]:
    """The indexes of a notebook's code cells (the DOM has one .jp-Cell per cell)."""
    nb = nbformat.read(path, as_version=4)
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def copy_cleared(source: Path, target: Path) -> None:
    """A copy without outputs or execution counts, as if never run."""
    nb = nbformat.read(source, as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    nbformat.write(nb, target)


def open_notebook(
    page: Page, server: JupyterServer, filename: str, app: str = "lab", token: str = TOKEN
) -> None:
    """Open a notebook in JupyterLab (``lab``) or Notebook 7 (``notebook``), kernel ready,
    logged in with ``token``.

    JupyterLab opens it in a reset workspace, so no notebook of an earlier test comes back.
    """
    path = f"lab/tree/{filename}?reset" if app == "lab" else f"notebooks/{filename}"
    page.goto(server.url(path, token))
    expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=60_000)
    wait_for_kernel(page, server, filename)


def wait_for_kernel(page: Page, server: JupyterServer, filename: str) -> None:
    """Until the page is connected to an idle kernel: a cell run before that is dropped.

    The page's indicator says "idle" once before the kernel even starts, so the server's
    view (the kernel has a connection) comes first.
    """
    deadline = time.monotonic() + START_TIMEOUT
    while not any(
        session["path"] == filename
        and session["kernel"]["execution_state"] == "idle"
        and session["kernel"]["connections"] > 0
        for session in server.get_json("api/sessions")
    ):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no kernel connected to {filename} in {START_TIMEOUT} s")
        time.sleep(0.1)
    indicator = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    expect(indicator.first).to_be_attached(timeout=60_000)


def command_chat(command: Sequence[str]) -> str:
    """A cell that shows a chat with the agent ``command`` starts."""
    return f"from acp_notebook import Chat\nchat = Chat(command={list(command)!r})\nchat"


def open_chat_notebook(
    page: Page, server: JupyterServer, name: str, code: str, app: str = "lab"
) -> str:
    """Writes a notebook whose one cell is ``code``, opens it (in ``app``, as
    ``open_notebook``) and runs the cell."""
    filename = write_notebook(server, unique(name), [code])
    open_notebook(page, server, filename, app)
    run_cell(page, 0)
    return filename


def cell(page: Page, index: int) -> Locator:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def run_cell(page: Page, index: int, wait: bool = True) -> Locator:
    """Run one cell the way a person does (click its editor, Shift+Enter); returns the cell."""
    target = cell(page, index)
    # Click the editor every time: a click in a widget moves the focus out of the notebook.
    target.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    if wait:
        finished = re.compile(r"\[\d+\]")
        expect(target.locator(".jp-InputPrompt")).to_have_text(finished, timeout=60_000)
    return target


def save(page: Page) -> None:
    """Save the notebook (Ctrl+S from command mode) so a reload keeps its outputs."""
    # A click on a prompt leaves the focus in an output's input (a chat's composer) where
    # it was, and shortcuts from there are suppressed: let go of it first.
    page.evaluate("document.activeElement?.blur()")
    cell(page, 0).locator(".jp-InputPrompt").click()  # focus the notebook, not a widget
    page.keyboard.press("Control+s")
    # The dirty marker on the tab (JupyterLab) or title (Notebook 7) goes away once saved.
    expect(page.locator(".jp-mod-dirty")).to_have_count(0, timeout=30_000)


# ---------------------------------------------------------------- the chat widget


def chat(page: Page) -> Locator:
    """The chat widget of the page (tests display one chat per notebook)."""
    return page.locator(".acpnb-root").last


def question_card(page: Page) -> Locator:
    return chat(page).locator(".acpnb-card-elicitation")


def permission_card(page: Page) -> Locator:
    return chat(page).locator(".acpnb-card-permission")


def agent_text(page: Page) -> Locator:
    return chat(page).locator(".acpnb-agent").last


def send(page: Page, prompt: str) -> None:
    """Type a prompt in the chat's composer and press Enter."""
    box = chat(page).locator("textarea.acpnb-composer-input")
    box.click()
    box.fill(prompt)
    box.press("Enter")


# ---------------------------------------------------------------- the Agent panel


def agent_panel(page: Page) -> Locator:
    return page.locator("#acp-notebook-panel")


def open_panel(page: Page) -> Locator:
    """Opens the Agent panel with its keyboard shortcut, as a person would."""
    cell(page, 0).locator(".jp-InputPrompt").click()  # focus the notebook, not an editor
    page.keyboard.press("Control+Shift+Y")
    panel = agent_panel(page)
    expect(panel).to_be_visible()
    return panel


def send_in(box: Locator, prompt: str) -> None:
    composer = box.locator("textarea.acpnb-composer-input")
    composer.click()
    composer.fill(prompt)
    composer.press("Enter")
