"""Fixtures for tests against the real codex-acp adapter and the mock Responses API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.agent_chats import chat_opener, drop_env, installed
from tests.support.mock_openai import MockOpenAI

HERE = Path(__file__).resolve().parent
CODEX_ACP_BIN = HERE / "node_modules" / ".bin" / "codex-acp"


@pytest.fixture
def codex_bin() -> Path:
    return installed(
        CODEX_ACP_BIN, "codex", "@agentclientprotocol/codex-acp pinned in its package.json"
    )


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
    drop_env(monkeypatch, "OPENAI_", "CODEX_")
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
    with chat_opener("codex", command=[str(codex_bin)], env=env, cwd=str(workdir)) as open_chat:
        yield open_chat
