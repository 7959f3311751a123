"""Fixtures for tests against the real codex-acp adapter and the mock Responses API."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.chat import Chat

from ..mock_openai import MockOpenAI

HERE = Path(__file__).resolve().parent
CODEX_ACP_BIN = HERE / "node_modules" / ".bin" / "codex-acp"


@pytest.fixture
def codex_bin() -> Path:
    """The adapter's bin; fails (never skips) when ``npm ci`` was not run in tests/codex."""
    if not CODEX_ACP_BIN.exists():
        pytest.fail(
            f"{CODEX_ACP_BIN} is missing: run `npm ci` in tests/codex (installs "
            "@agentclientprotocol/codex-acp pinned in tests/codex/package.json)",
            pytrace=False,
        )
    return CODEX_ACP_BIN


@pytest.fixture
def codex_chat(
    codex_bin: Path,
    mock_openai: MockOpenAI,
    tmp_path: Path,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[..., Chat]]:
    """Opens ``Chat("codex", command=[codex-acp])`` in local mode on the mock API.

    Codex reads its provider from ``$CODEX_HOME/config.toml``: a ``mock`` provider with
    the mock's base URL and the Responses wire API, chosen with ``MODEL_PROVIDER``.
    """
    # The bridge starts agents with this process's env under the chat's own.
    for key in list(os.environ):
        if key.startswith(("OPENAI_", "CODEX_")):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    codex_home = tmp_path / "codex-home"
    home.mkdir()
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model = "mock-model"\n'
        'model_provider = "mock"\n'
        "[model_providers.mock]\n"
        'name = "Mock"\n'
        f'base_url = "{mock_openai.base_url}"\n'
        'wire_api = "responses"\n'
        'env_key = "MOCK_API_KEY"\n'
    )
    env = {
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "MODEL_PROVIDER": "mock",
        "MOCK_API_KEY": "dummy",
        "NO_BROWSER": "1",  # no ChatGPT browser login offered
    }
    chats: list[Chat] = []

    def open_chat(**options: Any) -> Chat:
        chat = Chat(
            "codex",
            command=[str(codex_bin)],
            env=env,
            cwd=str(workdir),
            transport="local",
            **options,
        )
        chats.append(chat)
        return chat

    yield open_chat
    for chat in chats:
        chat.close()
