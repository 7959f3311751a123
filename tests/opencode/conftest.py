"""Fixtures for tests against the real opencode (``opencode acp``) and the mock model API."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.chat import Chat

from ..mock_openai import MockOpenAI

HERE = Path(__file__).resolve().parent
# opencode-ai's own launcher package cannot be locked here (the registry this project
# installs from lacks its other platforms' packages, which `npm ci` then misses), so the
# lock pins the linux-x64 binary that opencode-ai runs on this platform.
OPENCODE_BIN = HERE / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"


@pytest.fixture
def opencode_bin() -> Path:
    """The opencode binary; fails (never skips) when ``npm ci`` was not run in tests/opencode."""
    if not OPENCODE_BIN.exists():
        pytest.fail(
            f"{OPENCODE_BIN} is missing: run `npm ci` in tests/opencode (installs the "
            "opencode binary pinned in tests/opencode/package.json)",
            pytrace=False,
        )
    return OPENCODE_BIN


@pytest.fixture
def opencode_chat(
    opencode_bin: Path,
    mock_openai: MockOpenAI,
    tmp_path: Path,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[..., Chat]]:
    """Opens ``Chat("opencode")`` in local mode: the named agent (``opencode acp``, found on
    the chat's PATH) with a provider on the mock's Chat Completions API."""
    # The bridge starts agents with this process's env under the chat's own.
    for key in list(os.environ):
        if key.startswith("OPENCODE_"):
            monkeypatch.delenv(key)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "opencode").symlink_to(opencode_bin)
    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "opencode.json"
    provider = {
        "npm": "@ai-sdk/openai-compatible",  # bundled in the binary: nothing is fetched
        "name": "Mock",
        "options": {"baseURL": mock_openai.base_url, "apiKey": "dummy"},
        "models": {"mock-model": {"name": "Mock model", "tool_call": True}},
    }
    config.write_text(
        json.dumps(
            {
                "provider": {"mock": provider},
                "model": "mock/mock-model",
                "small_model": "mock/mock-model",
                # Ask before shell commands and edits (opencode's default is to allow them).
                "permission": {"bash": "ask", "edit": "ask"},
                "autoupdate": False,
                "share": "disabled",
            }
        )
    )
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OPENCODE_CONFIG": str(config),
        # No models.dev catalogue, update check, default plugins or LSP downloads.
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    }
    chats: list[Chat] = []

    def open_chat(**options: Any) -> Chat:
        chat = Chat("opencode", env=env, cwd=str(workdir), transport="local", **options)
        chats.append(chat)
        return chat

    yield open_chat
    for chat in chats:
        chat.close()
