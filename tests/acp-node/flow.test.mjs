// (a) The basic flow through the official TypeScript SDK: initialize → session/new → a prompt
// whose model reply edits a file with apply_patch under approval_policy "untrusted". The edit
// must ask for permission with a diff, go through the client's fs/write_text_file, and be
// reported as tool_call (edit) → in_progress → completed (with the diff).
//
// Run: cargo build -p interpreter -p interpreter-tests && cd tests/acp-node && npm ci && npm test
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import {
  acp,
  agentRequests,
  dump,
  initialize,
  messagesText,
  permissionAnswer,
  requestIndex,
  responseIndex,
  sdkConnect,
  setup,
  textPrompt,
  textReply,
  toolMessages,
  toolReply,
  updatesIn,
} from "./helpers.mjs";

const TIMEOUT = 30_000;
const PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old line\n+new line\n*** End Patch\n";

function editScript() {
  return { replies: [toolReply("call_edit", "apply_patch", { input: PATCH }), textReply("I edited a.txt.")] };
}

/** Runs one "edit a.txt" turn answering the permission with `optionId`. */
async function editTurn(t, optionId) {
  const ctx = await setup(t, editScript());
  const file = path.join(ctx.work, "a.txt");
  await writeFile(file, "old line\n");
  const agent = ctx.startAgent({ config: ['approval_policy="untrusted"'] });
  const permissions = [];
  const writes = [];
  const reads = [];
  let result;
  let sessionId;
  await sdkConnect(
    agent,
    {
      permission: permissionAnswer(optionId, permissions),
      readTextFile: async (p) => {
        reads.push(p);
        return { content: await readFile(p.path, "utf8") };
      },
      writeTextFile: async (p) => {
        writes.push(p);
        await writeFile(p.path, p.content);
        return {};
      },
    },
    async (c) => {
      const init = await initialize(c, { fs: { readTextFile: true, writeTextFile: true } });
      assert.equal(init.protocolVersion, 1);
      const s = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });
      sessionId = s.sessionId;
      result = await c.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "edit a.txt"));
    },
  );
  return { ctx, agent, file, permissions, writes, reads, result, sessionId };
}

test("apply_patch under untrusted: permission with diff, allow_once, fs/write_text_file, edit tool-call lifecycle", { timeout: TIMEOUT }, async (t) => {
  const { ctx, agent, file, permissions, writes, result, sessionId } = await editTurn(t, "allow_once");
  const frames = agent.frames;

  assert.equal(result.stopReason, "end_turn");

  // The permission request shows the edit as a diff with an absolute path.
  assert.equal(permissions.length, 1, `permission requests: ${JSON.stringify(permissions)}`);
  const perm = permissions[0];
  assert.equal(perm.sessionId, sessionId);
  assert.equal(perm.toolCall.toolCallId, "call_edit");
  const diffs = (perm.toolCall.content ?? []).filter((c) => c.type === "diff");
  assert.equal(diffs.length, 1, `permission toolCall: ${JSON.stringify(perm.toolCall)}`);
  assert.ok(path.isAbsolute(diffs[0].path), `diff path must be absolute: ${diffs[0].path}`);
  assert.equal(diffs[0].path, file);
  assert.equal(diffs[0].oldText, "old line\n");
  assert.equal(diffs[0].newText, "new line\n");
  const optionIds = perm.options.map((o) => o.optionId);
  for (const id of ["allow_once", "allow_always", "reject_once"]) assert.ok(optionIds.includes(id), `options: ${optionIds}`);
  assert.deepEqual(
    Object.fromEntries(perm.options.map((o) => [o.optionId, o.kind])),
    { allow_once: "allow_once", allow_always: "allow_always", reject_once: "reject_once" },
  );

  // The write went through the client, with the new content, after the permission was granted.
  assert.equal(writes.length, 1, `fs/write_text_file calls: ${JSON.stringify(writes)}`);
  assert.equal(writes[0].path, file);
  assert.equal(writes[0].content, "new line\n");
  assert.equal(writes[0].sessionId, sessionId);
  assert.equal(await readFile(file, "utf8"), "new line\n");
  const permIdx = agentRequests(frames, "session/request_permission")[0].i;
  const writeIdx = agentRequests(frames, "fs/write_text_file")[0].i;
  const permAnswerIdx = frames.findIndex((f, i) => i > permIdx && f.dir === "in" && f.msg?.id === frames[permIdx].msg.id);
  assert.ok(permAnswerIdx > 0 && writeIdx > permAnswerIdx, `write must follow the permission answer:\n${dump(frames)}`);

  // Update sequence for the call: tool_call (edit, pending) → in_progress → completed with the diff.
  const ups = updatesIn(frames, sessionId).filter((u) => u.update.toolCallId === "call_edit");
  const seq = ups.map((u) => `${u.update.sessionUpdate}:${u.update.status ?? "-"}`);
  const start = ups.findIndex((u) => u.update.sessionUpdate === "tool_call");
  assert.ok(start >= 0, `no tool_call: ${seq}`);
  const call = ups[start].update;
  assert.equal(call.kind, "edit");
  assert.ok(call.status === undefined || call.status === "pending", `initial status: ${call.status}`);
  assert.ok(call.title && call.title.includes("a.txt"), `title: ${call.title}`);
  assert.deepEqual(call.locations?.map((l) => l.path), [file]);
  assert.deepEqual(call.rawInput, { input: PATCH });
  const prog = ups.findIndex((u, k) => k > start && u.update.sessionUpdate === "tool_call_update" && u.update.status === "in_progress");
  assert.ok(prog > start, `no in_progress after tool_call: ${seq}`);
  const done = ups.findIndex((u, k) => k > prog && u.update.sessionUpdate === "tool_call_update" && u.update.status === "completed");
  assert.ok(done > prog, `no completed after in_progress: ${seq}`);
  assert.ok(!ups.some((u) => u.update.status === "failed"), `unexpected failed status: ${seq}`);
  const doneDiff = (ups[done].update.content ?? []).find((c) => c.type === "diff");
  assert.ok(doneDiff, `completed update without diff: ${JSON.stringify(ups[done].update)}`);
  assert.equal(doneDiff.path, file);
  assert.equal(doneDiff.oldText, "old line\n");
  assert.equal(doneDiff.newText, "new line\n");

  // Text after the tool call; the prompt response comes last.
  const text = updatesIn(frames, sessionId)
    .filter((u) => u.i > ups[done].i && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => u.update.content.text)
    .join("");
  assert.equal(text, "I edited a.txt.");
  const promptResp = responseIndex(frames, "session/prompt");
  assert.ok(updatesIn(frames, sessionId).every((u) => u.i < promptResp || u.update.sessionUpdate === "available_commands_update"),
    `updates after the prompt response:\n${dump(frames)}`);

  // The tool result reached the model.
  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2);
  const results = toolMessages(reqs[1]);
  assert.equal(results.length, 1, messagesText(reqs[1]));
  assert.equal(results[0].tool_call_id, "call_edit");
  assert.match(JSON.stringify(results[0].content), /a\.txt/);

  agent.assertSchemaValid();
});

test("apply_patch under untrusted: reject_once leaves the file alone and tells the model", { timeout: TIMEOUT }, async (t) => {
  const { ctx, agent, file, permissions, writes, result, sessionId } = await editTurn(t, "reject_once");
  assert.equal(result.stopReason, "end_turn");
  assert.equal(permissions.length, 1);
  assert.equal(writes.length, 0, `no write expected: ${JSON.stringify(writes)}`);
  assert.equal(await readFile(file, "utf8"), "old line\n");
  const ups = updatesIn(agent.frames, sessionId).filter((u) => u.update.toolCallId === "call_edit");
  const last = ups.at(-1).update;
  assert.equal(last.status, "failed", `last update for the rejected call: ${JSON.stringify(last)}`);
  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2);
  const results = toolMessages(reqs[1]);
  assert.equal(results.length, 1, messagesText(reqs[1]));
  assert.match(JSON.stringify(results[0].content), /reject|denied|declined|not approved/i);
  assert.ok(requestIndex(agent.frames, "session/prompt") >= 0);
  agent.assertSchemaValid();
});
