// Questions as form elicitations: a client with `elicitation.form` gets Codex's
// request_user_input as `elicitation/create` (validated, like every agent frame, against the
// SDK's v1 schema), and the picked option reaches the model.
import { test } from "node:test";
import assert from "node:assert/strict";

import { acp, initialize, sdkConnect, setup, textPrompt, textReply } from "./helpers.mjs";

test("request_user_input is an elicitation/create form that validates against the ACP schema", { timeout: 60_000 }, async (t) => {
  const question = { questions: [{ id: "db", header: "DB", question: "Which database?", options: [{ label: "SQLite", description: "a file" }, { label: "Postgres", description: "a server" }] }] };
  const ctx = await setup(t, {
    replies: [{ events: [{ tool_call: { id: "q1", name: "request_user_input", arguments: JSON.stringify(question) } }] }, textReply("Postgres it is.")],
  });
  const agent = ctx.startAgent();
  const forms = [];
  await sdkConnect(
    agent,
    {
      elicit: (p) => {
        forms.push(p);
        return { action: "accept", content: { q1: "Postgres" } };
      },
    },
    async (c) => {
      await initialize(c, { elicitation: { form: {} } });
      const s = await c.request(acp.methods.agent.session.new, { cwd: ctx.work, mcpServers: [] });
      const res = await c.request(acp.methods.agent.session.prompt, textPrompt(s.sessionId, "set up a database"));
      assert.equal(res.stopReason, "end_turn");
      assert.equal(forms.length, 1);
      assert.equal(forms[0].sessionId, s.sessionId);
      assert.equal(forms[0].toolCallId, "q1");
      assert.deepEqual(forms[0].requestedSchema.properties.q1.oneOf.map((o) => o.const), ["SQLite", "Postgres"]);
    },
  );
  const reqs = await ctx.mock.modelRequests();
  const result = reqs[1].body.messages.find((m) => m.role === "tool" && m.tool_call_id === "q1");
  assert.equal(result.content, '{"answers":{"db":{"answers":["Postgres"]}}}');
  agent.assertSchemaValid();
});
