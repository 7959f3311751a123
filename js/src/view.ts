// The chat view: folds events into state at once and paints the DOM at most once per
// animation frame, touching only what changed: new items are appended, the last text
// item grows in place, and tool calls and cards are updated by id.

import { ANYONE, isViewer, type Role, roleOf } from "./access";
import { attachmentChips } from "./attach";
import { type CardContext, ElicitationCard, linkWaits, PermissionCard } from "./cards";
import { Composer } from "./composer";
import type { FoldSnapshot, SnapshotItem as Item, StreamEvent, Viewer } from "./contracts";
import { el, isRecord, setText } from "./dom";
import { type ChatState, fold, initialState, restore } from "./fold";
import { type Frame, FrameBudget } from "./frame_budget";
import { agentName, Header } from "./header";
import { hasKey, type Translate } from "./i18n";
import { AgentItem, ErrorItem, ThoughtItem, UserItem } from "./items";
import { PlanPanel } from "./plan";
import { canSteer, QueuePanel } from "./queue";
import { TerminalPane } from "./terminal";
import { renderToolCall } from "./tools";
import type { RequestBody, RequestResult } from "./transport";

export interface ViewOptions {
  t: Translate;
  request(body: RequestBody): Promise<RequestResult>;
  /** Runs `callback` before the next paint; returns a canceller. Default: requestAnimationFrame. */
  schedule?: (callback: () => void) => () => void;
  /** Runs `callback` in a task after the frame's paint. Default: setTimeout 0. */
  afterPaint?: (callback: () => void) => void;
  now?: () => number;
  /** Keeps the composer's draft across views of one chat (a re-display re-creates the view). */
  draftKey?: string;
}

interface ItemView {
  readonly el: HTMLElement;
  /** Applies the item's current state to the DOM (a long text: in steps until `until`). */
  update(until?: number): void;
  /** Text items grow by chunks; the others change only through a keyed update. */
  readonly grows: boolean;
  /** Whether it still has text to show in later frames (a long answer goes in steps). */
  unfinished?(): boolean;
}

type Card = PermissionCard | ElicitationCard;

/**
 * Transcript items go into pages of this many; only a page skips style, layout and paint
 * off-screen (content-visibility). With a box per item, a 200-turn chat in JupyterLab
 * spent more of each frame in visibility checks and in the transcript's layout the longer
 * the chat grew (1,200 items: 1.3 ms of intersection checks per lifecycle, tasks over 50 ms).
 */
const PAGE_ITEMS = 24;

/**
 * A reset (a page reload's resync) builds in its first frame only the pages of the last
 * this-many items, where the transcript is scrolled to, and the earlier pages in later
 * frames, the last first: building all of a 50,000-event chat's 386 items took 100-190 ms
 * on a loaded box before the widget showed anything. 32 one-line items (36 px each) fill
 * the transcript's 70vh of a 1600 px high window; 48 took 36-54 ms of a loaded box.
 */
const TAIL_ITEMS = 32;

/** A tool call's fields that its card shows above its terminal. */
const TOOL_FIELDS = [
  "title",
  "kind",
  "status",
  "content",
  "locations",
  "rawInput",
  "rawOutput",
] as const;

function nextFrame(callback: () => void): () => void {
  const handle = requestAnimationFrame(callback);
  return () => cancelAnimationFrame(handle);
}

function isSnapshot(value: unknown): value is FoldSnapshot {
  if (!isRecord(value)) return false;
  const table = (v: unknown): boolean => typeof v === "object" && v !== null;
  return (
    Array.isArray(value.items) &&
    table(value.agent) &&
    table(value.turn) &&
    table(value.toolCalls) &&
    table(value.permissions) &&
    table(value.elicitations)
  );
}

function requestKey(kind: "permission" | "elicitation", requestId: string): string {
  return `${kind}:${requestId}`;
}

export class ChatView {
  readonly el: HTMLElement;
  private state: ChatState = initialState();
  private readonly t: Translate;
  private readonly header: Header;
  private readonly transcript: HTMLElement;
  private readonly plan: PlanPanel;
  private readonly composer: Composer;
  private readonly queue: QueuePanel;
  private readonly ctx: CardContext;
  private readonly schedule: (callback: () => void) => () => void;
  private readonly afterPaint: (callback: () => void) => void;
  /**
   * How long a frame goes on taking steps of long texts (frame_budget.ts): one step of a
   * 600 KB answer took about 2.5 ms of a 16.7 ms frame in JupyterLab, so one step a
   * frame left the page idle half the time and set the answer's pace.
   */
  private readonly budget = new FrameBudget();
  private readonly now: () => number;
  /** The views of the items from `base` on (the items before it are not built yet). */
  private views: ItemView[] = [];
  private base = 0;
  /** The items array the views were built from: the fold replaces it when it drops items. */
  private shown: readonly Item[] = [];
  /** The characters the fold had cut from a long message when the views were built. */
  private cut = 0;
  /** Says that the fold dropped earlier items (it is bounded, see fold.ts). */
  private readonly droppedNote = el("div", "acpnb-dropped");
  /** The page new items go to (see PAGE_ITEMS). */
  private page: HTMLElement | null = null;
  /** Items whose text is still being shown in steps (as many a frame as the budget allows). */
  private unfinished = new Set<ItemView>();
  private keyed = new Map<string, ItemView>();
  /** Pending cards by request key; they survive a resync, and with them what the user typed. */
  private readonly cards = new Map<string, Card>();
  private dirtyKeys = new Set<string>();
  private focusKeys = new Set<string>();
  private rebuild = true;
  private planDirty = true;
  private connected = false;
  /** Who this page is to the owner gate; null until a resync's ack says (local mode: never). */
  private viewer: Viewer | null = null;
  /** The chat is gone from the server: nothing is coming, so nothing is "connecting". */
  private gone = false;
  /** A saved copy's status line (see savedCopy), in place of the chat's status. */
  private note: string | null = null;
  private cancelFrame: (() => void) | null = null;
  /** See inertCards. */
  private inert = false;
  /**
   * Whether the transcript follows new text: until the user scrolls up. Kept from scroll
   * events rather than measured when painting: items off-screen have estimated heights
   * (content-visibility), and a height read after the paint's writes forces a layout.
   */
  private stuck = true;
  /** The next scroll event is the view's own. */
  private autoScrolled = false;
  private readonly ticker: ReturnType<typeof setInterval>;

  constructor(options: ViewOptions) {
    this.t = options.t;
    this.schedule = options.schedule ?? nextFrame;
    this.afterPaint = options.afterPaint ?? ((callback) => setTimeout(callback, 0));
    this.now = options.now ?? Date.now;
    this.ctx = {
      t: this.t,
      agentName: () => agentName(this.state, this.t),
      toolTitle: (id) => this.state.toolCalls.get(id)?.title ?? null,
      request: options.request,
    };
    this.el = el("div", "acpnb-root");
    // Keeps JupyterLab's notebook shortcuts (a, b, d d, …) away from our inputs.
    this.el.setAttribute("data-lm-suppress-shortcuts", "true");
    this.header = new Header(this.t, options.request);
    this.transcript = el("div", "acpnb-transcript");
    this.transcript.setAttribute("role", "log");
    this.transcript.addEventListener("scroll", () => this.scrolled(), { passive: true });
    this.plan = new PlanPanel(this.t);
    this.composer = new Composer(this.t, options.request, options.draftKey);
    this.queue = new QueuePanel(this.t, options.request);
    this.droppedNote.hidden = true;
    this.el.append(
      this.header.el,
      this.droppedNote,
      this.transcript,
      this.plan.el,
      this.queue.el,
      this.composer.el,
    );
    this.ticker = setInterval(() => this.tick(), 1000);
    this.requestFrame();
  }

  /** Shows a saved snapshot while no live stream is connected, if it is newer than the state. */
  paint(snapshot: unknown): void {
    if (this.connected || !isSnapshot(snapshot) || snapshot.seq <= this.state.seq) return;
    this.state = restore(snapshot);
    this.reset();
  }

  /**
   * Folds a batch of events; `reset` (a resync's full history) starts the state over,
   * from `snapshot` (the resync's ended turns, folded by the server) when there is one.
   * `viewer`: who this page is, as the resync's ack names it.
   */
  apply(
    events: readonly StreamEvent[],
    reset: boolean,
    snapshot?: unknown,
    viewer?: unknown,
  ): void {
    if (isViewer(viewer)) this.viewer = viewer;
    if (reset) {
      this.state = isSnapshot(snapshot) ? restore(snapshot) : initialState();
      this.header.showError(null);
      this.reset();
    }
    for (const event of events) {
      this.markDirty(event, !reset);
      if (event.kind === "queue" && !reset) this.queueRemoved(event);
      this.state = fold(this.state, event);
    }
    if (reset) this.dropStaleCards();
    this.requestFrame();
  }

  /** A cancel or the agent's exit removed queued prompts: say so; a cancel's go back
   * into the composer (this page's, if it may prompt), so nothing typed is lost. */
  private queueRemoved(event: Extract<StreamEvent, { kind: "queue" }>): void {
    const removed = new Set(event.removed ?? []);
    if (removed.size === 0 || event.reason === "removed") return;
    this.queue.removed(removed.size, event.reason ?? "cancelled");
    const texts = (this.state.queue ?? []).filter((q) => removed.has(q.turn)).map((q) => q.prompt);
    if (event.reason === "cancelled" && this.role().mayAct) this.composer.giveBack(texts);
  }

  /**
   * The chat is gone from the server (CHAT_GONE: its kernel or server ended). Questions
   * still open here can never be answered: they are shown cancelled, and the chat exited.
   */
  endedWithServer(): void {
    this.gone = true;
    let seq = this.state.seq;
    const events: StreamEvent[] = [];
    for (const [requestId, p] of this.state.permissions) {
      if (p.outcome === null) {
        events.push({ kind: "permission_resolved", seq: ++seq, requestId, outcome: "cancelled" });
      }
    }
    for (const [requestId, e] of this.state.elicitations) {
      // An accepted URL question would wait for a completion that can no longer come.
      if (e.outcome === null || linkWaits(e)) {
        events.push({ kind: "elicitation_resolved", seq: ++seq, requestId, outcome: "cancelled" });
      }
    }
    if (this.state.agent.status !== "exited") {
      events.push({
        kind: "agent_status",
        seq: ++seq,
        status: "exited",
        detail: this.t("chatGone"),
      });
    }
    this.apply(events, false);
  }

  /** Says in the header why the chat runs in local mode (a `local_reason` code), or
   * nothing when it is not. */
  showLocalReason(reason: string): void {
    const key = `local:${reason}`;
    this.header.showNote(reason !== "" && hasKey(key) ? this.t(key) : null);
  }

  /**
   * This view shows a saved copy of a chat that may still live elsewhere (nothing here says
   * it ended): the status line says `note`, nothing is "connecting", open questions stay as
   * they were saved, and the composer is off.
   */
  savedCopy(note: string): void {
    this.gone = true;
    this.note = note;
    this.requestFrame();
  }

  /** Shows a failure of the link itself (not of one request) in the header. */
  showError(text: string): void {
    this.header.showError(text);
  }

  /** Whether a link to the hub is up (the header says "connecting…" until it is). */
  setConnected(connected: boolean): void {
    this.connected = connected;
    this.requestFrame();
  }

  /** Paints now what the next frame would paint, and (`whole`) every item not built yet. */
  flush(whole = true): void {
    this.frame(whole);
  }

  /** Every question card shown from now on is inert (a saved copy's cards are not answered). */
  inertCards(): void {
    this.inert = true;
  }

  /**
   * A frame's paint; `whole`: with every item (else a reset builds the last ones first).
   * Returns the frame's budget when its steps stopped at it (more remain for the next
   * frames), else null.
   */
  private frame(whole: boolean): Frame | null {
    this.cancelFrame?.();
    this.cancelFrame = null;
    const box = this.transcript;
    const items = this.state.items;
    const reset = this.rebuild;
    if (reset) {
      this.rebuild = false;
      this.views = [];
      this.base = whole ? 0 : this.tailStart();
      this.unfinished = new Set();
      this.keyed = new Map();
      this.page = null;
      box.replaceChildren();
    } else if (items !== this.shown) {
      this.prune(items);
    }
    this.shown = items;
    this.cut = this.state.dropped?.characters ?? 0;
    // Only the last item can have grown since the last frame; the rest are new.
    const last = this.views[this.views.length - 1];
    const budget = this.budget.begin();
    const deadline = budget.until;
    const updated = new Set(this.unfinished);
    if (last?.grows) updated.add(last);
    for (const view of updated) view.update(deadline);
    for (let i = this.base + this.views.length; i < items.length; i++) {
      const view = this.createView(items[i] as Item);
      this.pageFor(i).append(view.el);
      this.views.push(view);
      view.update(deadline);
      updated.add(view);
    }
    // The earlier pages, a page at least a frame, not in the reset's own frame.
    while (this.base > 0 && (whole || !reset)) {
      this.buildPageBefore(updated, deadline);
      if (!whole && performance.now() >= deadline) break;
    }
    budget.stepped();
    this.unfinished = new Set([...updated].filter((view) => view.unfinished?.() === true));
    for (const key of this.dirtyKeys) this.keyed.get(key)?.update();
    this.dirtyKeys.clear();
    this.focusNewCards();
    if (this.planDirty) {
      this.planDirty = false;
      this.plan.update(this.state.plan);
    }
    const role = this.role();
    this.header.update(this.state, this.connected || this.gone, this.note, role);
    this.showDropped();
    this.composer.setEnabled(this.state.agent.status !== "exited" && this.note === null);
    this.composer.setLocked(role.mayAct ? null : role.owner);
    this.composer.setCommands(this.state.commands);
    this.composer.setQueueing(this.state.turn.active);
    const steer = this.state.turn.active && canSteer(this.state.agent.capabilities);
    this.queue.update(this.state.queue, steer, role.mayAct && this.note === null);
    for (const card of this.cards.values()) card.lock(role.mayAct ? null : role.owner);
    this.tick();
    if (this.stuck) {
      const bottom = box.scrollHeight - box.clientHeight;
      if (box.scrollTop < bottom - 1) {
        this.autoScrolled = true;
        box.scrollTop = bottom;
      }
    }
    if (this.unfinished.size === 0 && this.base === 0) return null;
    this.requestFrame();
    return budget;
  }

  /**
   * Where a reset's first frame starts building: TAIL_ITEMS before the end, or before
   * the first question still open (it must show at once), at a page's start.
   */
  private tailStart(): number {
    const items = this.state.items;
    let start = Math.max(0, items.length - TAIL_ITEMS);
    for (let i = 0; i < start; i++) {
      const item = items[i] as Item;
      const open =
        (item.type === "permission" &&
          this.state.permissions.get(item.requestId)?.outcome === null) ||
        (item.type === "elicitation" &&
          this.state.elicitations.get(item.requestId)?.outcome === null);
      if (open) start = i;
    }
    return start - (start % PAGE_ITEMS);
  }

  /** Builds the page of items before `base` and puts it first (see TAIL_ITEMS). */
  private buildPageBefore(updated: Set<ItemView>, deadline: number): void {
    const start = this.base - PAGE_ITEMS;
    const page = el("div", "acpnb-page");
    const views = this.state.items.slice(start, this.base).map((item) => this.createView(item));
    for (const view of views) {
      page.append(view.el);
      view.update(deadline);
      updated.add(view);
    }
    this.transcript.prepend(page);
    this.views.unshift(...views);
    this.base = start;
  }

  /**
   * Removes the views of the items the fold dropped, and the view of a message it cut
   * (a text view only grows), which the frame then builds again.
   */
  private prune(items: readonly Item[]): void {
    const live = new Set(items);
    const old = this.shown;
    const gone = new Set<ItemView>();
    this.views.forEach((view, k) => {
      if (!live.has(old[this.base + k] as Item)) gone.add(view);
    });
    const last = this.views[this.views.length - 1];
    if (last !== undefined && (this.state.dropped?.characters ?? 0) !== this.cut) gone.add(last);
    for (const view of gone) {
      view.el.remove();
      this.unfinished.delete(view);
    }
    for (const [key, view] of this.keyed) if (gone.has(view)) this.keyed.delete(key);
    this.views = this.views.filter((view) => !gone.has(view));
    this.base = old.slice(0, this.base).filter((item) => live.has(item)).length;
    for (const page of [...this.transcript.children]) {
      if (page.childElementCount === 0) page.remove();
    }
    if (this.page !== null && !this.page.isConnected) this.page = null;
  }

  private showDropped(): void {
    const dropped = this.state.dropped;
    if (this.droppedNote.hidden !== (dropped === null)) this.droppedNote.hidden = dropped === null;
    if (dropped === null) return;
    const text = this.t("droppedItems", {
      items: dropped.items.toLocaleString(),
      characters: dropped.characters.toLocaleString(),
    });
    setText(this.droppedNote, text);
  }

  /** The page that takes the item at `index`: a new one every PAGE_ITEMS items. */
  private pageFor(index: number): HTMLElement {
    if (this.page === null || index % PAGE_ITEMS === 0) {
      this.page = el("div", "acpnb-page");
      this.transcript.append(this.page);
    }
    return this.page;
  }

  dispose(): void {
    this.cancelFrame?.();
    this.cancelFrame = null;
    clearInterval(this.ticker);
  }

  private scrolled(): void {
    if (this.autoScrolled) {
      // Items scrolled into view take their real height now: follow them to the bottom.
      this.autoScrolled = false;
      this.requestFrame();
      return;
    }
    const box = this.transcript;
    this.stuck = box.scrollHeight - box.scrollTop - box.clientHeight < 24;
  }

  private reset(): void {
    this.rebuild = true;
    this.planDirty = true;
    this.dirtyKeys.clear();
    this.focusKeys.clear();
    this.requestFrame();
  }

  // Kept cards whose request the resynced history no longer holds as pending are dropped.
  private dropStaleCards(): void {
    for (const [key, card] of this.cards) {
      const table =
        card instanceof PermissionCard ? this.state.permissions : this.state.elicitations;
      const state = table.get(card.requestId);
      if (state === undefined || !(state.outcome === null || ("url" in state && linkWaits(state))))
        this.cards.delete(key);
    }
  }

  private requestFrame(): void {
    if (this.cancelFrame !== null) return;
    this.cancelFrame = this.schedule(() => {
      // Only the frames the budget cut say what it costs: the others may have had little to do.
      const cut = this.frame(false);
      if (cut !== null) this.afterPaint(cut.painted);
    });
  }

  private markDirty(event: StreamEvent, live: boolean): void {
    switch (event.kind) {
      case "update": {
        const u: unknown = event.update;
        // As the fold does: an update that is not an object changes nothing.
        if (!isRecord(u)) break;
        if (u.sessionUpdate === "plan") this.planDirty = true;
        if (typeof u.toolCallId === "string") this.dirtyKeys.add(`tool:${u.toolCallId}`);
        break;
      }
      case "permission_request":
      case "elicitation_request": {
        const kind = event.kind === "permission_request" ? "permission" : "elicitation";
        const key = requestKey(kind, event.requestId);
        const known = (
          kind === "permission" ? this.state.permissions : this.state.elicitations
        ).has(event.requestId);
        // Only a card that arrives live takes the focus, never one re-sent by a resync.
        if (live && !known) this.focusKeys.add(key);
        this.dirtyKeys.add(key);
        break;
      }
      case "permission_resolved":
        this.dirtyKeys.add(requestKey("permission", event.requestId));
        break;
      case "elicitation_resolved":
        this.dirtyKeys.add(requestKey("elicitation", event.requestId));
        break;
    }
  }

  private createView(item: Item): ItemView {
    const { t } = this;
    switch (item.type) {
      case "error": {
        const view = new ErrorItem();
        return { el: view.el, grows: true, update: () => view.update(item.text) };
      }
      case "user":
      case "agent": {
        // A prompt's attachments never change: shown once, under its text.
        const view =
          item.type === "agent"
            ? new AgentItem(t)
            : new UserItem(item.attachments && attachmentChips(item.attachments));
        return {
          el: view.el,
          grows: true,
          update: (until) => view.update(item.text, until),
          unfinished: () => view.unfinished,
        };
      }
      case "thought": {
        const view = new ThoughtItem(t);
        return { el: view.el, grows: true, update: () => view.update(item) };
      }
      case "tool": {
        const box = el("div", "acpnb-item acpnb-tool");
        const card = el("div", "acpnb-tool-card");
        box.append(card);
        let pane: TerminalPane | null = null;
        let drawn: unknown[] = [];
        const update = (): void => {
          const call = this.state.toolCalls.get(item.toolCallId);
          if (call === undefined) return;
          // Live output changes only the terminal: the rest is drawn again when it changed.
          const fields = TOOL_FIELDS.map((key) => call[key]);
          if (fields.some((value, n) => value !== drawn[n])) renderToolCall(card, call, t);
          drawn = fields;
          if (call.terminal !== undefined) {
            pane ??= new TerminalPane(t);
            if (pane.el.parentNode !== box) box.append(pane.el);
            pane.update(call.terminal);
          }
        };
        return this.keyedView(`tool:${item.toolCallId}`, { el: box, grows: false, update });
      }
      case "permission":
      case "elicitation":
        return this.cardView(item.type, item.requestId);
    }
  }

  private keyedView(key: string, view: ItemView): ItemView {
    this.keyed.set(key, view);
    return view;
  }

  private cardView(kind: "permission" | "elicitation", requestId: string): ItemView {
    const key = requestKey(kind, requestId);
    const slot = el("div", "acpnb-item acpnb-slot");
    const update = (): void => {
      const card = this.cards.get(key);
      if (kind === "permission") {
        const state = this.state.permissions.get(requestId);
        if (state === undefined) return;
        if (card instanceof PermissionCard) card.update(state);
        else this.mount(key, slot, new PermissionCard(state, this.ctx));
      } else {
        const state = this.state.elicitations.get(requestId);
        if (state === undefined) return;
        if (card instanceof ElicitationCard) card.update(state);
        // A settled question shows nothing: its answer is in the agent's reply.
        else if (state.outcome === null || linkWaits(state))
          this.mount(key, slot, new ElicitationCard(state, this.ctx));
      }
      if (this.cards.get(key)?.pending === false) this.cards.delete(key);
    };
    // A card still pending from before a resync moves into the new slot as it is.
    const kept = this.cards.get(key);
    if (kept !== undefined) slot.append(kept.el);
    return this.keyedView(key, { el: slot, grows: false, update });
  }

  /** What this page may do on the chat (a saved chat's page: as its kernel's user). */
  private role(): Role {
    return this.gone ? ANYONE : roleOf(this.state.access, this.viewer);
  }

  private mount(key: string, slot: HTMLElement, card: Card): void {
    const role = this.role();
    card.lock(role.mayAct ? null : role.owner);
    if (this.inert) card.el.setAttribute("inert", "");
    this.cards.set(key, card);
    slot.replaceChildren(card.el);
    card.tick(this.now());
  }

  private focusNewCards(): void {
    if (this.focusKeys.size === 0) return;
    const active = document.activeElement;
    // Take the focus only from the page body or from this chat, never from another cell.
    const mayFocus = active === null || active === document.body || this.el.contains(active);
    for (const key of this.focusKeys) {
      const card = this.cards.get(key);
      if (mayFocus && card?.pending) card.focus();
    }
    this.focusKeys.clear();
  }

  private tick(): void {
    const now = this.now();
    for (const card of this.cards.values()) if (card.pending) card.tick(now);
  }
}
