// Helpers for the Codex SDK compatibility tests: temp dirs, the scripted mock model
// (`mock-llm`), and a `Codex` instance pointed at our `interpreter` binary.
import { spawn, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

import { Codex } from "@openai/codex-sdk";

const here = path.dirname(fileURLToPath(import.meta.url));

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

/** Starts `mock-llm` on a free port with `script`; resolves once it prints MOCK_LISTENING. */
export async function startMock(script, dir, { startupTimeoutMs = 10_000 } = {}) {
  const scriptPath = path.join(dir, "mock-script.json");
  await writeFile(scriptPath, JSON.stringify(script, null, 2));
  const child = spawn(MOCK_LLM_BIN, ["--script", scriptPath, "--port", "0"], {
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
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 2_000);
    await exited;
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
  // Keep draining stdout so the mock never blocks on a full pipe.
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
    /** Recorded model requests (POST …/responses) only. */
    async modelRequests() {
      const all = await this.requests();
      return all.filter((r) => r.method === "POST" && r.path.endsWith("/responses"));
    },
    async setScript(newScript) {
      const res = await fetch(`${origin}/_mock/script`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(newScript),
      });
      if (!res.ok) throw new Error(`POST /_mock/script: HTTP ${res.status}`);
    },
    stop,
  };
}

/** The inherited environment, minus variables that would defeat the test's isolation. */
function isolatedEnv(codexHome) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (k.startsWith("OPENINTERPRETER_")) continue; // OPENINTERPRETER_HOME beats CODEX_HOME
    if (k === "CODEX_INTERNAL_ORIGINATOR_OVERRIDE") continue; // the SDK must set it itself
    env[k] = v;
  }
  env.CODEX_HOME = codexHome;
  return env;
}

/**
 * Per-test fixture: a temp root holding CODEX_HOME, a git repo (or a plain dir) and the mock
 * script; a running mock; an AbortSignal that kills the SDK's child on test timeout or cleanup.
 * Everything is torn down by `t.after`.
 */
export async function setup(t, script, { git = true } = {}) {
  checkBinaries();
  const root = await mkdtemp(path.join(os.tmpdir(), "interp-sdk-test-"));
  const controller = new AbortController();
  let mock;
  t.after(async () => {
    controller.abort();
    if (mock) await mock.stop();
    await rm(root, { recursive: true, force: true });
  });

  const codexHome = path.join(root, "codex-home");
  const workdir = path.join(root, git ? "repo" : "plain");
  await mkdir(codexHome);
  await mkdir(workdir);
  if (git) {
    execFileSync("git", ["init", "-q", workdir], { stdio: "ignore" });
  }
  mock = await startMock(script, root);

  // Aborted when the test times out or ends, and by the cleanup hook.
  const testSignal = AbortSignal.any([t.signal, controller.signal]);

  // Each turn gets its own AbortSignal, linked to `testSignal` only while the turn is pending:
  // a timed-out test then kills the SDK's child process (spawn's `signal` → SIGTERM). The link
  // is cut once the turn settles because the SDK's `child.removeAllListeners()` (run on
  // `turn.failed`) strips spawn's own cleanup, so aborting a finished turn's signal later could
  // emit an unhandled 'error' (AbortError) on a not-yet-reaped child.
  async function guard(fn) {
    const turn = new AbortController();
    const onAbort = () => turn.abort(testSignal.reason);
    if (testSignal.aborted) turn.abort(testSignal.reason);
    else testSignal.addEventListener("abort", onAbort, { once: true });
    try {
      return await fn(turn.signal);
    } finally {
      testSignal.removeEventListener("abort", onAbort);
    }
  }

  const providerConfig = (extra = {}) => ({
    model: "mock-model",
    model_provider: "mock",
    model_providers: {
      mock: { name: "mock", base_url: mock.baseUrl, wire_api: "responses", ...extra },
    },
  });

  return {
    root,
    codexHome,
    workdir,
    mock,
    guard,
    /** `thread.run(input, turnOptions)` with a guarded signal. */
    run(thread, input, turnOptions = {}) {
      return guard((signal) => thread.run(input, { ...turnOptions, signal }));
    },
    /** `thread.runStreamed(input, turnOptions)` with a guarded signal; resolves to all events. */
    runStreamed(thread, input, turnOptions = {}) {
      return guard(async (signal) => {
        const { events } = await thread.runStreamed(input, { ...turnOptions, signal });
        return collect(events);
      });
    },
    /** A Codex client for our binary; `config` is flattened by the SDK into dotted `--config` keys. */
    /** With `inlineProvider`, the provider goes as one raw inline-table `--config` instead. */
    /** With `withoutModel`, no `model` key is sent (the SDK's own tests configure it so). */
    codex({ providerExtra = {}, config = {}, configOverrides, inlineProvider = false, withoutModel = false } = {}) {
      let base = providerConfig(providerExtra);
      if (withoutModel) delete base.model;
      let raw = configOverrides;
      if (inlineProvider) {
        const { model_providers: _, ...rest } = base;
        base = rest;
        raw = [
          `model_providers.mock={name="mock", base_url=${JSON.stringify(mock.baseUrl)}, wire_api="responses"}`,
          ...(configOverrides ?? []),
        ];
      }
      return new Codex({
        codexPathOverride: INTERPRETER_BIN,
        env: isolatedEnv(codexHome),
        config: { ...base, ...config },
        ...(raw ? { configOverrides: raw } : {}),
      });
    },
    /** Thread options for the temp working directory. */
    threadOptions(extra = {}) {
      return { workingDirectory: workdir, ...extra };
    },
  };
}

/** Collects every event of a streamed turn. */
export async function collect(events) {
  const out = [];
  for await (const ev of events) out.push(ev);
  return out;
}

/** Flattens a Responses API message's text parts. */
export function messageText(item) {
  if (!item || !Array.isArray(item.content)) return "";
  return item.content.map((c) => c.text ?? "").join("");
}

/** A script reply with one text event. */
export function textReply(text, usage) {
  return { events: [{ text }], ...(usage ? { usage } : {}) };
}

/** A script reply with one tool call. */
export function toolReply(id, name, args) {
  return { events: [{ tool_call: { id, name, arguments: JSON.stringify(args) } }] };
}
