// The chat panel's page: host messages are queued and applied once per animation frame, then
// only the changed parts are redrawn (items by key, the plan, the review bar, the composer).

import type { HostMessage, ReviewFile, SessionInfo } from "../shared/protocol";
import { Composer } from "./composer";
import { type Ctx, type Post, h, relPath, renderItem, renderPlan, seconds } from "./items";
import { markdownRenderer } from "./markdown";
import { type Changes, type Model, applyMessage, emptyChanges, emptyModel, turnControls } from "./model";

export interface AppOptions {
  /** Runs `fn` before the next paint (requestAnimationFrame in the webview). */
  schedule?: (fn: () => void) => void;
  /** Persists the draft across hide/show (the webview's setState). */
  saveDraft?: (text: string) => void;
  draft?: string;
}

export class App {
  readonly model: Model = emptyModel();
  private queue: HostMessage[] = [];
  private scheduled = false;
  private readonly nodes = new Map<string, HTMLElement>();
  private readonly ctx: Ctx;
  private readonly transcript: HTMLElement;
  private readonly planEl: HTMLElement;
  private readonly reviewEl: HTMLElement;
  private readonly statusEl: HTMLElement;
  private readonly thinkingEl: HTMLElement;
  private readonly titleEl: HTMLElement;
  private readonly sessionsEl: HTMLElement;
  private readonly composer: Composer;
  private readonly schedule: (fn: () => void) => void;
  private ticker?: ReturnType<typeof setInterval>;
  private focusedPermission?: string;

  constructor(
    win: Window,
    root: HTMLElement,
    post: Post,
    opts: AppOptions = {},
  ) {
    const doc = win.document;
    this.schedule = opts.schedule ?? ((fn) => win.requestAnimationFrame(() => fn()));
    this.ctx = { doc, md: markdownRenderer(win), post, roots: [], turns: { starts: new Set(), running: false } };
    this.titleEl = h(doc, "h1", { class: "title" }, "New chat");
    const historyButton = h(doc, "button", { type: "button", class: "icon-button", "aria-label": "Chat history", title: "History", "aria-expanded": "false" }, "History");
    const newButton = h(doc, "button", { type: "button", class: "icon-button", "aria-label": "New chat", title: "New chat" }, "New");
    historyButton.addEventListener("click", () => {
      const open = this.sessionsEl.hidden;
      this.sessionsEl.hidden = !open;
      historyButton.setAttribute("aria-expanded", String(open));
      if (open) post({ type: "listSessions" });
    });
    newButton.addEventListener("click", () => post({ type: "newChat" }));
    const header = h(doc, "header", { class: "top", role: "toolbar", "aria-label": "Chat" }, this.titleEl, historyButton, newButton);
    this.sessionsEl = h(doc, "nav", { class: "sessions", "aria-label": "Chats in this folder", hidden: true });
    this.statusEl = h(doc, "div", { class: "agent-status", role: "status", "aria-live": "polite" });
    this.transcript = h(doc, "main", { class: "transcript", role: "log", "aria-live": "polite", "aria-label": "Conversation", tabindex: "0" });
    this.planEl = h(doc, "section", { class: "plan-box", "aria-label": "Plan", hidden: true });
    this.thinkingEl = h(doc, "div", { class: "thinking", role: "status", hidden: true });
    this.reviewEl = h(doc, "section", { class: "review", "aria-label": "Edits to review", hidden: true });
    this.composer = new Composer(this.ctx, (t) => opts.saveDraft?.(t));
    if (opts.draft) this.composer.setDraft(opts.draft);
    root.replaceChildren(header, this.sessionsEl, this.statusEl, this.transcript, this.planEl, this.thinkingEl, this.reviewEl, this.composer.el);
    // Links in Markdown and tool cards open in the editor, never in the webview.
    root.addEventListener("click", (e) => {
      const a = (e.target as Element).closest?.("a");
      if (!a) return;
      e.preventDefault();
      const path = a.getAttribute("data-path");
      if (path) {
        const line = a.getAttribute("data-line");
        post({ type: "open", path, line: line ? Number(line) : undefined });
      } else if (a.getAttribute("href")) {
        post({ type: "openLink", href: a.getAttribute("href")! });
      }
    });
  }

  /** Queues a host message; the batch is applied before the next frame. */
  receive(msg: HostMessage): void {
    this.queue.push(msg);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => this.flush());
  }

  /** Applies every queued message and redraws what changed (tests call it directly). */
  flush(): void {
    this.scheduled = false;
    const c = emptyChanges();
    const batch = this.queue;
    this.queue = [];
    for (const msg of batch) applyMessage(this.model, c, msg);
    this.render(c);
  }

  private render(c: Changes): void {
    const m = this.model;
    const doc = this.ctx.doc;
    this.ctx.roots = m.roots;
    // Turn controls: the messages they move on are redrawn; the running state is set in place,
    // since a redrawn message would be announced again in the log.
    const turns = { ...turnControls(m), running: m.running };
    const prev = this.ctx.turns;
    for (const key of new Set([...prev.starts, ...turns.starts])) {
      if (turns.last !== prev.last || prev.starts.has(key) !== turns.starts.has(key)) c.items.add(key);
    }
    if (turns.running !== prev.running) {
      for (const b of this.transcript.querySelectorAll("[data-turn-action]")) {
        if (turns.running) b.setAttribute("aria-disabled", "true");
        else b.removeAttribute("aria-disabled");
      }
    }
    this.ctx.turns = turns;
    const stick = this.nearBottom();
    if (c.reset) {
      this.nodes.clear();
      this.transcript.replaceChildren();
      for (const it of m.items) c.items.add(it.key);
      c.plan = c.header = c.review = c.composer = c.status = true;
    }
    let lostFocus = false;
    for (const key of c.removed) {
      const el = this.nodes.get(key);
      if (el?.contains(doc.activeElement)) lostFocus = true;
      el?.remove();
      this.nodes.delete(key);
    }
    for (const it of m.items) {
      if (!c.items.has(it.key)) continue;
      const el = renderItem(this.ctx, it);
      const old = this.nodes.get(it.key);
      // Keep a fold the user opened open, and the focus on a turn control.
      if (old?.tagName === "DETAILS" && el.tagName === "DETAILS" && (old as HTMLDetailsElement).open) (el as HTMLDetailsElement).open = true;
      const focused = old?.contains(doc.activeElement) ? (doc.activeElement as HTMLElement).getAttribute("data-turn-action") : null;
      if (old) old.replaceWith(el);
      else this.transcript.append(el);
      if (focused) (el.querySelector(`[data-turn-action="${focused}"]`) as HTMLElement | null)?.focus();
      this.nodes.set(it.key, el);
      const p = it.kind === "permission" ? it : it.kind === "tool" ? it.permission : undefined;
      if (p && !p.done && this.focusedPermission !== p.id) {
        this.focusedPermission = p.id;
        (el.querySelector(".perm-options button") as HTMLButtonElement | null)?.focus();
      }
    }
    if (c.plan) {
      this.planEl.hidden = m.plan.length === 0;
      this.planEl.replaceChildren(...(m.plan.length ? [renderPlan(this.ctx, m.plan)] : []));
    }
    if (c.header) this.titleEl.textContent = m.title || "New chat";
    if (c.review) this.renderReview(m.review);
    if (c.sessions) this.renderSessions(m.sessions ?? []);
    if (c.status || c.composer) this.composer.update(m);
    if (c.status) this.renderStatus();
    if (c.files) this.composer.update(m);
    if (c.draft !== undefined) this.composer.restore(c.draft);
    else if (lostFocus) this.input.focus();
    if (stick) this.transcript.scrollTop = this.transcript.scrollHeight;
  }

  private nearBottom(): boolean {
    const t = this.transcript;
    return t.scrollHeight - t.scrollTop - t.clientHeight < 40;
  }

  private renderStatus(): void {
    const m = this.model;
    const s = m.status;
    const text =
      s.state === "starting"
        ? "Starting the agent…"
        : s.state === "restarting"
          ? `The agent stopped (${s.reason}); restarting and reloading this chat…`
          : s.state === "stopped"
            ? `The agent is not running: ${s.reason}`
            : "";
    this.statusEl.textContent = text;
    this.statusEl.className = `agent-status state-${s.state}`;
    this.statusEl.hidden = !text;
    clearInterval(this.ticker);
    this.thinkingEl.hidden = !m.running;
    if (m.running) {
      const tick = () => {
        const ms = Date.now() - (m.turnStartedAt ?? Date.now());
        this.thinkingEl.textContent = `Working… ${seconds(ms)}`;
      };
      tick();
      this.ticker = setInterval(tick, 1000);
    }
  }

  private renderReview(files: ReviewFile[]): void {
    const d = this.ctx.doc;
    const post = this.ctx.post;
    this.reviewEl.hidden = files.length === 0;
    if (files.length === 0) {
      this.reviewEl.replaceChildren();
      return;
    }
    const button = (label: string, aria: string, cls: string, msg: Parameters<Post>[0]) => {
      const b = h(d, "button", { type: "button", class: cls, "aria-label": aria }, label);
      b.addEventListener("click", () => post(msg));
      return b;
    };
    const head = h(
      d,
      "div",
      { class: "review-head" },
      h(d, "span", { class: "review-count" }, `${files.length} ${files.length === 1 ? "file" : "files"} changed`),
      button("Keep all", "Keep all edits", "primary", { type: "keep" }),
      button("Undo all", "Undo all edits", "secondary", { type: "undo" }),
    );
    const list = h(d, "ul", { class: "review-list", role: "list" });
    for (const f of files) {
      const label = f.label || relPath(f.path, this.model.roots);
      list.append(
        h(
          d,
          "li",
          { class: "review-file", "data-path": f.path },
          h(d, "span", { class: "review-name", title: f.path }, label),
          f.created ? h(d, "span", { class: "tag" }, "new") : null,
          h(d, "span", { class: "added" }, `+${f.added}`),
          h(d, "span", { class: "removed" }, `−${f.removed}`),
          button("Review", `Review ${label}`, "link", { type: "review", path: f.path }),
          button("Keep", `Keep ${label}`, "link", { type: "keep", path: f.path }),
          button("Undo", `Undo ${label}`, "link", { type: "undo", path: f.path }),
        ),
      );
    }
    this.reviewEl.replaceChildren(head, list);
  }

  private renderSessions(list: SessionInfo[]): void {
    const d = this.ctx.doc;
    this.sessionsEl.replaceChildren();
    if (list.length === 0) {
      this.sessionsEl.append(h(d, "div", { class: "muted" }, "No earlier chats in this folder."));
      return;
    }
    const ul = h(d, "ul", { role: "list" });
    for (const s of list) {
      const when = s.updatedAt ? new Date(s.updatedAt).toLocaleString() : "";
      const b = h(
        d,
        "button",
        { type: "button", class: `session${s.sessionId === this.model.sessionId ? " current" : ""}`, "aria-current": s.sessionId === this.model.sessionId ? "true" : undefined },
        h(d, "span", { class: "session-title" }, s.title || "Untitled chat"),
        h(d, "span", { class: "session-when" }, when),
      );
      b.addEventListener("click", () => {
        this.sessionsEl.hidden = true;
        this.ctx.post({ type: "loadSession", sessionId: s.sessionId });
      });
      ul.append(h(d, "li", {}, b));
    }
    this.sessionsEl.append(ul);
  }

  /** For tests: the composer's text box. */
  get input(): HTMLTextAreaElement {
    return this.composer.input;
  }

  dispose(): void {
    clearInterval(this.ticker);
  }
}
