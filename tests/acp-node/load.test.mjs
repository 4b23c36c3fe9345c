// (c) session/load after a process restart: agent process A runs a turn (text + a shell call)
// and is killed; process B, with the same OPENINTERPRETER_HOME, loads the session and must
// replay it as session/update notifications before answering, then continue it with the first
// turn's history sent to the model.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  acp,
  agentText,
  contentText,
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
  updatesIn,
} from "./helpers.mjs";

const TIMEOUT = 40_000;

test("session/load in a new process replays the turn (user text, agent text, completed shell call) before answering", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, {
    replies: [
      {
        events: [
          { text: "Let me run it." },
          { tool_call: { id: "call_echo", name: "shell", arguments: JSON.stringify({ command: "echo replay-me" }) } },
        ],
      },
      textReply("It printed replay-me."),
      textReply("Second turn answer."),
    ],
  });

  // Process A: one full turn.
  const a = ctx.startAgent();
  let sessionId;
  await sdkConnect(a, { permission: permissionAnswer("allow_once") }, async (c) => {
    await initialize(c);
    ({ sessionId } = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] }));
    const res = await c.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "first turn: run echo"));
    assert.equal(res.stopReason, "end_turn");
  });
  const aUpdates = updatesIn(a.frames, sessionId);
  assert.ok(
    aUpdates.some((u) => u.update.toolCallId === "call_echo" && u.update.status === "completed"),
    `A's shell call did not complete:\n${dump(a.frames)}`,
  );
  a.assertSchemaValid();
  // Like an editor killing its agent: no graceful shutdown.
  await a.kill("SIGKILL");

  // Process B: load, then continue.
  const b = ctx.startAgent();
  await sdkConnect(b, { permission: permissionAnswer("allow_once") }, async (c) => {
    const init = await initialize(c);
    assert.equal(init.agentCapabilities.loadSession, true);
    const loaded = await c.request(acp.methods.agent.session.load, { sessionId, cwd: ctx.work, mcpServers: [] });
    assert.ok(loaded && typeof loaded === "object", `load response: ${JSON.stringify(loaded)}`);

    const frames = b.frames;
    const loadReq = requestIndex(frames, "session/load");
    const loadResp = responseIndex(frames, "session/load");
    assert.ok(loadResp > loadReq, "no load response");
    const replayed = updatesIn(frames, sessionId).filter((u) => u.i > loadReq && u.i < loadResp);
    const kinds = replayed.map((u) => u.update.sessionUpdate);

    const user = replayed.filter((u) => u.update.sessionUpdate === "user_message_chunk");
    assert.ok(user.some((u) => u.update.content?.text === "first turn: run echo"), `user chunk not replayed: ${kinds}\n${dump(frames)}`);
    const text = agentText(replayed);
    assert.ok(text.includes("Let me run it."), `agent text not replayed: ${JSON.stringify(text)}`);
    assert.ok(text.includes("It printed replay-me."), `agent text not replayed: ${JSON.stringify(text)}`);
    const call = replayed.find((u) => u.update.sessionUpdate === "tool_call" && u.update.toolCallId === "call_echo");
    assert.ok(call, `shell tool_call not replayed: ${kinds}`);
    assert.equal(call.update.status, "completed", JSON.stringify(call.update));
    assert.equal(call.update.kind, "execute");
    // Replay order follows the conversation: user → "Let me run it." → call → "It printed…".
    const iUser = user[0].i;
    const iFirstText = replayed.find((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text.includes("Let me run it.")).i;
    const iLastText = replayed.find((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text.includes("It printed replay-me.")).i;
    assert.ok(iUser < iFirstText && iFirstText < call.i && call.i < iLastText, `replay order: ${kinds}`);
    // Nothing of the replay arrives after the response.
    const late = updatesIn(frames, sessionId).filter(
      (u) => u.i > loadResp && ["user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update"].includes(u.update.sessionUpdate),
    );
    assert.deepEqual(late, [], "replayed updates after the load response");

    // A new prompt in B continues the conversation.
    const res = await c.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "second turn"));
    assert.equal(res.stopReason, "end_turn");
    const after = updatesIn(b.frames, sessionId).filter((u) => u.i > responseIndex(b.frames, "session/load"));
    assert.equal(agentText(after), "Second turn answer.");
  });

  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 3);
  const msgs = reqs[2].body.messages;
  const all = messagesText(reqs[2]);
  const users = msgs.filter((m) => m.role === "user").map(contentText);
  assert.ok(users.some((u) => u.includes("first turn: run echo")), `first user message missing: ${all}`);
  assert.ok(users.at(-1).includes("second turn"), `last user message: ${users.at(-1)}`);
  const assistants = msgs.filter((m) => m.role === "assistant");
  assert.ok(assistants.some((m) => (m.tool_calls ?? []).some((tc) => tc.id === "call_echo" && tc.function?.name === "shell")), `tool call missing: ${all}`);
  assert.ok(assistants.some((m) => contentText(m).includes("It printed replay-me.")), `final answer missing: ${all}`);
  const results = toolMessages(reqs[2]);
  assert.ok(results.some((m) => m.tool_call_id === "call_echo" && JSON.stringify(m.content).includes("replay-me")), `tool result missing: ${all}`);
  b.assertSchemaValid();
});
