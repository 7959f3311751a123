"""js/src/contracts.ts is what scripts/gen_contracts.py makes of contracts.py, fresh.

The file is generated from the JSON Schema of the Python contracts; these tests prove
the checked-in file equals a fresh generation, that every model of the wire's unions
gets an interface (a model added in Python appears in TS), that the rendering says
what the schema says, and that the generator's ``--check`` fails on a stale file.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, Literal, Union

import pytest
from pydantic import Field
from typing_extensions import TypedDict

from acp_notebook.wire import contracts

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS_TS = ROOT / "js" / "src" / "contracts.ts"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_contracts", ROOT / "scripts" / "gen_contracts.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _generator()


def _interfaces(source: str) -> dict[str, list[str]]:
    """Each ``export interface``'s property lines."""
    found = re.finditer(r"^export interface (\w+) \{\n(.*?)^\}", source, re.MULTILINE | re.DOTALL)
    return {m[1]: [line.strip() for line in m[2].splitlines()] for m in found}


def _alias_members(source: str, name: str) -> list[str]:
    m = re.search(rf"^export type {name} =([^;]*);", source, re.MULTILINE)
    assert m, f"no alias {name}"
    return [part.strip() for part in m[1].split("|") if part.strip()]


def test_contracts_ts_is_a_fresh_generation() -> None:
    fresh = gen.generate(gen.wire_schema(), gen.constants())
    assert CONTRACTS_TS.read_text() == fresh, "run `python scripts/gen_contracts.py`"
    assert fresh.startswith("// Generated from acp_notebook/wire/contracts.py")


def test_every_model_of_the_unions_is_an_interface() -> None:
    schema = gen.wire_schema()
    source = CONTRACTS_TS.read_text()
    interfaces = _interfaces(source)
    unions = {
        # A model may take several tags (CellEdit's ops), so members are a set.
        name: sorted({ref.rsplit("/", 1)[-1] for ref in d["discriminator"]["mapping"].values()})
        for name, d in schema["$defs"].items()
        if "discriminator" in d
    }
    assert {"StreamEvent", "ClientRequest", "ContentBlock", "SnapshotItem"} <= unions.keys()
    assert len(unions["StreamEvent"]) == 13 and len(unions["ClientRequest"]) == 17
    for name, members in unions.items():
        assert sorted(_alias_members(source, name)) == members, name
        assert set(members) <= interfaces.keys(), name
    # Every model and TypedDict the schema reaches is an interface, and nothing else is.
    models = {n for n, d in schema["$defs"].items() if "properties" in d}
    assert models == interfaces.keys()
    roots = {"Ack", "EventBatch", "FoldSnapshot", "SavedChatData", "KernelQuery", "KernelAnswer"}
    assert roots <= models


def test_a_model_added_in_python_appears_in_ts(monkeypatch: pytest.MonkeyPatch) -> None:
    class NewEvent(TypedDict):
        seq: int
        kind: Literal["new_event"]
        extra: str | None

    union = Annotated[
        Union[contracts.UpdateEvent, contracts.TurnEndedEvent, NewEvent],
        Field(discriminator="kind"),
    ]
    monkeypatch.setitem(gen.ALIASES, "StreamEvent", union)
    source = gen.generate(gen.wire_schema(), gen.constants())
    assert _alias_members(source, "StreamEvent") == ["UpdateEvent", "TurnEndedEvent", "NewEvent"]
    assert _interfaces(source)["NewEvent"] == [
        "seq: number;",
        'kind: "new_event";',
        "extra: string | null;",
    ]
    assert source != CONTRACTS_TS.read_text()


def test_the_rendering_says_what_the_schema_says() -> None:
    interfaces = _interfaces(CONTRACTS_TS.read_text())
    # A literal kind, required; an optional key with a null default.
    assert 'kind: "update";' in interfaces["UpdateEvent"]
    assert "ts?: number | null;" in interfaces["UpdateEvent"]
    # An inline literal union written as its alias; a nested model as its name.
    assert "type: FieldType;" in interfaces["ElicitationField"]
    assert "error?: ErrorCode | null;" in interfaces["Ack"]
    assert "snapshot?: FoldSnapshot | null;" in interfaces["Ack"]
    assert "values?: Record<string, FieldValue> | null;" in interfaces["ElicitationRespondRequest"]
    assert "items: SnapshotItem[];" in interfaces["FoldSnapshot"]
    assert "dropped?: Dropped;" in interfaces["FoldSnapshot"]
    assert "rawInput: unknown;" in interfaces["ToolCallView"]
    # A default that is not null: optional, without null.
    assert "notebookTools?: boolean;" in interfaces["OpenRequest"]


def test_the_shared_constants_come_from_python() -> None:
    source = CONTRACTS_TS.read_text()
    for name, value in [
        ("CHAT_GONE", "4404"),
        ("SAVED_MIME", '"application/vnd.acp-notebook.chat+json"'),
        ("FOLD_MAX_ITEMS", "5000"),
        ("FOLD_MAX_WEIGHT", str(8 * 1024 * 1024)),
        ("MAX_ATTACHMENTS", "8"),
    ]:
        assert f"export const {name} = {value};\n" in source, name


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # A field added on the Python side.
        (
            lambda s: s["$defs"]["TurnEndedEvent"]["properties"].update(reason={"type": "string"}),
            "reason?: string;",
        ),
        # A type that changed.
        (
            lambda s: s["$defs"]["Ack"]["properties"].update(turn={"type": "string"}),
            "turn?: string;",
        ),
        # Required-ness that changed.
        (lambda s: s["$defs"]["TurnStartedEvent"]["required"].remove("prompt"), "prompt?: string;"),
    ],
)
def test_python_side_changes_reach_the_generated_file(change: Any, expected: str) -> None:
    schema = gen.wire_schema()
    change(schema)
    source = gen.generate(schema, gen.constants())
    assert f"  {expected}\n" in source
    assert source != CONTRACTS_TS.read_text()


def test_check_fails_on_a_stale_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "contracts.ts"
    monkeypatch.setattr(gen, "OUTPUT", stale)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr("sys.argv", ["gen_contracts.py"])
    assert gen.main() == 0
    monkeypatch.setattr("sys.argv", ["gen_contracts.py", "--check"])
    assert gen.main() == 0
    stale.write_text(stale.read_text().replace('kind: "turn_ended";', 'kind: "turn_end";'))
    assert gen.main() == 1
    assert "differs from a fresh generation" in capsys.readouterr().err
