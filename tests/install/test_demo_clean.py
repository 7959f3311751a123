"""`make demo` on a clean clone leaves it clean: the quickstart it opens, and JupyterLab's
saves of it, are copies in the ignored ``playground/``, and the printed link opens the
quickstart (JupyterLab 4's /lab/tree/<path>).

The clone is this checkout's files (tracked or not ignored) committed in a new repository.
``make -o demo-setup`` runs the demo target's own recipe with this environment's install
(what the setup builds is checked by test_install.py and every other test)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.lab import free_port
from tests.support.user_env import user_env

REPO = Path(__file__).resolve().parents[2]
TOKEN = "demo-clean-token"
START_TIMEOUT = 90.0


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def clean_clone(target: Path) -> Path:
    """This checkout's files as a fresh clone would have them, committed."""
    listed = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():  # not a deleted file, nor a link to a directory
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)
    git(target, "init", "-q")
    git(target, "add", "-A")
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    git(target, *identity, "commit", "-q", "-m", "clone")
    return target


def request(url: str, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    sent = urllib.request.Request(url, data=data, method=method)
    sent.add_header("Authorization", f"token {TOKEN}")
    with urllib.request.urlopen(sent, timeout=30) as response:
        text = response.read().decode()
        return json.loads(text) if text.startswith(("{", "[")) else text


def first_answer(url: str, deadline: float) -> Any:
    """``request(url)`` once the server answers: in one CI run the first request, sent
    the moment the link was printed, failed at once."""
    while True:
        try:
            return request(url)
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.timeout(300)
def test_make_demo_leaves_a_clean_clone_clean(tmp_path: Path) -> None:
    clone = clean_clone(tmp_path / "clone")
    original = (clone / "notebooks" / "quickstart.ipynb").read_bytes()
    # The server's own settings stay out of this machine's Jupyter set-up.
    config = tmp_path / "config"
    config.mkdir()
    port = free_port()
    server = {"ip": "127.0.0.1", "port": port, "port_retries": 0, "open_browser": False}
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": server, "IdentityProvider": {"token": TOKEN}})
    )
    env = user_env("JUPYTER")
    env.update(
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        HOME=str(tmp_path / "home"),
    )
    venv = Path(sys.executable).parent.parent  # this environment, set up already
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        make = subprocess.Popen(
            ["make", "-o", "demo-setup", "demo", f"VENV={venv}"],
            cwd=clone,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while "/lab/tree/quickstart.ipynb?token=" not in log.read_text(errors="replace"):
            assert make.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.2)
        printed = log.read_text(errors="replace")
        # The link the demo prints opens the quickstart (a token from config prints as ...).
        assert f"{base}/lab/tree/quickstart.ipynb?token=" in printed, printed
        page = first_answer(f"{base}/lab/tree/quickstart.ipynb", deadline)
        assert "jupyter-config-data" in page
        # JupyterLab opens it and saves it (autosave does the same): into the copy.
        model = request(f"{base}/api/contents/quickstart.ipynb")
        notebook = model["content"]
        notebook["cells"][1]["outputs"] = [
            {"output_type": "stream", "name": "stdout", "text": "run in the demo\n"}
        ]
        notebook["cells"][1]["execution_count"] = 1
        saved = {"type": "notebook", "format": "json", "content": notebook}
        request(f"{base}/api/contents/quickstart.ipynb", "PUT", saved)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGTERM)  # make and the server it runs
        try:
            make.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(make.pid, signal.SIGKILL)
            make.wait(5)

    copy = clone / "playground" / "quickstart.ipynb"
    assert "run in the demo" in copy.read_text()
    assert (clone / "notebooks" / "quickstart.ipynb").read_bytes() == original
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == ""
    # A second demo keeps the person's copy as it is.
    again = subprocess.run(
        [sys.executable, "scripts/demo_notebooks.py", "notebooks", "playground"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    )
    assert re.search(r"playground/: 0 file\(s\) copied", again.stdout), again.stdout
    assert "run in the demo" in copy.read_text()
