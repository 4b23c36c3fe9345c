// Helpers for the ACP client-layer tests: the tree's own `interpreter` and `mock-llm`
// (INTERPRETER_BIN / MOCK_LLM_BIN override them), the scripted mock model, and a fake
// editor (document store + edit sink) for out/acp/agent.js.

"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");

const root = path.resolve(__dirname, "../../..");
const INTERPRETER_BIN = path.resolve(process.env.INTERPRETER_BIN || path.join(root, "target/debug/interpreter"));
const MOCK_LLM_BIN = path.resolve(process.env.MOCK_LLM_BIN || path.join(root, "target/debug/mock-llm"));

function checkBinaries() {
  for (const bin of [INTERPRETER_BIN, MOCK_LLM_BIN]) {
    if (!fs.existsSync(bin)) {
      throw new Error(`${bin} not found: run \`cargo build --workspace --bins\` in the repository, or set INTERPRETER_BIN / MOCK_LLM_BIN`);
    }
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(fn, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Starts mock-llm with `script` on a free port. */
async function startMock(script, dir) {
  const scriptPath = path.join(dir, "mock-script.json");
  fs.writeFileSync(scriptPath, JSON.stringify(script));
  const child = spawn(MOCK_LLM_BIN, ["--script", scriptPath, "--port", "0", "--exit-on-stdin-eof"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise((r) => child.once("exit", r));
  const baseUrl = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mock-llm did not start: ${stderr}`)), 10_000);
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const m = /^MOCK_LISTENING (\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  const origin = new URL(baseUrl).origin;
  return {
    baseUrl,
    async modelRequests() {
      const all = await (await fetch(`${origin}/_mock/requests`)).json();
      return all.filter((r) => r.method === "POST" && r.path.endsWith("/chat/completions"));
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.stdin.end();
      const t = setTimeout(() => child.kill("SIGKILL"), 2000);
      await exited;
      clearTimeout(t);
    },
  };
}

const textReply = (text) => ({ events: [{ text }] });
const toolReply = (id, name, args) => ({ events: [{ tool_call: { id, name, arguments: JSON.stringify(args) } }] });

/** An environment without the user's interpreter settings or keys. */
function isolatedEnv(home) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("OPENINTERPRETER_") || k.endsWith("_API_KEY")) continue;
    env[k] = v;
  }
  env.OPENINTERPRETER_HOME = home;
  return env;
}

/** The `-c` args that point `interpreter acp` at the mock (the extension's own spec builder). */
function mockArgs(baseUrl, extra = []) {
  const { acpConfigArgs } = require("../out/settings.js");
  const s = { path: "", provider: "mock", model: "mock-model", harness: "", baseUrl, wireApi: "chat", extraArgs: [] };
  const args = ["acp", ...acpConfigArgs(s, false), "-c", "model_providers.mock.request_max_retries=0"];
  for (const c of extra) args.push("-c", c);
  return args;
}

/** A fake editor: open documents by path, and every write recorded as a WorkspaceEdit-like entry. */
function fakeEditor() {
  const open = new Map();
  const edits = [];
  return {
    open,
    edits,
    documents: { textOf: (p) => open.get(p) },
    sink: {
      async write(p, content, sessionId) {
        edits.push({ path: p, before: open.get(p) ?? (fs.existsSync(p) ? fs.readFileSync(p, "utf8") : null), content, sessionId });
        open.set(p, content); // the document now holds the proposed text, unsaved
      },
    },
  };
}

/**
 * A temp project, the mock, and an AgentClient wired to a fake editor. `permission` answers
 * permission requests (default: allow_once). Everything is cleaned up in t.after.
 */
async function setup(t, script, { permission, config = [], env = {} } = {}) {
  checkBinaries();
  const { AgentClient } = require("../out/acp/agent.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "interp-vscode-acp-"));
  const home = path.join(dir, "home");
  const work = path.join(dir, "work");
  fs.mkdirSync(home);
  fs.mkdirSync(work);
  const mock = await startMock(script, dir);
  const editor = fakeEditor();
  const updates = [];
  const events = [];
  const permissions = [];
  const host = {
    documents: editor.documents,
    edits: editor.sink,
    roots: () => [work],
    permission: async (req, signal) => {
      permissions.push(req);
      if (permission) return permission(req, signal);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    },
    update: (n) => updates.push(n),
    event: (e) => events.push(e),
  };
  const spec = async () => ({
    command: INTERPRETER_BIN,
    args: mockArgs(mock.baseUrl, config),
    env: { ...isolatedEnv(home), ...env },
    cwd: work,
  });
  const agent = new AgentClient(spec, host, { restartDelayMs: 50 });
  t.after(async () => {
    await agent.stop();
    await mock.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { agent, mock, editor, updates, events, permissions, work, home, dir };
}

/** The text of the agent_message_chunk updates. */
function agentText(updates) {
  return updates
    .filter((n) => n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text")
    .map((n) => n.update.content.text)
    .join("");
}

module.exports = { setup, textReply, toolReply, agentText, waitUntil, sleep, INTERPRETER_BIN, MOCK_LLM_BIN };
