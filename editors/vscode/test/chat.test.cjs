"use strict";

// The chat controller in the extension (vscode stubbed) with the real agent and the mock: a
// turn with a permission answered from the page, the replay a re-created page gets, and the
// restart of a killed agent with its chat reloaded.

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { stub, activate, deactivate } = require("./helpers.cjs");
const { INTERPRETER_BIN, MOCK_LLM_BIN, textReply, toolReply, waitUntil } = require("./agent-helpers.cjs");
const { spawn } = require("node:child_process");
const readline = require("node:readline");

test.after(() => deactivate());

function fakeView() {
  const posted = [];
  const handlers = [];
  const webview = {
    cspSource: "vscode-webview://x",
    html: "",
    asWebviewUri: (u) => ({ toString: () => u.fsPath }),
    postMessage: async (m) => posted.push(m),
    onDidReceiveMessage: (fn) => {
      handlers.push(fn);
      return { dispose() {} };
    },
  };
  return { view: { webview, visible: true, onDidDispose() {}, show() {} }, posted, send: (m) => Promise.all(handlers.map((h) => h(m))) };
}

/** A temp folder with a `work` folder in it, and the agent's home there, for one test. */
function scratch(t, prefix) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const work = path.join(dir, "work");
  fs.mkdirSync(work);
  const saved = process.env.OPENINTERPRETER_HOME;
  process.env.OPENINTERPRETER_HOME = path.join(dir, "home");
  t.after(() => {
    if (saved === undefined) delete process.env.OPENINTERPRETER_HOME;
    else process.env.OPENINTERPRETER_HOME = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { dir, work };
}

async function mock(t, script, dir) {
  const file = path.join(dir, "script.json");
  fs.writeFileSync(file, JSON.stringify(script));
  const child = spawn(MOCK_LLM_BIN, ["--script", file, "--port", "0", "--exit-on-stdin-eof"], { stdio: ["pipe", "pipe", "ignore"] });
  t.after(() => child.stdin.end());
  return new Promise((resolve) =>
    readline.createInterface({ input: child.stdout }).on("line", (l) => {
      const m = /^MOCK_LISTENING (\S+)/.exec(l);
      if (m) resolve(m[1]);
    }),
  );
}


/** The chat panel, opened and ready, on the real binary against the mock at `baseUrl`, with
 *  `work` as the workspace folder; `settings` add to or replace the mock's. */
async function openChat(baseUrl, work, settings = {}) {
  await activate({
    "interpreter.path": INTERPRETER_BIN,
    "interpreter.provider": "mock",
    "interpreter.model": "mock-model",
    "interpreter.baseUrl": baseUrl,
    "interpreter.wireApi": "chat",
    ...settings,
  });
  stub.state.workspaceFolders = [{ uri: stub.vscode.Uri.file(work) }];
  const page = fakeView();
  stub.state.webviewProviders.get("interpreter.chat").resolveWebviewView(page.view);
  await page.send({ type: "ready" });
  return page;
}

test("an image pasted in the panel reaches the model as an image", { timeout: 60_000 }, async (t) => {
  const { dir, work } = scratch(t, "interp-chat-image-");
  const baseUrl = await mock(t, { replies: [textReply("I see a tiny image.")] }, dir);
  await activate({
    "interpreter.path": INTERPRETER_BIN,
    "interpreter.provider": "mock",
    "interpreter.model": "mock-model",
    "interpreter.baseUrl": baseUrl,
    "interpreter.wireApi": "chat",
  });
  stub.state.workspaceFolders = [{ uri: stub.vscode.Uri.file(work) }];
  const page = fakeView();
  stub.state.webviewProviders.get("interpreter.chat").resolveWebviewView(page.view);
  await page.send({ type: "ready" });
  await waitUntil(() => page.posted.some((m) => m.type === "status" && m.status.state === "ready"), "the agent's initialize");
  const image = { kind: "image", path: "shot.png", label: "Image #1", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", mimeType: "image/png" };
  await page.send({ type: "send", text: "what is this?", attachments: [image] });
  await waitUntil(() => page.posted.some((m) => m.type === "turn" && !m.running && m.stopReason), "the end of the turn", 20_000);
  const recorded = await (await fetch(`${baseUrl.replace(/\/v1$/, "")}/_mock/requests`)).json();
  const body = JSON.stringify(recorded.filter((r) => r.method === "POST").at(-1).body);
  assert.ok(body.includes("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="), body);
  assert.ok(body.includes("what is this?"), body);
});

test("a chat turn through the controller: permission from the page, replay for a new page, restart after a crash", { timeout: 60_000 }, async (t) => {
  const { dir, work } = scratch(t, "interp-chat-");
  const baseUrl = await mock(t, { replies: [toolReply("call_t", "shell", { command: "touch made.txt" }), textReply("Made it."), textReply("Still here.")] }, dir);
  const { api } = await activate({
    "interpreter.path": INTERPRETER_BIN,
    "interpreter.provider": "mock",
    "interpreter.model": "mock-model",
    "interpreter.baseUrl": baseUrl,
    "interpreter.wireApi": "chat",
  });
  stub.state.workspaceFolders = [{ uri: stub.vscode.Uri.file(work) }];
  const provider = stub.state.webviewProviders.get("interpreter.chat");
  const page = fakeView();
  provider.resolveWebviewView(page.view);
  await page.send({ type: "ready" });
  const reset = await waitUntil(() => page.posted.find((m) => m.type === "reset" && m.sessionId), "the new session");
  await waitUntil(() => page.posted.some((m) => m.type === "status" && m.status.state === "ready"), "the agent's initialize");
  assert.ok(api.chat.initializeAfterOpenMs > 0);
  t.diagnostic(`panel opened → initialize answered: ${api.chat.initializeAfterOpenMs.toFixed(0)} ms (stubbed VS Code, real agent)`);
  const options = await waitUntil(() => page.posted.find((m) => m.type === "configOptions" && m.options.length), "the pickers");
  assert.deepEqual(options.options.map((o) => o.id), ["mode", "model", "reasoning_effort", "harness"]);

  const turnEnded = (p) => waitUntil(() => p.posted.some((m) => m.type === "turn" && !m.running && m.stopReason), "the end of the turn", 20_000);
  await page.send({ type: "send", text: "make a file", attachments: [] });
  const perm = await waitUntil(() => page.posted.find((m) => m.type === "permission"), "the permission request");
  assert.equal(perm.request.toolCall.toolCallId, "call_t");
  await page.send({ type: "permission", id: perm.id, optionId: "allow_once" });
  await turnEnded(page);
  const tool = page.posted.filter((m) => m.type === "update" && m.notification.update.toolCallId === "call_t").map((m) => m.notification.update);
  assert.ok(fs.existsSync(path.join(work, "made.txt")), JSON.stringify(tool));
  assert.deepEqual(page.posted.find((m) => m.type === "permissionDone"), { type: "permissionDone", id: perm.id, optionId: "allow_once" });
  assert.deepEqual(page.posted.filter((m) => m.type === "turn").at(-1), { type: "turn", running: false, stopReason: "end_turn" });

  // The view was hidden and shown: a new page gets the whole chat, chunks merged.
  const again = fakeView();
  provider.resolveWebviewView(again.view);
  await again.send({ type: "ready" });
  const replay = again.posted.find((m) => m.type === "replay");
  const kinds = replay.messages.map((m) => (m.type === "update" ? m.notification.update.sessionUpdate : m.type));
  assert.deepEqual(kinds.slice(0, 2), ["roots", "reset"]);
  assert.ok(kinds.includes("userMessage") && kinds.includes("permission") && kinds.includes("permissionDone"));
  const texts = replay.messages.filter((m) => m.type === "update" && m.notification.update.sessionUpdate === "agent_message_chunk");
  assert.deepEqual(texts.map((m) => m.notification.update.content.text), ["Made it."], "one merged chunk");

  // A crash: the page is told, the agent restarts, the chat is reloaded.
  const pid = await api.chat.agent.pid();
  process.kill(pid, "SIGKILL");
  await waitUntil(() => again.posted.some((m) => m.type === "status" && m.status.state === "restarting"), "the restarting status");
  await waitUntil(() => again.posted.some((m) => m.type === "update" && m.notification.update.sessionUpdate === "notice"), "the restart notice", 20_000);
  const resets = again.posted.filter((m) => m.type === "reset");
  assert.equal(resets.at(-1).sessionId, reset.sessionId, "the same chat, reloaded");
  const reloaded = again.posted.slice(again.posted.lastIndexOf(resets.at(-1)));
  assert.ok(reloaded.some((m) => m.type === "update" && m.notification.update.sessionUpdate === "user_message_chunk" && m.notification.update.content.text === "make a file"));
  const before = again.posted.length;
  await again.send({ type: "send", text: "still there?", attachments: [] });
  await waitUntil(() => again.posted.slice(before).some((m) => m.type === "turn" && !m.running), "the second turn");
  assert.deepEqual(again.posted.filter((m) => m.type === "turn").at(-1), { type: "turn", running: false, stopReason: "end_turn" });
});

test("diagnostics after an edit: the agent asks the editor, and the new error reaches the model", { timeout: 60_000 }, async (t) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "interp-diag-")));
  const work = path.join(dir, "work");
  fs.mkdirSync(work);
  const file = path.join(work, "a.py");
  fs.writeFileSync(file, "x = 1\n");
  const saved = process.env.OPENINTERPRETER_HOME;
  process.env.OPENINTERPRETER_HOME = path.join(dir, "home");
  t.after(() => {
    if (saved === undefined) delete process.env.OPENINTERPRETER_HOME;
    else process.env.OPENINTERPRETER_HOME = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const patch = "*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n+y = undefined_name\n*** End Patch\n";
  const baseUrl = await mock(t, { replies: [toolReply("call_p", "apply_patch", { input: patch }), textReply("Patched.")] }, dir);
  const { api } = await activate({
    "interpreter.path": INTERPRETER_BIN,
    "interpreter.provider": "mock",
    "interpreter.model": "mock-model",
    "interpreter.baseUrl": baseUrl,
    "interpreter.wireApi": "chat",
  });
  stub.state.workspaceFolders = [{ uri: stub.vscode.Uri.file(work) }];
  // A language server: a warning the file always had, and an error once it names undefined_name.
  const range = (line) => new stub.vscode.Range(line, 4, line, 18);
  const old = { range: range(0), message: "old warning", severity: stub.vscode.DiagnosticSeverity.Warning, source: "pyright" };
  stub.setDiagnostics(file, [old]);
  const sub = stub.vscode.workspace.onDidChangeTextDocument(({ document }) => {
    if (document.uri.fsPath === file && document.getText().includes("undefined_name")) {
      const error = { range: range(1), message: '"undefined_name" is not defined', severity: stub.vscode.DiagnosticSeverity.Error, source: "pyright", code: { value: "reportUndefinedVariable" } };
      setTimeout(() => stub.setDiagnostics(file, [old, error]), 100);
    }
  });
  t.after(() => sub.dispose());
  const provider = stub.state.webviewProviders.get("interpreter.chat");
  const page = fakeView();
  provider.resolveWebviewView(page.view);
  await page.send({ type: "ready" });
  await waitUntil(() => page.posted.find((m) => m.type === "reset" && m.sessionId), "the new session");
  const sent = performance.now();
  await page.send({ type: "send", text: "add a line", attachments: [] });
  await waitUntil(async () => {
    const perm = page.posted.find((m) => m.type === "permission" && !page.posted.some((d) => d.type === "permissionDone" && d.id === m.id));
    if (perm) await page.send({ type: "permission", id: perm.id, optionId: "allow_once" });
    return page.posted.some((m) => m.type === "turn" && !m.running && m.stopReason);
  }, "the end of the turn", 30_000);
  t.diagnostic(`turn with two diagnostics round trips: ${(performance.now() - sent).toFixed(0)} ms`);
  const origin = new URL(baseUrl).origin;
  const requests = (await (await fetch(`${origin}/_mock/requests`)).json()).filter((r) => r.method === "POST");
  const result = requests[1].body.messages.find((m) => m.role === "tool" && m.tool_call_id === "call_p");
  const text = typeof result.content === "string" ? result.content : result.content.map((p) => p.text).join("");
  assert.match(text, /\n\nNew diagnostics after this edit:\na\.py:2:5 error pyright: "undefined_name" is not defined\n$/);
  assert.ok(!text.includes("old warning"), text);
  assert.ok(api.chat.agent, "the panel's agent");
});

test("a question from the agent is a form in the panel, and the answer reaches the model", { timeout: 60_000 }, async (t) => {
  const { dir, work } = scratch(t, "interp-question-");
  const question = { questions: [{ id: "db", header: "DB", question: "Which database?", options: [{ label: "SQLite", description: "a file" }, { label: "Postgres", description: "a server" }] }] };
  const baseUrl = await mock(t, { replies: [toolReply("call_q", "request_user_input", question), textReply("Postgres it is.")] }, dir);
  const page = await openChat(baseUrl, work);
  await waitUntil(() => page.posted.find((m) => m.type === "reset" && m.sessionId), "the new session");
  await page.send({ type: "send", text: "set up a database", attachments: [] });
  const q = await waitUntil(() => page.posted.find((m) => m.type === "question"), "the question form");
  assert.equal(q.request.mode, "form");
  assert.deepEqual(q.request.requestedSchema.properties.q1.oneOf.map((o) => o.const), ["SQLite", "Postgres"]);
  await page.send({ type: "question", id: q.id, action: "accept", content: { q1: "Postgres" } });
  await waitUntil(() => page.posted.some((m) => m.type === "turn" && !m.running && m.stopReason), "the end of the turn", 20_000);
  assert.deepEqual(page.posted.find((m) => m.type === "questionDone"), { type: "questionDone", id: q.id, action: "accept" });
  const origin = new URL(baseUrl).origin;
  const requests = (await (await fetch(`${origin}/_mock/requests`)).json()).filter((r) => r.method === "POST");
  assert.ok(requests[0].body.tools.some((x) => x.function.name === "request_user_input"), "listed for a client that can ask");
  const result = requests[1].body.messages.find((m) => m.role === "tool" && m.tool_call_id === "call_q");
  assert.equal(result.content, '{"answers":{"db":{"answers":["Postgres"]}}}');
});

test("a subagent's calls come from its child session into the card of the call that started it", { timeout: 60_000 }, async (t) => {
  const { dir, work } = scratch(t, "interp-subagent-");
  fs.writeFileSync(path.join(work, "notes.txt"), "the answer is 42\n");
  const replies = [
    toolReply("a1", "Agent", { description: "find the answer", prompt: "Read notes.txt.", subagent_type: "Explore" }),
    toolReply("r1", "Read", { file_path: path.join(work, "notes.txt") }),
    textReply("The answer is 42."),
    textReply("The subagent says 42."),
  ];
  const baseUrl = await mock(t, { replies }, dir);
  const page = await openChat(baseUrl, work, { "interpreter.harness": "claude-code" });
  const reset = await waitUntil(() => page.posted.find((m) => m.type === "reset" && m.sessionId), "the new session");
  await page.send({ type: "send", text: "what is the answer?", attachments: [] });
  await waitUntil(() => page.posted.some((m) => m.type === "turn" && !m.running && m.stopReason), "the end of the turn", 20_000);
  const updates = page.posted.filter((m) => m.type === "update").map((m) => m.notification);
  assert.ok(updates.every((n) => n.sessionId === reset.sessionId), "everything reaches the chat's session");
  const spawned = updates.find((n) => n.update.sessionUpdate === "subagent_spawned");
  assert.ok(spawned, "subagent_spawned");
  const child = spawned.update.subagentSessionId;
  const read = updates.filter((n) => n.update.toolCallId === "r1");
  assert.ok(read.length > 0);
  for (const n of read) {
    assert.equal(n.update._meta.subagentSessionId, child);
    assert.equal(n.update._meta.claudeCode.parentToolUseId, "a1");
  }
  const done = updates.find((n) => n.update.sessionUpdate === "subagent_state_update");
  assert.equal(done.update.state, "completed");
});

test("a message sent while the answer streams runs right after the turn; the answer in flight stays", { timeout: 60_000 }, async (t) => {
  const { dir, work } = scratch(t, "interp-chat-");
  const slow = { events: [{ text: "Working " }, { delay_ms: 1500 }, { text: "on it." }] };
  const baseUrl = await mock(t, { replies: [slow, textReply("Next answer.")] }, dir);
  const page = await openChat(baseUrl, work);
  await waitUntil(() => page.posted.some((m) => m.type === "status" && m.status.state === "ready"), "the agent's initialize");
  const chunks = () =>
    page.posted.filter((m) => m.type === "update" && m.notification.update.sessionUpdate === "agent_message_chunk").map((m) => m.notification.update.content.text);
  const ready = page.posted.length;
  // Each send resolves when its prompt is answered: the second is sent while the first runs.
  const first = page.send({ type: "send", text: "start the work", attachments: [] });
  await waitUntil(() => chunks().length > 0, "the answer streaming");
  const second = page.send({ type: "send", text: "then say more", attachments: [] });
  await Promise.all([first, second]);
  await waitUntil(() => page.posted.slice(ready).some((m) => m.type === "turn" && !m.running), "the end", 20_000);
  const turns = page.posted.slice(ready).filter((m) => m.type === "turn");
  assert.deepEqual(turns.map((m) => m.running), [true, false], "one running stretch for both prompts");
  // A new page gets the chat: two answers, in order.
  const again = fakeView();
  stub.state.webviewProviders.get("interpreter.chat").resolveWebviewView(again.view);
  await again.send({ type: "ready" });
  const replay = again.posted.find((m) => m.type === "replay");
  // The steer came while the first answer streamed: its chunks go on under their own id.
  const byMessage = new Map();
  for (const m of replay.messages) {
    if (m.type !== "update" || m.notification.update.sessionUpdate !== "agent_message_chunk") continue;
    const u = m.notification.update;
    byMessage.set(u.messageId, (byMessage.get(u.messageId) ?? "") + u.content.text);
  }
  assert.deepEqual([...byMessage.values()], ["Working on it.", "Next answer."]);
  const origin = new URL(baseUrl).origin;
  const requests = (await (await fetch(`${origin}/_mock/requests`)).json()).filter((r) => r.method === "POST");
  assert.equal(requests.length, 2);
  const body = JSON.stringify(requests[1].body);
  assert.ok(body.includes("Working on it.") && body.indexOf("Working on it.") < body.indexOf("then say more"), body);
});

/** The panel on a new session with the mock's `replies`; every permission is allowed. */
async function panelWithMock(t, prefix, replies) {
  const { dir, work } = scratch(t, prefix);
  const baseUrl = await mock(t, { replies }, dir);
  const { api } = await activate({
    "interpreter.path": INTERPRETER_BIN,
    "interpreter.provider": "mock",
    "interpreter.model": "mock-model",
    "interpreter.baseUrl": baseUrl,
    "interpreter.wireApi": "chat",
  });
  stub.state.workspaceFolders = [{ uri: stub.vscode.Uri.file(work) }];
  const page = fakeView();
  stub.state.webviewProviders.get("interpreter.chat").resolveWebviewView(page.view);
  await page.send({ type: "ready" });
  await waitUntil(() => page.posted.find((m) => m.type === "reset" && m.sessionId), "the new session");
  // What the extension sends the agent.
  const prompts = [];
  const prompt = api.chat.agent.prompt.bind(api.chat.agent);
  api.chat.agent.prompt = (sid, blocks) => {
    prompts.push(blocks);
    return prompt(sid, blocks);
  };
  /** Posts `msg` from the page and answers permissions until the turn ends; the messages since. */
  const click = async (msg) => {
    const from = page.posted.length;
    await page.send(msg);
    await waitUntil(async () => {
      const perm = page.posted.slice(from).find((m) => m.type === "permission" && !page.posted.some((d) => d.type === "permissionDone" && d.id === m.id));
      if (perm) await page.send({ type: "permission", id: perm.id, optionId: "allow_once" });
      return page.posted.slice(from).some((m) => m.type === "turn" && !m.running && m.stopReason);
    }, "the end of the turn", 20_000);
    return page.posted.slice(from);
  };
  /** Sends `text`; resolves with its `answered` message. */
  const turn = async (text) => {
    const after = await click({ type: "send", text, attachments: [] });
    const user = after.find((m) => m.type === "userMessage");
    return after.find((m) => m.type === "answered" && m.id === user.id);
  };
  return { api, page, work, prompts, click, turn };
}

test("Undo turn sends /undo; the answer's _meta reaches the page; the turn's unsaved edits go, the user's stay", { timeout: 60_000 }, async (t) => {
  const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old line\n+new line\n*** Update File: b.txt\n@@\n-old line\n+new line\n*** Add File: fresh.txt\n+hello\n*** End Patch\n";
  const { work, prompts, click, turn } = await panelWithMock(t, "interp-undo-", [
    toolReply("call_sh", "shell", { command: "echo hi > made.txt" }),
    toolReply("call_p", "apply_patch", { input: patch }),
    textReply("Done."),
  ]);
  const file = (name) => path.join(work, name);
  fs.writeFileSync(file("a.txt"), "old line\n");
  fs.writeFileSync(file("b.txt"), "old line\n");
  const answered = await turn("change things");
  assert.match(answered.turnId, /\S/, "the turn's id from the answer's _meta");
  assert.ok(fs.existsSync(file("made.txt")));
  const doc = (name) => stub.state.textDocuments.find((d) => d.uri.fsPath === file(name));
  assert.equal(doc("a.txt").getText(), "new line\n");
  assert.equal(doc("fresh.txt").getText(), "hello\n");
  // The user edits one of the agent's files after the turn.
  doc("b.txt").text = "the user's line\n";

  const after = await click({ type: "undoTurn" });
  assert.deepEqual(prompts.at(-1), [{ type: "text", text: "/undo" }]);
  const command = after.find((m) => m.type === "command");
  assert.equal(command.text, "/undo");
  assert.equal(after.filter((m) => m.type === "userMessage").length, 0, "no bubble for the click");
  const { undone } = after.find((m) => m.type === "answered" && m.id === command.id);
  assert.deepEqual(undone.turnIds, [answered.turnId]);
  assert.equal(undone.conversation, true);
  assert.deepEqual(undone.removed, ["made.txt"]);
  // The agent leaves a file with unsaved changes alone; the panel knows they are its edits.
  assert.ok(undone.skipped.some((s) => s.path === "fresh.txt"), JSON.stringify(undone.skipped));
  const text = after.filter((m) => m.type === "update" && m.notification.update.sessionUpdate === "agent_message_chunk").map((m) => m.notification.update.content.text).join("");
  assert.match(text, /^Undid the last turn\./);
  assert.ok(!fs.existsSync(file("made.txt")), "the agent removed what the command made");

  // The agent's unsaved edits of the turn are taken back with it; the user's change stays.
  assert.equal(doc("a.txt").getText(), "old line\n");
  assert.equal(doc("a.txt").isDirty, false);
  assert.equal(doc("fresh.txt"), undefined);
  assert.ok(!fs.existsSync(file("fresh.txt")));
  assert.equal(doc("b.txt").getText(), "the user's line\n");
  assert.deepEqual(after.filter((m) => m.type === "review").at(-1).files.map((f) => f.label), ["b.txt"]);
  const notices = after.filter((m) => m.type === "update" && m.notification.update.sessionUpdate === "notice").map((m) => m.notification.update);
  assert.deepEqual(notices.map((n) => [n.severity, n.description]), [["info", "a.txt, fresh.txt"], ["warning", "b.txt"]]);
});

test("Rewind to here sends /rewind <turn>: both turns go, and the first prompt comes back to the box (not replayed)", { timeout: 60_000 }, async (t) => {
  const { prompts, click, turn } = await panelWithMock(t, "interp-rewind-", [textReply("One."), textReply("Two.")]);
  const first = await turn("first prompt");
  const second = await turn("second prompt");
  const after = await click({ type: "rewind", turnId: first.turnId });
  assert.deepEqual(prompts.at(-1), [{ type: "text", text: `/rewind ${first.turnId}` }]);
  const answered = after.find((m) => m.type === "answered" && m.undone);
  assert.deepEqual(answered.undone.turnIds, [first.turnId, second.turnId]);
  assert.deepEqual(after.find((m) => m.type === "draft"), { type: "draft", text: "first prompt", attachments: [] });
  const again = fakeView();
  stub.state.webviewProviders.get("interpreter.chat").resolveWebviewView(again.view);
  await again.send({ type: "ready" });
  const replay = again.posted.find((m) => m.type === "replay").messages;
  assert.ok(replay.some((m) => m.type === "answered" && m.undone), "the undo is replayed");
  assert.ok(!replay.some((m) => m.type === "draft"), "the box is filled once");
});

test("a background task is a card of its own, in progress with its output, then completed", { timeout: 60_000 }, async (t) => {
  const { dir, work } = scratch(t, "interp-background-");
  const replies = [
    toolReply("c1", "Bash", { command: "echo started; sleep 0.3; echo finished", run_in_background: true, description: "a job" }),
    toolReply("c2", "TaskOutput", { task_id: "b1", block: true, timeout: 30 }),
    textReply("The job finished."),
  ];
  const baseUrl = await mock(t, { replies }, dir);
  const page = await openChat(baseUrl, work, { "interpreter.harness": "kimi-code" });
  await waitUntil(() => page.posted.some((m) => m.type === "status" && m.status.state === "ready"), "the agent's initialize");
  await page.send({ type: "send", text: "run the job", attachments: [] });
  // Allow whatever the mode asks, until the turn ends.
  const answered = new Set();
  await waitUntil(async () => {
    for (const m of page.posted.filter((m) => m.type === "permission" && !answered.has(m.id))) {
      answered.add(m.id);
      await page.send({ type: "permission", id: m.id, optionId: "allow_once" });
    }
    return page.posted.some((m) => m.type === "turn" && !m.running && m.stopReason);
  }, "the end of the turn", 20_000);
  const task = page.posted
    .filter((m) => m.type === "update" && m.notification.update.toolCallId === "background-b1")
    .map((m) => m.notification.update);
  assert.ok(task.length >= 2, JSON.stringify(task));
  assert.equal(task[0].sessionUpdate, "tool_call");
  assert.equal(task[0].kind, "execute");
  const statuses = task.map((u) => u.status).filter(Boolean);
  assert.ok(statuses.indexOf("in_progress") >= 0, JSON.stringify(statuses));
  assert.equal(statuses.at(-1), "completed", JSON.stringify(statuses));
  assert.ok(statuses.indexOf("in_progress") < statuses.lastIndexOf("completed"));
  const shown = JSON.stringify(task.map((u) => u.content ?? []));
  assert.ok(shown.includes("finished"), shown);
});

test("a turn that ends while the panel is hidden, or an approval that waits, shows a notification", { timeout: 60_000 }, async (t) => {
  const { dir, work } = scratch(t, "interp-notify-");
  const baseUrl = await mock(t, { replies: [textReply("Seen."), toolReply("call_n", "shell", { command: "touch n.txt" }), textReply("Done."), textReply("Quiet.")] }, dir);
  const page = await openChat(baseUrl, work);
  await waitUntil(() => page.posted.some((m) => m.type === "status" && m.status.state === "ready"), "the agent's initialize");
  const ends = () => page.posted.filter((m) => m.type === "turn" && !m.running && m.stopReason).length;
  const notices = () => stub.state.messages.filter((m) => m.kind === "info" && m.text.startsWith("interpreter: "));
  const before = notices().length;
  // Hidden panel: the end of the turn is told.
  page.view.visible = false;
  await page.send({ type: "send", text: "hello", attachments: [] });
  await waitUntil(() => ends() === 1, "the end of the turn", 20_000);
  await waitUntil(() => notices().length === before + 1, "the notification");
  assert.equal(notices().at(-1).text, "interpreter: Turn complete");
  assert.deepEqual(notices().at(-1).actions, ["Show"]);
  // Shown, but VS Code not focused: the approval that waits is told, then the end.
  page.view.visible = true;
  stub.state.windowFocused = false;
  t.after(() => delete stub.state.windowFocused);
  await page.send({ type: "send", text: "make n", attachments: [] });
  const perm = await waitUntil(() => page.posted.find((m) => m.type === "permission"), "the permission request");
  assert.ok(notices().some((m) => m.text.startsWith("interpreter: waiting for your approval: ")), JSON.stringify(notices()));
  await page.send({ type: "permission", id: perm.id, optionId: "allow_once" });
  await waitUntil(() => ends() === 2, "the end of the second turn", 20_000);
  // Looking at it: nothing is shown.
  stub.state.windowFocused = true;
  const seen = notices().length;
  await page.send({ type: "send", text: "again", attachments: [] });
  await waitUntil(() => ends() === 3, "the end of the third turn", 20_000);
  assert.equal(notices().length, seen);
});

test("a project with config and hooks of its own: the panel asks to trust it, then its hooks, and they run for that prompt", { timeout: 60_000 }, async (t) => {
  const { dir, work } = scratch(t, "interp-trust-");
  fs.mkdirSync(path.join(work, ".codex"));
  fs.writeFileSync(path.join(work, ".codex", "config.toml"), "model_reasoning_effort = \"low\"\n");
  fs.writeFileSync(
    path.join(work, ".codex", "hooks.json"),
    JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "echo 'Team rule: small commits'" }] }] } }),
  );
  const baseUrl = await mock(t, { replies: [textReply("Trusted."), textReply("Again.")] }, dir);
  const page = await openChat(baseUrl, work);
  await waitUntil(() => page.posted.some((m) => m.type === "status" && m.status.state === "ready"), "the agent's initialize");
  await page.send({ type: "send", text: "hello", attachments: [] });
  const project = await waitUntil(() => page.posted.find((m) => m.type === "permission"), "the trust question");
  assert.equal(project.request.toolCall.toolCallId, "trust-project");
  assert.ok(JSON.stringify(project.request.toolCall.content).includes(".codex/config.toml"));
  await page.send({ type: "permission", id: project.id, optionId: "trust" });
  const hooks = await waitUntil(() => page.posted.find((m) => m.type === "permission" && m.id !== project.id), "the hooks question");
  assert.equal(hooks.request.toolCall.toolCallId, "trust-hooks");
  assert.ok(JSON.stringify(hooks.request.toolCall.content).includes("Team rule"));
  await page.send({ type: "permission", id: hooks.id, optionId: "trust" });
  await waitUntil(() => page.posted.some((m) => m.type === "turn" && !m.running && m.stopReason), "the end of the turn", 20_000);
  const recorded = await (await fetch(`${baseUrl.replace(/\/v1$/, "")}/_mock/requests`)).json();
  const body = JSON.stringify(recorded.filter((r) => r.method === "POST" && JSON.stringify(r.body).includes("hello")).at(-1).body);
  assert.ok(body.includes("UserPromptSubmit hook additional context: Team rule: small commits"), body);
  const user = fs.readFileSync(path.join(dir, "home", "config.toml"), "utf8");
  assert.match(user, /trust_level = "trusted"/);
  assert.match(user, /trusted_hash = "sha256:/);
});
