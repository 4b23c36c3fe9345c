// (e) Schema validation. Every other test file validates all agent frames of its own runs
// (`agent.assertSchemaValid()`); this file drives as many message kinds as possible through two
// client profiles (plain, and Zed-like with `_meta.terminal_output` and terminal auth) and
// validates every frame the agent writes against the ACP v1 JSON schema bundled with
// @agentclientprotocol/sdk: envelope against the schema's "Agent" message type, payload against
// the per-method type (responses matched to the request by id).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import {
  acp,
  initialize,
  responseIndex,
  schemaInfo,
  sdkConnect,
  setup,
  textPrompt,
  textReply,
  updatesIn,
  validateFrames,
} from "./helpers.mjs";

const TIMEOUT = 60_000;

test("the validator is wired to the SDK's stable v1 schema and rejects invalid messages", () => {
  const info = schemaInfo();
  assert.equal(info.sdkVersion, "2.4.0");
  assert.match(info.path, /schema[\\/]v1[\\/]schema\.json$/);
  assert.equal(info.methods.agentResponse["session/prompt"], "PromptResponse");
  assert.equal(info.methods.agentRequest["session/request_permission"], "RequestPermissionRequest");
  assert.equal(info.methods.agentNotification["session/update"], "SessionNotification");
  const F = (dir, msg) => ({ dir, msg, line: JSON.stringify(msg) });
  const bad = [
    F("in", { jsonrpc: "2.0", id: 1, method: "session/prompt", params: {} }),
    F("out", { jsonrpc: "2.0", id: 1, result: { stopReason: "finished" } }),
    F("out", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "tool_call", toolCallId: "x", title: "t", kind: "bogus" } } }),
    F("out", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "no_such_update" } } }),
    F("out", { jsonrpc: "2.0", id: "p", method: "session/request_permission", params: { sessionId: "s", toolCall: { toolCallId: "x" }, options: [{ optionId: "a", name: "A", kind: "allow_maybe" }] } }),
    F("out", { jsonrpc: "2.0", id: null, error: { code: "x" } }),
    F("out", { id: 2, result: {} }),
    { dir: "out", msg: undefined, line: "log line on stdout" },
  ];
  assert.equal(validateFrames(bad).length, 7, JSON.stringify(validateFrames(bad).map((p) => p.what)));
  const good = [
    F("in", { jsonrpc: "2.0", id: 1, method: "session/prompt", params: {} }),
    F("out", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } }),
    F("out", { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }),
  ];
  assert.deepEqual(validateFrames(good), []);
});

/** stdout and stderr come through separate pipes: their relative order is not fixed. */
function assertOutputLines(out) {
  const lines = out.split("\n");
  assert.equal(lines.pop(), "", `output should end with a newline: ${JSON.stringify(out)}`);
  assert.deepEqual([...lines].sort(), ["err", "line1", "line2"], JSON.stringify(out));
  assert.ok(lines.indexOf("line1") < lines.indexOf("line2"), JSON.stringify(out));
}

const PLAN = {
  plan: [
    { step: "Look around", status: "completed" },
    { step: "Write notes", status: "in_progress" },
    { step: "Report", status: "pending" },
  ],
};

function richScript() {
  const call = (id, name, args) => ({ tool_call: { id, name, arguments: JSON.stringify(args) } });
  return {
    replies: [
      {
        events: [
          { reasoning: "I should make a plan first." },
          { text: "Planning." },
          call("c_plan", "update_plan", PLAN),
          call("c_read", "read_file", { path: "notes.txt" }),
          call("c_list", "list_dir", { path: "." }),
          call("c_grep", "grep_files", { pattern: "disk" }),
          call("c_glob", "glob", { pattern: "*.txt" }),
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 10, reasoning_tokens: 5 },
      },
      {
        events: [
          call("c_add", "apply_patch", { input: "*** Begin Patch\n*** Add File: new.txt\n+fresh file\n*** End Patch\n" }),
          call("c_sh", "shell", { command: "printf 'line1\\nline2\\n'; echo err >&2" }),
          call("c_fail", "shell", { command: "exit 3" }),
        ],
      },
      textReply("All done: plan, read, edit, commands."),
      textReply("Second prompt answer."),
    ],
  };
}

for (const profile of ["plain", "zed-like"]) {
  test(`every agent message validates against the ACP schema (${profile} client)`, { timeout: TIMEOUT }, async (t) => {
    const ctx = await setup(t, richScript());
    await writeFile(path.join(ctx.work, "notes.txt"), "disk text\n");
    const agent = ctx.startAgent();
    const caps =
      profile === "zed-like"
        ? { fs: { readTextFile: true, writeTextFile: true }, terminal: true, auth: { terminal: true }, _meta: { terminal_output: true, "terminal-auth": true } }
        : { fs: { readTextFile: true, writeTextFile: true }, terminal: false };
    await sdkConnect(
      agent,
      {
        permission: (p) => ({ outcome: { outcome: "selected", optionId: p.options.find((o) => o.kind === "allow_once").optionId } }),
        readTextFile: async (p) => ({ content: await readFile(p.path, "utf8") }),
        writeTextFile: async (p) => {
          await writeFile(p.path, p.content);
          return {};
        },
      },
      async (c) => {
        const init = await initialize(c, caps);
        if (profile === "zed-like") {
          assert.ok(init.authMethods.some((m) => m.type === "terminal"), `terminal auth method: ${JSON.stringify(init.authMethods)}`);
        }
        const s = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });
        const sid = s.sessionId;
        await c.request(acp.methods.agent.session.setConfigOption, { sessionId: sid, configId: "reasoning_effort", value: "high" });
        await c.request(acp.methods.agent.session.setMode, { sessionId: sid, modeId: "auto" });
        const res = await c.request(acp.methods.agent.session.prompt, textPrompt(sid, "do everything"));
        assert.equal(res.stopReason, "end_turn");
        await c.request(acp.methods.agent.session.prompt, {
          sessionId: sid,
          prompt: [
            { type: "text", text: "with context" },
            { type: "resource", resource: { uri: `file://${path.join(ctx.work, "notes.txt")}`, text: "disk text\n", mimeType: "text/plain" } },
            { type: "resource_link", uri: `file://${path.join(ctx.work, "notes.txt")}`, name: "notes.txt" },
          ],
        });
        await c.request(acp.methods.agent.session.prompt, textPrompt(sid, "/status"));
        const list = await c.request(acp.methods.agent.session.list, { cwd: ctx.work });
        assert.ok(list.sessions.some((x) => x.sessionId === sid), JSON.stringify(list));
        await c.request(acp.methods.agent.session.resume, { sessionId: sid, cwd: ctx.work, mcpServers: [] });
        await c.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ctx.work, mcpServers: [] });
        await assert.rejects(c.request(acp.methods.agent.session.setMode, { sessionId: "nope", modeId: "auto" }));
        await c.request(acp.methods.agent.session.close, { sessionId: sid });
        await c.request(acp.methods.agent.session.delete, { sessionId: sid });
        const after = await c.request(acp.methods.agent.session.list, {});
        assert.ok(!after.sessions.some((x) => x.sessionId === sid), "deleted session still listed");
      },
    );

    // The run covered the interesting update kinds.
    const kinds = new Set(updatesIn(agent.frames).map((u) => u.update.sessionUpdate));
    for (const k of ["agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call", "tool_call_update", "plan", "usage_update", "available_commands_update", "session_info_update", "config_option_update"]) {
      assert.ok(kinds.has(k), `no ${k} update in this run (got ${[...kinds]})`);
    }
    const statuses = new Set(updatesIn(agent.frames).map((u) => u.update.status).filter(Boolean));
    for (const st of ["in_progress", "completed", "failed"]) assert.ok(statuses.has(st), `no ${st} tool status (got ${[...statuses]})`);
    const sentMethods = new Set(agent.frames.filter((f) => f.dir === "out" && f.msg?.method).map((f) => f.msg.method));
    for (const m of ["session/request_permission", "fs/read_text_file", "fs/write_text_file"]) assert.ok(sentMethods.has(m), `agent never sent ${m}`);
    // Command output: Zed display-terminal _meta when asked for, else a fenced block.
    const sh = updatesIn(agent.frames).filter((u) => u.update.toolCallId === "c_sh");
    const shDone = sh.find((u) => u.update.status === "completed");
    assert.ok(shDone, `c_sh did not complete: ${JSON.stringify(sh)}`);
    if (profile === "zed-like") {
      assert.deepEqual(sh[0].update.content, [{ type: "terminal", terminalId: "c_sh" }]);
      assert.equal(sh[0].update._meta?.terminal_info?.terminal_id, "c_sh");
      const streamed = sh.map((u) => u.update._meta?.terminal_output?.data ?? "").join("");
      assertOutputLines(streamed);
      assert.equal(shDone.update._meta?.terminal_exit?.exit_code, 0);
    } else {
      const text = (shDone.update.content ?? []).map((c) => c.content?.text ?? "").join("");
      const m = /^```[a-z]*\n([^]*)```$/.exec(text);
      assert.ok(m, `shell output is not a fenced block: ${JSON.stringify(text)}`);
      assertOutputLines(m[1]);
      assert.ok(!sh.some((u) => u.update._meta), "terminal _meta sent to a client that did not ask for it");
    }
    const fail = updatesIn(agent.frames).filter((u) => u.update.toolCallId === "c_fail");
    assert.ok(fail.some((u) => u.i < responseIndex(agent.frames, "session/prompt", { first: true }) && u.update.status === "failed"), "exit 3 not reported failed");

    const n = agent.assertSchemaValid();
    t.diagnostic(`${n} agent messages validated against ${path.basename(path.dirname(schemaInfo().path))}/schema.json`);
  });
}
