// (g) A provider that keeps answering HTTP 500: the prompt must fail with a JSON-RPC error that
// carries the provider's message, the user must see that message as an agent_message_chunk,
// and the session must work again once the provider recovers.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  acp,
  agentText,
  dump,
  initialize,
  requestIndex,
  responseIndex,
  sdkConnect,
  setup,
  textPrompt,
  textReply,
  updatesIn,
} from "./helpers.mjs";

const TIMEOUT = 30_000;
const MESSAGE = "upstream exploded: quota exceeded for mock-model (code 7f3a)";

test("provider 500s: prompt rejects with the provider message, the message is shown, the next prompt works", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [{ status: 500, error: { message: MESSAGE }, repeat: 10 }] });
  const agent = ctx.startAgent();
  await sdkConnect(agent, {}, async (c) => {
    await initialize(c);
    const { sessionId } = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });

    let error;
    try {
      const res = await c.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "hello?"));
      assert.fail(`prompt should have failed, got ${JSON.stringify(res)}`);
    } catch (e) {
      error = e;
    }
    assert.equal(typeof error.code, "number", `not a JSON-RPC error: ${error}`);
    assert.ok(error.code !== -32601 && error.code !== -32700, `unexpected code ${error.code}`);
    const wire = agent.frames[responseIndex(agent.frames, "session/prompt")].msg;
    assert.ok(wire.error, `prompt response: ${JSON.stringify(wire)}`);
    assert.ok(JSON.stringify(wire.error).includes(MESSAGE), `error does not carry the provider message: ${JSON.stringify(wire.error)}`);

    const first = updatesIn(agent.frames, sessionId).filter(
      (u) => u.i > requestIndex(agent.frames, "session/prompt") && u.i < responseIndex(agent.frames, "session/prompt"),
    );
    assert.ok(agentText(first).includes(MESSAGE), `no agent_message_chunk with the provider message before the error:\n${dump(agent.frames)}`);

    // With request_max_retries=1 the agent tried twice, then gave up.
    const failedTries = (await ctx.mock.modelRequests()).length;
    assert.ok(failedTries >= 1 && failedTries <= 2, `model requests: ${failedTries}`);

    await ctx.mock.setScript({ replies: [textReply("recovered fine")] });
    const res = await c.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "and now?"));
    assert.equal(res.stopReason, "end_turn");
    const second = updatesIn(agent.frames, sessionId).filter((u) => u.i > requestIndex(agent.frames, "session/prompt"));
    assert.equal(agentText(second), "recovered fine");
    const reqs = await ctx.mock.modelRequests();
    assert.equal(reqs.length, failedTries + 1);
    assert.match(JSON.stringify(reqs.at(-1).body.messages), /and now\?/);
  });
  agent.assertSchemaValid();
});
