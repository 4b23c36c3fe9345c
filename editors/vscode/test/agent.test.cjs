"use strict";

// The panel's ACP client layer (out/acp/agent.js, no vscode import) against the real
// `interpreter acp` and the mock model, with a fake editor for fs/*.

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { setup, textReply, toolReply, agentText, waitUntil, sleep, MOCK_LLM_BIN } = require("./agent-helpers.cjs");

const TIMEOUT = { timeout: 40_000 };
const kinds = (updates) => updates.map((n) => n.update.sessionUpdate);

test("a prompt streams: several agent_message_chunk updates, then end_turn", TIMEOUT, async (t) => {
  const ctx = await setup(t, {
    replies: [{ events: [{ text: "Hello " }, { delay_ms: 30 }, { text: "from " }, { delay_ms: 30 }, { text: "the mock." }] }],
  });
  const init = await ctx.agent.start();
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  const ready = ctx.events.find((e) => e.type === "ready");
  assert.ok(ready.initializeMs > 0);
  t.diagnostic(`initialize answered ${ready.initializeMs.toFixed(1)} ms after spawn`);
  const { sessionId, configOptions } = await ctx.agent.newSession(ctx.work);
  assert.deepEqual(configOptions.map((o) => o.id), ["mode", "model", "reasoning_effort", "harness"]);
  const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "hi" }]);
  assert.equal(res.stopReason, "end_turn");
  const chunks = ctx.updates.filter((n) => n.update.sessionUpdate === "agent_message_chunk");
  assert.ok(chunks.length >= 3, `chunks: ${JSON.stringify(chunks)}`);
  assert.equal(agentText(ctx.updates), "Hello from the mock.");
  assert.ok(kinds(ctx.updates).includes("available_commands_update"));
});

test("fs/read_text_file answers from the open document: the model sees the unsaved text", TIMEOUT, async (t) => {
  const ctx = await setup(t, {
    replies: [toolReply("call_read", "read_file", { path: "notes.txt" }), textReply("Read it.")],
  });
  const file = path.join(ctx.work, "notes.txt");
  fs.writeFileSync(file, "saved on disk\n");
  ctx.editor.open.set(file, "UNSAVED buffer text\n");
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "read notes.txt" }]);
  assert.equal(res.stopReason, "end_turn");
  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2);
  const second = JSON.stringify(reqs[1].body.messages);
  assert.match(second, /UNSAVED buffer text/);
  assert.doesNotMatch(second, /saved on disk/);
});

test("fs/write_text_file becomes a recorded edit; the disk is untouched", TIMEOUT, async (t) => {
  const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old line\n+new line\n*** End Patch\n";
  const ctx = await setup(t, { replies: [toolReply("call_edit", "apply_patch", { input: patch }), textReply("Edited.")] });
  const file = path.join(ctx.work, "a.txt");
  fs.writeFileSync(file, "old line\n");
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "edit a.txt" }]);
  assert.equal(res.stopReason, "end_turn");
  assert.deepEqual(ctx.editor.edits, [{ path: file, before: "old line\n", content: "new line\n", sessionId }]);
  assert.equal(fs.readFileSync(file, "utf8"), "old line\n", "only Keep + save write the disk");
  const done = ctx.updates.find((n) => n.update.toolCallId === "call_edit" && n.update.status === "completed");
  assert.deepEqual(
    done.update.content.find((c) => c.type === "diff"),
    { type: "diff", path: file, oldText: "old line\n", newText: "new line\n" },
  );
});

for (const [optionId, ran] of [
  ["allow_once", true],
  ["reject_once", false],
]) {
  test(`a permission request answered ${optionId}`, TIMEOUT, async (t) => {
    const ctx = await setup(
      t,
      { replies: [toolReply("call_touch", "shell", { command: "touch ran.txt" }), textReply("Done.")] },
      { permission: async () => ({ outcome: { outcome: "selected", optionId } }) },
    );
    const { sessionId } = await ctx.agent.newSession(ctx.work);
    const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "touch a file" }]);
    assert.equal(res.stopReason, "end_turn");
    assert.equal(ctx.permissions.length, 1);
    const p = ctx.permissions[0];
    assert.equal(p.toolCall.toolCallId, "call_touch");
    // "Always allow …, and save" (docs/rules.md) is an allow_always option of its own.
    assert.deepEqual(p.options.map((o) => o.kind), ["allow_once", "allow_always", "allow_always", "reject_once"]);
    assert.deepEqual(p.options.map((o) => o.optionId), ["allow_once", "allow_always", "allow_always_save", "reject_once"]);
    assert.equal(fs.existsSync(path.join(ctx.work, "ran.txt")), ran);
    const end = ctx.updates.filter((n) => n.update.toolCallId === "call_touch").at(-1);
    assert.equal(end.update.status, ran ? "completed" : "failed");
  });
}

test("a turn's answer names it in _meta; /undo takes it back, and its answer's _meta names the file removed", TIMEOUT, async (t) => {
  const ctx = await setup(t, { replies: [toolReply("call_made", "shell", { command: "echo made > made.txt" }), textReply("Made it.")] });
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  const made = path.join(ctx.work, "made.txt");
  const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "make a file" }]);
  const turnId = res._meta?.["interpreter/turnId"];
  assert.equal(typeof turnId, "string", JSON.stringify(res));
  assert.ok(fs.existsSync(made));
  ctx.updates.length = 0;
  const undo = await ctx.agent.prompt(sessionId, [{ type: "text", text: "/undo" }]);
  assert.equal(undo.stopReason, "end_turn");
  assert.deepEqual(undo._meta["interpreter/undone"], { turnIds: [turnId], conversation: true, restored: [], removed: ["made.txt"], skipped: [] });
  assert.ok(!fs.existsSync(made));
  assert.match(agentText(ctx.updates), /^Undid the last turn\.\n- removed `made\.txt`/);
  // Nothing left to undo: said, and no report in _meta.
  const again = await ctx.agent.prompt(sessionId, [{ type: "text", text: "/undo" }]);
  assert.equal(again._meta?.["interpreter/undone"], undefined);
});

test("cancel ends the turn as cancelled and answers the open permission request `cancelled`", TIMEOUT, async (t) => {
  let asked;
  const askedP = new Promise((r) => (asked = r));
  const ctx = await setup(
    t,
    { replies: [toolReply("call_touch", "shell", { command: "touch ran.txt" }), textReply("SHOULD NOT BE SEEN")] },
    {
      // Like a user who never clicks: only the cancel answers it.
      permission: (req, signal) =>
        new Promise((resolve) => {
          asked(req);
          signal.addEventListener("abort", () => resolve({ outcome: { outcome: "selected", optionId: "allow_once" } }));
        }),
    },
  );
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  const prompt = ctx.agent.prompt(sessionId, [{ type: "text", text: "touch a file" }]);
  await askedP;
  const t0 = performance.now();
  await ctx.agent.cancel(sessionId);
  const res = await prompt;
  assert.equal(res.stopReason, "cancelled");
  t.diagnostic(`cancel answered after ${(performance.now() - t0).toFixed(1)} ms`);
  assert.ok(!fs.existsSync(path.join(ctx.work, "ran.txt")), "the command ran although the turn was cancelled");
  assert.doesNotMatch(agentText(ctx.updates), /SHOULD NOT BE SEEN/);
});

test("session/load replays the conversation in a new process", TIMEOUT, async (t) => {
  const ctx = await setup(t, { replies: [textReply("First answer."), textReply("Second answer.")] });
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  await ctx.agent.prompt(sessionId, [{ type: "text", text: "first question" }]);
  await ctx.agent.stop();

  ctx.updates.length = 0;
  await ctx.agent.loadSession(sessionId, ctx.work);
  const replay = ctx.updates.filter((n) => n.sessionId === sessionId);
  const user = replay.find((n) => n.update.sessionUpdate === "user_message_chunk");
  assert.equal(user.update.content.text, "first question");
  assert.equal(agentText(replay), "First answer.");
  const listed = await ctx.agent.listSessions(ctx.work);
  assert.ok(listed.sessions.some((s) => s.sessionId === sessionId), JSON.stringify(listed));
  const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "second question" }]);
  assert.equal(res.stopReason, "end_turn");
  const reqs = await ctx.mock.modelRequests();
  assert.match(JSON.stringify(reqs[1].body.messages), /first question[\s\S]*First answer[\s\S]*second question/);
});

test("a crashed agent is restarted and its session loaded again", TIMEOUT, async (t) => {
  const ctx = await setup(t, { replies: [textReply("Before the crash."), textReply("After the crash.")] });
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  await ctx.agent.prompt(sessionId, [{ type: "text", text: "hello" }]);
  const pid = await ctx.agent.pid();
  ctx.updates.length = 0;
  process.kill(pid, "SIGKILL");

  const restarted = await waitUntil(() => ctx.events.find((e) => e.type === "restarted"), "the restart");
  assert.equal(restarted.error, undefined);
  assert.equal(restarted.sessionId, sessionId);
  const exited = ctx.events.find((e) => e.type === "exited");
  assert.equal(exited.signal, "SIGKILL");
  assert.equal(exited.restarting, true);
  assert.ok(ctx.events.findIndex((e) => e.type === "reloading") > ctx.events.indexOf(exited));
  assert.notEqual(await ctx.agent.pid(), pid, "a new process");
  assert.equal(agentText(ctx.updates), "Before the crash.", "the replay of the loaded session");
  const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "still there?" }]);
  assert.equal(res.stopReason, "end_turn");
  assert.match(agentText(ctx.updates), /After the crash\./);
  await sleep(10);
});

test("an agent that keeps dying is given up on, and the next request starts it again", TIMEOUT, async (t) => {
  const ctx = await setup(t, { replies: [textReply("ok"), textReply("ok")] });
  ctx.agent.opts.maxRestarts = 0;
  await ctx.agent.newSession(ctx.work);
  process.kill(await ctx.agent.pid(), "SIGKILL");
  const exited = await waitUntil(() => ctx.events.find((e) => e.type === "exited"), "the exit");
  assert.equal(exited.restarting, false);
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  assert.equal((await ctx.agent.prompt(sessionId, [{ type: "text", text: "x" }])).stopReason, "end_turn");
});

test("no API key: session/new fails with auth_required naming the provider; with the key the retry works", TIMEOUT, async (t) => {
  const { providerFromAuthError } = require("../out/settings.js");
  let key;
  const ctx = await setup(t, { replies: [] }, { config: ['model_provider="kimi"'] });
  // The spec is read at each start: the key "stored" below reaches the new process.
  const spec = ctx.agent.spec;
  ctx.agent.spec = async () => {
    const s = await spec();
    return key ? { ...s, env: { ...s.env, MOONSHOT_API_KEY: key } } : s;
  };
  const err = await ctx.agent.newSession(ctx.work).then(
    () => assert.fail("session/new without a key must fail"),
    (e) => e,
  );
  assert.equal(err.code, -32000);
  assert.equal(err.authRequired, true);
  assert.equal(providerFromAuthError(err.message), "kimi");
  assert.match(err.message, /MOONSHOT_API_KEY/);
  key = "sk-test-not-a-real-key";
  assert.equal(await ctx.agent.refresh(), true, "a changed environment restarts the agent");
  assert.equal(await ctx.agent.refresh(), false, "an unchanged one does not");
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  assert.ok(sessionId);
});

test("/mcp is offered and answers each MCP server's status, auth and tools", TIMEOUT, async (t) => {
  const ctx = await setup(t, { replies: [textReply("Ran anyway.")] });
  const echo = path.join(path.dirname(MOCK_LLM_BIN), "mcp-echo");
  fs.writeFileSync(
    path.join(ctx.home, "config.toml"),
    `[mcp_servers.echo]\ncommand = '${echo}'\n\n` +
      `[mcp_servers.github]\nurl = "https://tracker.example/mcp"\nbearer_token_env_var = "INTERPRETER_TEST_UNSET_TOKEN"\n\n` +
      `[mcp_servers.gone]\ncommand = "/nonexistent/mcp-server"\n`,
  );
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  assert.equal((await ctx.agent.prompt(sessionId, [{ type: "text", text: "hi" }])).stopReason, "end_turn");
  const offered = ctx.updates.filter((n) => n.update.sessionUpdate === "available_commands_update").pop();
  const mcp = offered.update.availableCommands.find((c) => c.name === "mcp");
  assert.equal(mcp?.description, "Show MCP servers: status, tools and auth");
  const before = ctx.updates.length;
  assert.equal((await ctx.agent.prompt(sessionId, [{ type: "text", text: "/mcp" }])).stopReason, "end_turn");
  const listed = agentText(ctx.updates.slice(before));
  assert.match(listed, /^MCP servers:/);
  assert.match(listed, /- `echo`: ready \(auth: unsupported\)\n  - `say`: Repeats the text\./);
  assert.match(listed, /- `github`: failed: .*INTERPRETER_TEST_UNSET_TOKEN is not set \(auth: bearer_token\)/);
  assert.match(listed, /- `gone`: failed: could not run `\/nonexistent\/mcp-server`/);
  assert.equal((await ctx.mock.modelRequests()).length, 1, "/mcp is answered without the model");
});
