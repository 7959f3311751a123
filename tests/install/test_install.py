"""Install check: a real ``pip install`` of the repository into a fresh venv enables the
server extension (the ``jupyter_server_config.d`` data file) and the JupyterLab extension
(its prebuilt labextension, shared data). It builds both bundles, so it needs node/npm and
the package index (or pip's cache); a few minutes at most."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(600)
def test_pip_install_enables_both_extensions(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # Only the fresh venv's own config: no user or project config dirs.
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV"))
        },
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
    }
    subprocess.run(
        # JupyterLab too, for `jupyter labextension list` (the package does not need it).
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            str(REPO),
            "jupyterlab>=4.4",
        ],
        check=True,
        env=env,
        cwd=tmp_path,
        timeout=540,
    )
    listed = subprocess.run(
        [str(venv / "bin" / "jupyter"), "server", "extension", "list"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)  # no colours
    # Enabled by the data file pip put into the venv, and importable from there.
    assert f"Config dir: {venv}/etc/jupyter\n    acp_notebook enabled" in output, output
    assert "acp_notebook 0.1.0 OK" in output, output
    # The wheel carries the widget the package build made (the browser tests render it).
    static = subprocess.run(
        [str(python), "-c", "import acp_notebook.kernel.widget_code as w; print(w.STATIC)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout.strip()
    assert static.startswith(str(venv)), static
    bundle = Path(static) / "widget.js"
    assert bundle.stat().st_size > 50_000 and b"export" in bundle.read_bytes()
    assert b".acpnb-root" in bundle.read_bytes()  # its stylesheet, which it adds to the page
    # The prebuilt JupyterLab extension, enabled by the same install.
    labextensions = subprocess.run(
        [str(venv / "bin" / "jupyter"), "labextension", "list"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    listing = re.sub(r"\x1b\[[0-9;]*m", "", labextensions.stdout + labextensions.stderr)
    assert f"{venv}/share/jupyter/labextensions" in listing, listing
    assert re.search(r"acp-notebook v0\.1\.0 enabled\s+OK", listing), listing
    shipped = venv / "share" / "jupyter" / "labextensions" / "acp-notebook"
    assert (shipped / "install.json").exists()
    entries = list((shipped / "static").glob("remoteEntry.*.js"))
    assert len(entries) == 1, entries
