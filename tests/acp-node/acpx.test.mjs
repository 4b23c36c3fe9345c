// (h) acpx, a real headless ACP client CLI: `acpx --agent <cmd> --format json exec "…"` with
// --approve-all runs the model's shell call; with --deny-all the call does not run and the
// denial reaches the model as the tool result.
//
// The agent command is a wrapper script in the temp dir (acpx splits --agent like a shell;
// a script avoids quoting the TOML `-c` overrides twice).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { INTERPRETER_BIN, agentArgs, dump, setup, textReply, toolMessages, toolReply, validateFrames } from "./helpers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const ACPX = path.join(here, "node_modules", "acpx", "dist", "cli.js");
const TIMEOUT = 60_000;

const shq = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

async function writeWrapper(ctx) {
  const wrapper = path.join(ctx.root, "interpreter-acp.sh");
  const argv = [INTERPRETER_BIN, ...agentArgs(ctx.mock.baseUrl)];
  await writeFile(
    wrapper,
    `#!/bin/sh\nOPENINTERPRETER_HOME=${shq(ctx.home)}\nexport OPENINTERPRETER_HOME\nexec ${argv.map(shq).join(" ")} "$@"\n`,
  );
  await chmod(wrapper, 0o755);
  return wrapper;
}

/** Runs acpx with `flags`; resolves with {code, signal, stdout, stderr}. Killed on test timeout. */
async function runAcpx(t, ctx, flags, prompt) {
  const wrapper = await writeWrapper(ctx);
  const userHome = path.join(ctx.root, "user-home"); // acpx keeps its config/sessions under $HOME
  await mkdir(userHome, { recursive: true });
  const env = { ...process.env, HOME: userHome };
  for (const k of Object.keys(env)) if (k.startsWith("OPENINTERPRETER_") || k.startsWith("ACPX_")) delete env[k];
  const child = spawn(
    process.execPath,
    [ACPX, "--agent", wrapper, "--cwd", ctx.work, "--format", "json", "--timeout", "40", ...flags, "exec", prompt],
    { cwd: ctx.work, env, stdio: ["ignore", "pipe", "pipe"], signal: t.signal },
  );
  child.on("error", () => {}); // abort on timeout
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c) => (stderr += c));
  const { code, signal } = await new Promise((resolve) => child.once("close", (code, signal) => resolve({ code, signal })));
  return { code, signal, stdout, stderr };
}

const CLIENT_SIDE = new Set(["session/update", "session/request_permission", "fs/read_text_file", "fs/write_text_file"]);

/** acpx's json transcript (both directions, unlabeled) → frames labeled like `agent.frames`. */
function transcriptFrames(stdout) {
  const frames = [];
  const clientIds = new Set();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const msg = JSON.parse(line);
    let dir;
    if (msg.method) {
      dir = CLIENT_SIDE.has(msg.method) || msg.method.startsWith("terminal/") ? "out" : "in";
      if (dir === "in" && msg.id !== undefined) clientIds.add(JSON.stringify(msg.id));
    } else {
      dir = clientIds.has(JSON.stringify(msg.id)) ? "out" : "in";
    }
    frames.push({ dir, msg, line });
  }
  return frames;
}

function script() {
  return {
    replies: [toolReply("call_echo", "shell", { command: "echo approved-run > out.txt" }), textReply("All done.")],
  };
}

test("acpx --approve-all exec: the approved shell call writes out.txt", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, script());
  const r = await runAcpx(t, ctx, ["--approve-all"], "write out.txt with echo");
  const frames = transcriptFrames(r.stdout);
  const where = `acpx exit ${r.code}/${r.signal}\nstderr: ${r.stderr}\n${dump(frames)}`;
  assert.equal(r.code, 0, where);
  const out = path.join(ctx.work, "out.txt");
  assert.ok(existsSync(out), `out.txt missing; ${where}`);
  assert.equal(await readFile(out, "utf8"), "approved-run\n");
  // acpx really was asked, and answered allow.
  const perm = frames.find((f) => f.dir === "out" && f.msg.method === "session/request_permission");
  assert.ok(perm, `no permission request; ${where}`);
  const answer = frames.find((f) => f.dir === "in" && f.msg.id === perm.msg.id && !f.msg.method);
  assert.equal(answer?.msg.result?.outcome?.optionId, "allow_once", where);
  const promptResp = frames.find((f) => f.dir === "out" && f.msg.result?.stopReason);
  assert.equal(promptResp?.msg.result.stopReason, "end_turn", where);
  const problems = validateFrames(frames);
  assert.deepEqual(problems, [], "schema violations in the acpx transcript");
});

test("acpx --deny-all exec: the shell call does not run and the model is told it was rejected", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, script());
  const r = await runAcpx(t, ctx, ["--deny-all"], "write out.txt with echo");
  const frames = transcriptFrames(r.stdout);
  const where = `acpx exit ${r.code}/${r.signal}\nstderr: ${r.stderr}\n${dump(frames)}`;
  // acpx reports a turn in which it denied a permission with its exit code 5 (PERMISSION_DENIED).
  assert.equal(r.code, 5, where);
  assert.ok(!existsSync(path.join(ctx.work, "out.txt")), `out.txt must not exist; ${where}`);
  const perm = frames.find((f) => f.dir === "out" && f.msg.method === "session/request_permission");
  assert.ok(perm, `no permission request; ${where}`);
  const answer = frames.find((f) => f.dir === "in" && f.msg.id === perm.msg.id && !f.msg.method);
  assert.equal(answer?.msg.result?.outcome?.optionId, "reject_once", where);
  const failed = frames.find(
    (f) => f.dir === "out" && f.msg.params?.update?.toolCallId === "call_echo" && f.msg.params.update.status === "failed",
  );
  assert.ok(failed, `the denied call was not reported failed; ${where}`);

  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2, "the model is asked again after the denial");
  const results = toolMessages(reqs[1]);
  assert.equal(results.length, 1, JSON.stringify(reqs[1].body.messages));
  assert.equal(results[0].tool_call_id, "call_echo");
  assert.match(JSON.stringify(results[0].content), /rejected/i);
  const problems = validateFrames(frames);
  assert.deepEqual(problems, [], "schema violations in the acpx transcript");
});
