// Generated from acp_notebook/wire/contracts.py (the source of truth) by
// `python scripts/gen_contracts.py`: do not edit; change the Python contracts and run it.

export const MAX_MESSAGE = 2048;
export const MAX_FIELDS = 16;
export const MAX_NAME = 128;
export const MAX_TITLE = 256;
export const MAX_DESCRIPTION = 1024;
export const MAX_PLACEHOLDER = 256;
export const MAX_OPTIONS = 32;
export const MAX_OPTION_VALUE = 1024;
export const MAX_TOOL_CALL_ID = 256;
export const MAX_PROMPT = 1000000;
export const MAX_VALUE_TEXT = 65536;
export const MAX_VALUE_ITEMS = 64;
export const MAX_ID = 256;
export const MAX_ATTACHMENTS = 8;
export const MAX_IMAGE_DATA = 1400000;
export const MAX_ATTACHMENT_TEXT = 100000;
export const MAX_ATTACHMENTS_TOTAL = 3000000;
export const MAX_THUMBNAIL = 32000;
export const MAX_LABEL = 256;
export const MAX_URI = 2048;
export const MAX_PATH = 4096;
export const MAX_DETAIL = 500;
export const MAX_REQUEST_BYTES = 4100000;
export const CHAT_GONE = 4404;
export const CHAT_GONE_CLOSED = "closed";
export const CHAT_GONE_KERNEL = "kernel ended";
export const SAVED_MIME = "application/vnd.acp-notebook.chat+json";
export const POINTER_MIME = "application/vnd.acp-notebook.pointer+json";
export const FOLD_MAX_ITEMS = 5000;
export const FOLD_MAX_WEIGHT = 8388608;
export const FOLD_TERMINAL_MAX = 262144;
export const KERNEL_QUERY = "kernel:query";
export const KERNEL_ANSWER = "kernel:answer";
export const MAX_ANSWER = 65536;
export const SESSION_ID_PATTERN = "^(?!-)(?!.*\\.\\.)[!-.0-\\[\\]-~]{1,256}$";
export const THUMBNAIL_PATTERN = "^data:image/(png|jpeg);base64,[A-Za-z0-9+/]+={0,2}$";
export const MAX_EDIT_SOURCE = 200000;
export const MAX_FILE_TEXT = 1000000;
export const MAX_QUEUE = 32;
export const MAX_AUTH_METHODS = 16;
export const MAX_AUTH_ARGS = 64;
export const MAX_AUTH_ARG = 1024;
export const MAX_AUTH_VARS = 16;
export const MAX_AUTH_VALUE = 4096;
export const MAX_AUTH_INPUT = 4096;
export const MAX_PAGE_NOTEBOOKS = 64;
export const MAX_SELECTION = 10000;
export const MAX_PAGE_ERROR = 2000;
export const MAX_PAGE_FRAME = 33554432;

export type ClientRequest =
  | OpenRequest
  | SubscribeRequest
  | CloseRequest
  | PromptRequest
  | CancelRequest
  | QueueRequest
  | ResyncRequest
  | SetModeRequest
  | SetConfigRequest
  | ForkRequest
  | AcceptEditsRequest
  | ShareRequest
  | AuthRequest
  | PermissionRespondRequest
  | ElicitationRespondRequest
  | VariablesRequest
  | MentionRequest;

export type ContentBlock = TextBlock | ImageBlock | ResourceBlock | ResourceLinkBlock;

export type Edit = CellEdit | FileEdit;

export type ErrorCode =
  | "INVALID"
  | "CHAT_NOT_FOUND"
  | "ELICITATION_NOT_FOUND"
  | "PERMISSION_NOT_FOUND"
  | "FORBIDDEN"
  | "BUSY"
  | "AGENT_EXITED"
  | "TOO_MANY_CHATS"
  | "INTERNAL";

export type FieldType = "text" | "number" | "integer" | "boolean" | "enum" | "multi";

export type FieldValue = boolean | number | string | string[];

export type Phase = "idle" | "thinking" | "responding" | "tool" | "waiting";

export type SnapshotItem =
  | UserItem
  | AgentItem
  | ThoughtItem
  | ToolItem
  | PermissionItem
  | ElicitationItem
  | ErrorItem
  | StoppedItem;

export type StreamEvent =
  | UpdateEvent
  | TurnStartedEvent
  | TurnEndedEvent
  | AgentStatusEvent
  | AgentErrorEvent
  | PermissionRequestEvent
  | PermissionResolvedEvent
  | ElicitationRequestEvent
  | ElicitationResolvedEvent
  | EditPolicyEvent
  | AccessEvent
  | QueueEvent
  | AuthEvent;

/** Turn the chat's "accept edits" setting on or off. */
export interface AcceptEditsRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:accept_edits";
  value: boolean;
}

/**
 * Who may act on the chat: its owner (a principal's id, as the server's owner gate compares it, and
 * the name shown; none: whoever may read it) and its sharing (``"anyone"``: every reader may act
 * too; chat:share changes it).
 */
export interface AccessEvent {
  seq: number;
  ts?: number | null;
  kind: "access";
  owner?: string | null;
  ownerName?: string | null;
  share?: "anyone" | null;
  by?: string | null;
}

/** The chat's last ``access`` event: its owner (id and name) and its sharing. */
export interface AccessView {
  owner: string | null;
  ownerName: string | null;
  share: string | null;
}

export interface Ack {
  ack?: number | string | null;
  accepted?: true | null;
  error?: ErrorCode | null;
  detail?: string | null;
  reason?: string | null;
  data?: string | null;
  events?: Record<string, unknown>[] | null;
  reset?: boolean | null;
  viewer?: Viewer | null;
  snapshot?: FoldSnapshot | null;
  turn?: number | null;
  queued?: boolean | null;
  chatId?: string | null;
  variables?: VariableName[] | null;
  omitted?: number | null;
  attachment?: Attachment | null;
  sessionId?: string | null;
}

/** Something the agent did wrong that the chat survives (a line it skipped). */
export interface AgentErrorEvent {
  seq: number;
  ts?: number | null;
  kind: "agent_error";
  message: string;
}

export interface AgentItem {
  type: "agent";
  messageId: string | null;
  text: string;
}

export interface AgentStatusEvent {
  seq: number;
  ts?: number | null;
  kind: "agent_status";
  status: "starting" | "ready" | "exited";
  detail?: string | null;
  agent?: string | null;
  agentInfo?: Record<string, unknown> | null;
  agentCapabilities?: Record<string, unknown> | null;
  sessionId?: string | null;
  modes?: Record<string, unknown> | null;
  configOptions?: Record<string, unknown>[] | null;
  exitCode?: number | null;
  stderrTail?: string | null;
}

export interface AgentView {
  status: string;
  detail: string | null;
  name: string | null;
  info: Record<string, unknown> | null;
  capabilities: Record<string, unknown> | null;
  sessionId: string | null;
  exitCode: number | null;
  stderrTail: string | null;
}

/** One bounded ACP content block for a prompt, with what the transcript shows of it. */
export interface Attachment {
  label: string;
  block: ContentBlock;
  thumbnail?: string | null;
}

/** What the transcript shows of one attachment: never its full data. */
export interface AttachmentSummary {
  type: "text" | "image" | "resource" | "resource_link";
  label: string;
  mimeType?: string | null;
  thumbnail?: string | null;
}

/** A variable a terminal method sets on the command it runs. */
export interface AuthEnvEntry {
  name: string;
  value: string;
}

/**
 * Where the chat's sign-in stands. ``required``: the agent refused for want of one (``detail``:
 * what it said), ``methods`` show as a card; ``signing_in``: ``methodId`` runs (a terminal method's
 * output is tool call ``toolCallId``); ``signed_in``; ``signed_out``: after ``logout`` (the card
 * offers the methods again). ``logout``: the agent advertises ``auth.logout``.
 */
export interface AuthEvent {
  seq: number;
  ts?: number | null;
  kind: "auth";
  state: "required" | "signing_in" | "signed_in" | "signed_out";
  methods: AuthMethodView[];
  logout: boolean;
  methodId?: string | null;
  toolCallId?: string | null;
  detail?: string | null;
  by?: string | null;
}

/**
 * One of the agent's ``authMethods``, bounded and validated (agent/auth_methods.py): ``agent``: the
 * agent signs in itself (``authenticate``); ``terminal``: the client runs ``command`` (the agent's
 * own command line and the method's arguments) with ``env`` added, and a zero exit signs in;
 * ``env_var``: the user sets ``vars`` where the agent starts (``link``: where to get them, shown as
 * text).
 */
export interface AuthMethodView {
  id: string;
  name: string;
  type: "agent" | "terminal" | "env_var";
  description?: string | null;
  command?: string[] | null;
  env?: AuthEnvEntry[] | null;
  commandLine?: string | null;
  vars?: AuthVar[] | null;
  link?: string | null;
}

/**
 * The sign-in card's controls: ``start`` method ``methodId`` (an agent method's ``authenticate``,
 * or a terminal method's command: only ever on this request); ``input``: ``text`` as one line to
 * the running terminal sign-in (never logged, never stored); ``stop`` the running sign-in;
 * ``logout`` (where the agent advertises it).
 */
export interface AuthRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:auth";
  op: "start" | "input" | "stop" | "logout";
  methodId?: string | null;
  text?: string | null;
}

/** A variable an ``env_var`` method needs set (``secret``: a key, not shown back). */
export interface AuthVar {
  name: string;
  label?: string | null;
  secret: boolean;
  optional: boolean;
}

/** The chat's last ``auth`` event (see ``AuthEvent``). */
export interface AuthView {
  state: "required" | "signing_in" | "signed_in" | "signed_out";
  methods: AuthMethodView[];
  logout: boolean;
  methodId: string | null;
  toolCallId: string | null;
  detail: string | null;
  by: string | null;
}

export interface CancelRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:cancel";
}

/**
 * One change the agent makes to the notebook, as its review card shows it. ``before`` is the cell's
 * source as the agent read it ("" for an insert) and ``after`` what it becomes ("" for a delete; a
 * move keeps it). ``index`` is where the cell is (an insert: where it goes); ``toIndex`` where a
 * move takes it.
 */
export interface CellEdit {
  op: "insert" | "edit" | "delete" | "move";
  path: string;
  cellType: "code" | "markdown" | "raw";
  index: number;
  toIndex?: number | null;
  cellId?: string | null;
  before: string;
  after: string;
}

export interface CloseRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:close";
}

/** What the bounds took: items dropped, and characters cut from one long message. */
export interface Dropped {
  items: number;
  characters: number;
}

/**
 * The chat's "accept edits" setting: on, the agent's notebook edits land without a review card
 * (chat:accept_edits); off (the default), each one is reviewed.
 */
export interface EditPolicyEvent {
  seq: number;
  ts?: number | null;
  kind: "edit_policy";
  acceptEdits: boolean;
  by?: string | null;
}

/** Our bounded rendering hint for one form property; never the raw schema. */
export interface ElicitationField {
  name: string;
  type: FieldType;
  title?: string | null;
  description?: string | null;
  placeholder?: string | null;
  required?: boolean | null;
  options?: FieldOption[] | null;
  default?: string | number | boolean | string[] | null;
  custom?: string | null;
  customOf?: string | null;
}

export interface ElicitationItem {
  type: "elicitation";
  requestId: string;
}

export interface ElicitationRequestEvent {
  seq: number;
  ts?: number | null;
  kind: "elicitation_request";
  requestId: string;
  message: string;
  fields: ElicitationField[];
  toolCallId?: string | null;
  title?: string | null;
  deadline?: number | null;
  url?: string | null;
  host?: string | null;
}

/**
 * A question settled; a URL question the user accepted settles a second time, ``completed``, when
 * the agent sends ``elicitation/complete`` for it.
 */
export interface ElicitationResolvedEvent {
  seq: number;
  ts?: number | null;
  kind: "elicitation_resolved";
  requestId: string;
  outcome: "accepted" | "declined" | "cancelled" | "timeout" | "completed";
  by?: string | null;
  values?: Record<string, FieldValue> | null;
}

export interface ElicitationRespondRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:elicitation.respond";
  requestId: string;
  action: "accept" | "decline" | "cancel";
  values?: Record<string, FieldValue> | null;
}

export interface ElicitationView {
  requestId: string;
  message: string;
  fields: ElicitationField[];
  toolCallId: string | null;
  title: string | null;
  deadline: number | null;
  outcome: string | null;
  by: string | null;
  values?: Record<string, FieldValue>;
  url?: string | null;
  host?: string | null;
}

export interface ErrorItem {
  type: "error";
  text: string;
}

/** A frame of one chat's events, in seq order (a hub subscription's ``pending_frame``). */
export interface EventBatch {
  chatId: string;
  events: StreamEvent[];
  reset?: boolean;
}

export interface FieldOption {
  value: string;
  label?: string | null;
  description?: string | null;
}

/**
 * A write the agent makes to a text file through the client, as its review card shows it:
 * ``before`` is the file as the user has it ("" when it is new), ``after`` what the write makes of
 * it; ``where`` is the editor that has it open, or None.
 */
export interface FileEdit {
  op: "write";
  path: string;
  before: string;
  after: string;
  created: boolean;
  where?: string | null;
}

/** The folded chat as plain JSON, in the spec's key order (tests/vectors/fold). */
export interface FoldSnapshot {
  seq: number;
  agent: AgentView;
  turn: TurnView;
  items: SnapshotItem[];
  toolCalls: Record<string, ToolCallView>;
  plan: Record<string, unknown>[];
  usage: Usage | null;
  modes: Modes | null;
  configOptions: Record<string, unknown>[] | null;
  commands: Record<string, unknown>[];
  title: string | null;
  permissions: Record<string, PermissionView>;
  elicitations: Record<string, ElicitationView>;
  acceptEdits?: boolean;
  access?: AccessView;
  queue?: QueuedPrompt[];
  auth?: AuthView;
  dropped?: Dropped;
}

/**
 * Fork the chat's session (``session/fork``, where the agent advertises it); the ack carries the
 * new session's ``sessionId``, to open with ``session/load``.
 */
export interface ForkRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:fork";
}

export interface ImageBlock {
  type: "image";
  mimeType: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
  data: string;
}

/** Kernel -> server: a query's answer, its text or why there is none. */
export interface KernelAnswer {
  type: "kernel:answer";
  query: number;
  text?: string | null;
  error?: string | null;
}

/** Server -> kernel: run a kernel-side notebook tool (kernel_queries.py). */
export interface KernelQuery {
  type: "kernel:query";
  query: number;
  tool: string;
  args?: Record<string, unknown>;
}

/** The composer's ``@name``: that variable as an attachment. */
export interface MentionRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:mention";
  name: string;
}

export interface Modes {
  currentModeId: string | null;
  availableModes: Record<string, unknown>[];
}

export interface OpenRequest {
  id?: number | string | null;
  executeId?: string | null;
  type: "chat:open";
  agent?: string | null;
  command?: string[] | null;
  env?: Record<string, string> | null;
  cwd?: string | null;
  mode?: string | null;
  mcpServers?: Record<string, unknown>[];
  owner?: string | null;
  ownerName?: string | null;
  share?: "anyone" | null;
  loadSessionId?: string | null;
  notebookTools?: boolean;
  notebook?: string | null;
}

/** Page -> server: the user is in this notebook now (throttled by the page). */
export interface PageFocus {
  type: "page:focus";
  path: string;
}

export interface PageNotebook {
  path: string;
  kernelId?: string | null;
}

/** Page -> server: every notebook the page holds open now, sent whenever that changes. */
export interface PageNotebooks {
  type: "page:notebooks";
  notebooks: PageNotebook[];
  files?: string[];
}

/**
 * Page -> server: a request's result, or why there is none (``source``: the cell's current source
 * when it no longer holds the edit's ``before``).
 */
export interface PageReply {
  type: "page:reply";
  id: number;
  result?: unknown;
  error?: string | null;
  source?: string | null;
}

/**
 * Server -> page: a request on one notebook the page holds. ``cells``: its cells as nbformat dicts;
 * ``apply``: make ``edit``; ``run``: run ``cellId`` as the user would, waiting up to ``timeout``
 * seconds; ``active``: the active cell and selected text; ``notebook``: the whole notebook as the
 * text its save would write (``{"text": ...}``). On a text file open in an editor: ``text``: its
 * text (``{"text": ...}``); ``write``: replace ``before`` with ``text`` in its editor, one undo
 * step.
 */
export interface PageRequest {
  type: "page:request";
  id: number;
  path: string;
  op: "cells" | "apply" | "run" | "active" | "notebook" | "text" | "write";
  edit?: CellEdit | null;
  cellId?: string | null;
  timeout?: number | null;
  before?: string | null;
  text?: string | null;
}

export interface PermissionItem {
  type: "permission";
  requestId: string;
}

export interface PermissionRequestEvent {
  seq: number;
  ts?: number | null;
  kind: "permission_request";
  requestId: string;
  toolCall: Record<string, unknown>;
  options: Record<string, unknown>[];
  edit?: Edit | null;
  deadline?: number | null;
}

export interface PermissionResolvedEvent {
  seq: number;
  ts?: number | null;
  kind: "permission_resolved";
  requestId: string;
  outcome: "selected" | "cancelled" | "timeout";
  optionId?: string | null;
  by?: string | null;
}

export interface PermissionRespondRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:permission.respond";
  requestId: string;
  optionId?: string | null;
  cancel?: boolean;
}

export interface PermissionView {
  requestId: string;
  toolCall: Record<string, unknown> | null;
  options: Record<string, unknown>[];
  deadline: number | null;
  outcome: string | null;
  optionId: string | null;
  by: string | null;
  edit?: Edit;
}

export interface PromptRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:prompt";
  text: string;
  attachments?: Attachment[] | null;
}

/**
 * The chat's whole queue, in the order it goes out (each event replaces the last). ``removed``:
 * turns taken off it that will never run, and ``reason`` why ("removed" by a person, "cancelled"
 * with the running turn, the agent "exited"). ``steered``: a turn sent into the running turn (the
 * agent advertises prompt queueing); it becomes part of that turn, which ends for it too.
 */
export interface QueueEvent {
  seq: number;
  ts?: number | null;
  kind: "queue";
  prompts: QueuedPrompt[];
  removed?: number[] | null;
  reason?: "removed" | "cancelled" | "exited" | null;
  steered?: number | null;
  by?: string | null;
}

/**
 * Change a queued prompt: ``edit`` its text, ``remove`` it, ``move`` it to ``index`` (0: next), or
 * ``steer``: send it into the running turn now (where the agent advertises prompt queueing).
 */
export interface QueueRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:queue";
  op: "edit" | "remove" | "move" | "steer";
  turn: number;
  text?: string | null;
  index?: number | null;
}

/** A prompt waiting for the running turn to end; ``turn`` is the number it will run as. */
export interface QueuedPrompt {
  turn: number;
  prompt: string;
  by?: string | null;
  attachments?: AttachmentSummary[] | null;
}

export interface ResourceBlock {
  type: "resource";
  resource: TextResource;
}

export interface ResourceLinkBlock {
  type: "resource_link";
  uri: string;
  name: string;
  mimeType?: string | null;
  size?: number | null;
}

export interface ResyncRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:resync";
  since?: number | null;
  snapshot?: boolean;
}

/**
 * The ``SAVED_MIME`` output of a chat (``transcript.saved_chat``; the widget's ``readSavedChat``
 * reads it): what continuing the chat takes, never a command line.
 */
export interface SavedChatData {
  version: 1;
  chatId: string;
  kernelId: string;
  agent: string;
  cwd: string | null;
  mode: string | null;
  locale: string;
  sessionId: string | null;
  canLoad: boolean;
  snapshot: FoldSnapshot;
}

export interface SetConfigRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:set_config";
  configId: string;
  value: string | boolean;
}

export interface SetModeRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:set_mode";
  modeId: string;
}

/** Let every reader of the chat act on it (``"anyone"``), or only its owner (null). */
export interface ShareRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:share";
  share: "anyone" | null;
}

/**
 * A turn that ended before the agent was done: its ``stopReason`` (``cancelled``: the user stopped
 * it; ``max_tokens``, ``max_turn_requests``, ``refusal``: the agent did).
 */
export interface StoppedItem {
  type: "stopped";
  reason: string;
}

export interface SubscribeRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:subscribe";
}

/** A tool call's terminal: its output's end, what was cut before it, and its exit. */
export interface TerminalView {
  terminalId: string;
  output: string;
  cut: number;
  exited: boolean;
  exitCode: number | null;
  signal: string | null;
}

export interface TextBlock {
  type: "text";
  text: string;
}

export interface TextResource {
  uri: string;
  text: string;
  mimeType?: string | null;
}

export interface ThoughtItem {
  type: "thought";
  messageId: string | null;
  text: string;
  startTs: number | null;
  endTs: number | null;
}

export interface ToolCallView {
  toolCallId: string;
  title: string | null;
  kind: string | null;
  status: string | null;
  content: Record<string, unknown>[];
  locations: Record<string, unknown>[];
  rawInput: unknown;
  rawOutput: unknown;
  terminal?: TerminalView;
}

export interface ToolItem {
  type: "tool";
  toolCallId: string;
}

export interface TurnEndedEvent {
  seq: number;
  ts?: number | null;
  kind: "turn_ended";
  turn: number;
  stopReason?: string | null;
  error?: string | null;
}

export interface TurnStartedEvent {
  seq: number;
  ts?: number | null;
  kind: "turn_started";
  turn: number;
  prompt: string;
  by?: string | null;
  attachments?: AttachmentSummary[] | null;
}

export interface TurnView {
  active: boolean;
  phase: Phase;
  stopReason: string | null;
  error: string | null;
}

export interface UpdateEvent {
  seq: number;
  ts?: number | null;
  kind: "update";
  update: Record<string, unknown>;
}

export interface Usage {
  used: number | null;
  size: number | null;
  cost: Record<string, unknown> | null;
}

export interface UserItem {
  type: "user";
  text: string;
  attachments?: AttachmentSummary[];
}

export interface VariableName {
  name: string;
  type: string;
}

/** The composer's ``@``: the kernel's variables (names and types). */
export interface VariablesRequest {
  id?: number | string | null;
  executeId?: string | null;
  chatId: string;
  type: "chat:variables";
}

/** Who a page's socket is to the owner gate: a principal's id and the page's name. */
export interface Viewer {
  id: string;
  name: string;
}
