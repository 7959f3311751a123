"""Fixtures for tests against the real opencode (``opencode acp``) and the mock model API."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.agent_chats import chat_opener, drop_env, installed
from tests.support.mock_openai import MockOpenAI

HERE = Path(__file__).resolve().parent
# opencode-ai's own launcher package cannot be locked here (the registry this project
# installs from lacks its other platforms' packages, which `npm ci` then misses), so the
# lock pins the linux-x64 binary that opencode-ai runs on this platform.
OPENCODE_BIN = HERE / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"


@pytest.fixture
def opencode_bin() -> Path:
    return installed(OPENCODE_BIN, "opencode", "the opencode binary pinned in its package.json")


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
    drop_env(monkeypatch, "OPENCODE_")
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
    with chat_opener("opencode", env=env, cwd=str(workdir)) as open_chat:
        yield open_chat
