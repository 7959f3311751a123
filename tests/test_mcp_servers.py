"""The user's MCP servers: ACP's list shape or a plain dict env; anything else says where."""

from __future__ import annotations

import sys

import pytest

from acp_notebook.agent.mcp_servers import SECRET_HEADER, normalize, notebook_entry


def test_a_dict_env_becomes_acp_pairs() -> None:
    servers = normalize([{"name": "db", "command": "db-mcp", "env": {"TOKEN": "t"}}])
    assert servers == [
        {"name": "db", "command": "db-mcp", "args": [], "env": [{"name": "TOKEN", "value": "t"}]}
    ]
    listed = [{"name": "db", "command": "x", "args": ["-v"], "env": [{"name": "A", "value": "1"}]}]
    assert normalize(listed) == listed
    http = normalize(
        [{"type": "http", "name": "web", "url": "http://h/mcp", "headers": {"A": "b"}}]
    )
    assert http[0]["headers"] == [{"name": "A", "value": "b"}]


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ({"name": "db"}, "must be a list"),
        (["db"], r"mcp_servers\[0\] must be a dict"),
        ([{"command": "x"}], "needs a 'name'"),
        ([{"name": "db"}], "needs a 'command'"),
        ([{"name": "db", "command": ["x"]}], "command must be a string"),
        ([{"name": "db", "command": "x", "env": "A=1"}], "env must be a dict"),
        ([{"name": "db", "command": "x", "env": [{"A": "1"}]}], "each item must be"),
        ([{"name": "db", "command": "x", "env": {"A": 1}}], "must be strings"),
        ([{"type": "http", "name": "web"}], "needs a 'url'"),
    ],
)
def test_anything_else_is_a_clear_error(servers: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalize(servers)  # type: ignore[arg-type]


def test_the_notebook_entry_follows_the_agents_capabilities() -> None:
    http = notebook_entry("http://127.0.0.1:1/mcp", "s3cret", {"mcpCapabilities": {"http": True}})
    assert http == {
        "type": "http",
        "name": "notebook",
        "url": "http://127.0.0.1:1/mcp",
        "headers": [{"name": SECRET_HEADER, "value": "s3cret"}],
    }
    for capabilities in (None, {}, {"mcpCapabilities": {"http": False, "sse": True}}):
        stdio = notebook_entry("http://127.0.0.1:1/mcp", "s3cret", capabilities)
        assert stdio["command"] == sys.executable
        assert "s3cret" not in " ".join(stdio["args"])  # only in the env
        assert {"name": "ACP_NOTEBOOK_MCP_SECRET", "value": "s3cret"} in stdio["env"]
