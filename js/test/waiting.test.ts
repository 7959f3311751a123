// @vitest-environment jsdom
// The header's jump to a card waiting out of view: shown while one is, pointing its way,
// and a click brings the oldest into view with the focus.
import { afterEach, describe, expect, it, vi } from "vitest";
import { translator } from "../src/i18n";
import { type ObserverFactory, WaitingButton } from "../src/waiting";

/** An observer the test drives: `report(el, where)` is what the browser would say. */
function fakeObserver() {
  let callback: IntersectionObserverCallback = () => {};
  const observed = new Set<Element>();
  const factory: ObserverFactory = (cb) => {
    callback = cb;
    return {
      observe: (target) => observed.add(target),
      unobserve: (target) => observed.delete(target),
      disconnect: () => observed.clear(),
    };
  };
  const report = (target: Element, where: "in" | "above" | "below"): void => {
    const top = where === "above" ? -300 : where === "below" ? 900 : 100;
    const entry = {
      target,
      isIntersecting: where === "in",
      boundingClientRect: { top, bottom: top + 100 },
      rootBounds: { top: 0, bottom: 800 },
    } as unknown as IntersectionObserverEntry;
    callback([entry], {} as IntersectionObserver);
  };
  return { factory, observed, report };
}

function card(name: string) {
  const node = document.createElement("section");
  node.textContent = name;
  document.body.append(node);
  return { el: node, focus: vi.fn(() => node.focus()) };
}

afterEach(() => {
  document.body.replaceChildren();
  vi.restoreAllMocks();
});

describe("waiting button", () => {
  it("shows while a waiting card is out of view, pointing its way", () => {
    const { factory, observed, report } = fakeObserver();
    const button = new WaitingButton(translator("en"), factory);
    expect(button.el.hidden).toBe(true);
    const first = card("first");
    button.update([first]);
    expect(observed.has(first.el)).toBe(true);
    report(first.el, "above");
    expect(button.el.hidden).toBe(false);
    expect(button.el.textContent).toBe("1 waiting ↑");
    report(first.el, "in");
    expect(button.el.hidden).toBe(true);
    const second = card("second");
    button.update([first, second]);
    report(second.el, "below");
    expect(button.el.textContent).toBe("1 waiting ↓");
    report(first.el, "above");
    expect(button.el.textContent).toBe("2 waiting ↑");
    // Answered: no longer watched, nothing points to it.
    button.update([second]);
    expect(observed.has(first.el)).toBe(false);
    expect(button.el.textContent).toBe("1 waiting ↓");
    button.update([]);
    expect(button.el.hidden).toBe(true);
    button.dispose();
    expect(observed.size).toBe(0);
  });

  it("brings the oldest card out of view into view, and focuses it", () => {
    const { factory, report } = fakeObserver();
    const scrolled: Element[] = [];
    HTMLElement.prototype.scrollIntoView = function (this: HTMLElement) {
      scrolled.push(this);
    };
    const button = new WaitingButton(translator("en"), factory);
    const [seen, first, second] = [card("seen"), card("first"), card("second")];
    button.update([seen, first, second]);
    report(seen.el, "in");
    report(first.el, "above");
    report(second.el, "below");
    button.el.click();
    expect(scrolled).toEqual([first.el]);
    expect(first.focus).toHaveBeenCalledOnce();
    expect(seen.focus).not.toHaveBeenCalled();
  });

  it("counts every waiting card out of view where the browser cannot say", () => {
    const button = new WaitingButton(translator("zh"), () => null);
    button.update([card("a"), card("b")]);
    expect(button.el.textContent).toBe("2 个待回答 ↓");
    expect(button.el.title).toBe("显示等待你回答的问题");
  });
});
