// (f) Robustness over raw NDJSON (no SDK in the loop): malformed and invalid input each get a
// JSON-RPC error response (or, for notifications and stray responses, nothing), and after EACH
// of them a normal prompt still succeeds in the same process.
import { test } from "node:test";
import assert from "node:assert/strict";

import { agentText, dump, rawClient, setup, sleep, updatesIn } from "./helpers.mjs";

const TIMEOUT = 90_000;
const TEN_MB = 10 * 1024 * 1024;

/** Sends via `fn`, waits 300 ms, and fails if the agent wrote anything meanwhile. */
async function noReply(agent, fn) {
  const mark = agent.frames.length;
  await fn();
  await sleep(300);
  const written = agent.frames.slice(mark).filter((f) => f.dir === "out");
  assert.deepEqual(written.map((f) => f.line), [], "no reply expected");
  return null;
}

/** Abuse cases: `send(c, ctx)` returns the agent's reply message (or null when none is due). */
function cases(work, sessionId) {
  const isErr = (m) => m && !m.method && "id" in m && m.error;
  return [
    {
      name: "garbage line",
      send: (c) => c.sendRaw("this is not json at all }{", isErr),
      expect: (m) => {
        assert.equal(m.id, null);
        assert.equal(m.error.code, -32700);
      },
    },
    {
      name: "truncated JSON",
      send: (c) => c.sendRaw('{"jsonrpc":"2.0","id":900,"method":"session/new","params":{"cwd":', isErr),
      expect: (m) => {
        assert.equal(m.id, null);
        assert.equal(m.error.code, -32700);
      },
    },
    {
      name: "10 MB garbage line",
      send: (c) => c.sendRaw("x".repeat(TEN_MB), isErr, 30_000),
      expect: (m) => {
        assert.equal(m.id, null);
        assert.ok([-32700, -32600].includes(m.error.code), `code ${m.error.code}`);
      },
    },
    {
      name: "JSON array (batch)",
      send: (c) =>
        c.sendRaw(JSON.stringify([{ jsonrpc: "2.0", id: 901, method: "session/new", params: { cwd: work, mcpServers: [] } }]), isErr),
      expect: (m) => {
        assert.equal(m.id, null);
        assert.equal(m.error.code, -32600);
      },
    },
    {
      name: "JSON scalar",
      send: (c) => c.sendRaw("42", isErr),
      expect: (m) => {
        assert.equal(m.id, null);
        assert.equal(m.error.code, -32600);
      },
    },
    {
      name: "unknown method",
      send: (c) => c.request("session/bogus", { sessionId }),
      expect: (m) => assert.equal(m.error?.code, -32601, JSON.stringify(m)),
    },
    {
      name: "unknown extension method",
      send: (c) => c.request("_acme/frobnicate", {}),
      expect: (m) => assert.equal(m.error?.code, -32601, JSON.stringify(m)),
    },
    {
      name: "unknown notification (ignored, no reply)",
      send: async (c, agent) =>
        noReply(agent, async () => {
          await c.notify("_acme/ping", { x: 1 });
          await c.notify("session/cancel", { sessionId: "no-such-session" });
        }),
    },
    {
      name: "response to an id never sent (ignored, no reply)",
      send: async (c, agent) =>
        noReply(agent, () => agent.writeLine({ jsonrpc: "2.0", id: "never-sent", result: {} })),
    },
    {
      name: "session/new without cwd",
      send: (c) => c.request("session/new", { mcpServers: [] }),
      expect: (m) => assert.equal(m.error?.code, -32602, JSON.stringify(m)),
    },
    {
      name: "session/new with a relative cwd",
      send: (c) => c.request("session/new", { cwd: "relative/dir", mcpServers: [] }),
      expect: (m) => assert.equal(m.error?.code, -32602, JSON.stringify(m)),
    },
    {
      name: "session/prompt with an unknown sessionId",
      send: (c) => c.request("session/prompt", { sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }] }),
      expect: (m) => {
        assert.ok(m.error, JSON.stringify(m));
        assert.ok([-32002, -32602].includes(m.error.code), `code ${m.error.code}`);
        assert.match(m.error.message, /session/i);
      },
    },
    {
      name: "session/prompt with prompt of the wrong type",
      send: (c) => c.request("session/prompt", { sessionId, prompt: "not an array" }),
      expect: (m) => assert.equal(m.error?.code, -32602, JSON.stringify(m)),
    },
    {
      name: "session/load of an unknown session",
      send: (c) => c.request("session/load", { sessionId: "00000000-0000-0000-0000-000000000000", cwd: work, mcpServers: [] }),
      expect: (m) => assert.ok(m.error && [-32002, -32602].includes(m.error.code), JSON.stringify(m)),
    },
    {
      name: "10 MB prompt",
      send: (c) => c.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "y".repeat(TEN_MB) }] }, { timeoutMs: 30_000 }),
      expect: (m) => {
        assert.ok(m.error, `a 10 MB prompt should be refused, got ${JSON.stringify(m).slice(0, 300)}`);
        assert.equal(m.error.code, -32602);
      },
    },
  ];
}

test("malformed input gets JSON-RPC errors and the process keeps serving prompts after each", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [{ events: [{ text: "pong" }], repeat: 100 }] });
  const agent = ctx.startAgent();
  const c = rawClient(agent);

  const init = await c.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  assert.equal(init.result?.protocolVersion, 1, JSON.stringify(init));
  const s = await c.request("session/new", { cwd: ctx.work, mcpServers: [] });
  const sessionId = s.result?.sessionId;
  assert.ok(sessionId, JSON.stringify(s));

  let n = 0;
  const normalPrompt = async (after) => {
    n += 1;
    const mark = agent.frames.length;
    const r = await c.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `ping ${n}` }] });
    assert.equal(r.result?.stopReason, "end_turn", `prompt after "${after}" failed: ${JSON.stringify(r)}\n${dump(agent.frames.slice(mark))}`);
    const text = agentText(updatesIn(agent.frames.slice(mark), sessionId));
    assert.equal(text, "pong", `prompt after "${after}"`);
    assert.ok(agent.alive, `agent died after "${after}"`);
  };

  await normalPrompt("setup");
  for (const k of cases(ctx.work, sessionId)) {
    const reply = await k.send(c, agent);
    if (k.expect) {
      assert.ok(reply, `${k.name}: no reply`);
      try {
        k.expect(reply);
      } catch (e) {
        e.message = `${k.name}: ${e.message}\nreply: ${JSON.stringify(reply).slice(0, 500)}`;
        throw e;
      }
    }
    await normalPrompt(k.name);
  }

  // Every prompt reached the model exactly once; the refused ones never did.
  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, n);
  assert.ok(reqs.every((r) => JSON.stringify(r.body).length < 1024 * 1024), "an oversized prompt reached the model");
  agent.assertSchemaValid();
});
