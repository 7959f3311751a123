"""The ``mcpServers`` of ``session/new``: the user's own entries, checked, and ours,
and what the session withholds from the agent once it has ours.

ACP wants ``env`` (stdio) and ``headers`` (http, sse) as lists of
``{"name", "value"}``; a plain ``{name: value}`` dict is what people write, and the
claude wrapper refuses it with a bare "Invalid params". So both are accepted here and
turned into the list shape, and anything else is a ``ValueError`` that says where.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

NOTEBOOK = "notebook"
PROXY_MODULE = "acp_notebook.notebook_tools.proxy"
URL_ENV = "ACP_NOTEBOOK_MCP_URL"
SECRET_ENV = "ACP_NOTEBOOK_MCP_SECRET"
# The header that carries a chat's secret to its notebook MCP server.
SECRET_HEADER = "X-Notebook-Secret"
# claude-code's own notebook editor: it rewrites the .ipynb on disk behind the open page
# (a "file changed on disk" conflict, lost keystrokes), where our tools edit the live
# document and have each change reviewed.
CLAUDE_NOTEBOOK_EDITOR = "NotebookEdit"


def _pairs(value: Any, where: str) -> list[dict[str, str]]:
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        items = []
        for pair in value:
            if not (isinstance(pair, Mapping) and set(pair) == {"name", "value"}):
                raise ValueError(
                    f"{where}: each item must be {{'name': ..., 'value': ...}}, got {pair!r:.100}"
                )
            items.append((pair["name"], pair["value"]))
    else:
        raise ValueError(
            f"{where} must be a dict {{name: value}} or a list of {{'name', 'value'}}, "
            f"got {type(value).__name__}"
        )
    for name, val in items:
        if not (isinstance(name, str) and isinstance(val, str)):
            raise ValueError(f"{where}: names and values must be strings ({name!r:.100})")
    return [{"name": name, "value": val} for name, val in items]


def normalize(servers: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The user's MCP servers in ACP's shape; raises ``ValueError`` on anything else."""
    if isinstance(servers, (str, bytes, Mapping)) or not isinstance(servers, Sequence):
        raise ValueError("mcp_servers must be a list of server entries")
    out = []
    for i, server in enumerate(servers):
        where = f"mcp_servers[{i}]"
        if not isinstance(server, Mapping):
            raise ValueError(f"{where} must be a dict, got {type(server).__name__}")
        entry = dict(server)
        if not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ValueError(f"{where} needs a 'name'")
        where = f"mcp_servers[{entry['name']!r}]"
        if entry.get("type") in ("http", "sse"):
            if not isinstance(entry.get("url"), str):
                raise ValueError(f"{where} needs a 'url'")
            entry["headers"] = _pairs(entry.get("headers", []), f"{where}.headers")
        elif "command" in entry:
            if not isinstance(entry["command"], str):
                raise ValueError(f"{where}.command must be a string (the program)")
            args = entry.get("args", [])
            if not (isinstance(args, Sequence) and not isinstance(args, str)) or not all(
                isinstance(a, str) for a in args
            ):
                raise ValueError(f"{where}.args must be a list of strings")
            entry["args"] = list(args)
            entry["env"] = _pairs(entry.get("env", []), f"{where}.env")
        else:
            raise ValueError(f"{where} needs a 'command' (stdio) or a 'type' of http or sse")
        out.append(entry)
    return out


def notebook_entry(url: str, secret: str, capabilities: Any) -> dict[str, Any]:
    """Our ``notebook`` server as the agent can take it: streamable HTTP with the secret in
    a header when it advertises ``mcpCapabilities.http``, else a stdio proxy that gets
    the secret in its environment (never on a command line)."""
    mcp = capabilities.get("mcpCapabilities") if isinstance(capabilities, Mapping) else None
    if isinstance(mcp, Mapping) and mcp.get("http") is True:
        return {
            "type": "http",
            "name": NOTEBOOK,
            "url": url,
            "headers": [{"name": SECRET_HEADER, "value": secret}],
        }
    return {
        "name": NOTEBOOK,
        "command": sys.executable,
        "args": ["-m", PROXY_MODULE],
        "env": [{"name": URL_ENV, "value": url}, {"name": SECRET_ENV, "value": secret}],
    }


def notebook_tools_meta() -> dict[str, Any]:
    """The ``_meta`` of ``session/new`` (and ``session/load`` / ``session/resume``) of a
    chat that has our notebook tools: claude-code withholds its own notebook editor, so
    the model edits notebooks with ours. The claude wrapper merges
    ``claudeCode.options.disallowedTools`` into the tools it withholds; other agents
    ignore a ``_meta`` key that is not theirs."""
    return {"claudeCode": {"options": {"disallowedTools": [CLAUDE_NOTEBOOK_EDITOR]}}}
