// DOM for one transcript item: messages, thoughts, tool cards, permission prompts, notices
// and errors. Text goes in as text nodes; only sanitized Markdown goes in as HTML.

import type { WebviewMessage } from "../shared/protocol";
import { diffLines, hunks } from "../shared/diff";
import type { RenderMarkdown } from "./markdown";
import type { Item, Permission, PlanEntry, QuestionForm, Subagent, ToolCall, ToolCallContent } from "./model";

export type Post = (m: WebviewMessage) => void;

export interface Ctx {
  doc: Document;
  md: RenderMarkdown;
  post: Post;
  roots: string[];
  /** Turn controls: which messages start a known turn (keys), the turn "Undo turn" takes back,
   *  and whether a turn runs (the controls are off then). */
  turns: { starts: Set<string>; last?: string; running: boolean };
}

type Child = Node | string | null | undefined | false;

export function h(doc: Document, tag: string, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = doc.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" ? doc.createTextNode(c) : c);
  }
  return el;
}

/** A path shown relative to the workspace folder that holds it. */
export function relPath(p: string, roots: string[]): string {
  for (const r of roots) {
    const root = r.endsWith("/") || r.endsWith("\\") ? r : `${r}/`;
    if (p.startsWith(root)) return p.slice(root.length);
  }
  return p;
}

const KIND_ICONS: Record<string, string> = {
  read: "◉",
  edit: "✎",
  delete: "✕",
  move: "⇄",
  search: "⌕",
  execute: "❯",
  think: "✦",
  fetch: "⇣",
  switch_mode: "⇆",
  other: "•",
};

const STATUS_LABELS: Record<string, string> = {
  pending: "pending",
  in_progress: "running",
  completed: "done",
  failed: "failed",
};

const MAX_DIFF_LINES = 400;

function markdown(ctx: Ctx, text: string, cls = "markdown"): HTMLElement {
  const el = h(ctx.doc, "div", { class: cls });
  el.innerHTML = ctx.md(text);
  return el;
}

function locationLink(ctx: Ctx, path: string, line?: number | null): HTMLElement {
  const label = `${relPath(path, ctx.roots)}${line ? `:${line}` : ""}`;
  const a = h(ctx.doc, "a", { href: "#", class: "location", "data-path": path, title: `Open ${label}` }, label);
  if (line) a.setAttribute("data-line", String(line));
  return a;
}

export function renderDiff(ctx: Ctx, path: string, oldText: string | null | undefined, newText: string): HTMLElement {
  const lines = diffLines(oldText, newText);
  const added = lines.filter((l) => l.op === "+").length;
  const removed = lines.filter((l) => l.op === "-").length;
  const label = relPath(path, ctx.roots);
  const head = h(
    ctx.doc,
    "div",
    { class: "diff-head" },
    locationLink(ctx, path),
    oldText == null ? h(ctx.doc, "span", { class: "tag" }, "new file") : null,
    h(ctx.doc, "span", { class: "added", "aria-label": `${added} lines added` }, `+${added}`),
    h(ctx.doc, "span", { class: "removed", "aria-label": `${removed} lines removed` }, `−${removed}`),
  );
  const body = h(ctx.doc, "div", { class: "diff-body", role: "table", "aria-label": `Changes to ${label}` });
  let shown = 0;
  const hs = hunks(lines);
  for (const hunk of hs) {
    if (shown >= MAX_DIFF_LINES) break;
    if (body.childElementCount > 0) body.append(h(ctx.doc, "div", { class: "gap", "aria-hidden": "true" }, "⋯"));
    for (const l of hunk.lines) {
      if (shown++ >= MAX_DIFF_LINES) break;
      const cls = l.op === "+" ? "line add" : l.op === "-" ? "line del" : "line ctx";
      body.append(
        h(
          ctx.doc,
          "div",
          { class: cls, role: "row" },
          h(ctx.doc, "span", { class: "ln", "aria-hidden": "true" }, String(l.op === "-" ? l.oldNo : l.newNo)),
          h(ctx.doc, "span", { class: "sign", "aria-hidden": "true" }, l.op),
          h(ctx.doc, "span", { class: "code" }, l.text),
        ),
      );
    }
  }
  const total = hs.reduce((n, x) => n + x.lines.length, 0);
  if (total > MAX_DIFF_LINES) body.append(h(ctx.doc, "div", { class: "gap" }, `… ${total - MAX_DIFF_LINES} more lines (Review shows all)`));
  return h(ctx.doc, "div", { class: "diff" }, head, body);
}

function commandOf(call: { rawInput?: unknown }): string | undefined {
  const raw = call.rawInput as { command?: unknown } | undefined;
  if (raw && typeof raw.command === "string") return raw.command;
  if (raw && Array.isArray(raw.command)) return raw.command.join(" ");
  return undefined;
}

function contentBlocks(ctx: Ctx, call: Pick<ToolCall, "kind" | "content">, container: HTMLElement): void {
  for (const c of call.content as ToolCallContent[]) {
    if (c.type === "diff") {
      container.append(renderDiff(ctx, c.path, c.oldText, c.newText));
    } else if (c.type === "content" && c.content.type === "text") {
      const text = c.content.text;
      const lines = text.split("\n").length;
      // Command output and long results are folded.
      if (call.kind === "execute" || lines > 12) {
        const summary = call.kind === "execute" ? "Output" : `Result (${lines} lines)`;
        container.append(
          h(ctx.doc, "details", { class: "output" }, h(ctx.doc, "summary", {}, summary), markdown(ctx, text)),
        );
      } else {
        container.append(markdown(ctx, text, "markdown result"));
      }
    } else if (c.type === "terminal") {
      container.append(h(ctx.doc, "div", { class: "muted" }, `Terminal ${c.terminalId}`));
    }
  }
}

function renderTool(ctx: Ctx, call: ToolCall, permission?: Permission): HTMLElement {
  const status = STATUS_LABELS[call.status] ?? call.status;
  const el = h(ctx.doc, "div", {
    class: `tool status-${call.status}`,
    role: "article",
    "aria-label": `${call.kind} tool call: ${call.title}, ${status}`,
    "data-tool-call": call.toolCallId,
  });
  el.append(
    h(
      ctx.doc,
      "div",
      { class: "tool-head" },
      h(ctx.doc, "span", { class: `icon kind-${call.kind}`, "aria-hidden": "true", title: call.kind }, KIND_ICONS[call.kind] ?? "•"),
      h(ctx.doc, "span", { class: "tool-title" }, call.title),
      h(ctx.doc, "span", { class: `badge badge-${call.status}` }, status),
    ),
  );
  const command = call.kind === "execute" ? commandOf(call) : undefined;
  const showCommand = Boolean(command && command !== call.title);
  if (showCommand) el.append(h(ctx.doc, "pre", { class: "command" }, `$ ${command}`));
  if (call.locations.length) {
    const locs = h(ctx.doc, "div", { class: "locations" });
    for (const l of call.locations) locs.append(locationLink(ctx, l.path, l.line));
    el.append(locs);
  }
  if (call.subagent) el.append(renderSubagent(ctx, call.subagent));
  contentBlocks(ctx, call, el);
  if (permission) el.append(renderPermission(ctx, permission, { inline: true, shown: call.content.length > 0 || showCommand }));
  return el;
}

const OPTION_LABEL_DONE: Record<string, string> = {
  allow_once: "Allowed once",
  allow_always: "Always allowed",
  reject_once: "Rejected",
  reject_always: "Always rejected",
};

/**
 * The question and the agent's options. `inline`: inside the call's tool card, which already
 * has the title; `shown`: the card already shows the command or the diff.
 */
function renderPermission(ctx: Ctx, item: Permission, opts: { inline?: boolean; shown?: boolean } = {}): HTMLElement {
  const tc = item.request.toolCall;
  const title = tc.title ?? "The agent asks for permission";
  const el = h(ctx.doc, "div", {
    class: `permission${item.done ? " done" : ""}${opts.inline ? " inline" : ""}`,
    role: item.done ? "group" : "alertdialog",
    "aria-label": `Permission: ${title}`,
    "data-permission": item.id,
  });
  if (!item.done) {
    el.append(
      h(ctx.doc, "div", { class: "perm-title" }, h(ctx.doc, "span", { class: "icon", "aria-hidden": "true" }, "?"), opts.inline ? "Allow this?" : title),
    );
  }
  if (!opts.shown && !item.done) {
    const command = commandOf(tc);
    if (command) el.append(h(ctx.doc, "pre", { class: "command" }, `$ ${command}`));
    contentBlocks(ctx, { kind: tc.kind ?? "other", content: tc.content ?? [] }, el);
  }
  if (item.done) {
    const opt = item.request.options.find((o) => o.optionId === item.answered);
    // "Always allow, and save" is an allow_always option that also writes a rule (docs/rules.md).
    const done = opt?.optionId === "allow_always_save" ? "Always allowed, and saved" : opt && (OPTION_LABEL_DONE[opt.kind] ?? opt.name);
    el.append(h(ctx.doc, "div", { class: "perm-answer" }, done ?? "Cancelled"));
    return el;
  }
  const group = h(ctx.doc, "div", { class: "perm-options", role: "group", "aria-label": "Answer" });
  item.request.options.forEach((o, i) => {
    const b = h(
      ctx.doc,
      "button",
      {
        type: "button",
        class: o.kind.startsWith("allow") ? (i === 0 ? "primary" : "secondary") : "secondary reject",
        "data-option": o.optionId,
        "aria-keyshortcuts": String(i + 1),
        title: `${o.name} (${i + 1})`,
      },
      h(ctx.doc, "span", { class: "key", "aria-hidden": "true" }, String(i + 1)),
      o.name,
    );
    b.addEventListener("click", () => ctx.post({ type: "permission", id: item.id, optionId: o.optionId }));
    group.append(b);
  });
  // Arrow keys move between the answers, digits pick one.
  group.addEventListener("keydown", (e) => {
    const buttons = [...group.querySelectorAll("button")] as HTMLButtonElement[];
    const at = buttons.indexOf(ctx.doc.activeElement as HTMLButtonElement);
    if (e.key === "ArrowRight" || e.key === "ArrowDown") {
      buttons[(at + 1) % buttons.length]?.focus();
      e.preventDefault();
    } else if (e.key === "ArrowLeft" || e.key === "ArrowUp") {
      buttons[(at - 1 + buttons.length) % buttons.length]?.focus();
      e.preventDefault();
    } else if (/^[1-9]$/.test(e.key) && buttons[Number(e.key) - 1]) {
      buttons[Number(e.key) - 1].click();
      e.preventDefault();
    }
  });
  el.append(group);
  return el;
}

function renderError(ctx: Ctx, item: Extract<Item, { kind: "error" }>): HTMLElement {
  const el = h(ctx.doc, "div", { class: "error", role: "alert" }, h(ctx.doc, "div", { class: "error-text" }, item.message));
  if (item.action === "setApiKey") {
    const input = h(ctx.doc, "input", {
      type: "password",
      class: "key-input",
      "aria-label": `API key${item.provider ? ` for ${item.provider}` : ""}`,
      placeholder: `API key${item.provider ? ` for ${item.provider}` : ""}`,
      autocomplete: "off",
      spellcheck: "false",
    }) as HTMLInputElement;
    const form = h(
      ctx.doc,
      "form",
      { class: "key-form" },
      input,
      h(ctx.doc, "button", { type: "submit", class: "primary" }, "Save and retry"),
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      input.value = "";
      ctx.post({ type: "setApiKey", key, provider: item.provider });
    });
    el.append(h(ctx.doc, "div", { class: "error-action" }, "Set API key…"), form);
  }
  return el;
}

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
}

/**
 * Under a message that started a turn: Rewind to here, and Undo turn on the last turn. While
 * a turn runs they are aria-disabled rather than disabled, so a focused one keeps the focus.
 */
function turnActions(ctx: Ctx, turnId: string): HTMLElement {
  const d = ctx.doc;
  const off = ctx.turns.running ? "true" : undefined;
  const action = (name: string, label: string, aria: string, title: string, msg: WebviewMessage) => {
    const b = h(d, "button", { type: "button", class: "link", "data-turn-action": name, "aria-label": aria, title, "aria-disabled": off }, label);
    b.addEventListener("click", () => {
      if (!ctx.turns.running) ctx.post(msg);
    });
    return b;
  };
  const row = h(d, "div", { class: "turn-actions", role: "group", "aria-label": "Turn" });
  if (ctx.turns.last === turnId) {
    row.append(action("undo", "Undo turn", "Undo the last turn", "Take back the last turn: its file changes and its messages", { type: "undoTurn" }));
  }
  row.append(
    action(
      "rewind",
      "Rewind to here",
      "Rewind to before this message",
      "Take back this turn and every later one (files and messages), and put this message back in the box to edit",
      { type: "rewind", turnId },
    ),
  );
  return row;
}

export function renderItem(ctx: Ctx, item: Item): HTMLElement {
  switch (item.kind) {
    case "user": {
      const el = h(ctx.doc, "div", { class: "msg user", role: "article", "aria-label": "You" });
      el.append(h(ctx.doc, "div", { class: "user-text" }, item.text));
      if (item.attachments.length) {
        const chips = h(ctx.doc, "div", { class: "chips" });
        for (const a of item.attachments) chips.append(h(ctx.doc, "span", { class: "chip" }, a.label));
        el.append(chips);
      }
      if (item.turnId && ctx.turns.starts.has(item.key)) el.append(turnActions(ctx, item.turnId));
      return el;
    }
    case "agent": {
      const el = markdown(ctx, item.text, "msg agent markdown");
      el.setAttribute("role", "article");
      el.setAttribute("aria-label", "interpreter");
      return el;
    }
    case "thought": {
      const label = item.endedAt ? `Thought for ${seconds(item.endedAt - item.startedAt)}` : "Thinking…";
      return h(ctx.doc, "details", { class: "thought" }, h(ctx.doc, "summary", {}, label), markdown(ctx, item.text));
    }
    case "tool":
      return renderTool(ctx, item.call, item.permission);
    case "permission":
      return renderPermission(ctx, item);
    case "question":
      return renderQuestion(ctx, item);
    case "notice":
      return h(
        ctx.doc,
        "div",
        { class: `notice notice-${item.severity}`, role: "note" },
        h(ctx.doc, "strong", {}, item.title),
        item.description ? h(ctx.doc, "div", {}, item.description) : null,
      );
    case "error":
      return renderError(ctx, item);
    case "stop":
      return h(ctx.doc, "div", { class: "stop", role: "note" }, item.reason === "cancelled" ? "Stopped." : `Turn ended: ${item.reason.replace(/_/g, " ")}.`);
  }
}

export function renderPlan(ctx: Ctx, entries: PlanEntry[]): HTMLElement {
  const done = entries.filter((e) => e.status === "completed").length;
  const list = h(ctx.doc, "ul", { class: "plan-list", role: "list" });
  for (const e of entries) {
    const checked = e.status === "completed" ? "true" : e.status === "in_progress" ? "mixed" : "false";
    list.append(
      h(
        ctx.doc,
        "li",
        { class: `plan-entry plan-${e.status}`, role: "checkbox", "aria-checked": checked, "aria-readonly": "true" },
        h(ctx.doc, "span", { class: "check", "aria-hidden": "true" }, e.status === "completed" ? "☑" : e.status === "in_progress" ? "◐" : "☐"),
        e.content,
      ),
    );
  }
  return h(
    ctx.doc,
    "details",
    { class: "plan", open: true },
    h(ctx.doc, "summary", {}, `Plan · ${done}/${entries.length}`),
    list,
  );
}

export { seconds };

interface FormField {
  type?: string;
  title?: string;
  description?: string;
  oneOf?: { const: string; title?: string; description?: string }[];
  items?: { anyOf?: { const: string; title?: string; description?: string }[] };
}

const QUESTION_DONE: Record<string, string> = { accept: "Answered", decline: "Declined", cancel: "Cancelled" };

/**
 * The agent's questions as a form: one radio group per single-choice field, checkboxes for a
 * multi-select field, a text box for the user's own words; Submit, Decline, Cancel.
 */
function renderQuestion(ctx: Ctx, item: QuestionForm): HTMLElement {
  const req = item.request as { message: string; requestedSchema?: { properties?: Record<string, FormField> } };
  const el = h(ctx.doc, "form", {
    class: `question${item.done ? " done" : ""}`,
    role: item.done ? "group" : "dialog",
    "aria-label": `Question: ${req.message}`,
    "data-question": item.id,
  });
  el.append(h(ctx.doc, "div", { class: "perm-title" }, h(ctx.doc, "span", { class: "icon", "aria-hidden": "true" }, "?"), req.message));
  if (item.done) {
    el.append(h(ctx.doc, "div", { class: "perm-answer" }, QUESTION_DONE[item.action ?? "cancel"] ?? "Cancelled"));
    return el;
  }
  const props = req.requestedSchema?.properties ?? {};
  for (const [name, field] of Object.entries(props)) {
    const set = h(ctx.doc, "fieldset", { class: "q-field", "data-field": name });
    set.append(h(ctx.doc, "legend", {}, field.title ?? name));
    const options = field.oneOf ?? field.items?.anyOf;
    if (options) {
      const kind = field.type === "array" ? "checkbox" : "radio";
      for (const o of options) {
        const input = h(ctx.doc, "input", { type: kind, name, value: o.const }) as HTMLInputElement;
        const label = h(ctx.doc, "label", { class: "q-option" }, input, " ", o.title ?? o.const);
        if (o.description) label.append(h(ctx.doc, "span", { class: "q-desc" }, ` — ${o.description}`));
        set.append(label);
      }
    } else {
      set.append(h(ctx.doc, "input", { type: "text", name, class: "q-text", "aria-label": field.title ?? name }));
    }
    el.append(set);
  }
  const answer = (action: "accept" | "decline" | "cancel") => {
    if (action !== "accept") return ctx.post({ type: "question", id: item.id, action });
    const content: Record<string, string | string[]> = {};
    for (const [name, field] of Object.entries(props)) {
      const inputs = [...el.querySelectorAll(`input[name="${name}"]`)] as HTMLInputElement[];
      if (field.type === "array") {
        const picked = inputs.filter((i) => i.checked).map((i) => i.value);
        if (picked.length) content[name] = picked;
      } else if (inputs[0]?.type === "text") {
        if (inputs[0].value.trim()) content[name] = inputs[0].value.trim();
      } else {
        const picked = inputs.find((i) => i.checked);
        if (picked) content[name] = picked.value;
      }
    }
    ctx.post({ type: "question", id: item.id, action, content });
  };
  const buttons = h(ctx.doc, "div", { class: "perm-options", role: "group", "aria-label": "Answer" });
  const button = (label: string, cls: string, action: "accept" | "decline" | "cancel") => {
    const b = h(ctx.doc, "button", { type: action === "accept" ? "submit" : "button", class: cls, "data-action": action }, label);
    if (action !== "accept") b.addEventListener("click", () => answer(action));
    buttons.append(b);
  };
  button("Submit", "primary", "accept");
  button("Decline", "secondary", "decline");
  button("Cancel the turn", "secondary reject", "cancel");
  el.addEventListener("submit", (e) => {
    e.preventDefault();
    answer("accept");
  });
  el.append(buttons);
  return el;
}

/** A subagent inside its call's card: name, task, state, and its own calls (collapsible). */
function renderSubagent(ctx: Ctx, sub: Subagent): HTMLElement {
  const state = sub.state ?? "running";
  const calls = sub.calls.length === 1 ? "1 tool call" : `${sub.calls.length} tool calls`;
  const el = h(
    ctx.doc,
    "details",
    { class: `subagent subagent-${state}`, "data-subagent": sub.session, open: state === "running" },
    h(ctx.doc, "summary", {}, h(ctx.doc, "strong", {}, sub.name), sub.task ? ` ${sub.task}` : "", h(ctx.doc, "span", { class: `badge badge-${state}` }, state), h(ctx.doc, "span", { class: "muted" }, ` · ${calls}`)),
  );
  const list = h(ctx.doc, "ul", { class: "subagent-calls" });
  for (const call of sub.calls) {
    list.append(
      h(
        ctx.doc,
        "li",
        { class: `status-${call.status}`, "data-tool-call": call.toolCallId },
        h(ctx.doc, "span", { class: `icon kind-${call.kind}`, "aria-hidden": "true" }, KIND_ICONS[call.kind] ?? "•"),
        ` ${call.title} `,
        h(ctx.doc, "span", { class: `badge badge-${call.status}` }, STATUS_LABELS[call.status] ?? call.status),
      ),
    );
  }
  el.append(list);
  return el;
}
