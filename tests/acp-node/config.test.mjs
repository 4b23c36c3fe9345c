// (d) Config options: session/set_config_option for the model answers with the full option
// list and changes the model sent to the provider; setting the mode announces
// current_mode_update and takes effect (read-only refuses an edit without asking).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import {
  acp,
  dump,
  initialize,
  permissionAnswer,
  responseIndex,
  sdkConnect,
  setup,
  textPrompt,
  textReply,
  toolReply,
  updatesIn,
  waitUntil,
} from "./helpers.mjs";

const TIMEOUT = 30_000;
const IDS = ["mode", "model", "reasoning_effort", "harness"];

function byId(options) {
  return Object.fromEntries(options.map((o) => [o.id, o]));
}

function assertConsistent(options) {
  assert.deepEqual(options.map((o) => o.id), IDS, `configOptions ids: ${JSON.stringify(options)}`);
  for (const o of options) {
    assert.equal(o.type, "select");
    const values = o.options.flatMap((x) => (x.options ? x.options.map((y) => y.value) : [x.value]));
    assert.ok(values.includes(o.currentValue), `${o.id}: currentValue ${o.currentValue} not among ${values}`);
  }
}

test("set_config_option model: full configOptions back, next request uses the new model", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("one"), textReply("two")] });
  const agent = ctx.startAgent();
  await sdkConnect(agent, {}, async (c) => {
    await initialize(c);
    const s = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });
    assertConsistent(s.configOptions);
    const initial = byId(s.configOptions);
    assert.equal(initial.model.currentValue, "mock-model");
    assert.equal(initial.model.category, "model");
    assert.equal(initial.mode.category, "mode");
    assert.equal(initial.mode.currentValue, "auto");
    assert.equal(initial.reasoning_effort.category, "thought_level");
    assert.equal(s.modes.currentModeId, "auto");

    // First turn with the configured model.
    let res = await c.request(acp.methods.agent.session.prompt, textPrompt(s.sessionId, "hi"));
    assert.equal(res.stopReason, "end_turn");

    const set = await c.request(acp.methods.agent.session.setConfigOption, {
      sessionId: s.sessionId,
      configId: "model",
      value: "mock-model-b",
    });
    assertConsistent(set.configOptions);
    const after = byId(set.configOptions);
    assert.equal(after.model.currentValue, "mock-model-b");
    for (const id of ["mode", "reasoning_effort", "harness"]) {
      assert.deepEqual(after[id], initial[id], `${id} changed by a model switch`);
    }

    res = await c.request(acp.methods.agent.session.prompt, textPrompt(s.sessionId, "again"));
    assert.equal(res.stopReason, "end_turn");
  });
  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2);
  assert.equal(reqs[0].body.model, "mock-model");
  assert.equal(reqs[1].body.model, "mock-model-b");
  agent.assertSchemaValid();
});

test("set_config_option rejects an unknown option id and an unknown mode with invalid params", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [] });
  const agent = ctx.startAgent();
  await sdkConnect(agent, {}, async (c) => {
    await initialize(c);
    const s = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });
    await assert.rejects(
      c.request(acp.methods.agent.session.setConfigOption, { sessionId: s.sessionId, configId: "bogus", value: "x" }),
      (e) => e.code === -32602,
    );
    await assert.rejects(
      c.request(acp.methods.agent.session.setConfigOption, { sessionId: s.sessionId, configId: "mode", value: "yolo" }),
      (e) => e.code === -32602,
    );
  });
  agent.assertSchemaValid();
});

test("set_config_option mode=read-only sends current_mode_update and refuses the next edit without asking", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, {
    replies: [
      toolReply("call_edit", "apply_patch", {
        input: "*** Begin Patch\n*** Update File: a.txt\n@@\n-old line\n+new line\n*** End Patch\n",
      }),
      textReply("Could not edit."),
    ],
  });
  const file = path.join(ctx.work, "a.txt");
  await writeFile(file, "old line\n");
  const agent = ctx.startAgent();
  const permissions = [];
  await sdkConnect(agent, { permission: permissionAnswer("allow_once", permissions) }, async (c) => {
    await initialize(c);
    const s = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });
    const set = await c.request(acp.methods.agent.session.setConfigOption, {
      sessionId: s.sessionId,
      configId: "mode",
      value: "read-only",
    });
    assertConsistent(set.configOptions);
    assert.equal(byId(set.configOptions).mode.currentValue, "read-only");
    const modeUpdate = await waitUntil(
      () => updatesIn(agent.frames, s.sessionId).find((u) => u.update.sessionUpdate === "current_mode_update"),
      "current_mode_update",
      5_000,
    );
    assert.equal(modeUpdate.update.currentModeId, "read-only");
    assert.ok(modeUpdate.i > responseIndex(agent.frames, "session/set_config_option"), "current_mode_update before the response");

    const res = await c.request(acp.methods.agent.session.prompt, textPrompt(s.sessionId, "edit a.txt"));
    assert.equal(res.stopReason, "end_turn");
    assert.equal(permissions.length, 0, `read-only must not ask: ${JSON.stringify(permissions)}`);
    assert.equal(await readFile(file, "utf8"), "old line\n");
    const last = updatesIn(agent.frames, s.sessionId).filter((u) => u.update.toolCallId === "call_edit").at(-1);
    assert.equal(last?.update.status, "failed", dump(agent.frames));
  });
  agent.assertSchemaValid();
});
