"""The Agent panel's keyboard shortcut is free in JupyterLab's and Notebook 7's defaults."""

from __future__ import annotations

import json
import re
from pathlib import Path

from jupyterlab.commands import get_app_dir

REPO = Path(__file__).resolve().parents[1]
INDEX = REPO / "js" / "src" / "lab" / "index.ts"


SCHEMAS = Path(get_app_dir()) / "schemas"


def default_shortcuts() -> dict[str, str]:
    """Every default key sequence of the installed JupyterLab and Notebook 7 -> its command."""
    found: dict[str, str] = {}
    for path in SCHEMAS.rglob("*.json"):
        schema = json.loads(path.read_text())
        for shortcut in schema.get("jupyter.lab.shortcuts", []):
            found[" ".join(shortcut.get("keys", []))] = shortcut.get("command", "")
    return found


def test_the_open_panel_shortcut_clashes_with_no_default() -> None:
    keys = re.search(r"OPEN_KEYS = \[([^\]]*)\]", INDEX.read_text())
    assert keys is not None
    ours = " ".join(json.loads(f"[{keys.group(1)}]"))
    shortcuts = default_shortcuts()
    # Both apps' schemas are there (the check would pass vacuously otherwise).
    assert (SCHEMAS / "@jupyterlab").is_dir() and (SCHEMAS / "@jupyter-notebook").is_dir()
    assert shortcuts.get("Accel Shift C") == "apputils:activate-command-palette"
    assert len(shortcuts) > 100, len(shortcuts)
    assert ours not in shortcuts, shortcuts.get(ours)
