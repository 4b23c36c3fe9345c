// The chat webview rendered in jsdom from a recorded ACP update stream
// (fixtures/transcript.json, recorded from the real agent by record-transcript.cjs).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { JSDOM } = require("jsdom");
const { App } = require("../out/webview/app.js");
const recorded = JSON.parse(readFileSync(new URL("./fixtures/transcript.json", import.meta.url), "utf8"));

/** A page with the app; `frames` holds the scheduled flushes (one per animation frame). */
function page() {
  const win = new JSDOM('<!doctype html><div id="app"></div>', { url: "https://webview.invalid/", pretendToBeVisual: true }).window;
  const posted = [];
  const frames = [];
  const app = new App(win, win.document.getElementById("app"), (m) => posted.push(m), { schedule: (fn) => frames.push(fn) });
  const run = () => {
    while (frames.length) frames.shift()();
  };
  const q = (sel) => win.document.querySelector(sel);
  const qa = (sel) => [...win.document.querySelectorAll(sel)];
  return { win, app, posted, frames, run, q, qa };
}

function load(p, { upTo } = {}) {
  p.app.receive({ type: "roots", roots: recorded.roots });
  p.app.receive({ type: "reset", sessionId: recorded.sessionId });
  for (const m of recorded.messages) {
    if (upTo && upTo(m)) break;
    p.app.receive(m);
  }
  p.run();
}

test("updates are batched: one frame for the whole stream, nothing drawn before it", () => {
  const p = page();
  p.app.receive({ type: "reset", sessionId: recorded.sessionId });
  for (const m of recorded.messages) p.app.receive(m);
  assert.equal(p.frames.length, 1);
  assert.equal(p.qa(".msg").length, 0);
  p.run();
  assert.ok(p.qa(".msg").length > 0);
  p.app.dispose();
});

test("agent text is Markdown; a hostile <img onerror> stays text", () => {
  const p = page();
  load(p);
  const agent = p.qa(".msg.agent");
  assert.equal(agent.length, 2);
  assert.equal(agent[0].querySelector("h1").textContent, "Plan");
  assert.equal(agent[0].querySelector("strong").textContent, "edit");
  assert.equal(agent[0].querySelector("code").textContent, "a.txt");
  assert.equal(p.qa("img").length, 0, "no <img> element");
  assert.equal(p.qa("[onerror]").length, 0, "no onerror attribute");
  assert.match(agent[0].textContent, /<img src=x onerror="alert\(1\)">/);
  // Links go through the host, not the webview.
  const link = agent[1].querySelector("a");
  assert.equal(link.textContent, "a.txt");
  link.click();
  assert.deepEqual(p.posted.at(-1), { type: "openLink", href: "a.txt" });
  assert.equal(p.q(".msg.user .user-text").textContent, "Change two to TWO in a.txt");
  assert.match(p.q("details.thought summary").textContent, /^Thought for \d+s$/);
  assert.equal(p.q(".title").textContent, "Change two to TWO in a.txt");
  p.app.dispose();
});

test("hostile text in a user message, a tool title and a permission is escaped too", () => {
  const p = page();
  const evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
  p.app.receive({ type: "reset", sessionId: "s" });
  p.app.receive({ type: "userMessage", text: evil, attachments: [] });
  p.app.receive({ type: "update", notification: { sessionId: "s", update: { sessionUpdate: "tool_call", toolCallId: "t", title: evil, kind: "execute", rawInput: { command: evil } } } });
  p.app.receive({ type: "permission", id: "p", request: { sessionId: "s", toolCall: { toolCallId: "t", title: evil, content: [{ type: "content", content: { type: "text", text: evil } }] }, options: [{ optionId: "a", name: evil, kind: "allow_once" }] } });
  p.app.receive({ type: "error", message: evil });
  p.run();
  assert.equal(p.qa("img").length + p.qa("script").length, 0);
  assert.equal(p.qa("[onerror]").length, 0);
  assert.ok(p.q(".msg.user").textContent.includes(evil));
  assert.ok(p.q(".tool-title").textContent.includes(evil));
  p.app.dispose();
});

test("tool cards: title, kind icon, status, locations as links, folded output, diffs", () => {
  const p = page();
  load(p);
  const edit = p.q('[data-tool-call="call_edit"]');
  assert.match(edit.className, /status-completed/);
  assert.equal(edit.getAttribute("role"), "article");
  assert.equal(edit.querySelector(".tool-title").textContent, "Edit a.txt");
  assert.equal(edit.querySelector(".icon").getAttribute("title"), "edit");
  assert.equal(edit.querySelector(".badge").textContent, "done");
  const loc = edit.querySelector(".locations a");
  assert.equal(loc.textContent, "a.txt");
  loc.click();
  assert.deepEqual(p.posted.at(-1), { type: "open", path: "/work/project/a.txt", line: undefined });
  // The diff: one line removed, one added, context around them.
  const del = edit.querySelectorAll(".diff .line.del");
  const add = edit.querySelectorAll(".diff .line.add");
  assert.equal(del.length, 1);
  assert.equal(add.length, 1);
  assert.equal(del[0].querySelector(".code").textContent, "two");
  assert.equal(add[0].querySelector(".code").textContent, "TWO");
  assert.equal(add[0].querySelector(".ln").textContent, "2");
  assert.equal(edit.querySelectorAll(".diff .line.ctx").length, 2);
  assert.equal(edit.querySelector(".diff-head .added").textContent, "+1");

  const check = p.q('[data-tool-call="call_check"]');
  assert.equal(check.querySelector(".icon").getAttribute("title"), "execute");
  assert.equal(check.querySelector(".tool-title").textContent, "touch checked.txt");
  // Command output, when there is some, is folded.
  p.app.receive({
    type: "update",
    notification: { sessionId: recorded.sessionId, update: { sessionUpdate: "tool_call_update", toolCallId: "call_check", content: [{ type: "content", content: { type: "text", text: "```console\nline 1\nline 2\n```" } }] } },
  });
  p.run();
  const out = p.q('[data-tool-call="call_check"] details.output');
  assert.equal(out.open, false);
  assert.equal(out.querySelector("summary").textContent, "Output");
  assert.match(out.querySelector("pre code").textContent, /line 1\nline 2/);
  p.app.dispose();
});

test("the plan is a checklist", () => {
  const p = page();
  load(p);
  const entries = p.qa(".plan-box .plan-entry");
  assert.deepEqual(entries.map((e) => e.textContent.slice(1)), ["Read a.txt", "Edit a.txt", "Run the check"]);
  assert.deepEqual(entries.map((e) => e.getAttribute("aria-checked")), ["true", "mixed", "false"]);
  assert.equal(entries[0].getAttribute("role"), "checkbox");
  assert.equal(p.q(".plan-box summary").textContent, "Plan · 1/3");
  p.app.dispose();
});

test("permission buttons: the agent's options, focused, answerable by click or digit key", () => {
  const p = page();
  load(p, { upTo: (m) => m.type === "permissionDone" });
  // Inside the tool card of its call.
  const card = p.q('[data-tool-call="call_check"] [data-permission="perm-1"]');
  assert.equal(card.getAttribute("role"), "alertdialog");
  assert.equal(card.querySelector(".command").textContent, "$ touch checked.txt");
  const buttons = [...card.querySelectorAll("button")];
  assert.deepEqual(buttons.map((b) => b.getAttribute("data-option")), ["allow_once", "allow_always", "reject_once"]);
  assert.equal(p.win.document.activeElement, buttons[0], "the first answer has the focus");
  buttons[0].click();
  assert.deepEqual(p.posted.at(-1), { type: "permission", id: "perm-1", optionId: "allow_once" });
  buttons[0].dispatchEvent(new p.win.KeyboardEvent("keydown", { key: "3", bubbles: true }));
  assert.deepEqual(p.posted.at(-1), { type: "permission", id: "perm-1", optionId: "reject_once" });
  buttons[0].dispatchEvent(new p.win.KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
  assert.equal(p.win.document.activeElement, buttons[1]);

  p.app.receive({ type: "permissionDone", id: "perm-1", optionId: "allow_once" });
  p.run();
  const done = p.q('[data-permission="perm-1"]');
  assert.equal(done.querySelectorAll("button").length, 0);
  assert.equal(done.querySelector(".perm-answer").textContent, "Allowed once");
  p.app.dispose();
});

test("\"Always allow …, and save\" is a button of its own, and its answer says it was saved", () => {
  const p = page();
  load(p, { upTo: (m) => m.type === "permission" });
  const perm = recorded.messages.find((m) => m.type === "permission");
  const options = [...perm.request.options];
  options.splice(2, 0, { optionId: "allow_always_save", name: "Always allow `touch checked.txt`, and save (rules/default.rules)", kind: "allow_always" });
  p.app.receive({ ...perm, request: { ...perm.request, options } });
  p.run();
  const card = p.q('[data-permission="perm-1"]');
  const save = card.querySelector('button[data-option="allow_always_save"]');
  assert.match(save.textContent, /and save/);
  save.click();
  assert.deepEqual(p.posted.at(-1), { type: "permission", id: "perm-1", optionId: "allow_always_save" });
  p.app.receive({ type: "permissionDone", id: "perm-1", optionId: "allow_always_save" });
  p.run();
  assert.equal(p.q('[data-permission="perm-1"] .perm-answer').textContent, "Always allowed, and saved");
  p.app.dispose();
});

test("usage, the review bar, and the thinking indicator", () => {
  const p = page();
  load(p);
  assert.equal(p.q(".usage").textContent, "Context 1.3k / 131k (1%)");
  p.app.receive({ type: "update", notification: { sessionId: recorded.sessionId, update: { sessionUpdate: "usage_update", used: 50_000, size: 200_000, cost: { amount: 0.0123, currency: "USD" } } } });
  p.app.receive({ type: "review", files: [{ path: "/work/project/a.txt", label: "a.txt", added: 1, removed: 1, created: false }] });
  p.app.receive({ type: "turn", running: true, startedAt: Date.now() - 3200 });
  p.run();
  assert.equal(p.q(".usage").textContent, "Context 50k / 200k (25%) · $0.0123");
  assert.equal(p.q(".review-count").textContent, "1 file changed");
  const row = p.q('.review-file[data-path="/work/project/a.txt"]');
  assert.equal(row.querySelector(".review-name").textContent, "a.txt");
  const [review, keep, undo] = [...row.querySelectorAll("button")];
  review.click();
  keep.click();
  undo.click();
  assert.deepEqual(p.posted.slice(-3), [
    { type: "review", path: "/work/project/a.txt" },
    { type: "keep", path: "/work/project/a.txt" },
    { type: "undo", path: "/work/project/a.txt" },
  ]);
  assert.equal(p.q(".thinking").hidden, false);
  assert.equal(p.q(".thinking").textContent, "Working… 3s");
  assert.equal(p.q(".send").textContent, "Stop");
  p.q(".send").click();
  assert.deepEqual(p.posted.at(-1), { type: "cancel" });
  p.app.receive({ type: "turn", running: false, stopReason: "cancelled" });
  p.app.receive({ type: "review", files: [] });
  p.run();
  assert.equal(p.q(".thinking").hidden, true);
  assert.equal(p.q(".review").hidden, true);
  assert.equal(p.qa(".stop").at(-1).textContent, "Stopped.");
  p.app.dispose();
});

test("composer: Enter sends, Shift+Enter does not, / completes commands, pickers from configOptions", () => {
  const p = page();
  load(p);
  const input = p.app.input;
  const key = (k, extra = {}) => input.dispatchEvent(new p.win.KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...extra }));
  input.value = "line one";
  key("Enter", { shiftKey: true });
  assert.ok(!p.posted.some((m) => m.type === "send"));
  key("Enter");
  assert.deepEqual(p.posted.at(-1), { type: "send", text: "line one", attachments: [] });
  assert.equal(input.value, "");

  input.value = "/re";
  input.selectionStart = input.selectionEnd = 3;
  input.dispatchEvent(new p.win.Event("input", { bubbles: true }));
  const choices = p.qa(".popup .choice .choice-label").map((c) => c.textContent);
  assert.deepEqual(choices, ["/review"]);
  key("Enter");
  assert.equal(input.value, "/review ");
  assert.equal(p.q(".popup").hidden, true);

  p.app.receive({
    type: "configOptions",
    options: [
      { id: "mode", name: "Mode", category: "mode", type: "select", currentValue: "auto", options: [{ value: "read-only", name: "Read-only" }, { value: "auto", name: "Auto" }] },
      { id: "model", name: "Model", category: "model", type: "select", currentValue: "m1", options: [{ value: "m1", name: "m1" }, { value: "m2", name: "m2" }] },
    ],
  });
  p.run();
  const selects = p.qa(".pickers select");
  assert.deepEqual(selects.map((s) => s.getAttribute("aria-label")), ["Mode", "Model"]);
  assert.equal(selects[0].value, "auto");
  selects[1].value = "m2";
  selects[1].dispatchEvent(new p.win.Event("change", { bubbles: true }));
  assert.deepEqual(p.posted.at(-1), { type: "setConfig", configId: "model", value: "m2" });
  p.app.dispose();
});

test("@ asks the host for files and attaches the pick; Add Selection shows a chip that is sent", async () => {
  const p = page();
  load(p);
  const input = p.app.input;
  input.value = "look at @a";
  input.selectionStart = input.selectionEnd = input.value.length;
  input.dispatchEvent(new p.win.Event("input", { bubbles: true }));
  await new Promise((r) => setTimeout(r, 120));
  assert.deepEqual(p.posted.at(-1), { type: "searchFiles", query: "a" });
  p.app.receive({ type: "files", query: "a", items: [{ path: "/work/project/a.txt", label: "a.txt" }] });
  p.run();
  assert.deepEqual(p.qa(".popup .choice-label").map((c) => c.textContent), ["a.txt"]);
  input.dispatchEvent(new p.win.KeyboardEvent("keydown", { key: "Tab", bubbles: true }));
  assert.equal(input.value, "look at @a.txt ");
  p.app.receive({ type: "attach", attachment: { kind: "selection", path: "/work/project/a.txt", label: "a.txt:2-3", startLine: 2, endLine: 3, text: "two\nthree" } });
  p.run();
  assert.deepEqual(p.qa(".composer .chip").map((c) => c.firstChild.textContent), ["a.txt", "a.txt:2-3"]);
  input.dispatchEvent(new p.win.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  const sent = p.posted.at(-1);
  assert.equal(sent.type, "send");
  assert.deepEqual(sent.attachments.map((a) => a.kind), ["file", "selection"]);
  assert.equal(p.qa(".composer .chip").length, 0);
  p.app.dispose();
});

test("a pasted image is a chip and is sent as an image attachment; a pasted text stays text", async () => {
  const p = page();
  load(p);
  const input = p.app.input;
  const paste = (items) => {
    const ev = new p.win.Event("paste", { bubbles: true, cancelable: true });
    Object.defineProperty(ev, "clipboardData", { value: { items } });
    input.dispatchEvent(ev);
    return ev;
  };
  const png = new p.win.File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], "shot.png", { type: "image/png" });
  const ev = paste([{ kind: "file", type: "image/png", getAsFile: () => png }]);
  assert.ok(ev.defaultPrevented, "the image is not pasted as text");
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(p.qa(".composer .chip").map((c) => c.firstChild.textContent), ["Image #1"]);
  const text = paste([{ kind: "string", type: "text/plain", getAsFile: () => null }]);
  assert.ok(!text.defaultPrevented, "text pastes as usual");
  input.value = "what is wrong here?";
  input.dispatchEvent(new p.win.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  const sent = p.posted.at(-1);
  assert.equal(sent.type, "send");
  assert.deepEqual(sent.attachments, [{ kind: "image", path: "shot.png", label: "Image #1", data: "iVBORw==", mimeType: "image/png" }]);
  p.app.dispose();
});

test("an auth error offers one key field that stores the key and retries", () => {
  const p = page();
  p.app.receive({ type: "error", message: "Authentication required: missing API key for provider `kimi`", action: "setApiKey", provider: "kimi" });
  p.run();
  const input = p.q(".error input[type=password]");
  assert.equal(input.getAttribute("aria-label"), "API key for kimi");
  input.value = " sk-test ";
  p.q(".error form").dispatchEvent(new p.win.Event("submit", { bubbles: true, cancelable: true }));
  assert.deepEqual(p.posted.at(-1), { type: "setApiKey", key: "sk-test", provider: "kimi" });
  p.app.dispose();
});

test("a replay after the webview was re-created draws the same transcript", () => {
  const a = page();
  load(a);
  const b = page();
  b.app.receive({ type: "replay", messages: [{ type: "roots", roots: recorded.roots }, { type: "reset", sessionId: recorded.sessionId }, ...recorded.messages] });
  b.run();
  const text = (p) => p.q(".transcript").textContent.replace(/Thought for \d+s/, "");
  assert.equal(text(b), text(a));
  a.app.dispose();
  b.app.dispose();
});

test("the agent's questions are a form: radios, checkboxes and own words, posted on submit", () => {
  const p = page();
  load(p);
  const request = {
    sessionId: recorded.sessionId,
    toolCallId: "q1",
    mode: "form",
    message: "The agent has 2 questions for you.",
    requestedSchema: {
      type: "object",
      properties: {
        q1: { type: "string", title: "DB: Which database?", oneOf: [{ const: "SQLite", title: "SQLite", description: "a file" }, { const: "Postgres", title: "Postgres" }] },
        q1_other: { type: "string", title: "Other (your own answer)" },
        q2: { type: "array", title: "Extras: Which extras?", items: { anyOf: [{ const: "Auth", title: "Auth" }, { const: "Cache", title: "Cache" }] } },
      },
    },
  };
  p.app.receive({ type: "question", id: "ask-1", request });
  p.run();
  const form = p.q('[data-question="ask-1"]');
  assert.equal(form.getAttribute("role"), "dialog");
  assert.deepEqual(p.qa('[data-field="q1"] input').map((i) => [i.type, i.value]), [["radio", "SQLite"], ["radio", "Postgres"]]);
  assert.equal(p.q('[data-field="q1"] .q-desc').textContent, " — a file");
  assert.deepEqual(p.qa('[data-field="q2"] input').map((i) => i.type), ["checkbox", "checkbox"]);
  p.qa('[data-field="q1"] input')[1].checked = true;
  for (const c of p.qa('[data-field="q2"] input')) c.checked = true;
  form.querySelector('[data-action="accept"]').click();
  assert.deepEqual(p.posted.at(-1), { type: "question", id: "ask-1", action: "accept", content: { q1: "Postgres", q2: ["Auth", "Cache"] } });
  p.q('[data-field="q1_other"] input').value = "  MariaDB ";
  form.querySelector('[data-action="accept"]').click();
  assert.equal(p.posted.at(-1).content.q1_other, "MariaDB");
  form.querySelector('[data-action="cancel"]').click();
  assert.deepEqual(p.posted.at(-1), { type: "question", id: "ask-1", action: "cancel" });

  p.app.receive({ type: "questionDone", id: "ask-1", action: "accept" });
  p.run();
  const done = p.q('[data-question="ask-1"]');
  assert.equal(done.querySelectorAll("input, button").length, 0);
  assert.equal(done.querySelector(".perm-answer").textContent, "Answered");
  p.app.dispose();
});

test("a subagent is a collapsible part of its call's card, with its own calls", () => {
  const p = page();
  p.app.receive({ type: "reset", sessionId: "s" });
  const up = (update) => p.app.receive({ type: "update", notification: { sessionId: "s", update } });
  up({ sessionUpdate: "tool_call", toolCallId: "a1", title: "Subagent: find the answer", kind: "think", status: "in_progress" });
  up({ sessionUpdate: "subagent_spawned", subagentSessionId: "child", name: "Explore", task: "find the answer", capabilities: {} });
  const meta = { claudeCode: { parentToolUseId: "a1" }, subagentSessionId: "child" };
  up({ sessionUpdate: "tool_call", toolCallId: "r1", title: "Read notes.txt", kind: "read", status: "pending", _meta: meta });
  p.run();
  const card = p.q('[data-tool-call="a1"]');
  const sub = card.querySelector('[data-subagent="child"]');
  assert.equal(sub.tagName, "DETAILS");
  assert.ok(sub.hasAttribute("open"), "open while it runs");
  assert.match(sub.querySelector("summary").textContent, /Explore find the answer.*running · 1 tool call/);
  assert.equal(p.qa('.tool[data-tool-call="r1"]').length, 0, "no card of its own");
  up({ sessionUpdate: "tool_call_update", toolCallId: "r1", status: "completed", _meta: meta });
  up({ sessionUpdate: "subagent_state_update", subagentSessionId: "child", state: "completed" });
  up({ sessionUpdate: "tool_call_update", toolCallId: "a1", status: "completed" });
  p.run();
  const after = p.q('[data-tool-call="a1"] [data-subagent="child"]');
  assert.ok(!after.hasAttribute("open"), "folded once done");
  assert.match(after.querySelector("summary").textContent, /completed/);
  assert.match(after.querySelector('[data-tool-call="r1"]').textContent, /Read notes.txt/);
  p.app.dispose();
});

test("two messages of one response are two bubbles, each delta added to its own", () => {
  const p = page();
  p.app.receive({ type: "reset", sessionId: "s" });
  const chunk = (messageId, text) => ({
    type: "update",
    notification: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text } } },
  });
  for (const [id, t] of [["m1", "Looking "], ["m1", "first."], ["m2", "All "], ["m2", "done."]]) p.app.receive(chunk(id, t));
  p.run();
  const agent = p.qa(".msg.agent").map((e) => e.textContent.trim());
  assert.deepEqual(agent, ["Looking first.", "All done."]);
  p.app.dispose();
});

test("a message the user steers in while the answer streams: the answer goes on in its own bubble", () => {
  const p = page();
  p.app.receive({ type: "reset", sessionId: "s" });
  const chunk = (messageId, text) => ({
    type: "update",
    notification: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text } } },
  });
  p.app.receive(chunk("m1", "Working "));
  p.app.receive({ type: "userMessage", text: "then say more", attachments: [] });
  p.app.receive(chunk("m1", "on it."));
  p.app.receive(chunk("m2", "Next answer."));
  p.run();
  const kinds = p.qa(".msg").map((e) => [...e.classList].find((c) => c === "agent" || c === "user"));
  assert.deepEqual(kinds, ["agent", "user", "agent"]);
  assert.deepEqual(p.qa(".msg.agent").map((e) => e.textContent.trim()), ["Working on it.", "Next answer."]);
  p.app.dispose();
});

/** A chat of two answered turns (t1, t2) in session "s"; `extra` messages follow. */
function twoTurns(p, ...extra) {
  const chunk = (messageId, text) => ({ type: "update", notification: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text } } } });
  const messages = [
    { type: "reset", sessionId: "s" },
    { type: "userMessage", id: "p1", text: "first prompt", attachments: [{ kind: "file", path: "/w/a.txt", label: "a.txt" }] },
    { type: "turn", running: true, startedAt: Date.now() },
    chunk("m1", "First answer."),
    { type: "update", notification: { sessionId: "s", update: { sessionUpdate: "tool_call", toolCallId: "c1", title: "echo hi > made.txt", kind: "execute", status: "completed" } } },
    { type: "answered", id: "p1", turnId: "t1" },
    { type: "turn", running: false, stopReason: "end_turn" },
    { type: "userMessage", id: "p2", text: "second prompt", attachments: [] },
    { type: "turn", running: true, startedAt: Date.now() },
    chunk("m2", "Second answer."),
    { type: "answered", id: "p2", turnId: "t2" },
    { type: "turn", running: false, stopReason: "end_turn" },
    ...extra,
  ];
  for (const m of messages) p.app.receive(m);
  p.run();
  return messages;
}

const report = (messageId, text) => ({ type: "update", notification: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text } } } });
const undone = (turnIds, conversation = true) => ({ turnIds, conversation, restored: [], removed: ["made.txt"], skipped: [] });
const actions = (el) => [...el.querySelectorAll(".turn-actions button")].map((b) => b.getAttribute("data-turn-action"));

test("turn controls: Rewind to here under each message with a turn id, Undo turn under the last; off while a turn runs", (t) => {
  const p = page();
  t.after(() => p.app.dispose());
  p.app.receive({ type: "reset", sessionId: "s" });
  p.app.receive({ type: "userMessage", id: "p1", text: "first prompt", attachments: [] });
  p.run();
  assert.equal(p.qa(".turn-actions").length, 0, "no controls before the turn id is known");
  twoTurns(p);
  const [first, second] = p.qa(".msg.user").slice(-2);
  assert.deepEqual(actions(first), ["rewind"]);
  assert.deepEqual(actions(second), ["undo", "rewind"]);
  const rewind = first.querySelector('[data-turn-action="rewind"]');
  assert.equal(rewind.getAttribute("aria-label"), "Rewind to before this message");
  assert.ok(rewind.getAttribute("title"));
  rewind.click();
  assert.deepEqual(p.posted.at(-1), { type: "rewind", turnId: "t1" });
  second.querySelector('[data-turn-action="undo"]').click();
  assert.deepEqual(p.posted.at(-1), { type: "undoTurn" });

  // While a turn runs: marked disabled, and a click sends nothing; the message is not redrawn
  // (the log would read it again), so the focus stays on the control.
  const posted = p.posted.length;
  const undo = p.q('.msg.user [data-turn-action="undo"]');
  undo.focus();
  p.app.receive({ type: "turn", running: true, startedAt: Date.now() });
  p.run();
  assert.equal(p.q('.msg.user [data-turn-action="undo"]'), undo);
  assert.equal(p.win.document.activeElement, undo);
  for (const b of p.qa(".turn-actions button")) assert.equal(b.getAttribute("aria-disabled"), "true");
  undo.click();
  p.q('.msg.user [data-turn-action="rewind"]').click();
  assert.equal(p.posted.length, posted);
  p.app.receive({ type: "turn", running: false, stopReason: "end_turn" });
  p.run();
  assert.ok(p.qa(".turn-actions button").every((b) => !b.hasAttribute("aria-disabled")));

  // A slash command that ran no turn leaves Undo turn where it is; a prompt whose turn is not
  // known takes it away (`/undo` would take that turn, not the one shown).
  p.app.receive({ type: "userMessage", id: "p3", text: "/model m2", attachments: [] });
  p.run();
  assert.deepEqual(p.qa(".msg.user").map(actions), [["rewind"], ["undo", "rewind"], []]);
  p.app.receive({ type: "userMessage", id: "p4", text: "this one failed", attachments: [] });
  p.app.receive({ type: "error", message: "the model failed" });
  p.run();
  assert.deepEqual(p.qa(".msg.user").map(actions), [["rewind"], ["rewind"], [], []]);
});

test("a loaded chat's messages that started turns get the controls from their _meta", (t) => {
  const p = page();
  t.after(() => p.app.dispose());
  p.app.receive({ type: "reset", sessionId: "s" });
  const replayed = (messageId, text, turnId) => ({
    type: "update",
    notification: {
      sessionId: "s",
      update: { sessionUpdate: "user_message_chunk", messageId, content: { type: "text", text }, ...(turnId ? { _meta: { "interpreter/turnId": turnId } } : {}) },
    },
  });
  p.app.receive(replayed("replay-0", "before the undo window", undefined));
  p.app.receive(report("replay-1", "Old answer."));
  p.app.receive(replayed("replay-2", "loaded prompt", "t7"));
  p.app.receive(report("replay-3", "Its answer."));
  p.run();
  assert.deepEqual(p.qa(".msg.user").map(actions), [[], ["undo", "rewind"]]);
  p.q('.msg.user [data-turn-action="rewind"]').click();
  assert.deepEqual(p.posted.at(-1), { type: "rewind", turnId: "t7" });
});

test("an undo drops the undone turns' messages; its report stays, and a replay draws the same", (t) => {
  const p = page();
  t.after(() => p.app.dispose());
  const messages = twoTurns(
    p,
    { type: "command", id: "u1", text: "/undo" },
    { type: "turn", running: true, startedAt: Date.now() },
    report("r1", "Undid the last turn."),
    { type: "answered", id: "u1", undone: undone(["t2"]) },
    { type: "turn", running: false, stopReason: "end_turn" },
  );
  const text = (el) => el.textContent.trim();
  assert.deepEqual(p.qa(".msg.user .user-text").map(text), ["first prompt"], "the command is no bubble");
  assert.deepEqual(p.qa(".msg.agent").map(text), ["First answer.", "Undid the last turn."]);
  assert.equal(p.qa('[data-tool-call="c1"]').length, 1, "the first turn's card stays");
  assert.deepEqual(actions(p.q(".msg.user")), ["undo", "rewind"], "Undo turn moves to the turn before");

  const again = page();
  t.after(() => again.app.dispose());
  again.app.receive({ type: "replay", messages });
  again.run();
  assert.equal(again.q(".transcript").textContent, p.q(".transcript").textContent);

  // Typed: the `/undo` bubble stays with its report. Only the files (conversation false): nothing goes.
  // (The first report came after turn t1: it goes with it.)
  p.app.receive({ type: "userMessage", id: "p5", text: "/undo", attachments: [] });
  p.app.receive(report("r2", "Undid the first turn."));
  p.app.receive({ type: "answered", id: "p5", undone: undone(["t1"]) });
  p.run();
  assert.deepEqual(p.qa(".msg.user .user-text").map(text), ["/undo"]);
  assert.deepEqual(p.qa(".msg.agent").map(text), ["Undid the first turn."]);
  assert.equal(p.qa('[data-tool-call="c1"]').length, 0);
  const kept = page();
  t.after(() => kept.app.dispose());
  twoTurns(kept, { type: "command", id: "u2", text: "/rewind t1 code" }, { type: "answered", id: "u2", undone: undone(["t1", "t2"], false) });
  assert.equal(kept.qa(".msg.user").length, 2);
});

test("Rewind to here: the turns from that message on go, and its text and attachments are back in the composer", (t) => {
  const p = page();
  t.after(() => p.app.dispose());
  twoTurns(p);
  p.qa(".msg.user")[0].querySelector('[data-turn-action="rewind"]').focus();
  p.qa(".msg.user")[0].querySelector('[data-turn-action="rewind"]').click();
  assert.deepEqual(p.posted.at(-1), { type: "rewind", turnId: "t1" });
  for (const m of [
    { type: "command", id: "u1", text: "/rewind t1" },
    { type: "turn", running: true, startedAt: Date.now() },
    report("r1", "Undid the last 2 turns.\n- removed `made.txt` (the turn created it)"),
    { type: "answered", id: "u1", undone: undone(["t1", "t2"]) },
    { type: "draft", text: "first prompt", attachments: [{ kind: "file", path: "/w/a.txt", label: "a.txt" }] },
    { type: "turn", running: false, stopReason: "end_turn" },
  ]) {
    p.app.receive(m);
  }
  p.run();
  assert.equal(p.qa(".msg.user").length, 0);
  assert.deepEqual(p.qa(".msg").map((e) => e.querySelector("p").textContent), ["Undid the last 2 turns."], "only the report");
  assert.equal(p.qa(".tool").length, 0);
  assert.equal(p.app.input.value, "first prompt");
  assert.equal(p.win.document.activeElement, p.app.input, "the focus goes to the box");
  assert.deepEqual(p.qa(".composer .chip").map((c) => c.firstChild.textContent), ["a.txt"]);
  // Sent again, with its attachment.
  p.app.input.dispatchEvent(new p.win.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  assert.deepEqual(p.posted.at(-1), { type: "send", text: "first prompt", attachments: [{ kind: "file", path: "/w/a.txt", label: "a.txt" }] });

  // Text the user had typed stays, after the prompt.
  p.app.input.value = "my own words";
  p.app.receive({ type: "draft", text: "first prompt", attachments: [] });
  p.run();
  assert.equal(p.app.input.value, "first prompt\n\nmy own words");
});
