// The chat view: folds events into state at once and paints the DOM at most once per
// animation frame, touching only what changed: new items are appended, the last text
// item grows in place, and tool calls and cards are updated by id.

import { ANYONE, isViewer, type Role, roleOf } from "./access";
import { Announcer, nextPiece, spoken } from "./announce";
import { attachmentChips } from "./attach";
import { type CardContext, ElicitationCard, linkWaits, PermissionCard } from "./cards";
import { Composer } from "./composer";
import {
  type AgentView,
  CHAT_GONE_CLOSED,
  CHAT_GONE_KERNEL,
  type FoldSnapshot,
  type SnapshotItem as Item,
  type StreamEvent,
  type Viewer,
} from "./contracts";
import { el, isRecord, setText } from "./dom";
import { type ChatState, fold, initialState, restore } from "./fold";
import { type Frame, FrameBudget } from "./frame_budget";
import { agentName, Header } from "./header";
import { hasKey, isolate, type Translate } from "./i18n";
import { AgentItem, ErrorItem, stoppedMark, ThoughtItem, UserItem } from "./items";
import { keepKeysInChats } from "./keys";
import { labHooks } from "./lab_hooks";
import { PlanPanel } from "./plan";
import { canSteer, QueuePanel } from "./queue";
import { SignInPanel } from "./signin";
import { TerminalPane } from "./terminal";
import { renderToolCall } from "./tools";
import type { RequestBody, RequestResult } from "./transport";
import { JUMP_EVENT, type ObserverFactory, WaitingButton } from "./waiting";
import { answerer } from "./who";

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
  /** What tells whether a waiting card is in view (waiting.ts; default: the browser's). */
  observe?: ObserverFactory;
  /** The chat's id: the page's notices of a waiting question name it (lab_hooks.ts). */
  chatId?: string;
  /**
   * Shows the items from this place in the whole chat on (the items the fold dropped
   * counted), with a button for the whole chat: `%%agent`'s view of its own turn.
   * Absent: the whole chat.
   */
  fromItem?: number;
  /** With fromItem: where the view's items end (its turn's end); 0 while it runs. */
  toItem?: number;
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
  /** Points to a card waiting for the user that is out of view. */
  private readonly waiting: WaitingButton;
  private readonly composer: Composer;
  private readonly queue: QueuePanel;
  private readonly signIn: SignInPanel;
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
  /** See ViewOptions.fromItem and toItem. */
  private fromItem: number | null;
  private toItem: number;
  /** Says that the items before fromItem are not shown, with a button that shows them. */
  private readonly earlier = el("div", "acpnb-earlier");
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
  private readonly announcer = new Announcer();
  /** The agent message being spoken (its index counted from the chat's start) and how far. */
  private spokenTo = { item: -1, chars: 0 };
  /** The open cards the page was told of (lab_hooks.ts cardOpened), by request key. */
  private readonly told = new Set<string>();
  private readonly chatId: string;
  /** What had the focus when the view was taken out of the page (a re-render, live.ts). */
  private focusLost: HTMLElement | null = null;

  constructor(options: ViewOptions) {
    this.t = options.t;
    this.schedule = options.schedule ?? nextFrame;
    this.afterPaint = options.afterPaint ?? ((callback) => setTimeout(callback, 0));
    this.now = options.now ?? Date.now;
    this.ctx = {
      t: this.t,
      agentName: () => agentName(this.state, this.t),
      toolTitle: (id) => this.state.toolCalls.get(id)?.title ?? null,
      answerer: (by) => answerer(by, this.viewer, agentName(this.state, this.t), this.t),
      request: options.request,
      answered: () => this.answered(),
    };
    this.chatId = options.chatId ?? "";
    this.el = el("div", "acpnb-root");
    // Views of one chat (inline, the panel) know each other by it (focusNewCards).
    this.el.dataset.chat = this.chatId;
    // JupyterLab's notebook shortcuts (a, b, d d, …) never act from inside a chat.
    keepKeysInChats();
    this.el.addEventListener("keydown", (event) => this.key(event));
    this.el.addEventListener("focusout", (event) => {
      if (!this.el.isConnected && event.target instanceof HTMLElement) {
        this.focusLost = event.target;
      }
    });
    this.header = new Header(this.t, options.request);
    this.transcript = el("div", "acpnb-transcript");
    this.transcript.setAttribute("role", "log");
    // Not live: every chunk would be read out; the announcer speaks whole pieces (announce.ts).
    this.transcript.setAttribute("aria-live", "off");
    this.transcript.addEventListener("scroll", () => this.scrolled(), { passive: true });
    this.waiting = new WaitingButton(this.t, options.observe);
    this.header.place(this.waiting.el);
    this.plan = new PlanPanel(this.t);
    this.composer = new Composer(this.t, options.request, options.draftKey);
    this.queue = new QueuePanel(this.t, options.request);
    this.signIn = new SignInPanel(this.t, options.request);
    this.droppedNote.hidden = true;
    this.fromItem = options.fromItem === undefined ? null : Math.max(0, options.fromItem);
    this.toItem = Math.max(0, options.toItem ?? 0);
    const whole = el("button", "acpnb-btn acpnb-whole-chat", this.t("showWholeChat"));
    whole.type = "button";
    whole.addEventListener("click", () => this.showWholeChat());
    this.earlier.append(el("span", undefined, this.t("earlierHidden")), " ", whole);
    this.earlier.hidden = this.fromItem === null;
    this.el.append(
      this.header.el,
      this.droppedNote,
      this.earlier,
      this.transcript,
      this.plan.el,
      this.signIn.el,
      this.queue.el,
      this.composer.el,
      this.announcer.el,
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
    if (reset) {
      this.dropStaleCards();
      this.spokenAll(); // the history is not read out again
    }
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
   * The chat is gone from the server (CHAT_GONE), `why` as the server said (a closed chat,
   * its kernel's end; else nobody here knows). Questions still open here can never be
   * answered: they are shown cancelled. A chat someone closed is shown "closed"; any
   * other end, as the agent's exit.
   */
  endedWithServer(why: string | null = null): void {
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
    if (why === CHAT_GONE_CLOSED) this.note = this.t("statusClosed");
    else if (this.state.agent.status !== "exited") {
      events.push({
        kind: "agent_status",
        seq: ++seq,
        status: "exited",
        detail: this.t(why === CHAT_GONE_KERNEL ? "chatKernelEnded" : "chatGone"),
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

  /** The chat's agent: its name and capabilities once its ready status said them. */
  agent(): Readonly<AgentView> {
    return this.state.agent;
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
      const start = Math.max(this.floor(), whole ? 0 : this.tailStart());
      this.base = Math.min(this.ceiling(), start);
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
    const end = this.ceiling();
    for (let i = this.base + this.views.length; i < end; i++) {
      const view = this.createView(items[i] as Item);
      this.pageFor(i).append(view.el);
      this.views.push(view);
      view.update(deadline);
      updated.add(view);
    }
    // The earlier pages, a page at least a frame, not in the reset's own frame.
    while (this.base > this.floor() && (whole || !reset)) {
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
    const busy = String(this.state.turn.active);
    if (this.transcript.getAttribute("aria-busy") !== busy) {
      this.transcript.setAttribute("aria-busy", busy);
    }
    this.speak();
    this.showDropped();
    this.composer.setEnabled(this.state.agent.status !== "exited" && this.note === null);
    this.composer.setLocked(role.mayAct ? null : role.owner);
    this.composer.setCommands(this.state.commands);
    this.composer.setQueueing(this.state.turn.active);
    const steer = this.state.turn.active && canSteer(this.state.agent.capabilities);
    this.queue.update(this.state.queue, steer, role.mayAct && this.note === null);
    const live = this.state.agent.status !== "exited" && this.note === null && !this.gone;
    this.signIn.update(this.state.auth, agentName(this.state, this.t), live, role.mayAct);
    for (const card of this.cards.values()) card.lock(role.mayAct ? null : role.owner);
    // A saved copy's cards are answered nowhere, and others' cards do not wait for this page.
    const mine = !this.inert && role.mayAct;
    const waiting = mine ? [...this.cards.values()].filter((card) => card.pending) : [];
    this.waiting.update(waiting);
    this.tick();
    if (this.stuck) {
      const bottom = box.scrollHeight - box.clientHeight;
      if (box.scrollTop < bottom - 1) {
        this.autoScrolled = true;
        box.scrollTop = bottom;
      }
    }
    if (this.unfinished.size === 0 && this.base <= this.floor()) return null;
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

  /** The first item this view shows: fromItem, where the fold holds it now (or will). */
  private floor(): number {
    return Math.max(0, (this.fromItem ?? 0) - (this.state.dropped?.items ?? 0));
  }

  /** The item after the last one this view shows: toItem's place now, else the end. */
  private ceiling(): number {
    const items = this.state.items.length;
    if (this.fromItem === null || this.toItem === 0) return items;
    return Math.min(items, Math.max(0, this.toItem - (this.state.dropped?.items ?? 0)));
  }

  /** The view's turn has ended at `toItem` (ViewOptions.toItem): later items are not its. */
  endAt(toItem: number): void {
    if (this.fromItem === null || toItem === this.toItem) return;
    this.toItem = Math.max(0, toItem);
    this.reset();
  }

  /** Shows the chat's other items too (fromItem's button). */
  private showWholeChat(): void {
    this.fromItem = null;
    this.toItem = 0;
    this.earlier.hidden = true;
    this.reset();
  }

  /** Builds the page of items before `base` and puts it first (see TAIL_ITEMS). */
  private buildPageBefore(updated: Set<ItemView>, deadline: number): void {
    const start = Math.max(this.floor(), this.base - PAGE_ITEMS);
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
    // A view from a turn on that has built nothing yet still waits for that turn's items.
    if (this.views.length === 0) this.base = Math.max(this.base, this.floor());
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
    this.waiting.dispose();
    for (const key of this.told) labHooks()?.cardClosed?.(this.chatId, key);
    this.told.clear();
  }

  /**
   * The view is back in the page after a re-render (each turn's end re-displays the
   * output): the focus it had goes back, unless the user has put it somewhere since.
   */
  refocus(): void {
    const target = this.focusLost;
    this.focusLost = null;
    if (target === null) return;
    queueMicrotask(() => {
      const active = document.activeElement;
      const free = active === null || active === document.body;
      if (free && target.isConnected && this.el.contains(target)) target.focus();
    });
  }

  /** Puts the focus in the composer (the panel was opened to type in it). */
  focusComposer(): void {
    this.composer.focus();
  }

  /** Escape stops the running turn (an open menu's Escape is the menu's: it prevents it). */
  private key(event: KeyboardEvent): void {
    if (event.key !== "Escape" || event.defaultPrevented || event.isComposing) return;
    if (!this.state.turn.active || !this.role().mayAct || this.note !== null) return;
    event.preventDefault();
    this.header.cancel();
  }

  /** A card of this view was answered here: the focus goes on to the composer. */
  private answered(): void {
    const active = document.activeElement;
    if (active === null || active === document.body || this.el.contains(active)) {
      this.composer.focus();
    }
  }

  /**
   * Speaks the agent's messages once each, in sentence-sized pieces as they complete. A
   * reset's history is not spoken again: it starts from the end.
   */
  private speak(): void {
    const items = this.state.items;
    const offset = this.state.dropped?.items ?? 0;
    for (let i = Math.max(0, this.spokenTo.item - offset); i < items.length; i++) {
      const item = items[i] as Item;
      if (item.type !== "agent") continue;
      if (offset + i !== this.spokenTo.item) this.spokenTo = { item: offset + i, chars: 0 };
      const done = i < items.length - 1 || !this.state.turn.active;
      for (let pieces = 0; pieces < 5; pieces++) {
        const piece = nextPiece(item.text, this.spokenTo.chars, done);
        if (piece === null) break;
        this.announcer.say(spoken(item.text.slice(piece[0], piece[1])));
        this.spokenTo.chars = piece[1];
      }
    }
  }

  /** After a reset: what the chat already holds counts as spoken. */
  private spokenAll(): void {
    const items = this.state.items;
    const last = items[items.length - 1];
    const at = (this.state.dropped?.items ?? 0) + items.length - 1;
    this.spokenTo = { item: at, chars: last?.type === "agent" ? last.text.length : 0 };
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
    this.spokenAll();
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
      case "stopped":
        return { el: stoppedMark(item.reason, t), grows: false, update: () => {} };
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
        else this.mount(key, slot, new ElicitationCard(state, this.ctx));
      }
      const now = this.cards.get(key);
      // An answer given here, elsewhere, or by Python: said through the status region.
      if (now?.settledNow) this.announcer.tell(now.settledText());
      if (now?.pending === false) this.cards.delete(key);
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
    card.el.addEventListener(JUMP_EVENT, () => this.jumpTo(card));
    slot.replaceChildren(card.el);
    card.tick(this.now());
  }

  /**
   * A card that arrives live takes the focus only when the focus is in this chat already;
   * otherwise it is announced, and the page is told (a notification offers to jump to it).
   */
  private focusNewCards(): void {
    for (const key of this.focusKeys) {
      const card = this.cards.get(key);
      if (card === undefined || !card.open) continue;
      const active = document.activeElement;
      if (this.el.contains(active)) {
        card.focus();
        continue;
      }
      // In another view of this chat: that view takes the focus to its card.
      const other = active?.closest<HTMLElement>(".acpnb-root");
      if (other != null && this.chatId !== "" && other.dataset.chat === this.chatId) continue;
      const text = this.t("cardWaiting", { agent: isolate(agentName(this.state, this.t)) });
      this.announcer.tell(text);
      if (this.role().mayAct) {
        const jump = (): boolean => this.jumpTo(this.cards.get(key));
        labHooks()?.cardOpened?.(this.chatId, key, { text, jump });
        this.told.add(key);
      }
    }
    this.focusKeys.clear();
    for (const key of this.told) {
      if (this.cards.get(key)?.open !== true) {
        this.told.delete(key);
        labHooks()?.cardClosed?.(this.chatId, key);
      }
    }
  }

  /** Focuses `card` if this view shows it open. */
  private jumpTo(card: Card | undefined): boolean {
    if (card === undefined || !card.open || !card.el.isConnected) return false;
    card.focus(); // which scrolls it into view
    return true;
  }

  private tick(): void {
    const now = this.now();
    for (const card of this.cards.values()) if (card.pending) card.tick(now);
  }
}
