"""The notebook tools' arguments (one check against each tool's own input schema, a
refusal naming the argument and its bound) and the variables' visibility rules, which
``list_variables`` and ``inspect_variable`` share."""

from __future__ import annotations

import json
import logging
import math
import types
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from acp_notebook.kernel.chat import Chat
from acp_notebook.notebook_tools import arguments, kernel_side, variables
from acp_notebook.notebook_tools.arguments import MAX_NAME, Refused
from acp_notebook.notebook_tools.mcp_endpoint import ToolHost

LONG = "x" * 300


@pytest.mark.parametrize(
    ("tool", "args", "said"),
    [
        ("inspect_variable", {"name": LONG}, "name is 300 characters; at most 256"),
        ("inspect_variable", {"name": ""}, "name is 0 characters; at least 1"),
        ("inspect_variable", {"name": 5}, "name is an integer; it must be a string"),
        ("inspect_variable", {}, "name is needed"),
        ("inspect_variable", {"name": "x", "hidden": "yes"}, "hidden is a string; it must be true"),
        ("read_cells", {"count": 500}, "count is 500; at most 50"),
        ("read_cells", {"count": 0}, "count is 0; at least 1"),
        ("read_cells", {"start": 1.5}, "start is a number; it must be an integer"),
        ("run_code", {"code": "1", "timeout": 3600}, "timeout is 3,600; at most 600"),
        ("run_code", {"code": "1", "timeout": float("nan")}, "timeout is nan (not a finite"),
        ("run_code", {"code": "x" * 200_001}, "code is 200,001 characters; at most 200,000"),
        ("run_code", {}, "code is needed"),
        ("insert_cell", {"source": "1", "cell_type": "py"}, "cell_type is 'py'; it must be one of"),
        ("insert_cell", {"source": "1", "after_cell_id": LONG}, "after_cell_id is 300 characters"),
        ("edit_cell", {"index": "3"}, "index is a string; it must be an integer or null"),
        ("edit_cell", {"cell_id": "a", "rev": LONG}, "rev is 300 characters; at most 64"),
        ("delete_cell", {"index": True}, "index is true or false; it must be an integer"),
        ("move_cell", {"index": 0}, "to_index is needed"),
        ("run_cell", {"index": 0, "timeout": 0}, "timeout is 0; at least 1"),
    ],
)
async def test_every_tool_names_the_argument_and_its_bound(
    tool: str, args: dict[str, Any], said: str, caplog: pytest.LogCaptureFixture
) -> None:
    host = ToolHost()  # the check runs before the tool: no chat, no endpoint needed
    with caplog.at_level(logging.INFO), pytest.raises(ToolError) as refused:
        await host.mcp.call_tool(tool, args)
    assert said in str(refused.value), str(refused.value)
    assert str(refused.value).startswith("Not done: ")
    # One line in the log, no traceback.
    warned = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and not warned[0].exc_info, caplog.text
    assert "\n" not in warned[0].getMessage()


async def test_the_schema_the_agent_reads_carries_the_bounds() -> None:
    schemas = {t.name: t.input_schema for t in await ToolHost().mcp.list_tools()}
    name = schemas["inspect_variable"]["properties"]["name"]
    assert name["maxLength"] == MAX_NAME and name["minLength"] == 1
    assert schemas["read_cells"]["properties"]["count"]["maximum"] == 50
    assert schemas["run_code"]["properties"]["timeout"]["maximum"] == 600


def test_the_check_itself() -> None:
    schema = {
        "properties": {
            "n": {"type": "integer", "minimum": -2, "maximum": 10**30},
            "s": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]},
            "any": {},
        },
        "required": ["n"],
    }
    arguments.check(schema, {"n": 3, "s": None, "any": object(), "unknown": 1})
    arguments.check(schema, {"n": -2, "s": "abc"})
    cases: list[tuple[dict[str, Any], str]] = [
        ({"n": 10**40}, "n is 10,000,000,000,000,000,000,000,000,000,000,000,000,000; at most"),
        ({"n": -3}, "n is -3; at least -2"),
        ({"n": 1, "s": "abcd"}, "s is 4 characters; at most 3"),
        ({"n": 1, "s": 4}, "s is an integer; it must be a string or null"),
        ({"n": [1]}, "n is a list; it must be an integer"),
        ({"n": {"a": 1}}, "n is an object; it must be an integer"),
        ({"n": float("inf")}, "n is inf (not a finite number); it must be an integer"),
    ]
    for args, said in cases:
        with pytest.raises(Refused) as refused:
            arguments.check(schema, args)
        assert str(refused.value).startswith(said), str(refused.value)


def test_the_kernel_side_checks_the_same_way() -> None:
    with pytest.raises(Refused, match="name is 300 characters; at most 256"):
        kernel_side.answer("inspect_variable", {"name": LONG})
    with pytest.raises(Refused, match="name is needed"):
        kernel_side.answer("mention_attach", {})


def test_inspect_follows_the_listing_rules() -> None:
    module = types.ModuleType("pandas_like")

    def helper() -> None: ...

    class Mine: ...

    helper.__module__ = Mine.__module__ = "__main__"  # as a notebook cell defines them
    namespace: dict[str, Any] = {
        "__builtins__": {"secret": 1},
        "_ih": ["", "x = 1"],
        "_1": 1,
        "In": ["", "x = 1"],
        "pd": module,
        "sales": [1, 2, 3],
        "Chat": Chat,
        "sqrt": math.sqrt,
        "dumps": json.dumps,
        "helper": helper,
        "Mine": Mine,
    }
    listed = [name for name, _ in variables.user_variables(namespace)]
    # The user's data and own code; not what they imported.
    assert listed == ["Mine", "helper", "sales"]
    assert "## length\n3" in variables.inspect_variable("sales", namespace)
    for name, rule in [
        ("__builtins__", "names starting with _"),
        ("_ih", "names starting with _"),
        ("_1", "names starting with _"),
        ("In", "IPython's own names"),
        ("pd", "modules (imports)"),
        ("Chat", "classes and functions imported from modules"),
        ("sqrt", "classes and functions imported from modules"),
    ]:
        said = variables.inspect_variable(name, namespace)
        assert said.startswith(f"Not shown: {name!r} is hidden, as list_variables hides "), said
        assert rule in said and "hidden=true" in said
        assert "secret" not in said
        # The explicit opt-in reads it.
        assert variables.inspect_variable(name, namespace, hidden=True).startswith(f"{name}: ")
    assert variables.inspect_variable("missing", namespace).startswith("No variable named")
