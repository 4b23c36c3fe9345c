// Helpers for the ACP client tests: temp dirs, the scripted mock model (`mock-llm`), the
// `interpreter acp` agent process with every stdio frame recorded, a raw NDJSON client, the
// official TypeScript SDK client, and validation against the SDK's bundled ACP JSON schema.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { PassThrough, Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

import * as acp from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

export { acp };

// Env overrides are taken relative to the current directory; defaults relative to this file.
export const INTERPRETER_BIN = process.env.INTERPRETER_BIN
  ? path.resolve(process.env.INTERPRETER_BIN)
  : path.resolve(here, "../../target/debug/interpreter");
export const MOCK_LLM_BIN = process.env.MOCK_LLM_BIN
  ? path.resolve(process.env.MOCK_LLM_BIN)
  : path.resolve(here, "../../target/debug/mock-llm");

/** Fails early, with a hint, when the binaries have not been built. */
export function checkBinaries() {
  for (const bin of [INTERPRETER_BIN, MOCK_LLM_BIN]) {
    if (!existsSync(bin)) {
      throw new Error(
        `${bin} not found: run \`cargo build -p interpreter -p interpreter-tests\` ` +
          "in the workspace root, or set INTERPRETER_BIN / MOCK_LLM_BIN",
      );
    }
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; throws `what` after `timeoutMs`. */
export async function waitUntil(fn, what, timeoutMs = 10_000, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Mock model

/** Starts `mock-llm` on a free port with `script`; resolves once it prints MOCK_LISTENING. */
export async function startMock(script, dir, { startupTimeoutMs = 10_000 } = {}) {
  const scriptPath = path.join(dir, `mock-script-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(scriptPath, JSON.stringify(script, null, 2));
  const child = spawn(MOCK_LLM_BIN, ["--script", scriptPath, "--port", "0", "--exit-on-stdin-eof"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end(); // --exit-on-stdin-eof: the quick way out
    const term = setTimeout(() => child.kill("SIGTERM"), 500);
    const timer = setTimeout(() => child.kill("SIGKILL"), 2_500);
    await exited;
    clearTimeout(term);
    clearTimeout(timer);
  };

  let baseUrl;
  try {
    baseUrl = await new Promise((resolve, reject) => {
      const rl = readline.createInterface({ input: child.stdout });
      const timer = setTimeout(
        () => reject(new Error(`mock-llm did not print MOCK_LISTENING within ${startupTimeoutMs} ms; stderr: ${stderr}`)),
        startupTimeoutMs,
      );
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`mock-llm exited early (code ${code}, signal ${signal}); stderr: ${stderr}`));
      });
      rl.on("line", (line) => {
        const m = /^MOCK_LISTENING (\S+)\s*$/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
  } catch (err) {
    await stop();
    throw err;
  }
  child.stdout.resume();

  const origin = new URL(baseUrl).origin;
  return {
    baseUrl, // e.g. http://127.0.0.1:PORT/v1
    pid: child.pid,
    get stderr() {
      return stderr;
    },
    /** All recorded requests: [{method, path, headers, body}]. */
    async requests() {
      const res = await fetch(`${origin}/_mock/requests`);
      if (!res.ok) throw new Error(`GET /_mock/requests: HTTP ${res.status}`);
      return res.json();
    },
    /** Recorded model requests (POST …/chat/completions) only. */
    async modelRequests() {
      const all = await this.requests();
      return all.filter((r) => r.method === "POST" && r.path.endsWith("/chat/completions"));
    },
    /** Replaces the script and restarts it at its first reply. */
    async setScript(newScript) {
      const res = await fetch(`${origin}/_mock/script`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(newScript),
      });
      if (!res.ok) throw new Error(`POST /_mock/script: HTTP ${res.status}: ${await res.text()}`);
    },
    stop,
  };
}

/** A script reply with text (and optional reasoning before it). */
export function textReply(text, { reasoning, usage } = {}) {
  const events = [];
  if (reasoning) events.push({ reasoning });
  events.push({ text });
  return { events, ...(usage ? { usage } : {}) };
}

/** A script reply with one tool call (arguments given as an object). */
export function toolReply(id, name, args, { text } = {}) {
  const events = [];
  if (text) events.push({ text });
  events.push({ tool_call: { id, name, arguments: JSON.stringify(args) } });
  return { events };
}

/** The messages array of a recorded Chat Completions request, as one searchable string. */
export function messagesText(req) {
  return JSON.stringify(req?.body?.messages ?? []);
}

/** The `role: "tool"` messages of a recorded Chat Completions request. */
export function toolMessages(req) {
  return (req?.body?.messages ?? []).filter((m) => m.role === "tool");
}

/** Text content of a chat message (string or content-part array). */
export function contentText(msg) {
  if (!msg) return "";
  if (typeof msg.content === "string") return msg.content;
  if (Array.isArray(msg.content)) return msg.content.map((p) => p.text ?? "").join("");
  return "";
}

// ---------------------------------------------------------------------------------------------
// Per-test fixture

/**
 * A temp root with `home` (OPENINTERPRETER_HOME) and `work` (the session cwd), and a running
 * mock. Every agent started through the fixture is killed and the root removed in `t.after`.
 */
export async function setup(t, script) {
  checkBinaries();
  const root = await mkdtemp(path.join(os.tmpdir(), "interp-acp-test-"));
  const home = path.join(root, "home");
  const work = path.join(root, "work");
  await mkdir(home);
  await mkdir(work);
  const agents = [];
  let mock;
  t.after(async () => {
    for (const a of agents) await a.kill();
    if (mock) await mock.stop();
    await rm(root, { recursive: true, force: true });
  });
  mock = await startMock(script, root);

  return {
    root,
    home,
    work,
    mock,
    /** Command-line args for `interpreter acp` against this fixture's mock. */
    agentArgs(extraConfig = []) {
      return agentArgs(mock.baseUrl, extraConfig);
    },
    /** Spawns `interpreter acp`; all its stdio frames are recorded in `agent.frames`. */
    startAgent({ config = [], env = {} } = {}) {
      const a = startAgent({ args: agentArgs(mock.baseUrl, config), home, cwd: work, env });
      agents.push(a);
      return a;
    },
  };
}

/** `interpreter acp` args: the mock provider plus `extraConfig` `-c` overrides. */
export function agentArgs(baseUrl, extraConfig = []) {
  const args = [
    "acp",
    "-c",
    'model_provider="mock"',
    "-c",
    `model_providers.mock={base_url=${JSON.stringify(baseUrl)}, wire_api="chat", retry_base_delay_ms=10, request_max_retries=1}`,
    "-c",
    'model="mock-model"',
  ];
  for (const c of extraConfig) args.push("-c", c);
  return args;
}

/** The inherited environment minus OPENINTERPRETER_*, plus OPENINTERPRETER_HOME and `extra`. */
export function isolatedEnv(home, extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (k.startsWith("OPENINTERPRETER_")) continue;
    env[k] = v;
  }
  env.OPENINTERPRETER_HOME = home;
  return { ...env, ...extra };
}

// ---------------------------------------------------------------------------------------------
// The agent process, with a frame recorder

/**
 * Spawns the agent. `frames` holds, in wire order, `{dir: "out"|"in", msg, line}`:
 * "out" = written by the agent on stdout, "in" = sent by the test to the agent.
 * A stdout line that is not JSON is recorded with `msg: undefined` (a protocol violation).
 */
export function startAgent({ args, home, cwd, env = {} }) {
  const child = spawn(INTERPRETER_BIN, args, {
    cwd,
    env: isolatedEnv(home, env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const frames = [];
  const listeners = new Set();
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (c) => {
    stderr += c;
    if (process.env.ACP_TEST_STDERR) process.stderr.write(c);
  });
  child.stdin.on("error", () => {}); // EPIPE after the agent died: reported by the test itself
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

  const record = (dir, line) => {
    if (line.trim() === "") return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      msg = undefined;
    }
    const frame = { dir, msg, line, at: Date.now() };
    frames.push(frame);
    for (const l of listeners) l(frame);
  };

  // Tee stdout: record each complete line, pass the bytes on unchanged.
  const out = new PassThrough();
  let outBuf = "";
  child.stdout.on("data", (chunk) => {
    outBuf += chunk.toString("utf8");
    let nl;
    while ((nl = outBuf.indexOf("\n")) >= 0) {
      record("out", outBuf.slice(0, nl));
      outBuf = outBuf.slice(nl + 1);
    }
    out.write(chunk);
  });
  child.stdout.on("end", () => {
    if (outBuf) record("out", outBuf);
    out.end();
  });

  // Tee stdin: record what the client writes.
  let inBuf = "";
  const sink = new Writable({
    write(chunk, _enc, cb) {
      inBuf += chunk.toString("utf8");
      let nl;
      while ((nl = inBuf.indexOf("\n")) >= 0) {
        record("in", inBuf.slice(0, nl));
        inBuf = inBuf.slice(nl + 1);
      }
      if (child.stdin.destroyed || !child.stdin.writable) return cb();
      child.stdin.write(chunk, () => cb());
    },
    final(cb) {
      child.stdin.end();
      cb();
    },
  });

  const agent = {
    child,
    pid: child.pid,
    frames,
    exited,
    get stderr() {
      return stderr;
    },
    /** Calls `fn(frame)` for every frame recorded from now on; returns an unsubscribe function. */
    onFrame(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    /** Discards stdout after recording it (for the raw client, which reads `frames`). */
    drain() {
      out.resume();
    },
    /** A web-stream pair for `acp.ndJsonStream`. */
    stream() {
      return acp.ndJsonStream(Writable.toWeb(sink), Readable.toWeb(out));
    },
    /** Writes one raw line (a string is sent verbatim, anything else as JSON). */
    writeLine(value) {
      const line = typeof value === "string" ? value : JSON.stringify(value);
      return new Promise((resolve) => sink.write(line + "\n", resolve));
    },
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    async kill(signal = "SIGTERM") {
      if (!agent.alive) return exited;
      child.kill(signal);
      const timer = setTimeout(() => agent.alive && child.kill("SIGKILL"), 3_000);
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
    /** Messages the agent wrote (parsed), in order. */
    outMessages() {
      return frames.filter((f) => f.dir === "out").map((f) => f.msg);
    },
    /** Throws with ajv's errors when any agent frame is not a valid ACP message. */
    assertSchemaValid() {
      if (process.env.ACP_TEST_DUMP) process.stderr.write(`${dump(frames, Infinity)}\n`);
      const problems = validateFrames(frames);
      if (problems.length) {
        throw new Error(
          `${problems.length} agent message(s) violate the ACP schema:\n` +
            problems.map((p) => `- ${p.what}\n  message: ${p.line.slice(0, 2000)}\n  errors: ${p.errors}`).join("\n"),
        );
      }
      return frames.filter((f) => f.dir === "out").length;
    },
  };
  return agent;
}

// ---------------------------------------------------------------------------------------------
// Official TypeScript SDK client

/**
 * Connects the official SDK client to `agent` and runs `op(ctx)`.
 * `handlers`: { permission(params) → response, readTextFile(params), writeTextFile(params), update(params) }.
 * Every session/update is also appended to `updates` (arrival order) when given.
 */
export function sdkConnect(agent, handlers, op) {
  let app = acp.client({ name: "interpreter-acp-tests" });
  app = app.onNotification(acp.methods.client.session.update, ({ params }) => handlers.update?.(params));
  app = app.onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    if (!handlers.permission) throw new Error("unexpected session/request_permission");
    return handlers.permission(params);
  });
  if (handlers.readTextFile) {
    app = app.onRequest(acp.methods.client.fs.readTextFile, ({ params }) => handlers.readTextFile(params));
  }
  if (handlers.writeTextFile) {
    app = app.onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => handlers.writeTextFile(params));
  }
  if (handlers.elicit) {
    app = app.onRequest(acp.methods.client.elicitation.create, ({ params }) => handlers.elicit(params));
  }
  return app.connectWith(agent.stream(), op);
}

/** `initialize` with the given client capabilities. */
export function initialize(ctx, clientCapabilities = {}) {
  return ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, ...clientCapabilities },
    clientInfo: { name: "interpreter-acp-tests", version: "0.0.1" },
  });
}

/** A permission handler answering with `optionId` (asserting it is offered); records the requests. */
export function permissionAnswer(optionId, seen = []) {
  return (params) => {
    seen.push(params);
    const opt = params.options.find((o) => o.optionId === optionId);
    if (!opt) throw new Error(`option ${optionId} not offered: ${JSON.stringify(params.options)}`);
    return { outcome: { outcome: "selected", optionId } };
  };
}

export function textPrompt(sessionId, text) {
  return { sessionId, prompt: [{ type: "text", text }] };
}

// ---------------------------------------------------------------------------------------------
// Raw NDJSON client (no SDK)

/**
 * A JSON-RPC client speaking raw NDJSON over the agent's stdio. Agent→client requests are
 * answered by `onAgentRequest(msg)` (default: pick `allow_once` for permissions, error for others).
 */
export function rawClient(agent, { onAgentRequest } = {}) {
  let nextId = 1;
  const pending = new Map();
  agent.drain();
  agent.onFrame((f) => {
    if (f.dir !== "out" || !f.msg || typeof f.msg !== "object" || Array.isArray(f.msg)) return;
    const m = f.msg;
    if (m.method && m.id !== undefined) {
      const answer = onAgentRequest ? onAgentRequest(m) : defaultAgentRequest(m);
      Promise.resolve(answer).then((reply) => agent.writeLine({ jsonrpc: "2.0", id: m.id, ...reply }));
      return;
    }
    if (!m.method && m.id !== undefined && pending.has(m.id)) {
      const { resolve } = pending.get(m.id);
      pending.delete(m.id);
      resolve(m);
    }
  });
  return {
    /** Sends a request; resolves with the whole response message ({result} or {error}). */
    request(method, params, { timeoutMs = 15_000 } = {}) {
      const id = nextId++;
      const p = new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`no response to ${method} (id ${id}) within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, {
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        });
      });
      const msg = { jsonrpc: "2.0", id, method };
      if (params !== undefined) msg.params = params;
      agent.writeLine(msg);
      return p;
    },
    notify(method, params) {
      return agent.writeLine({ jsonrpc: "2.0", method, params });
    },
    /** Sends a raw line; resolves with the next agent frame satisfying `pred` (default: any response). */
    async sendRaw(line, pred = (m) => m && !m.method && "id" in m, timeoutMs = 15_000) {
      const seenBefore = agent.frames.length;
      await agent.writeLine(line);
      return waitUntil(
        () => agent.frames.slice(seenBefore).find((f) => f.dir === "out" && pred(f.msg))?.msg,
        `a reply to ${String(line).slice(0, 80)}`,
        timeoutMs,
      );
    },
  };
}

function defaultAgentRequest(m) {
  if (m.method === "session/request_permission") {
    return { result: { outcome: { outcome: "selected", optionId: "allow_once" } } };
  }
  return { error: { code: -32601, message: `test client does not implement ${m.method}` } };
}

// ---------------------------------------------------------------------------------------------
// Schema validation

const SCHEMA_PATH = require.resolve("@agentclientprotocol/sdk/schema/v1/schema.json");
let compiled;

function compileSchema() {
  if (compiled) return compiled;
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8"));
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  const intRange = (min, max) => ({ type: "number", validate: (n) => Number.isInteger(n) && n >= min && n <= max });
  ajv.addFormat("uint16", intRange(0, 0xffff));
  ajv.addFormat("uint32", intRange(0, 0xffffffff));
  ajv.addFormat("uint64", intRange(0, Number.MAX_SAFE_INTEGER));
  ajv.addFormat("int32", intRange(-0x80000000, 0x7fffffff));
  ajv.addFormat("int64", intRange(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
  ajv.addSchema(schema, "acp");
  const defs = schema.$defs;
  const byMethod = { agentResponse: {}, agentRequest: {}, agentNotification: {} };
  for (const [name, def] of Object.entries(defs)) {
    const m = def["x-method"];
    if (!m) continue;
    // x-side names who implements the method: "agent" → the agent answers it (…Response is ours),
    // "client" → the agent sends it (…Request / …Notification are ours).
    if (def["x-side"] === "agent" && name.endsWith("Response")) byMethod.agentResponse[m] = name;
    if (def["x-side"] === "client" && name.endsWith("Request")) byMethod.agentRequest[m] = name;
    if (def["x-side"] === "client" && name.endsWith("Notification")) byMethod.agentNotification[m] = name;
  }
  const get = (name) => ajv.getSchema(`acp#/$defs/${name}`);
  // The envelope: the schema's own "Agent" branch (jsonrpc 2.0 + AgentRequest/Response/Notification).
  const agentMessage = ajv.compile({ $ref: "acp#/anyOf/0" });
  compiled = { ajv, get, byMethod, agentMessage, version: readSdkVersion() };
  return compiled;
}

function readSdkVersion() {
  const pkg = JSON.parse(readFileSync(path.resolve(path.dirname(SCHEMA_PATH), "../../package.json"), "utf8"));
  return pkg.version;
}

export function schemaInfo() {
  const c = compileSchema();
  return { path: SCHEMA_PATH, sdkVersion: c.version, methods: c.byMethod };
}

/**
 * Validates every agent→client frame: the JSON-RPC envelope against the schema's Agent message
 * type, then the payload against the per-method type (responses are matched to the client's
 * requests by id; agent requests/notifications by method). Returns a list of problems.
 */
export function validateFrames(frames) {
  const { ajv, get, byMethod, agentMessage } = compileSchema();
  const problems = [];
  const clientRequests = new Map(); // id → method
  const fmt = (v) => ajv.errorsText(v.errors, { separator: "; ", dataVar: "msg" });
  for (const f of frames) {
    if (f.dir === "in") {
      const m = f.msg;
      if (m && typeof m === "object" && !Array.isArray(m) && m.method && m.id !== undefined) {
        clientRequests.set(JSON.stringify(m.id), m.method);
      }
      continue;
    }
    const m = f.msg;
    if (m === undefined) {
      problems.push({ what: "stdout line is not JSON", line: f.line, errors: "-" });
      continue;
    }
    if (!agentMessage(m)) {
      problems.push({ what: "envelope (schema anyOf[0] 'Agent')", line: f.line, errors: fmt(agentMessage) });
      continue;
    }
    let name;
    let payload;
    if (m.method !== undefined && m.id !== undefined) {
      name = byMethod.agentRequest[m.method];
      payload = m.params;
      if (!name && !m.method.startsWith("_")) {
        problems.push({ what: `agent request with unknown method ${m.method}`, line: f.line, errors: "-" });
        continue;
      }
    } else if (m.method !== undefined) {
      name = byMethod.agentNotification[m.method];
      payload = m.params;
      if (!name && !m.method.startsWith("_") && !m.method.startsWith("$/")) {
        problems.push({ what: `agent notification with unknown method ${m.method}`, line: f.line, errors: "-" });
        continue;
      }
    } else if ("error" in m) {
      name = "Error";
      payload = m.error;
    } else {
      const method = clientRequests.get(JSON.stringify(m.id));
      if (!method) {
        problems.push({ what: `response to an id the client never used (${JSON.stringify(m.id)})`, line: f.line, errors: "-" });
        continue;
      }
      name = byMethod.agentResponse[method];
      payload = m.result;
      if (!name) continue; // a custom `_` method: no schema
    }
    if (!name) continue;
    const v = get(name);
    if (!v) throw new Error(`schema has no $defs/${name}`);
    if (!v(payload)) problems.push({ what: `${name}`, line: f.line, errors: fmt(v) });
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Frame queries (wire order is the truth; SDK handler callbacks may interleave)

/** `{i, update}` for every session/update the agent wrote (for `sessionId` when given). */
export function updatesIn(frames, sessionId) {
  const out = [];
  frames.forEach((f, i) => {
    const m = f.msg;
    if (f.dir !== "out" || !m || m.method !== "session/update") return;
    if (sessionId && m.params?.sessionId !== sessionId) return;
    out.push({ i, update: m.params.update });
  });
  return out;
}

/** Index of the agent's response to the client request with `method` (the last one if several). */
export function responseIndex(frames, method, { first = false } = {}) {
  const ids = new Set();
  let found = -1;
  frames.forEach((f, i) => {
    const m = f.msg;
    if (!m || typeof m !== "object") return;
    if (f.dir === "in" && m.method === method && m.id !== undefined) ids.add(JSON.stringify(m.id));
    if (f.dir === "out" && !m.method && m.id !== undefined && ids.has(JSON.stringify(m.id))) {
      if (!first || found < 0) found = i;
    }
  });
  return found;
}

/** Index of the client's request with `method` (the last one unless `first`). */
export function requestIndex(frames, method, { first = false } = {}) {
  let found = -1;
  frames.forEach((f, i) => {
    if (f.dir === "in" && f.msg?.method === method && f.msg?.id !== undefined) {
      if (!first || found < 0) found = i;
    }
  });
  return found;
}

/** Agent→client requests with `method`, as `{i, msg}`. */
export function agentRequests(frames, method) {
  const out = [];
  frames.forEach((f, i) => {
    if (f.dir === "out" && f.msg?.method === method && f.msg?.id !== undefined) out.push({ i, msg: f.msg });
  });
  return out;
}

/** Concatenated text of the agent_message_chunk updates in `updates`. */
export function agentText(updates) {
  return updates
    .filter((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content?.type === "text")
    .map((u) => u.update.content.text)
    .join("");
}

/** Dumps frames compactly for assertion messages. */
export function dump(frames, max = 4000) {
  const s = frames.map((f) => `${f.dir} ${f.line.length > 600 ? f.line.slice(0, 600) + "…" : f.line}`).join("\n");
  return s.length > max ? s.slice(0, max) + `\n… (${s.length - max} more chars)` : s;
}
