// Fold the chat's stream events into a transcript state; the twin of
// acp_notebook/wire/fold.py.
//
// fold() is pure protocol logic: no I/O, deterministic, O(1) amortized per event (it
// mutates and returns its input; string `+=` is a rope in JS engines, so appending a
// chunk never copies). snapshot() renders the plain JSON of the spec (FoldSnapshot),
// which the shared vectors in tests/vectors/fold pin for both languages; restore() makes
// a foldable state of one again.
//
// Both folds have the same sections, with the same functions in the same order (str and
// records come from dom.ts here). fold.py adds readers for the kernel at its end.
//
// Agent payloads (`update` events) are passed through by the bridge unvalidated, so
// every read of them checks its type and anything malformed is skipped, never thrown.
//
// The widget folds every event of a live chat, so the state is bounded like the kernel's
// fold: past MAX_ITEMS items or MAX_WEIGHT characters of text and payloads, the oldest
// items go (a pending request's card never), and a message larger than that keeps its
// end; `dropped` then says what went.

import { resourceName } from "./attach";
import {
  type AccessView,
  type AgentView,
  type AttachmentSummary,
  type AuthMethodView,
  type AuthView,
  type Dropped,
  type Edit,
  type ElicitationField,
  type ElicitationView,
  type FieldValue,
  FOLD_MAX_ITEMS,
  FOLD_MAX_WEIGHT,
  FOLD_TERMINAL_MAX,
  type FoldSnapshot,
  type SnapshotItem as Item,
  type Modes,
  type PermissionView,
  type Phase,
  type QueuedPrompt,
  type StreamEvent,
  type TerminalView,
  type ThoughtItem,
  type ToolCallView,
  type TurnView,
  type Usage,
} from "./contracts";
import { isRecord, records, str } from "./dom";

export type JsonObject = Record<string, unknown>;
type Activity = "thinking" | "responding" | "tool";
type RequestKind = "permission" | "elicitation";
type ChunkItem = Extract<Item, { type: "user" | "agent" | "thought" }>;

export interface ChatState {
  seq: number;
  agent: AgentView;
  turn: TurnView;
  items: Item[];
  toolCalls: Map<string, ToolCallView>;
  plan: JsonObject[];
  usage: Usage | null;
  modes: Modes | null;
  configOptions: JsonObject[] | null;
  commands: JsonObject[];
  title: string | null;
  permissions: Map<string, PermissionView>;
  elicitations: Map<string, ElicitationView>;
  /** null until the bounds took something. */
  dropped: Dropped | null;
  /** The chat's "accept edits" setting; absent until an edit_policy event said it. */
  acceptEdits?: boolean;
  /** Who may act on the chat; absent until an access event said it. */
  access?: AccessView;
  /** The prompts waiting for the running turn; absent until a queue event said it. */
  queue?: QueuedPrompt[];
  /** The sign-in; absent until an auth event said it. */
  auth?: AuthView;
  /** The fold's own bookkeeping; renderers need none of it. */
  internal: {
    /** What the agent was last seen doing in the active turn (the phase under "waiting"). */
    activity: Activity;
    /** The item a chunk may still append to; null after a non-chunk item or a new turn. */
    tail: ChunkItem | null;
    /** The messageId of the chunks in tail (user items do not show theirs). */
    tailMessageId: string | null;
    /** The thought whose endTs is not known yet. */
    openThought: ThoughtItem | null;
    /** Tool calls of the current turn still pending or in progress. */
    running: Set<string>;
    /** Unsettled requests as "kind:requestId", in arrival order. */
    pending: Set<string>;
    maxItems: number;
    maxWeight: number;
    /** Approximate characters held (texts, tool calls, requests), pending requests apart. */
    weight: number;
    /** Each card's payload sizes by key ("kind:id"), so that a replaced one counts once. */
    cardSizes: Map<string, Map<string, number>>;
  };
}

// sessionUpdate kind -> transcript item type.
const CHUNK_TYPES = new Map<string, ChunkItem["type"]>([
  ["user_message_chunk", "user"],
  ["agent_message_chunk", "agent"],
  ["agent_thought_chunk", "thought"],
]);
const TOOL_TEXTS = ["title", "kind", "status"] as const;
const TOOL_LISTS = ["content", "locations"] as const;
const TOOL_RAW = ["rawInput", "rawOutput"] as const;
const TOOL_KEYS = [...TOOL_TEXTS, ...TOOL_LISTS, ...TOOL_RAW] as const;
// A request's own fields: what its card weighs once settled ("edit": an edit's card only).
const PERMISSION_FIELDS = ["toolCall", "options", "deadline", "edit"] as const;
const ELICITATION_FIELDS = [
  "message",
  "fields",
  "toolCallId",
  "title",
  "deadline",
  "url",
  "host",
] as const;

export { FOLD_MAX_ITEMS as MAX_ITEMS, FOLD_MAX_WEIGHT as MAX_WEIGHT };

export function initialState(maxItems = FOLD_MAX_ITEMS, maxWeight = FOLD_MAX_WEIGHT): ChatState {
  return {
    seq: 0,
    agent: {
      status: "starting",
      detail: null,
      name: null,
      info: null,
      capabilities: null,
      sessionId: null,
      exitCode: null,
      stderrTail: null,
    },
    turn: { active: false, phase: "idle", stopReason: null, error: null },
    items: [],
    toolCalls: new Map(),
    plan: [],
    usage: null,
    modes: null,
    configOptions: null,
    commands: [],
    title: null,
    permissions: new Map(),
    elicitations: new Map(),
    dropped: null,
    internal: {
      activity: "thinking",
      tail: null,
      tailMessageId: null,
      openThought: null,
      running: new Set(),
      pending: new Set(),
      maxItems,
      maxWeight,
      weight: 0,
      cardSizes: new Map(),
    },
  };
}

/** Rebuilds a foldable state from a snapshot (saved, or a resync's), weighed like a fold's. */
export function restore(
  snapshot: FoldSnapshot,
  maxItems = FOLD_MAX_ITEMS,
  maxWeight = FOLD_MAX_WEIGHT,
): ChatState {
  const state = initialState(maxItems, maxWeight);
  const { toolCalls, permissions, elicitations, dropped, ...rest } = snapshot;
  const internal = state.internal;
  Object.assign(state, rest);
  state.internal = internal; // a saved snapshot is anyone's: it sets no bookkeeping
  // A copy: a current_mode_update sets its currentModeId in place.
  if (isRecord(state.modes)) state.modes = { ...state.modes };
  const phase = isRecord(state.turn) ? state.turn.phase : null;
  if (phase === "thinking" || phase === "responding" || phase === "tool") {
    internal.activity = phase;
  }
  state.items = (state.items as unknown[]).filter(isRecord) as unknown as Item[];
  state.toolCalls = new Map(Object.entries(toolCalls));
  state.permissions = new Map(Object.entries(permissions));
  state.elicitations = new Map(Object.entries(elicitations));
  if (isRecord(dropped)) {
    state.dropped = { items: count(dropped.items), characters: count(dropped.characters) };
  }
  for (const item of state.items) internal.weight += itemSize(item);
  for (const [id, call] of state.toolCalls) {
    const sizes = new Map<string, number>(
      TOOL_KEYS.map((key) => [key, isRecord(call) ? size(call[key]) : 0]),
    );
    if (isRecord(call) && isRecord(call.terminal)) {
      call.terminal = { ...call.terminal }; // appended to in place
      sizes.set("terminal", Math.min(call.terminal.output.length, FOLD_TERMINAL_MAX));
    }
    internal.cardSizes.set(`tool:${id}`, sizes);
    for (const value of sizes.values()) internal.weight += value;
  }
  // Weighed as request() weighs its fields: the entry without its id and outcome.
  const card = (kind: RequestKind, id: string, entry: unknown, keys: readonly string[]): void => {
    if (!isRecord(entry)) return;
    const key = `${kind}:${id}`;
    const weight = size(Object.fromEntries(keys.map((k) => [k, entry[k]])));
    internal.cardSizes.set(key, new Map([["", weight]]));
    if (entry.outcome === null) internal.pending.add(key);
    else internal.weight += weight;
  };
  for (const [id, p] of state.permissions) card("permission", id, p, PERMISSION_FIELDS);
  for (const [id, e] of state.elicitations) card("elicitation", id, e, ELICITATION_FIELDS);
  if (state.items.length > internal.maxItems || internal.weight > internal.maxWeight) {
    compact(state);
  }
  return state;
}

export function fold(state: ChatState, event: StreamEvent): ChatState {
  const ev = event as unknown as JsonObject;
  const seq = Number.isInteger(ev.seq) ? (ev.seq as number) : 0;
  const ts = num(ev.ts);
  if (ev.kind === "permission_request" || ev.kind === "elicitation_request") {
    // Resync re-sends pending requests after the history, with their old seq.
    state.seq = Math.max(state.seq, seq);
    request(state, ev.kind === "permission_request" ? "permission" : "elicitation", ev, ts);
    if (state.items.length > state.internal.maxItems) compact(state);
  } else {
    if (seq <= state.seq) return state;
    state.seq = seq;
    switch (ev.kind) {
      case "update":
        if (isRecord(ev.update)) update(state, ev.update, ts);
        break;
      case "turn_started": {
        closeThought(state, ts);
        add(state, userItem(ev));
        state.turn = { active: true, phase: "thinking", stopReason: null, error: null };
        state.internal.activity = "thinking";
        state.internal.running.clear();
        break;
      }
      case "turn_ended": {
        closeThought(state, ts);
        endTurn(state);
        const error = str(ev.error);
        state.turn.stopReason = str(ev.stopReason);
        state.turn.error = error;
        if (error !== null) add(state, { type: "error", text: error });
        else if (state.turn.stopReason !== null && state.turn.stopReason !== "end_turn") {
          // Cut short (stopped, or a limit the agent met): the transcript says so there.
          add(state, { type: "stopped", reason: state.turn.stopReason });
        }
        break;
      }
      case "agent_status":
        closeThought(state, ts);
        agentStatus(state, ev);
        break;
      case "agent_error": {
        const message = str(ev.message);
        if (message) add(state, { type: "error", text: message });
        break;
      }
      case "permission_resolved":
      case "elicitation_resolved":
        resolve(state, ev.kind === "permission_resolved" ? "permission" : "elicitation", ev, ts);
        break;
      case "edit_policy":
        if (typeof ev.acceptEdits === "boolean") state.acceptEdits = ev.acceptEdits;
        break;
      case "access":
        state.access = {
          owner: str(ev.owner),
          ownerName: str(ev.ownerName),
          share: ev.share === "anyone" ? "anyone" : null,
        };
        break;
      case "queue":
        queue(state, ev, ts);
        break;
      case "auth":
        auth(state, ev);
        break;
    }
    const internal = state.internal;
    if (state.items.length > internal.maxItems || internal.weight > internal.maxWeight) {
      compact(state);
    }
  }
  state.turn.phase = phase(state);
  return state;
}

/** The spec's JSON; after the bounds took something, `dropped` says what. */
export function snapshot(state: ChatState): FoldSnapshot {
  const snap: FoldSnapshot = {
    seq: state.seq,
    agent: { ...state.agent },
    turn: { ...state.turn },
    items: state.items.map(itemJson),
    toolCalls: toolTable(state),
    plan: [...state.plan],
    usage: state.usage && { ...state.usage },
    modes: state.modes && { ...state.modes },
    configOptions: state.configOptions && [...state.configOptions],
    commands: [...state.commands],
    title: state.title,
    permissions: copyTable(state.permissions),
    elicitations: copyTable(state.elicitations),
  };
  if (state.acceptEdits !== undefined) snap.acceptEdits = state.acceptEdits;
  if (state.access !== undefined) snap.access = { ...state.access };
  if (state.queue !== undefined) snap.queue = state.queue.map((q) => ({ ...q }));
  if (state.auth !== undefined) snap.auth = { ...state.auth };
  if (state.dropped !== null) snap.dropped = { ...state.dropped };
  return snap;
}

function phase(state: ChatState): Phase {
  if (!state.turn.active) return "idle";
  return state.internal.pending.size > 0 ? "waiting" : state.internal.activity;
}

// ---------------------------------------------------------------- session/update

function update(state: ChatState, u: JsonObject, ts: number | null): void {
  const kind = u.sessionUpdate;
  if (typeof kind !== "string") return;
  const chunkType = CHUNK_TYPES.get(kind);
  if (chunkType !== undefined) {
    chunk(state, chunkType, u, ts);
    return;
  }
  if (kind === "tool_call" || kind === "tool_call_update") {
    tool(state, kind === "tool_call", u, ts);
    return;
  }
  // Every update of the state ends a running thought.
  if (setPart(state, kind, u)) closeThought(state, ts);
}

/** Sets the part of the state an update of `kind` carries; false for another kind. */
function setPart(state: ChatState, kind: string, u: JsonObject): boolean {
  switch (kind) {
    case "plan":
      state.plan = records(u.entries);
      break;
    case "usage_update":
      state.usage = { used: num(u.used), size: num(u.size), cost: object(u.cost) };
      break;
    case "current_mode_update":
      state.modes ??= { currentModeId: null, availableModes: [] };
      state.modes.currentModeId = str(u.currentModeId);
      break;
    case "config_option_update":
      state.configOptions = records(u.configOptions);
      break;
    case "available_commands_update":
      state.commands = records(u.availableCommands);
      break;
    case "session_info_update":
      // An absent title leaves it alone; an explicit null clears it.
      if ("title" in u) state.title = str(u.title);
      break;
    default:
      return false;
  }
  return true;
}

function chunk(state: ChatState, type: ChunkItem["type"], u: JsonObject, ts: number | null): void {
  const messageId = str(u.messageId);
  const internal = state.internal;
  let tail = internal.tail;
  if (tail === null || tail.type !== type || internal.tailMessageId !== messageId) {
    closeThought(state, ts);
    if (type === "thought") {
      const thought: ThoughtItem = { type, messageId, text: "", startTs: ts, endTs: null };
      internal.openThought = thought;
      tail = thought;
    } else {
      tail = type === "agent" ? { type, messageId, text: "" } : { type, text: "" };
    }
    add(state, tail);
    internal.tail = tail;
    internal.tailMessageId = messageId;
  } else if (tail.type === "thought" && tail !== internal.openThought) {
    // More of a thought that something else had closed: it goes on.
    tail.endTs = null;
    internal.openThought = tail;
  }
  const text = blockText(u.content);
  tail.text += text;
  internal.weight += text.length;
  if (state.turn.active) internal.activity = type === "thought" ? "thinking" : "responding";
}

function blockText(block: unknown): string {
  if (!isRecord(block)) return "";
  const kind = block.type;
  if (kind === "text") return str(block.text) ?? "";
  // A resource by its name (a variable's, a file's), never its raw URI.
  if (kind === "resource_link") {
    const uri = str(block.uri);
    return `[${str(block.name) || (uri && resourceName(uri)) || kind}]`;
  }
  if (kind === "resource") {
    const inner = block.resource;
    const uri = isRecord(inner) ? str(inner.uri) : null;
    return `[${(uri && resourceName(uri)) || kind}]`;
  }
  return typeof kind === "string" ? `[${kind}]` : "";
}

function tool(state: ChatState, isNewCall: boolean, u: JsonObject, ts: number | null): void {
  const toolCallId = cardId(state, u, "toolCallId", ts);
  if (toolCallId === null) return;
  let entry = state.toolCalls.get(toolCallId);
  if (entry === undefined) add(state, { type: "tool", toolCallId });
  if (entry === undefined || isNewCall) {
    // tool_call replaces the whole entry; an update for an unseen id (its tool_call
    // fell out of the history ring) starts one from the defaults.
    entry = {
      toolCallId,
      title: null,
      kind: null,
      status: "pending",
      content: [],
      locations: [],
      rawInput: null,
      rawOutput: null,
    };
    state.toolCalls.set(toolCallId, entry);
    forgetSizes(state, `tool:${toolCallId}`);
  }
  const internal = state.internal;
  let sizes = internal.cardSizes.get(`tool:${toolCallId}`);
  if (sizes === undefined) {
    sizes = new Map();
    internal.cardSizes.set(`tool:${toolCallId}`, sizes);
  }
  const meta = object(u._meta);
  if (meta !== null) terminal(state, entry, meta, sizes);
  for (const key of TOOL_KEYS) {
    if (key in u) {
      const weight = size(u[key]);
      internal.weight += weight - (sizes.get(key) ?? 0);
      sizes.set(key, weight);
    }
  }
  for (const key of TOOL_TEXTS) if (key in u) entry[key] = str(u[key]);
  for (const key of TOOL_LISTS) if (key in u) entry[key] = records(u[key]);
  for (const key of TOOL_RAW) if (key in u) entry[key] = u[key];
  const running = state.internal.running;
  if (entry.status === "pending" || entry.status === "in_progress") running.add(toolCallId);
  else running.delete(toolCallId);
  if (state.turn.active) state.internal.activity = running.size > 0 ? "tool" : "thinking";
}

/**
 * Claude's terminal on a tool call: `terminal_info` shows it, `terminal_output` replaces
 * its output, `terminal_output_delta` appends to it, `terminal_exit` ends it (in that order
 * when one update carries several). The output is cut to its last FOLD_TERMINAL_MAX
 * characters once it holds twice that (a snapshot shows the last FOLD_TERMINAL_MAX), so
 * that appending a line never copies the rest.
 */
function terminal(
  state: ChatState,
  entry: ToolCallView,
  meta: JsonObject,
  sizes: Map<string, number>,
): void {
  const keys = ["terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit"];
  const parts = keys.map((key) => object(meta[key]));
  const [info, whole, delta, exit] = parts;
  let term = entry.terminal;
  if (term === undefined) {
    const given = info ?? whole ?? delta ?? exit;
    if (given === null || given === undefined) return;
    term = {
      terminalId: str(given.terminal_id) ?? entry.toolCallId,
      output: "",
      cut: 0,
      exited: false,
      exitCode: null,
      signal: null,
    };
    entry.terminal = term;
  }
  if (whole) {
    term.output = "";
    term.cut = 0;
  }
  for (const given of [whole, delta]) {
    if (!given) continue;
    term.output += str(given.data) ?? "";
    if (term.output.length > 2 * FOLD_TERMINAL_MAX) keepEnd(term);
  }
  if (exit) {
    term.exited = true;
    const code = exit.exit_code;
    term.exitCode = typeof code === "number" && Number.isInteger(code) ? code : null;
    term.signal = str(exit.signal);
  }
  const shown = Math.min(term.output.length, FOLD_TERMINAL_MAX);
  state.internal.weight += shown - (sizes.get("terminal") ?? 0);
  sizes.set("terminal", shown);
}

// ---------------------------------------------------------------- turns, agent, requests

/** The queue as the event lists it; a steered prompt becomes the running turn's. */
function queue(state: ChatState, ev: JsonObject, ts: number | null): void {
  const steered = int(ev.steered);
  const was = state.queue?.find((q) => q.turn === steered);
  if (was !== undefined && state.turn.active) {
    closeThought(state, ts);
    add(state, userItem(was as unknown as JsonObject));
  }
  const prompts = records(ev.prompts).filter((q) => int(q.turn) !== null);
  state.queue = prompts as unknown as QueuedPrompt[];
}

const AUTH_STATES = new Set(["required", "signing_in", "signed_in", "signed_out"]);

/** The sign-in as the event says it (its methods are the bridge's, bounded). */
function auth(state: ChatState, ev: JsonObject): void {
  const authState = ev.state;
  if (typeof authState !== "string" || !AUTH_STATES.has(authState)) return;
  state.auth = {
    state: authState as AuthView["state"],
    methods: records(ev.methods) as unknown as AuthMethodView[],
    logout: ev.logout === true,
    methodId: str(ev.methodId),
    toolCallId: str(ev.toolCallId),
    detail: str(ev.detail),
    by: str(ev.by),
  };
}

/** A prompt's item: a turn_started event's, or a queued prompt's. */
function userItem(prompt: JsonObject): Item {
  const attached = records(prompt.attachments) as unknown as AttachmentSummary[];
  const text = str(prompt.prompt) ?? "";
  return attached.length > 0
    ? { type: "user", text, attachments: attached }
    : { type: "user", text };
}

function endTurn(state: ChatState): void {
  state.turn.active = false;
  state.internal.running.clear();
}

function agentStatus(state: ChatState, ev: JsonObject): void {
  const agent = state.agent;
  const status = str(ev.status) || agent.status;
  const detail = str(ev.detail);
  agent.status = status;
  agent.detail = detail;
  agent.exitCode = num(ev.exitCode);
  agent.stderrTail = str(ev.stderrTail);
  // The agent's identity outlives one status; only a new value replaces it.
  if (ev.agent !== undefined && ev.agent !== null) agent.name = str(ev.agent);
  if (isRecord(ev.agentInfo)) agent.info = ev.agentInfo;
  if (isRecord(ev.agentCapabilities)) agent.capabilities = ev.agentCapabilities;
  if (typeof ev.sessionId === "string") agent.sessionId = ev.sessionId;
  if (isRecord(ev.modes)) {
    state.modes = {
      currentModeId: str(ev.modes.currentModeId),
      availableModes: records(ev.modes.availableModes),
    };
  }
  if (Array.isArray(ev.configOptions)) state.configOptions = records(ev.configOptions);
  if (status === "exited") {
    endTurn(state);
    add(state, { type: "error", text: detail || "agent exited" });
  }
}

function request(state: ChatState, kind: RequestKind, ev: JsonObject, ts: number | null): void {
  const requestId = cardId(state, ev, "requestId", ts);
  if (requestId === null) return;
  const deadline = num(ev.deadline);
  const edit = object(ev.edit);
  const fields =
    kind === "permission"
      ? {
          toolCall: object(ev.toolCall),
          options: records(ev.options),
          deadline,
          // The bridge built it as an Edit (a CellEdit or a FileEdit).
          ...(edit !== null && { edit: edit as unknown as Edit }),
        }
      : {
          message: str(ev.message) ?? "",
          // The bridge validated these against ElicitationField.
          fields: records(ev.fields) as unknown as ElicitationField[],
          toolCallId: str(ev.toolCallId),
          title: str(ev.title),
          deadline,
          // URL mode: the keys only a URL card has.
          ...(str(ev.url) !== null && { url: str(ev.url), host: str(ev.host) }),
        };
  const key = `${kind}:${requestId}`;
  const internal = state.internal;
  // Weighed once it settles: a pending card is never dropped.
  const weight = size(fields);
  const table: Map<string, PermissionView | ElicitationView> =
    kind === "permission" ? state.permissions : state.elicitations;
  const entry = table.get(requestId);
  if (entry === undefined) {
    const view = { requestId, ...fields, outcome: null, by: null };
    if (kind === "permission")
      state.permissions.set(requestId, { ...view, optionId: null } as PermissionView);
    else state.elicitations.set(requestId, view as ElicitationView);
    internal.pending.add(key);
    add(state, { type: kind, requestId });
  } else {
    // A repeated request keeps the outcome it may already have.
    Object.assign(entry, fields);
    if (!internal.pending.has(key)) internal.weight += weight - cardSize(state, key);
  }
  internal.cardSizes.set(key, new Map([["", weight]]));
}

function resolve(state: ChatState, kind: RequestKind, ev: JsonObject, ts: number | null): void {
  const requestId = str(ev.requestId);
  if (requestId === null) return;
  const entry = (kind === "permission" ? state.permissions : state.elicitations).get(requestId);
  if (entry === undefined) return;
  closeThought(state, ts);
  entry.outcome = str(ev.outcome);
  entry.by = str(ev.by);
  if ("optionId" in entry) entry.optionId = str(ev.optionId);
  // The bridge checked an accepted form's answer against its fields (it is bounded).
  else if (isRecord(ev.values)) {
    (entry as ElicitationView).values = ev.values as Record<string, FieldValue>;
  }
  const key = `${kind}:${requestId}`;
  if (state.internal.pending.delete(key)) state.internal.weight += cardSize(state, key);
}

// ---------------------------------------------------------------- helpers

function add(state: ChatState, item: Item): void {
  state.internal.weight += itemSize(item);
  state.items.push(item);
  state.internal.tail = null;
}

/**
 * Drops the oldest items until the state is a tenth under its bounds (so this runs once
 * per many events); never a pending request's card, nor the newest item, whose text
 * keeps its end when it alone is over. The items array is a new one: a renderer holding
 * the old one can tell which of its items went.
 */
function compact(state: ChatState): void {
  const internal = state.internal;
  const items = state.items;
  const maxItems = Math.floor((internal.maxItems * 9) / 10);
  const maxWeight = Math.floor((internal.maxWeight * 9) / 10);
  const kept: Item[] = [];
  let i = 0;
  while (
    i < items.length - 1 &&
    (kept.length + items.length - i > maxItems || internal.weight > maxWeight)
  ) {
    const item = items[i++] as Item;
    if ("requestId" in item && internal.pending.has(`${item.type}:${item.requestId}`)) {
      kept.push(item);
    } else {
      forget(state, item);
    }
  }
  state.items = kept.concat(items.slice(i));
  const newest = state.items[state.items.length - 1];
  if (internal.weight > maxWeight && newest !== undefined && "text" in newest) {
    const text = newest.text;
    const keep = Math.max(1024, text.length - (internal.weight - maxWeight));
    if (keep < text.length) {
      let start = text.length - keep + 1;
      // Not half of a surrogate pair.
      if (/[\uDC00-\uDFFF]/.test(text.charAt(start))) start++;
      newest.text = `…${text.slice(start)}`;
      droppedOf(state).characters += start;
      internal.weight -= text.length - newest.text.length;
    }
  }
}

/** Drops one item and the tool call or request it shows. */
function forget(state: ChatState, item: Item): void {
  const internal = state.internal;
  droppedOf(state).items++;
  internal.weight -= itemSize(item);
  if (item === internal.openThought) internal.openThought = null;
  if (item.type === "tool") {
    forgetSizes(state, `tool:${item.toolCallId}`);
    state.toolCalls.delete(item.toolCallId);
    internal.running.delete(item.toolCallId);
  } else if (item.type === "permission" || item.type === "elicitation") {
    forgetSizes(state, `${item.type}:${item.requestId}`);
    (item.type === "permission" ? state.permissions : state.elicitations).delete(item.requestId);
  }
}

function droppedOf(state: ChatState): Dropped {
  state.dropped ??= { items: 0, characters: 0 };
  return state.dropped;
}

function forgetSizes(state: ChatState, key: string): void {
  state.internal.weight -= cardSize(state, key);
  state.internal.cardSizes.delete(key);
}

function cardSize(state: ChatState, key: string): number {
  let total = 0;
  for (const value of state.internal.cardSizes.get(key)?.values() ?? []) total += value;
  return total;
}

function itemSize(item: Item): number {
  if (item.type === "stopped") return typeof item.reason === "string" ? item.reason.length : 0;
  return "text" in item && typeof item.text === "string" ? item.text.length : 0;
}

/** About the characters `value` holds as JSON (a bound, not a measure). */
function size(value: unknown): number {
  if (typeof value === "string") return value.length;
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0; // too deep: counts as nothing, like the kernel's fold
  }
}

/** The id of the card an event opens or updates; a card ends the running thought. */
function cardId(state: ChatState, ev: JsonObject, key: string, ts: number | null): string | null {
  const id = str(ev[key]);
  if (id !== null) closeThought(state, ts);
  return id;
}

function closeThought(state: ChatState, ts: number | null): void {
  const open = state.internal.openThought;
  if (open !== null) {
    open.endTs = ts;
    state.internal.openThought = null;
  }
}

function itemJson(item: Item): Item {
  return { ...item };
}

function toolTable(state: ChatState): Record<string, ToolCallView> {
  const ids = [...state.toolCalls.keys()];
  return Object.fromEntries(ids.map((id) => [id, toolView(state, id)]));
}

/** A copy of a tool call as the snapshot shows it: its terminal with at most its last
 * FOLD_TERMINAL_MAX characters. */
function toolView(state: ChatState, id: string): ToolCallView {
  const view = { ...(state.toolCalls.get(id) as ToolCallView) };
  if (view.terminal !== undefined) {
    view.terminal = { ...view.terminal };
    keepEnd(view.terminal);
  }
  return view;
}

/** Cuts a terminal's output to its last FOLD_TERMINAL_MAX characters, counting the cut. */
function keepEnd(term: TerminalView): void {
  const over = term.output.length - FOLD_TERMINAL_MAX;
  if (over > 0) {
    term.output = term.output.slice(over);
    term.cut += over;
  }
}

function copyTable<T extends object>(table: Map<string, T>): Record<string, T> {
  // fromEntries defines own properties, so an id like "__proto__" stays plain data.
  return Object.fromEntries([...table].map(([key, value]) => [key, { ...value }]));
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

function int(value: unknown): number | null {
  return Number.isInteger(value) ? (value as number) : null;
}

function num(value: unknown): number | null {
  return typeof value === "number" ? value : null;
}

function object(value: unknown): JsonObject | null {
  return isRecord(value) ? value : null;
}
