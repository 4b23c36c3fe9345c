"use strict";

// Records test/fixtures/transcript.json: the host messages the panel gets for one turn of the
// real `interpreter acp` against the mock model (Markdown with a hostile <img onerror>, a
// thought, a plan, an edit with a diff, a command that asks for permission). The webview tests
// render it. Re-record after a change to the agent's ACP output:
//   npm run build:test && node test/record-transcript.cjs

const fs = require("node:fs");
const path = require("node:path");
const { setup } = require("./agent-helpers.cjs");

const HOSTILE = '<img src=x onerror="alert(1)">';

async function main() {
  const cleanups = [];
  const t = { after: (fn) => cleanups.push(fn) };
  const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n";
  const plan = {
    plan: [
      { step: "Read a.txt", status: "completed" },
      { step: "Edit a.txt", status: "in_progress" },
      { step: "Run the check", status: "pending" },
    ],
  };
  const messages = [];
  let permissionSeq = 0;
  const ctx = await setup(
    t,
    {
      replies: [
        {
          events: [
            { reasoning: "The user wants a.txt changed." },
            { text: `# Plan\n\nI will **edit** \`a.txt\`, then run a check.\n\n${HOSTILE}\n` },
            { tool_call: { id: "call_plan", name: "update_plan", arguments: JSON.stringify(plan) } },
          ],
        },
        { events: [{ tool_call: { id: "call_edit", name: "apply_patch", arguments: JSON.stringify({ input: patch }) } }] },
        { events: [{ tool_call: { id: "call_check", name: "shell", arguments: JSON.stringify({ command: "touch checked.txt" }) } }] },
        { events: [{ text: "Done: `two` is now `TWO` in [a.txt](a.txt)." }], usage: { prompt_tokens: 1200, completion_tokens: 80 } },
      ],
    },
    {
      permission: async (request) => {
        const id = `perm-${++permissionSeq}`;
        messages.push({ type: "permission", id, request });
        messages.push({ type: "permissionDone", id, optionId: "allow_once" });
        return { outcome: { outcome: "selected", optionId: "allow_once" } };
      },
    },
  );
  fs.writeFileSync(path.join(ctx.work, "a.txt"), "one\ntwo\nthree\n");
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  const host = ctx.updates;
  const origPush = host.push.bind(host);
  host.push = (n) => {
    messages.push({ type: "update", notification: n });
    return origPush(n);
  };
  messages.push({ type: "userMessage", text: "Change two to TWO in a.txt", attachments: [] });
  const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "Change two to TWO in a.txt" }]);
  messages.push({ type: "turn", running: false, stopReason: res.stopReason });
  for (const fn of cleanups) await fn();

  // Stable across runs: the temp folder becomes /work/project, the session id a fixed one.
  let json = JSON.stringify({ roots: [ctx.work], sessionId, messages }, null, 1);
  json = json.split(ctx.work).join("/work/project").split(sessionId).join("session-1");
  fs.writeFileSync(path.join(__dirname, "fixtures/transcript.json"), `${json}\n`);
  console.log(`recorded ${messages.length} messages (stopReason ${res.stopReason})`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
