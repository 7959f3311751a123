"""Agents by name resolve to the command line and environment each needs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_notebook.agent.catalogue import UnknownAgent, resolve_agent


def test_claude_code_prefers_an_installed_adapter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    spec = resolve_agent("claude-code")
    assert spec.argv == ("npx", "-y", "@agentclientprotocol/claude-agent-acp")
    assert spec.env["CLAUDE_CODE_ENABLE_TODO_TOOLS"] == "1" and spec.mode == "default"
    # MCP servers connected before session/new answers: the wrapper's sign-in check sees
    # them (tests/claude/test_mcp_oauth.py).
    assert spec.env["MCP_CONNECTION_NONBLOCKING"] == "0"
    assert spec.drop == {"IS_SANDBOX"}
    for name in ("claude-agent-acp", "codex-acp"):
        binary = tmp_path / name
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    assert resolve_agent("claude-code").argv == (str(tmp_path / "claude-agent-acp"),)
    assert resolve_agent("codex").argv == (str(tmp_path / "codex-acp"),)


def test_overrides_and_commands() -> None:
    spec = resolve_agent(
        "claude-code", mode="plan", env={"X": "1"}, commands={"claude-code": ["/opt/c"]}
    )
    assert spec.argv == ("/opt/c",) and spec.mode == "plan"
    assert spec.env == {
        "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1",
        "MCP_CONNECTION_NONBLOCKING": "0",
        "X": "1",
    }
    custom = resolve_agent(command=["/usr/bin/my-agent", "--acp"], env={"K": "v"})
    assert (
        custom.name == "my-agent"
        and custom.argv == ("/usr/bin/my-agent", "--acp")
        and custom.env == {"K": "v"}
    )
    assert resolve_agent("opencode").argv == ("opencode", "acp")
    assert resolve_agent().name == "demo" and resolve_agent().argv[1:] == (
        "-m",
        "acp_notebook.demo.agent",
    )


@pytest.mark.parametrize(
    "bad", [{"agent": "nope"}, {"command": []}, {"agent": "x", "commands": {"x": []}}]
)
def test_bad_agents_are_clear_errors(bad: dict[str, object]) -> None:
    with pytest.raises(UnknownAgent):
        resolve_agent(**bad)  # type: ignore[arg-type]


def test_unused_environment_is_not_mutated() -> None:
    before = dict(os.environ)
    resolve_agent("claude-code", env={"Y": "2"})
    assert dict(os.environ) == before
