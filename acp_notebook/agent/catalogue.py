"""Agents by name: the command line and environment each one needs."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class AgentSpec:
    """How to start one agent, and what to do right after ``session/new``."""

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    # Mode to set after session/new (claude's wrapper otherwise starts in `auto`
    # and asks no permission at all).
    mode: str | None = None
    # Variables of our own environment the agent must not inherit (``env`` still wins).
    drop: frozenset[str] = frozenset()


class UnknownAgent(ValueError):
    pass


def _installed_or_npx(command: str, package: str) -> tuple[str, ...]:
    """The installed adapter if it is on PATH, else npx (which may download it once)."""
    installed = shutil.which(command)
    return (installed,) if installed else ("npx", "-y", package)


def builtin_agents() -> dict[str, AgentSpec]:
    # Plans only appear with the task tools on (reference/acp-protocol.md §7). As root
    # with IS_SANDBOX set (containers), the wrapper asks the CLI to skip permissions and
    # the CLI refuses to start; without it, the session just asks permission as usual.
    # Claude Code connects MCP servers in the background unless told not to; the wrapper
    # looks for those that need a sign-in once, right after session/new, when they are
    # still connecting, so it would never ask (dist/acp-agent.js, authenticateMcpServers).
    # Connected first, a server that needs OAuth gets its sign-in card at startup; an
    # unreachable one delays the start by about 5 s.
    claude = AgentSpec(
        "claude-code",
        _installed_or_npx("claude-agent-acp", "@agentclientprotocol/claude-agent-acp"),
        {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1", "MCP_CONNECTION_NONBLOCKING": "0"},
        mode="default",
        drop=frozenset({"IS_SANDBOX"}),
    )
    return {
        "demo": AgentSpec("demo", (sys.executable, "-m", "acp_notebook.demo.agent")),
        "claude-code": claude,
        "codex": AgentSpec(
            "codex", _installed_or_npx("codex-acp", "@agentclientprotocol/codex-acp")
        ),
        "opencode": AgentSpec("opencode", ("opencode", "acp")),
        "deepseek": AgentSpec("deepseek", ("dsh-acp",)),
    }


def resolve_agent(
    agent: str | None = None,
    *,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    mode: str | None = None,
    commands: Mapping[str, Sequence[str]] | None = None,
) -> AgentSpec:
    """Turn ``Chat(agent, command=..., env=..., mode=...)`` into an ``AgentSpec``.

    ``commands`` overrides the command line of a named agent (server configuration).
    """
    extra = dict(env or {})
    if command is not None:
        argv = tuple(str(part) for part in command)
        if not argv:
            raise UnknownAgent("command must not be empty")
        return AgentSpec(agent or os.path.basename(argv[0]), argv, extra, mode)
    name = agent or "demo"
    known = builtin_agents()
    if commands and name in commands:
        argv = tuple(str(part) for part in commands[name])
        if not argv:
            raise UnknownAgent(f"the command configured for {name!r} is empty")
        spec = replace(known.get(name, AgentSpec(name, ())), argv=argv)
    elif name in known:
        spec = known[name]
    else:
        raise UnknownAgent(
            f"unknown agent {name!r}; use one of {', '.join(sorted(known))} or command=[...]"
        )
    return replace(spec, env={**spec.env, **extra}, mode=mode or spec.mode)
