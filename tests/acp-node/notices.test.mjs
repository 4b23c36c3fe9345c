// (n) Warnings reach the user: a retry after a 429 and a skill that was skipped at session
// creation. A client that advertised `session.notices` gets `notice` updates (and no warning
// text in the transcript); any other client gets the same warnings as agent messages. Warnings
// raised while the session is created are held until the session/new response, because clients
// drop updates for sessions they do not know yet.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

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

const script = () => ({
  replies: [
    { status: 429, error: { message: "slow down, mock is busy" }, headers: { "retry-after": "0" } },
    textReply("after the retry"),
  ],
});

async function brokenSkill(work) {
  const dir = path.join(work, ".agents", "skills", "broken");
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "SKILL.md"), "no front matter here\n");
}

for (const notices of [true, false]) {
  const how = notices ? "as notices" : "as agent messages";
  test(`warnings are shown ${how}, after the session/new response`, { timeout: TIMEOUT }, async (t) => {
    const ctx = await setup(t, script());
    await brokenSkill(ctx.work);
    const agent = ctx.startAgent();
    await sdkConnect(agent, {}, async (c) => {
      await initialize(c, notices ? { session: { notices: {} } } : {});
      const { sessionId } = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });
      const res = await c.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "hello"));
      assert.equal(res.stopReason, "end_turn");

      const all = updatesIn(agent.frames, sessionId);
      const newReply = responseIndex(agent.frames, "session/new");
      const promptAt = requestIndex(agent.frames, "session/prompt");
      const promptReply = responseIndex(agent.frames, "session/prompt");
      const noticeUpdates = all.filter((u) => u.update.sessionUpdate === "notice");
      const skillWarning = (text) => text.includes("skipped skill") && text.includes("SKILL.md");
      const retryWarning = (text) => text.includes("slow down, mock is busy") && text.includes("retrying");

      // Nothing about the session is sent before the client has its id.
      assert.ok(all.every((u) => u.i > newReply), `an update came before the session/new response:\n${dump(agent.frames)}`);

      if (notices) {
        const skill = noticeUpdates.find((u) => skillWarning(u.update.title));
        assert.ok(skill, `no notice for the skipped skill:\n${dump(agent.frames)}`);
        assert.equal(skill.update.severity, "warning");
        const retry = noticeUpdates.find((u) => retryWarning(u.update.title));
        assert.ok(retry && retry.i > promptAt && retry.i < promptReply, `no retry notice during the prompt:\n${dump(agent.frames)}`);
        // The transcript holds only the model's answer.
        assert.equal(agentText(all.filter((u) => u.i > promptAt)), "after the retry");
        assert.ok(!agentText(all).includes("Warning"));
      } else {
        assert.equal(noticeUpdates.length, 0, "notices sent to a client that did not opt in");
        // (The skill warning follows the session/new response; the client may already have
        // sent its prompt by then, so only the retry warning's place is certain.)
        const text = agentText(all);
        assert.ok(text.includes("**Warning:**") && skillWarning(text), `skill warning not shown: ${text}`);
        const during = agentText(all.filter((u) => u.i > promptAt && u.i < promptReply));
        assert.ok(retryWarning(during), `retry warning not shown: ${during}`);
        assert.ok(during.endsWith("after the retry"), during);
      }
      assert.equal((await ctx.mock.modelRequests()).length, 2);
    });
    agent.assertSchemaValid();
  });
}
