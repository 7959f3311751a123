"""The wire contracts between the bridge, its clients and the widget.

Stream events flow down (bridge -> clients), requests flow up (clients -> hub).
Events are plain dicts on the hot path, typed by the ``TypedDict``s here at no runtime
cost: mypy checks their producers (the session, ``events.py``), the history and the fold;
tests validate emitted events against them. ``js/src/contracts.ts`` is generated from
their JSON Schema (with the requests' models, the fold snapshot, the saved chat and the
kernel queries) and from the public constants here: ``python scripts/gen_contracts.py``.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeVar, Union

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
    with_config,
)
from typing_extensions import NotRequired, TypedDict, TypeIs

# Caps of the bounded rendering hint (DESIGN.md, seed §2).
MAX_MESSAGE = 2048
MAX_FIELDS = 16
MAX_NAME = 128
MAX_TITLE = 256
MAX_DESCRIPTION = 1024
MAX_PLACEHOLDER = 256
MAX_OPTIONS = 32
MAX_OPTION_VALUE = 1024
MAX_TOOL_CALL_ID = 256

# Caps on what a client may send.
MAX_PROMPT = 1_000_000
MAX_VALUE_TEXT = 65_536
MAX_VALUE_ITEMS = 64
MAX_ID = 256
# A prompt's attachments (attachments.py converts Python objects within these caps).
MAX_ATTACHMENTS = 8
MAX_IMAGE_DATA = 1_400_000  # base64 characters: an image of about 1 MB
MAX_ATTACHMENT_TEXT = 100_000  # characters of a text block or an embedded resource
MAX_ATTACHMENTS_TOTAL = 3_000_000  # characters of all attachments of one prompt together
MAX_THUMBNAIL = 32_000  # a data: URL shown in the transcript
MAX_LABEL = 256
MAX_URI = 2048
MAX_PATH = 4096
MAX_DETAIL = 500
MAX_REQUEST_BYTES = MAX_PROMPT + MAX_ATTACHMENTS_TOTAL + 100_000

# A chat's socket closes with this code when its chat is gone (its kernel or server ended).
CHAT_GONE = 4404
# ...and with one of these reasons when the server knows why: someone closed the chat
# (chat:close, ``Chat.close()``), or its kernel shut down. Any other reason: it cannot say.
CHAT_GONE_CLOSED = "closed"
CHAT_GONE_KERNEL = "kernel ended"
# The output of a chat in a saved notebook (``SavedChat``).
SAVED_MIME = "application/vnd.acp-notebook.chat+json"
# A cell's pointer to a card of a chat shown elsewhere (kernel/card_pointer.py).
POINTER_MIME = "application/vnd.acp-notebook.pointer+json"
# The fold's bounds: past these the oldest items go (fold.py, fold.ts).
FOLD_MAX_ITEMS = 5000
FOLD_MAX_WEIGHT = 8 * 1024 * 1024
# A tool call's terminal output keeps at most this many characters: its end (fold.py, fold.ts).
FOLD_TERMINAL_MAX = 256 * 1024
# Server -> kernel questions on the kernel's socket, and their answers.
KERNEL_QUERY: Final = "kernel:query"
KERNEL_ANSWER: Final = "kernel:answer"
MAX_ANSWER = 64 * 1024
# An ACP session id to continue: visible ASCII only (see ``valid_session_id``), and never
# one that looks like an option (a leading "-") or a path ("/", "\\", "..").
SESSION_ID_PATTERN = rf"^(?!-)(?!.*\.\.)[!-.0-\[\]-~]{{1,{MAX_ID}}}$"
# An attachment's preview: a data: URL of a PNG or JPEG.
THUMBNAIL_PATTERN = r"^data:image/(png|jpeg);base64,[A-Za-z0-9+/]+={0,2}$"

FieldType = Literal["text", "number", "integer", "boolean", "enum", "multi"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# ---------------------------------------------------------------- stream events
#
# A ``Field`` inside ``Annotated`` bounds a value for pydantic (``stream_event`` and the
# JSON Schema) and is ignored by mypy.

_T = TypeVar("_T")
# An optional key: absent, or null (its schema default).
Maybe = Annotated[_T | None, Field(default=None)]

if TYPE_CHECKING:
    # The session builds an event before ``ChatSession._emit`` stamps its ``seq`` (and
    # ``_register`` a card's ``requestId``): to mypy these keys may still be missing...
    from typing_extensions import NotRequired as Stamped
else:
    from typing_extensions import Required as Stamped  # ...on the wire they never are.

Json = dict[str, Any]


@with_config(ConfigDict(extra="forbid"))
class FieldOption(TypedDict):
    value: Annotated[str, Field(max_length=MAX_OPTION_VALUE)]
    label: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_TITLE)]]]
    description: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_DESCRIPTION)]]]


@with_config(ConfigDict(extra="forbid"))
class ElicitationField(TypedDict):
    """Our bounded rendering hint for one form property; never the raw schema."""

    name: Annotated[str, Field(max_length=MAX_NAME)]
    type: FieldType
    title: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_TITLE)]]]
    description: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_DESCRIPTION)]]]
    placeholder: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_PLACEHOLDER)]]]
    required: NotRequired[Maybe[bool]]
    options: NotRequired[Maybe[Annotated[list[FieldOption], Field(max_length=MAX_OPTIONS)]]]
    # A prefill hint from the schema's `default` (string, number, bool or list).
    default: NotRequired[Maybe[Union[str, int, float, bool, list[str]]]]
    # claude's AskUserQuestion: the free-text "Other" field that belongs to this one.
    custom: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_NAME)]]]
    # The name of the question field this "Other" field belongs to.
    customOf: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_NAME)]]]


@with_config(ConfigDict(extra="forbid"))
class _Event(TypedDict):
    seq: Stamped[int]
    # Milliseconds since the epoch when the bridge saw it (thought durations, countdowns).
    ts: NotRequired[Maybe[float]]


class UpdateEvent(_Event):
    kind: Literal["update"]
    update: Json


@with_config(ConfigDict(extra="forbid"))
class AttachmentSummary(TypedDict):
    """What the transcript shows of one attachment: never its full data."""

    type: Literal["text", "image", "resource", "resource_link"]
    label: Annotated[str, Field(max_length=MAX_LABEL)]
    mimeType: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_NAME)]]]
    thumbnail: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_THUMBNAIL)]]]


class TurnStartedEvent(_Event):
    kind: Literal["turn_started"]
    # Per-chat turn number; the chat:prompt ack names it so a caller can await its end.
    turn: int
    prompt: str
    by: NotRequired[Maybe[str]]
    # The prompt's attachments, as the transcript shows them.
    attachments: NotRequired[Maybe[list[AttachmentSummary]]]


class TurnEndedEvent(_Event):
    kind: Literal["turn_ended"]
    turn: int
    stopReason: NotRequired[Maybe[str]]
    error: NotRequired[Maybe[str]]


class AgentStatusEvent(_Event):
    kind: Literal["agent_status"]
    status: Literal["starting", "ready", "exited"]
    detail: NotRequired[Maybe[str]]
    agent: NotRequired[Maybe[str]]
    agentInfo: NotRequired[Maybe[Json]]
    # The initialize result's agentCapabilities (loadSession, promptCapabilities,
    # mcpCapabilities, sessionCapabilities), bounded: what the chat may offer.
    agentCapabilities: NotRequired[Maybe[Json]]
    # The agent's own ACP session id: what a later session/load or session/resume names.
    sessionId: NotRequired[Maybe[str]]
    modes: NotRequired[Maybe[Json]]
    configOptions: NotRequired[Maybe[list[Json]]]
    exitCode: NotRequired[Maybe[int]]
    stderrTail: NotRequired[Maybe[str]]


class AgentErrorEvent(_Event):
    """Something the agent did wrong that the chat survives (a line it skipped)."""

    kind: Literal["agent_error"]
    message: str


# Characters of a cell's source an edit may carry (before and after each).
MAX_EDIT_SOURCE = 200_000


class CellEdit(TypedDict):
    """One change the agent makes to the notebook, as its review card shows it.

    ``before`` is the cell's source as the agent read it ("" for an insert) and
    ``after`` what it becomes ("" for a delete; a move keeps it). ``index`` is where the
    cell is (an insert: where it goes); ``toIndex`` where a move takes it.
    """

    op: Literal["insert", "edit", "delete", "move"]
    path: Annotated[str, Field(max_length=MAX_PATH)]
    cellType: Literal["code", "markdown", "raw"]
    index: int
    toIndex: NotRequired[Maybe[int]]
    cellId: NotRequired[Maybe[Annotated[str, Field(max_length=64)]]]
    before: Annotated[str, Field(max_length=MAX_EDIT_SOURCE)]
    after: Annotated[str, Field(max_length=MAX_EDIT_SOURCE)]


# --- Files the agent writes through the client (fs/write_text_file) ---

# Characters of a file a read through the client returns (fs/read_text_file; more: the
# agent is told to page with line and limit), and of a file a write may hold (its
# review shows the whole diff).
MAX_FILE_TEXT = 1_000_000


class FileEdit(TypedDict):
    """A write the agent makes to a text file through the client, as its review card
    shows it: ``before`` is the file as the user has it ("" when it is new), ``after``
    what the write makes of it; ``where`` is the editor that has it open, or None."""

    op: Literal["write"]
    path: Annotated[str, Field(max_length=MAX_PATH)]
    before: Annotated[str, Field(max_length=MAX_FILE_TEXT)]
    after: Annotated[str, Field(max_length=MAX_FILE_TEXT)]
    created: bool
    where: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_DETAIL)]]]


# What a review card decides: a notebook cell's change, or a file's write.
Edit = Annotated[Union[CellEdit, FileEdit], Field(discriminator="op")]


class PermissionRequestEvent(_Event):
    kind: Literal["permission_request"]
    requestId: Stamped[str]
    toolCall: Json
    options: list[Json]
    # An edit this request decides (a notebook cell's, a file's): its card shows the diff.
    edit: NotRequired[Maybe[Edit]]
    # Epoch milliseconds when it is cancelled unless answered.
    deadline: NotRequired[Maybe[float]]


class PermissionResolvedEvent(_Event):
    kind: Literal["permission_resolved"]
    requestId: str
    outcome: Literal["selected", "cancelled", "timeout"]
    optionId: NotRequired[Maybe[str]]
    by: NotRequired[Maybe[str]]


class ElicitationRequestEvent(_Event):
    kind: Literal["elicitation_request"]
    requestId: Stamped[str]
    message: Annotated[str, Field(max_length=MAX_MESSAGE)]
    fields: Annotated[list[ElicitationField], Field(max_length=MAX_FIELDS)]
    toolCallId: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_TOOL_CALL_ID)]]]
    title: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_TITLE)]]]
    deadline: NotRequired[Maybe[float]]
    # URL mode: the page the agent asks the user to open (http or https, no
    # credentials), and its host as the bridge parsed it; a URL card has no fields.
    url: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_URI)]]]
    host: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_URI)]]]


class ElicitationResolvedEvent(_Event):
    """A question settled; a URL question the user accepted settles a second time,
    ``completed``, when the agent sends ``elicitation/complete`` for it."""

    kind: Literal["elicitation_resolved"]
    requestId: str
    outcome: Literal["accepted", "declined", "cancelled", "timeout", "completed"]
    by: NotRequired[Maybe[str]]
    # An accepted form's answer, as checked against its fields (what the agent was sent).
    values: NotRequired[Maybe[dict[str, FieldValue]]]


class EditPolicyEvent(_Event):
    """The chat's "accept edits" setting: on, the agent's notebook edits land without a
    review card (chat:accept_edits); off (the default), each one is reviewed."""

    kind: Literal["edit_policy"]
    acceptEdits: bool
    by: NotRequired[Maybe[str]]


class AccessEvent(_Event):
    """Who may act on the chat: its owner (a principal's id, as the server's owner gate
    compares it, and the name shown; none: whoever may read it) and its sharing
    (``"anyone"``: every reader may act too; chat:share changes it)."""

    kind: Literal["access"]
    owner: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_ID)]]]
    ownerName: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_NAME)]]]
    share: NotRequired[Maybe[Literal["anyone"]]]
    by: NotRequired[Maybe[str]]


# ---- the prompt queue (a prompt sent while a turn runs waits for it to end)

# Prompts a chat holds queued at most; one more is refused (BUSY).
MAX_QUEUE = 32


@with_config(ConfigDict(extra="forbid"))
class QueuedPrompt(TypedDict):
    """A prompt waiting for the running turn to end; ``turn`` is the number it will run as."""

    turn: int
    prompt: str
    by: NotRequired[Maybe[str]]
    attachments: NotRequired[Maybe[list[AttachmentSummary]]]


class QueueEvent(_Event):
    """The chat's whole queue, in the order it goes out (each event replaces the last).

    ``removed``: turns taken off it that will never run, and ``reason`` why ("removed"
    by a person, "cancelled" with the running turn, the agent "exited"). ``steered``: a
    turn sent into the running turn (the agent advertises prompt queueing); it becomes
    part of that turn, which ends for it too.
    """

    kind: Literal["queue"]
    prompts: Annotated[list[QueuedPrompt], Field(max_length=MAX_QUEUE)]
    removed: NotRequired[Maybe[list[int]]]
    reason: NotRequired[Maybe[Literal["removed", "cancelled", "exited"]]]
    steered: NotRequired[Maybe[int]]
    by: NotRequired[Maybe[str]]


# ---- sign-in (the agent's authMethods, when it refuses to work without one)

MAX_AUTH_METHODS = 16
MAX_AUTH_ARGS = 64
MAX_AUTH_ARG = 1024
MAX_AUTH_VARS = 16
MAX_AUTH_VALUE = 4096
# A line the user types into a terminal sign-in (a password, a code).
MAX_AUTH_INPUT = 4096
AuthState = Literal["required", "signing_in", "signed_in", "signed_out"]


@with_config(ConfigDict(extra="forbid"))
class AuthVar(TypedDict):
    """A variable an ``env_var`` method needs set (``secret``: a key, not shown back)."""

    name: Annotated[str, Field(max_length=MAX_NAME)]
    label: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_TITLE)]]]
    secret: bool
    optional: bool


@with_config(ConfigDict(extra="forbid"))
class AuthEnvEntry(TypedDict):
    """A variable a terminal method sets on the command it runs."""

    name: Annotated[str, Field(max_length=MAX_NAME)]
    value: Annotated[str, Field(max_length=MAX_AUTH_VALUE)]


@with_config(ConfigDict(extra="forbid"))
class AuthMethodView(TypedDict):
    """One of the agent's ``authMethods``, bounded and validated (agent/auth_methods.py):
    ``agent``: the agent signs in itself (``authenticate``); ``terminal``: the client runs
    ``command`` (the agent's own command line and the method's arguments) with ``env``
    added, and a zero exit signs in; ``env_var``: the user sets ``vars`` where the agent
    starts (``link``: where to get them, shown as text)."""

    id: Annotated[str, Field(max_length=MAX_NAME)]
    name: Annotated[str, Field(max_length=MAX_TITLE)]
    type: Literal["agent", "terminal", "env_var"]
    description: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_DESCRIPTION)]]]
    command: NotRequired[
        Maybe[
            Annotated[
                list[Annotated[str, Field(max_length=MAX_PATH)]],
                Field(max_length=MAX_AUTH_ARGS + 256),
            ]
        ]
    ]
    env: NotRequired[Maybe[Annotated[list[AuthEnvEntry], Field(max_length=MAX_AUTH_VARS)]]]
    # What the card shows of a terminal method before it runs: its variables and its
    # command, as a shell would take them.
    commandLine: NotRequired[Maybe[str]]
    vars: NotRequired[Maybe[Annotated[list[AuthVar], Field(max_length=MAX_AUTH_VARS)]]]
    link: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_URI)]]]


class AuthEvent(_Event):
    """Where the chat's sign-in stands. ``required``: the agent refused for want of one
    (``detail``: what it said), ``methods`` show as a card; ``signing_in``: ``methodId``
    runs (a terminal method's output is tool call ``toolCallId``); ``signed_in``;
    ``signed_out``: after ``logout`` (the card offers the methods again). ``logout``:
    the agent advertises ``auth.logout``."""

    kind: Literal["auth"]
    state: AuthState
    methods: Annotated[list[AuthMethodView], Field(max_length=MAX_AUTH_METHODS)]
    logout: bool
    methodId: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_NAME)]]]
    toolCallId: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_TOOL_CALL_ID)]]]
    detail: NotRequired[Maybe[Annotated[str, Field(max_length=MAX_MESSAGE)]]]
    by: NotRequired[Maybe[str]]


RequestEvent = Union[PermissionRequestEvent, ElicitationRequestEvent]
ResolvedEvent = Union[PermissionResolvedEvent, ElicitationResolvedEvent]
StreamEvent = Annotated[
    Union[
        UpdateEvent,
        TurnStartedEvent,
        TurnEndedEvent,
        AgentStatusEvent,
        AgentErrorEvent,
        PermissionRequestEvent,
        PermissionResolvedEvent,
        ElicitationRequestEvent,
        ElicitationResolvedEvent,
        EditPolicyEvent,
        AccessEvent,
        QueueEvent,
        AuthEvent,
    ],
    Field(discriminator="kind"),
]
stream_event = TypeAdapter(StreamEvent)


class EventBatch(TypedDict):
    """A frame of one chat's events, in seq order (a hub subscription's ``pending_frame``)."""

    chatId: str
    events: list[StreamEvent]
    # The first frame of a subscription: the chat's whole resync, replacing any state.
    reset: NotRequired[bool]


def is_request(event: StreamEvent) -> TypeIs[RequestEvent]:
    """A permission or elicitation request: a card that waits for an answer."""
    return event.get("kind") in ("permission_request", "elicitation_request")


# ---------------------------------------------------------------- the fold snapshot
#
# What ``fold.snapshot`` returns in both languages: sent in a ``chat:resync`` ack, saved
# in notebooks (cut down by ``transcript.compact``), painted by the widget. Agent payloads
# inside stay open objects: the fold passes them through.

Phase = Literal["idle", "thinking", "responding", "tool", "waiting"]


class UserItem(TypedDict):
    type: Literal["user"]
    text: str
    # Present when the prompt had attachments (turn_started's ``attachments``).
    attachments: NotRequired[list[AttachmentSummary]]


class AgentItem(TypedDict):
    type: Literal["agent"]
    messageId: str | None
    text: str


class ThoughtItem(TypedDict):
    type: Literal["thought"]
    messageId: str | None
    text: str
    startTs: float | None
    # None while the thought is still streaming.
    endTs: float | None


class ToolItem(TypedDict):
    type: Literal["tool"]
    toolCallId: str


class PermissionItem(TypedDict):
    type: Literal["permission"]
    requestId: str


class ElicitationItem(TypedDict):
    type: Literal["elicitation"]
    requestId: str


class ErrorItem(TypedDict):
    type: Literal["error"]
    text: str


class StoppedItem(TypedDict):
    """A turn that ended before the agent was done: its ``stopReason`` (``cancelled``: the
    user stopped it; ``max_tokens``, ``max_turn_requests``, ``refusal``: the agent did)."""

    type: Literal["stopped"]
    reason: str


SnapshotItem = Annotated[
    Union[
        UserItem,
        AgentItem,
        ThoughtItem,
        ToolItem,
        PermissionItem,
        ElicitationItem,
        ErrorItem,
        StoppedItem,
    ],
    Field(discriminator="type"),
]


class AgentView(TypedDict):
    status: str
    detail: str | None
    name: str | None
    info: Json | None
    capabilities: Json | None
    sessionId: str | None
    exitCode: float | None
    stderrTail: str | None


class TurnView(TypedDict):
    active: bool
    phase: Phase
    stopReason: str | None
    error: str | None


class ToolCallView(TypedDict):
    toolCallId: str
    title: str | None
    kind: str | None
    status: str | None
    content: list[Json]
    locations: list[Json]
    rawInput: Any
    rawOutput: Any
    # Present once the agent showed a terminal on the call (claude's ``_meta.terminal_info``).
    terminal: NotRequired[TerminalView]


class TerminalView(TypedDict):
    """A tool call's terminal: its output's end, what was cut before it, and its exit."""

    terminalId: str
    output: str
    # Characters cut from the output's start (kept to FOLD_TERMINAL_MAX).
    cut: int
    exited: bool
    exitCode: int | None
    signal: str | None


class Usage(TypedDict):
    used: float | None
    size: float | None
    cost: Json | None


class Modes(TypedDict):
    currentModeId: str | None
    availableModes: list[Json]


class PermissionView(TypedDict):
    requestId: str
    toolCall: Json | None
    options: list[Json]
    deadline: float | None
    # None while pending.
    outcome: str | None
    optionId: str | None
    # Who answered: a Jupyter user, "kernel", "agent"; None while pending or unsaid.
    by: str | None
    # Present when the request decides an edit (a cell's, a file's): the card shows its diff.
    edit: NotRequired[Edit]


class ElicitationView(TypedDict):
    requestId: str
    message: str
    fields: list[ElicitationField]
    toolCallId: str | None
    title: str | None
    deadline: float | None
    # None while pending.
    outcome: str | None
    # Who answered: a Jupyter user, "kernel", "agent"; None while pending or unsaid.
    by: str | None
    # An accepted form's answer (elicitation_resolved's ``values``), once there is one.
    values: NotRequired[dict[str, FieldValue]]
    # URL mode only (see ElicitationRequestEvent).
    url: NotRequired[str | None]
    host: NotRequired[str | None]


class AccessView(TypedDict):
    """The chat's last ``access`` event: its owner (id and name) and its sharing."""

    owner: str | None
    ownerName: str | None
    share: str | None


class AuthView(TypedDict):
    """The chat's last ``auth`` event (see ``AuthEvent``)."""

    state: AuthState
    methods: list[AuthMethodView]
    logout: bool
    methodId: str | None
    toolCallId: str | None
    detail: str | None
    by: str | None


class Dropped(TypedDict):
    """What the bounds took: items dropped, and characters cut from one long message."""

    items: int
    characters: int


class FoldSnapshot(TypedDict):
    """The folded chat as plain JSON, in the spec's key order (tests/vectors/fold)."""

    seq: int
    agent: AgentView
    turn: TurnView
    items: list[SnapshotItem]
    toolCalls: dict[str, ToolCallView]
    plan: list[Json]
    usage: Usage | None
    modes: Modes | None
    configOptions: list[Json] | None
    commands: list[Json]
    title: str | None
    permissions: dict[str, PermissionView]
    elicitations: dict[str, ElicitationView]
    # The chat's "accept edits" setting; present once an edit_policy event said it.
    acceptEdits: NotRequired[bool]
    # Who may act on the chat; present once an access event said it.
    access: NotRequired[AccessView]
    # The prompts waiting for the running turn; present once a queue event said it.
    queue: NotRequired[list[QueuedPrompt]]
    # The sign-in; present once an auth event said it.
    auth: NotRequired[AuthView]
    # Present once the bounds took something.
    dropped: NotRequired[Dropped]


fold_snapshot = TypeAdapter(FoldSnapshot)


class SavedChatData(TypedDict):
    """The ``SAVED_MIME`` output of a chat (``transcript.saved_chat``; the widget's
    ``readSavedChat`` reads it): what continuing the chat takes, never a command line."""

    version: Literal[1]
    chatId: str
    kernelId: str
    agent: str
    cwd: str | None
    mode: str | None
    locale: str
    # The agent's ACP session id: what "Continue" loads.
    sessionId: str | None
    canLoad: bool
    snapshot: FoldSnapshot


saved_chat_data = TypeAdapter(SavedChatData)


# ---------------------------------------------------------------- requests

Id = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID)]
# An ACP session to continue goes to the agent in session/load, and comes from a saved
# notebook (anyone's file): visible ASCII only, as the agents' ids are (UUIDs, "ses_...");
# no control character, space, newline or direction mark reaches the agent, and nothing
# an agent could take for an option or a file ("--dangerously-skip-permissions",
# "../../etc/passwd").
_SESSION_ID = re.compile(SESSION_ID_PATTERN)


def valid_session_id(value: object) -> bool:
    return isinstance(value, str) and _SESSION_ID.fullmatch(value) is not None


def _session_id(value: str) -> str:
    if not valid_session_id(value):
        raise ValueError(
            f"a session id to continue is 1 to {MAX_ID} visible ASCII characters "
            "(no space, control character or non-ASCII), not starting with '-' and "
            "holding no '/', '\\' or '..'"
        )
    return value


SessionId = Annotated[str, AfterValidator(_session_id)]
ValueText = Annotated[str, Field(max_length=MAX_VALUE_TEXT)]
PathText = Annotated[str, Field(max_length=MAX_PATH)]
FieldValue = Union[
    bool,
    int,
    float,
    ValueText,
    Annotated[list[ValueText], Field(max_length=MAX_VALUE_ITEMS)],
]


class _Wire(_Model):
    # Untrusted input: a value of the wrong type is INVALID, never coerced ("yes" is
    # not `cancel: true`, 1 is not a boolean config value).
    model_config = ConfigDict(strict=True)


class _Request(_Wire):
    # Echoed in the ack so a client can match answers to requests.
    id: int | Annotated[str, Field(max_length=MAX_ID)] | None = None
    # A kernel's requests: the msg_id of the message the kernel handles as it sends it
    # (the cell's execute_request, the widget's comm_msg). The server maps it to that
    # message's sender (server/owners.py): who the request is from. Others ignore it.
    executeId: Id | None = None


class _ChatRequest(_Request):
    # `chatId`; `sessionId` is accepted too (the seed's name for it).
    chatId: Id = Field(validation_alias=AliasChoices("chatId", "sessionId"))


# The requests only a trusted caller (the kernel, local mode) may send: open a chat,
# follow its frames on this connection (the first frame a reset: the whole resync),
# end it and its agent.


class OpenRequest(_Request):
    type: Literal["chat:open"]
    agent: Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME)] | None = None
    command: Annotated[list[PathText], Field(min_length=1, max_length=256)] | None = None
    env: Annotated[dict[PathText, PathText], Field(max_length=256)] | None = None
    cwd: PathText | None = None
    mode: Id | None = None
    mcpServers: Annotated[list[dict[str, Any]], Field(max_length=64)] = []
    # Who may act on the chat (trusted callers; the server sets it for a kernel's open):
    # a principal's id (server/identity.py), and the name the pages show for it.
    owner: Id | None = None
    ownerName: Annotated[str, Field(max_length=MAX_NAME)] | None = None
    # "anyone": whoever may read the chat may also act on it, not only its owner.
    share: Literal["anyone"] | None = None
    # An earlier ACP session of this agent to continue (session/load or session/resume).
    loadSessionId: SessionId | None = None
    # The chat's own `notebook` MCP server (the notebook tools).
    notebookTools: bool = True
    # The notebook file its edit tools work on where nothing else names one (local mode).
    notebook: PathText | None = None


class SubscribeRequest(_ChatRequest):
    type: Literal["chat:subscribe"]


class CloseRequest(_ChatRequest):
    type: Literal["chat:close"]


Uri = Annotated[str, StringConstraints(min_length=1, max_length=MAX_URI)]
AttachmentText = Annotated[str, Field(max_length=MAX_ATTACHMENT_TEXT)]


class TextBlock(_Wire):
    type: Literal["text"]
    text: AttachmentText


class ImageBlock(_Wire):
    type: Literal["image"]
    mimeType: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    # Base64 of the image file; the hub checks it decodes to that format.
    data: Annotated[
        str,
        StringConstraints(
            min_length=1, max_length=MAX_IMAGE_DATA, pattern=r"^[A-Za-z0-9+/]+={0,2}$"
        ),
    ]


class TextResource(_Wire):
    uri: Uri
    text: AttachmentText
    mimeType: Annotated[str, Field(max_length=MAX_NAME)] | None = None


class ResourceBlock(_Wire):
    type: Literal["resource"]
    resource: TextResource


class ResourceLinkBlock(_Wire):
    type: Literal["resource_link"]
    uri: Uri
    name: Annotated[str, StringConstraints(min_length=1, max_length=MAX_LABEL)]
    mimeType: Annotated[str, Field(max_length=MAX_NAME)] | None = None
    size: Annotated[int, Field(ge=0)] | None = None


ContentBlock = Annotated[
    Union[TextBlock, ImageBlock, ResourceBlock, ResourceLinkBlock], Field(discriminator="type")
]


class Attachment(_Wire):
    """One bounded ACP content block for a prompt, with what the transcript shows of it."""

    label: Annotated[str, StringConstraints(min_length=1, max_length=MAX_LABEL)]
    block: ContentBlock
    # A small preview of an image: a data: URL of a PNG or JPEG.
    thumbnail: (
        Annotated[
            str,
            StringConstraints(
                max_length=MAX_THUMBNAIL,
                pattern=THUMBNAIL_PATTERN,
            ),
        ]
        | None
    ) = None


# What an image block's data must start with, by the mimeType it names.
_IMAGE_MAGIC = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}


def _b64_head(data: str) -> bytes:
    try:
        return base64.b64decode(data[:16] + "=" * (-len(data[:16]) % 4))
    except (binascii.Error, ValueError):
        return b""


def wire_problem(blocks: list[dict[str, Any]]) -> str | None:
    """Why these blocks may not go to an agent (too large together, an image that is not
    the format it names), or None."""
    total = 0
    for block in blocks:
        kind = block["type"]
        if kind == "image":
            total += len(block["data"])
            head = _b64_head(block["data"])
            mime = next((m for magic, m in _IMAGE_MAGIC.items() if head.startswith(magic)), None)
            if mime is None and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
                mime = "image/webp"
            if mime != block["mimeType"]:
                return f"an image attachment is not the {block['mimeType']} it says it is"
        elif kind == "text":
            total += len(block["text"])
        elif kind == "resource":
            total += len(block["resource"]["text"])
    if total > MAX_ATTACHMENTS_TOTAL:
        return f"the attachments hold {total:,} characters; the cap is {MAX_ATTACHMENTS_TOTAL:,}"
    return None


class PromptRequest(_ChatRequest):
    type: Literal["chat:prompt"]
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PROMPT)]
    attachments: Annotated[list[Attachment], Field(max_length=MAX_ATTACHMENTS)] | None = None

    @model_validator(mode="after")
    def _bounded(self) -> PromptRequest:
        problem = wire_problem([a.block.model_dump() for a in self.attachments or []])
        if problem is not None:
            raise ValueError(problem)
        return self


class CancelRequest(_ChatRequest):
    type: Literal["chat:cancel"]


class QueueRequest(_ChatRequest):
    """Change a queued prompt: ``edit`` its text, ``remove`` it, ``move`` it to ``index``
    (0: next), or ``steer``: send it into the running turn now (where the agent
    advertises prompt queueing)."""

    type: Literal["chat:queue"]
    op: Literal["edit", "remove", "move", "steer"]
    turn: int
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PROMPT)] | None = None
    index: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _complete(self) -> QueueRequest:
        if self.op == "edit" and self.text is None:
            raise ValueError("an edit gives the new text")
        if self.op == "move" and self.index is None:
            raise ValueError("a move gives the index")
        return self


class ResyncRequest(_ChatRequest):
    type: Literal["chat:resync"]
    since: Annotated[int, Field(ge=0)] | None = None
    # The ack may carry the history up to its last ended turn as one fold snapshot
    # (``snapshot``), its events the rest: a long chat's resync is then a fraction of it.
    snapshot: bool = False


class SetModeRequest(_ChatRequest):
    type: Literal["chat:set_mode"]
    modeId: Id


class ForkRequest(_ChatRequest):
    """Fork the chat's session (``session/fork``, where the agent advertises it); the ack
    carries the new session's ``sessionId``, to open with ``session/load``."""

    type: Literal["chat:fork"]


class SetConfigRequest(_ChatRequest):
    type: Literal["chat:set_config"]
    configId: Id
    value: Annotated[str, Field(max_length=MAX_ID)] | bool


class AcceptEditsRequest(_ChatRequest):
    """Turn the chat's "accept edits" setting on or off."""

    type: Literal["chat:accept_edits"]
    value: bool


class PermissionRespondRequest(_ChatRequest):
    type: Literal["chat:permission.respond"]
    requestId: Id
    optionId: Id | None = None
    cancel: bool = False

    @model_validator(mode="after")
    def _one_answer(self) -> PermissionRespondRequest:
        if (self.optionId is None) != self.cancel:
            raise ValueError("give either optionId or cancel: true")
        return self


class ElicitationRespondRequest(_ChatRequest):
    type: Literal["chat:elicitation.respond"]
    requestId: Id
    action: Literal["accept", "decline", "cancel"]
    values: (
        Annotated[
            dict[Annotated[str, Field(max_length=MAX_NAME)], FieldValue],
            Field(max_length=MAX_FIELDS),
        ]
        | None
    ) = None


class AuthRequest(_ChatRequest):
    """The sign-in card's controls: ``start`` method ``methodId`` (an agent method's
    ``authenticate``, or a terminal method's command: only ever on this request); ``input``:
    ``text`` as one line to the running terminal sign-in (never logged, never stored);
    ``stop`` the running sign-in; ``logout`` (where the agent advertises it)."""

    type: Literal["chat:auth"]
    op: Literal["start", "input", "stop", "logout"]
    methodId: Id | None = None
    text: (
        Annotated[str, StringConstraints(max_length=MAX_AUTH_INPUT, pattern=r"^[^\n\r\x00]*$")]
        | None
    ) = None

    @model_validator(mode="after")
    def _complete(self) -> AuthRequest:
        if self.op == "start" and self.methodId is None:
            raise ValueError("a start names the methodId")
        if self.op == "input" and self.text is None:
            raise ValueError("an input gives the text")
        return self


class ShareRequest(_ChatRequest):
    """Let every reader of the chat act on it (``"anyone"``), or only its owner (null)."""

    type: Literal["chat:share"]
    share: Literal["anyone"] | None


class VariablesRequest(_ChatRequest):
    """The composer's ``@``: the kernel's variables (names and types)."""

    type: Literal["chat:variables"]


class MentionRequest(_ChatRequest):
    """The composer's ``@name``: that variable as an attachment."""

    type: Literal["chat:mention"]
    name: Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME)]


class KernelQuery(_Wire):
    """Server -> kernel: run a kernel-side notebook tool (kernel_queries.py)."""

    type: Literal["kernel:query"]
    query: int
    tool: Annotated[str, Field(max_length=MAX_NAME)]
    args: dict[str, Any] = {}


class KernelAnswer(_Wire):
    """Kernel -> server: a query's answer, its text or why there is none."""

    type: Literal["kernel:answer"]
    query: int
    # Cut to MAX_ANSWER by the server: an answer is untrusted input like any frame.
    text: str | None = None
    error: str | None = None


# The lab extension's page socket (server/page_socket.py, notebook_tools/page_document.py).
MAX_PAGE_NOTEBOOKS = 64  # notebooks one page reports open
MAX_SELECTION = 10_000  # characters of the user's selected text a page reports
MAX_PAGE_ERROR = 2000  # characters of a page's reason for refusing a request
MAX_PAGE_FRAME = 32 * 1024 * 1024  # bytes of a page's frame (the cells of a large notebook)


class PageNotebook(_Wire):
    path: PathText
    kernelId: Annotated[str, Field(max_length=MAX_ID)] | None = None


class PageNotebooks(_Wire):
    """Page -> server: every notebook the page holds open now, sent whenever that changes."""

    type: Literal["page:notebooks"]
    notebooks: Annotated[list[PageNotebook], Field(max_length=MAX_PAGE_NOTEBOOKS)]
    # The text files open in the page's editors (an agent reads them with their unsaved
    # changes, and its writes land there): fs/read_text_file, fs/write_text_file.
    files: Annotated[list[PathText], Field(max_length=MAX_PAGE_NOTEBOOKS)] = []


class PageFocus(_Wire):
    """Page -> server: the user is in this notebook now (throttled by the page)."""

    type: Literal["page:focus"]
    path: PathText


class PageRequest(_Wire):
    """Server -> page: a request on one notebook the page holds. ``cells``: its cells as
    nbformat dicts; ``apply``: make ``edit``; ``run``: run ``cellId`` as the user would,
    waiting up to ``timeout`` seconds; ``active``: the active cell and selected text;
    ``notebook``: the whole notebook as the text its save would write (``{"text": ...}``).
    On a text file open in an editor: ``text``: its text (``{"text": ...}``); ``write``:
    replace ``before`` with ``text`` in its editor, one undo step."""

    type: Literal["page:request"]
    id: int
    path: PathText
    op: Literal["cells", "apply", "run", "active", "notebook", "text", "write"]
    edit: CellEdit | None = None
    cellId: Annotated[str, Field(max_length=64)] | None = None
    timeout: float | None = None
    before: Annotated[str, Field(max_length=MAX_FILE_TEXT)] | None = None
    text: Annotated[str, Field(max_length=MAX_FILE_TEXT)] | None = None


class PageReply(_Wire):
    """Page -> server: a request's result, or why there is none (``source``: the cell's
    current source when it no longer holds the edit's ``before``)."""

    type: Literal["page:reply"]
    id: int
    result: Any = None
    error: Annotated[str, Field(max_length=MAX_PAGE_ERROR)] | None = None
    source: Annotated[str, Field(max_length=MAX_EDIT_SOURCE)] | None = None


PageFrame = Annotated[Union[PageNotebooks, PageFocus, PageReply], Field(discriminator="type")]


class VariableName(_Model):
    name: str
    type: str


ClientRequest = Annotated[
    Union[
        OpenRequest,
        SubscribeRequest,
        CloseRequest,
        PromptRequest,
        CancelRequest,
        QueueRequest,
        ResyncRequest,
        SetModeRequest,
        SetConfigRequest,
        ForkRequest,
        AcceptEditsRequest,
        ShareRequest,
        AuthRequest,
        PermissionRespondRequest,
        ElicitationRespondRequest,
        VariablesRequest,
        MentionRequest,
    ],
    Field(discriminator="type"),
]
client_request = TypeAdapter(ClientRequest)
TRUSTED_TYPES = frozenset({"chat:open", "chat:subscribe", "chat:close"})

ErrorCode = Literal[
    "INVALID",
    "CHAT_NOT_FOUND",
    "ELICITATION_NOT_FOUND",
    "PERMISSION_NOT_FOUND",
    "FORBIDDEN",
    "BUSY",
    "AGENT_EXITED",
    "TOO_MANY_CHATS",
    "INTERNAL",
]


Frame = dict[str, Any]  # a frame on the wire, down or up, as parsed JSON


def error_ack(ack: object, code: ErrorCode, detail: str | None = None, **extra: Any) -> Frame:
    """The one way to refuse a request: an ``Ack`` with its error code and why."""
    frame: Frame = {"ack": ack, "error": code}
    if detail:
        frame["detail"] = detail[:MAX_DETAIL]
    frame.update((k, v) for k, v in extra.items() if v is not None)
    return frame


class Viewer(_Model):
    """Who a page's socket is to the owner gate: a principal's id and the page's name."""

    id: str
    name: str


class Ack(_Model):
    ack: int | str | None = None
    accepted: Literal[True] | None = None
    error: ErrorCode | None = None
    detail: str | None = None
    # Why the chat is in that state (AGENT_EXITED: the agent's exit detail).
    reason: str | None = None
    # The agent's JSON-RPC error data (a validation report, say), as short JSON text.
    data: str | None = None
    # Only on chat:resync: the bounded history, then every pending card.
    events: list[dict[str, Any]] | None = None
    reset: bool | None = None
    # Only on chat:resync from a page: who it is (the chat's ``access`` says who may act).
    viewer: Viewer | None = None
    # Only on chat:resync with snapshot: the fold snapshot of the history up to its last
    # ended turn; ``events`` are then what came after it.
    snapshot: FoldSnapshot | None = None
    # Only on chat:prompt: the number of the turn it started (or queued).
    turn: int | None = None
    # Only on chat:prompt: true when the prompt was queued behind the running turn.
    queued: bool | None = None
    # Only on chat:open: the new chat.
    chatId: str | None = None
    # Only on chat:variables: the kernel's variables, and how many were left out.
    variables: list[VariableName] | None = None
    omitted: int | None = None
    # Only on chat:mention: the variable as an attachment for the next prompt.
    attachment: Attachment | None = None
    # Only on chat:fork: the new session, to open with session/load.
    sessionId: str | None = None


def why_invalid(exc: ValidationError) -> str:
    """A validation failure's first error: where it is, and what is wrong."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]
