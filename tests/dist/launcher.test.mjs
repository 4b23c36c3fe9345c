// The npm launcher (INTERPRETER_BIN: node_modules/.bin/interpreter of a prefix the packed
// tarballs were installed into) against the binary itself (REAL_BIN): argv, stdin/stdout
// bytes, exit codes and signals pass through; a missing platform package is named.
//
//   INTERPRETER_BIN=<prefix>/node_modules/.bin/interpreter REAL_BIN=<binary> \
//     LAUNCHER_PACKAGE=<unpacked launcher package> node --test tests/dist/launcher.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdtemp, mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { INTERPRETER_BIN as LAUNCHER, agentArgs, isolatedEnv, rawClient, setup, startMock, textReply, waitUntil } from "../acp-node/helpers.mjs";

const REAL_BIN = process.env.REAL_BIN;
const LAUNCHER_PACKAGE = process.env.LAUNCHER_PACKAGE;
const TIMEOUT = 30_000;

if (!REAL_BIN || !LAUNCHER_PACKAGE) throw new Error("set REAL_BIN and LAUNCHER_PACKAGE");

async function tempDir(t) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "interp-launcher-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `bin args` to completion; stdout/stderr as Buffers. */
function run(bin, args, opts = {}) {
  const r = spawnSync(bin, args, { timeout: 20_000, ...opts });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

test("argv and stdout bytes: --help, a bad flag", { timeout: TIMEOUT }, () => {
  for (const args of [["--help"], ["exec", "--help"], ["--version"], ["exec", "--no-such-flag"]]) {
    const direct = run(REAL_BIN, args);
    const launched = run(LAUNCHER, args);
    assert.equal(launched.status, direct.status, `${args}: exit status`);
    // clap names the program from argv[0] in usage lines: compare with the name normalised.
    const norm = (b) => b.toString("utf8").replaceAll(REAL_BIN, "interpreter");
    assert.ok(Buffer.isBuffer(launched.stdout));
    assert.equal(norm(launched.stdout), norm(direct.stdout), `${args}: stdout`);
    assert.equal(norm(launched.stderr), norm(direct.stderr), `${args}: stderr`);
  }
  assert.equal(run(LAUNCHER, ["exec", "--no-such-flag"]).status, 2);
});

test("exit codes: a missing key is 2, a failed turn is 1", { timeout: TIMEOUT }, async (t) => {
  const dir = await tempDir(t);
  const home = path.join(dir, "home");
  await mkdir(home);
  const env = isolatedEnv(home);
  delete env.MOONSHOT_API_KEY;
  const noKey = run(LAUNCHER, ["exec", "--skip-git-repo-check", "-C", dir, "hi"], { env });
  assert.equal(noKey.status, 2, noKey.stderr.toString());
  assert.match(noKey.stderr.toString(), /MOONSHOT_API_KEY/);

  const mock = await startMock({ replies: [{ status: 401, error: { message: "bad key" } }] }, dir);
  t.after(() => mock.stop());
  const args = ["exec", "--skip-git-repo-check", "-C", dir, ...agentArgs(mock.baseUrl).slice(1), "hi"];
  const failed = run(LAUNCHER, args, { env });
  assert.equal(failed.status, 1, failed.stderr.toString());
});

test("stdin bytes reach the binary: a non-ASCII prompt from stdin", { timeout: TIMEOUT }, async (t) => {
  const dir = await tempDir(t);
  const home = path.join(dir, "home");
  await mkdir(home);
  const mock = await startMock({ replies: [textReply("done")] }, dir);
  t.after(() => mock.stop());
  const prompt = "héllo ✓ 日本語\ttab \u{1F600}";
  const args = ["exec", "--skip-git-repo-check", "-C", dir, ...agentArgs(mock.baseUrl).slice(1)];
  const r = run(LAUNCHER, args, { env: isolatedEnv(home), input: Buffer.from(prompt + "\n", "utf8") });
  assert.equal(r.status, 0, r.stderr.toString());
  assert.equal(r.stdout.toString("utf8").trim(), "done");
  const [req] = await mock.modelRequests();
  assert.ok(JSON.stringify(req.body.messages).includes(JSON.stringify(prompt).slice(1, -1)), "the prompt arrived byte for byte");
});

/** The pid of the launcher's child (the binary), from /proc. */
function childPid(pid) {
  const file = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(file)) return undefined;
  const pids = readFileSync(file, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  return pids[0];
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts `bin acp` against a mock, waits for an initialize answer; returns the process. */
async function runningAgent(t, bin) {
  const ctx = await setup(t, { replies: [] });
  const child = spawn(bin, agentArgs(ctx.mock.baseUrl), {
    cwd: ctx.work,
    env: isolatedEnv(ctx.home),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  t.after(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"));
  let out = "";
  child.stdout.on("data", (c) => (out += c));
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }) + "\n");
  await waitUntil(() => out.includes('"id":1'), "an initialize answer");
  return { child, exited };
}

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
  test(`${signal} to the launcher ends the binary, and the launcher ends as the binary does`, { timeout: TIMEOUT }, async (t) => {
    const direct = await runningAgent(t, REAL_BIN);
    direct.child.kill(signal);
    const directEnd = await direct.exited;

    const launched = await runningAgent(t, LAUNCHER);
    const pid = await waitUntil(() => childPid(launched.child.pid), "the launcher's child");
    launched.child.kill(signal);
    const launchedEnd = await launched.exited;
    assert.deepEqual(launchedEnd, directEnd, `${signal}: launcher ${JSON.stringify(launchedEnd)}, binary alone ${JSON.stringify(directEnd)}`);
    await waitUntil(() => !alive(pid), `binary ${pid} to end`, 5_000);
  });
}

test("a binary killed by a signal: the launcher dies of the same signal", { timeout: TIMEOUT }, async (t) => {
  const launched = await runningAgent(t, LAUNCHER);
  const pid = await waitUntil(() => childPid(launched.child.pid), "the launcher's child");
  process.kill(pid, "SIGKILL");
  assert.deepEqual(await launched.exited, { code: null, signal: "SIGKILL" });
});

test("an ACP session through the launcher keeps stdout to protocol frames", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("Hello through npm.")] });
  const agent = ctx.startAgent();
  const c = rawClient(agent);
  const init = await c.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  assert.equal(init.result.protocolVersion, 1);
  const s = await c.request("session/new", { cwd: ctx.work, mcpServers: [] });
  const p = await c.request("session/prompt", { sessionId: s.result.sessionId, prompt: [{ type: "text", text: "hi" }] });
  assert.equal(p.result.stopReason, "end_turn");
  assert.equal(agent.assertSchemaValid() > 2, true);
});

test("without the platform package the launcher names it", { timeout: TIMEOUT }, async (t) => {
  const dir = await tempDir(t);
  const pkg = path.join(dir, "node_modules", "@openinterpreter", "interpreter");
  await cp(LAUNCHER_PACKAGE, pkg, { recursive: true });
  const r = run(process.execPath, [path.join(pkg, "bin", "interpreter.js"), "--version"], { cwd: dir });
  assert.equal(r.status, 1);
  const platform = `${process.platform}-${process.arch}`;
  assert.match(r.stderr.toString(), new RegExp(`@openinterpreter/interpreter-${platform} is not installed`));
  assert.match(r.stderr.toString(), /npm install @openinterpreter\/interpreter-/);
  assert.equal(r.stdout.length, 0);
});
