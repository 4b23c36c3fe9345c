// An installed `interpreter` (INTERPRETER_BIN: the binary unpacked from the release archive,
// or the npm launcher) as an ACP agent, through the official TypeScript SDK: initialize, then
// a session with one prompt against the mock model.
//
//   INTERPRETER_BIN=… EXPECT_VERSION=0.1.0 node --test tests/dist/acp.test.mjs
//
// Uses tests/acp-node's helpers and node_modules (npm ci there first).
import { test } from "node:test";
import assert from "node:assert/strict";

import { INTERPRETER_BIN, acp, agentText, initialize, sdkConnect, setup, textPrompt, textReply, updatesIn } from "../acp-node/helpers.mjs";

const TIMEOUT = 30_000;
const EXPECT_VERSION = process.env.EXPECT_VERSION;

test(`initialize through the SDK (${INTERPRETER_BIN})`, { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [] });
  const agent = ctx.startAgent();
  let init;
  await sdkConnect(agent, {}, async (c) => {
    init = await initialize(c);
  });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentInfo?.name, "interpreter");
  if (EXPECT_VERSION) assert.equal(init.agentInfo?.version, EXPECT_VERSION);
  assert.ok(init.authMethods?.length > 0, "the registry requires an auth method");
  assert.equal(agent.assertSchemaValid() > 0, true);
});

test(`a session with a prompt against the mock (${INTERPRETER_BIN})`, { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("Hello from the mock model.")] });
  const agent = ctx.startAgent();
  let result;
  let sessionId;
  await sdkConnect(agent, {}, async (c) => {
    await initialize(c);
    const s = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });
    sessionId = s.sessionId;
    result = await c.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "say hello"));
  });
  assert.equal(result.stopReason, "end_turn");
  assert.equal(agentText(updatesIn(agent.frames, sessionId)), "Hello from the mock model.");
  const requests = await ctx.mock.modelRequests();
  assert.equal(requests.length, 1);
  assert.match(JSON.stringify(requests[0].body.messages), /say hello/);
  agent.assertSchemaValid();
});
