"""Chunk lines read by their template (``chunk_lines.py``) read as a whole parse would,
and every line that is not the template with another text is parsed whole."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from acp_notebook.agent.chunk_lines import BACKOFF, MAX_LEARNED, ChunkLines
from acp_notebook.agent.connection import AgentConnection
from acp_notebook.agent.jsonrpc import Notification, parse


def line(text: bytes, message_id: str = "m1", extra: bytes = b"") -> bytes:
    """A session/update chunk line as an agent writes it; ``text`` is the JSON string."""
    return (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
        b'{"sessionUpdate":"agent_message_chunk","messageId":"' + message_id.encode() + b'",'
        b'"content":{"type":"text","text":' + text + b"}" + extra + b"}}}"
    )


def learned(raw: bytes) -> ChunkLines:
    note = parse(raw)
    assert isinstance(note, Notification)
    chunks = ChunkLines()
    chunks.learn(raw, note)
    return chunks


def read(chunks: ChunkLines, raw: bytes) -> str | None:
    return chunks.text(raw) if raw.startswith(chunks.prefix) else None


TEXTS = [
    b'"plain "',
    b'""',
    b'"a \\"quoted\\" word"',
    b'"back\\\\slash\\\\"',
    b'"\\n\\t\\u00e9\\ud83d\\ude00 \\/"',
    '"é ü 漢字 😀"'.encode(),
    b'"\\"text\\":\\"inside\\""',
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_line_with_another_text_reads_as_parsed_whole(text: bytes) -> None:
    chunks = learned(line(b'"first "'))
    raw = line(text)
    assert read(chunks, raw) == json.loads(raw)["params"]["update"]["content"]["text"]
    assert chunks.key == ("agent_message_chunk", "m1")


@pytest.mark.parametrize(
    "text",
    [
        b'"an "unescaped" quote"',  # not one string: not JSON
        b'"ends in a backslash\\"',  # the string never ends
        b'"a control \x01 character"',
        b'"invalid \xff UTF-8"',
        b'"bad escape \\x"',
        b'"a" , "b"',
    ],
)
def test_a_line_that_is_not_the_template_with_a_string_is_left_to_the_whole_parse(
    text: bytes,
) -> None:
    chunks = learned(line(b'"first "'))
    raw = line(text)
    assert read(chunks, raw) is None
    # ... which refuses it, as before.
    assert not isinstance(parse(raw), Notification)


@pytest.mark.parametrize("text", [b'"\\ud800 lone"', b'"\xed\xa0\x80 lone"'])
def test_a_lone_surrogate_is_left_to_the_whole_parse(text: bytes) -> None:
    chunks = learned(line(b'"first "'))
    raw = line(text)
    assert read(chunks, raw) is None
    # ... which reads it as U+FFFD (a lone surrogate cannot be written as UTF-8).
    note = parse(raw)
    assert isinstance(note, Notification)
    assert note.params["update"]["content"]["text"] == "\ufffd lone"


def test_other_messages_and_fields_are_not_the_template() -> None:
    chunks = learned(line(b'"first "'))
    assert read(chunks, line(b'"x"', message_id="m2")) is None
    assert read(chunks, line(b'"x"', extra=b',"_meta":{}')) is None
    assert read(chunks, line(b'"x"') + b" ") is None


def test_only_the_chunks_own_text_is_learned() -> None:
    # The last "text" key is another field's: the probe sees it and nothing is learned.
    meta = line(b'"A"', extra=b',"_meta":{"text":"A"}')
    assert learned(meta).prefix == b"\n"
    # A duplicate key: the value json keeps is the one learned.
    dup = line(b'"A"').replace(b"}}}}", b'},"content":{"type":"text","text":"B"}}}}')
    chunks = learned(dup)
    raw = dup.replace(b'"B"', b'"C"')
    assert read(chunks, raw) == "C" == json.loads(raw)["params"]["update"]["content"]["text"]


def test_what_is_not_a_short_text_chunk_is_not_learned() -> None:
    tool = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
        b'{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","content":'
        b'[{"type":"content","content":{"type":"text","text":"out"}}]}}}'
    )
    assert learned(tool).prefix == b"\n"
    annotated = line(b'"x"').replace(b'"text":"x"', b'"text":"x","annotations":{}')
    assert learned(annotated).prefix == b"\n"
    other = line(b'"x"').replace(b"session/update", b"x/update")
    assert learned(other).prefix == b"\n"
    assert learned(line(b'"' + b"x" * MAX_LEARNED + b'"')).prefix == b"\n"


def test_a_failed_probe_backs_off() -> None:
    meta = line(b'"A"', extra=b',"_meta":{"text":"A"}')
    note = parse(meta)
    assert isinstance(note, Notification)
    chunks = ChunkLines()
    chunks.learn(meta, note)
    good = line(b'"x"')
    good_note = parse(good)
    assert isinstance(good_note, Notification)
    for _ in range(BACKOFF):
        chunks.learn(good, good_note)
        assert chunks.prefix == b"\n"
    chunks.learn(good, good_note)
    assert read(chunks, line(b'"y"')) == "y"


async def test_an_agents_lines_reach_the_session_as_parsed_whole() -> None:
    """Through a real pipe: chunks by template, everything else whole, in order."""
    lines = [
        line(b'"one "'),
        line(b'"two \\"2\\" "'),
        line(b'"an "unescaped" quote"'),  # malformed: logged and skipped, as before
        line(b'"three "', message_id="m2"),
        line(b'"four "', message_id="m2"),
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
        b'{"sessionUpdate":"plan","entries":[]}}}',
        line(b'"five "', message_id="m2"),
        line(b'"' + b"long " * 1000 + b'"', message_id="m2"),
    ]
    data = b"\n".join(lines) + b"\n"
    got: list[Any] = []
    read_whole = 0

    def on_notification(note: Notification) -> None:
        nonlocal read_whole
        read_whole += 1
        got.append(note.params["update"])

    def on_chunk(key: tuple[str, object], update: dict[str, Any], text: str) -> None:
        got.append({**update, "content": {"type": "text", "text": text}})

    exited = asyncio.Event()
    conn = AgentConnection(
        [sys.executable, "-c", f"import sys; sys.stdout.buffer.write({data!r})"],
        on_request=lambda request: None,
        on_notification=on_notification,
        on_chunk=on_chunk,
        on_exit=lambda code: exited.set(),
    )
    await conn.start()
    await asyncio.wait_for(exited.wait(), 30)
    expected = [json.loads(raw)["params"]["update"] for raw in lines if raw != lines[2]]
    assert got == expected
    # The first line of each message and the plan (a long line is read by its template
    # too: only learning from one is skipped).
    assert read_whole == 3
