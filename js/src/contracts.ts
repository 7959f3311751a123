// The wire contracts, mirrored from acp_notebook/contracts.py (the source of truth).
//
// tests/test_schema_sync.py checks this file against their JSON Schema, so it keeps
// a constrained format that the check can read:
//   - every model is an `export interface <ModelName> {` block closed by a line `}`,
//     with one property per line: `name: Type;` (required) or `name?: Type;` (optional);
//   - a property's type is written as the schema says (an optional field with a null
//     default is `T | null`); integer and number are both `number`, an open object is
//     `Record<string, unknown>`, an array is `T[]`;
//   - `export type Name = A | B;` declares a union alias (may span lines, ends with `;`);
//     the check expands aliases, and StreamEvent / ClientRequest must list every model
//     of their discriminated unions;
//   - an interface preceded by a doc comment containing `@local` is client-only (not a
//     type of contracts.py) and is not checked;
//   - `export interface Name extends Base {` adds Base's properties (Base declared above).

export type FieldType = "text" | "number" | "integer" | "boolean" | "enum" | "multi";

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

export type FieldValue = boolean | number | string | string[];

// ---------------------------------------------------------------- elicitation view

export interface FieldOption {
  value: string;
  label?: string | null;
  description?: string | null;
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

// ---------------------------------------------------------------- stream events (down)

export interface UpdateEvent {
  seq: number;
  ts?: number | null;
  kind: "update";
  update: Record<string, unknown>;
}

/** What the transcript shows of one attachment: never its full data. */
export interface AttachmentSummary {
  type: "text" | "image" | "resource" | "resource_link";
  label: string;
  mimeType?: string | null;
  thumbnail?: string | null;
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

export interface TurnEndedEvent {
  seq: number;
  ts?: number | null;
  kind: "turn_ended";
  turn: number;
  stopReason?: string | null;
  error?: string | null;
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

/** Something the agent did wrong that the chat survives (a line it skipped). */
export interface AgentErrorEvent {
  seq: number;
  ts?: number | null;
  kind: "agent_error";
  message: string;
}

export interface PermissionRequestEvent {
  seq: number;
  ts?: number | null;
  kind: "permission_request";
  requestId: string;
  toolCall: Record<string, unknown>;
  options: Record<string, unknown>[];
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
}

export interface ElicitationResolvedEvent {
  seq: number;
  ts?: number | null;
  kind: "elicitation_resolved";
  requestId: string;
  outcome: "accepted" | "declined" | "cancelled" | "timeout";
  by?: string | null;
}

export type StreamEvent =
  | UpdateEvent
  | TurnStartedEvent
  | TurnEndedEvent
  | AgentStatusEvent
  | AgentErrorEvent
  | PermissionRequestEvent
  | PermissionResolvedEvent
  | ElicitationRequestEvent
  | ElicitationResolvedEvent;

// ---------------------------------------------------------------- requests (up)

/** @local The fields every request on a chat has (contracts.py's `_ChatRequest`). */
export interface ChatRequestBase {
  chatId: string;
  id?: number | string | null;
}

// The kernel's own requests (trusted callers only; the widget never sends them).

export interface OpenRequest {
  id?: number | string | null;
  type: "chat:open";
  agent?: string | null;
  command?: string[] | null;
  env?: Record<string, string> | null;
  cwd?: string | null;
  mode?: string | null;
  mcpServers?: Record<string, unknown>[];
  owner?: string | null;
  executeId?: string | null;
  share?: "anyone" | null;
  loadSessionId?: string | null;
  notebookTools?: boolean;
}

export interface SubscribeRequest extends ChatRequestBase {
  type: "chat:subscribe";
}

export interface CloseRequest extends ChatRequestBase {
  type: "chat:close";
}

export interface TextBlock {
  type: "text";
  text: string;
}

export interface ImageBlock {
  type: "image";
  mimeType: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
  data: string;
}

export interface TextResource {
  uri: string;
  text: string;
  mimeType?: string | null;
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

export type ContentBlock = TextBlock | ImageBlock | ResourceBlock | ResourceLinkBlock;

/** One bounded ACP content block for a prompt, with what the transcript shows of it. */
export interface Attachment {
  label: string;
  block: ContentBlock;
  thumbnail?: string | null;
}

// The chat requests.

export interface PromptRequest extends ChatRequestBase {
  type: "chat:prompt";
  text: string;
  attachments?: Attachment[] | null;
}

export interface CancelRequest extends ChatRequestBase {
  type: "chat:cancel";
}

export interface ResyncRequest extends ChatRequestBase {
  type: "chat:resync";
  since?: number | null;
  snapshot?: boolean;
}

export interface SetModeRequest extends ChatRequestBase {
  type: "chat:set_mode";
  modeId: string;
}

export interface SetConfigRequest extends ChatRequestBase {
  type: "chat:set_config";
  configId: string;
  value: string | boolean;
}

export interface PermissionRespondRequest extends ChatRequestBase {
  type: "chat:permission.respond";
  requestId: string;
  optionId?: string | null;
  cancel?: boolean;
}

export interface ElicitationRespondRequest extends ChatRequestBase {
  type: "chat:elicitation.respond";
  requestId: string;
  action: "accept" | "decline" | "cancel";
  values?: Record<string, FieldValue> | null;
}

export type ClientRequest =
  | OpenRequest
  | SubscribeRequest
  | CloseRequest
  | PromptRequest
  | CancelRequest
  | ResyncRequest
  | SetModeRequest
  | SetConfigRequest
  | PermissionRespondRequest
  | ElicitationRespondRequest
  | VariablesRequest
  | MentionRequest;

/** The composer's `@`: the kernel's variables (names and types). */
export interface VariablesRequest extends ChatRequestBase {
  type: "chat:variables";
}

/** The composer's `@name`: that variable as an attachment. */
export interface MentionRequest extends ChatRequestBase {
  type: "chat:mention";
  name: string;
}

// ---------------------------------------------------------------- acks and frames (down)

export interface VariableName {
  name: string;
  type: string;
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
  snapshot?: Record<string, unknown> | null;
  turn?: number | null;
  chatId?: string | null;
  variables?: VariableName[] | null;
  omitted?: number | null;
  attachment?: Attachment | null;
}

/** @local A batch of one chat's events, in seq order (transport frame, not a model). */
export interface EventBatch {
  chatId: string;
  events: StreamEvent[];
}
