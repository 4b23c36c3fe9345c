// One `interpreter acp` process per window, spoken to with the official ACP TypeScript SDK.
// It answers the agent's fs/* and permission requests through injected hosts, restarts the
// process when it dies and reloads the current session with `session/load`. No vscode
// import, so it is tested against the real binary in plain Node.

import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";
import type {
  ClientCapabilities,
  ContentBlock,
  CreateElicitationRequest,
  CreateElicitationResponse,
  InitializeResponse,
  ListSessionsResponse,
  LoadSessionResponse,
  NewSessionResponse,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  SetSessionConfigOptionResponse,
} from "@agentclientprotocol/sdk";

import {
  DIAGNOSTICS_CAPABILITY,
  DIAGNOSTICS_METHOD,
  DiagnosticsBridge,
  type DiagnosticsParams,
  type DiagnosticsSource,
} from "./diagnostics";
import { type DocumentStore, type EditSink, FsError, readText, writeText } from "./files";
import { SUBAGENT_UPDATE_METHOD, renameSubagentUpdates } from "./subagents";

export interface AgentSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export type AgentEvent =
  | { type: "starting"; command: string; args: string[]; specMs: number }
  | { type: "ready"; initialize: InitializeResponse; initializeMs: number; pid: number | undefined }
  | { type: "exited"; code: number | null; signal: string | null; stderr: string; restarting: boolean }
  /** The process was restarted and `sessionId` is being loaded: its replay follows. */
  | { type: "reloading"; sessionId: string }
  | { type: "restarted"; sessionId?: string; error?: string }
  | { type: "log"; level: "info" | "warn" | "error"; message: string };

export interface ClientHost {
  documents: DocumentStore;
  edits: EditSink;
  /** The workspace folders; writes outside them are refused. */
  roots(): string[];
  /** Asks the user. `signal` aborts when the turn is cancelled (the answer is then `cancelled`). */
  permission(req: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  update(n: SessionNotification): void;
  event(e: AgentEvent): void;
  /** The editor's diagnostics; when set, the agent is offered `_interpreter/diagnostics`. */
  diagnostics?: DiagnosticsSource;
  /**
   * Answers the agent's questions (form elicitations); when set, the agent is offered
   * `elicitation.form`. `signal` aborts when the turn is cancelled (the answer is then `cancel`).
   */
  elicit?(req: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse>;
}

export interface AgentOptions {
  clientName?: string;
  clientVersion?: string;
  /** Restarts allowed within `restartWindowMs` before giving up until the next request. */
  maxRestarts?: number;
  restartWindowMs?: number;
  restartDelayMs?: number;
}

/** An ACP error as it reaches callers: the agent's code and message. */
export class AgentError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
  /** `-32000`: the agent needs an API key. */
  get authRequired(): boolean {
    return this.code === -32000;
  }
}

function asAgentError(e: unknown): Error {
  if (e instanceof AgentError) return e;
  const o = e as { code?: unknown; message?: unknown; data?: unknown };
  if (o && typeof o.code === "number") return new AgentError(o.code, String(o.message ?? "agent error"), o.data);
  return e instanceof Error ? e : new Error(String(e));
}

const STDERR_KEPT = 4000;

interface Running {
  spec: string;
  child: ChildProcess;
  conn: acp.ClientConnection;
  init: InitializeResponse;
  exited: Promise<void>;
  stderr: string;
}

export class AgentClient {
  private running?: Promise<Running>;
  private current?: { sessionId: string; cwd: string };
  private stopping = false;
  private restarts: number[] = [];
  private readonly pendingPermissions = new Map<string, Set<AbortController>>();
  private readonly opts: Required<AgentOptions>;
  private readonly diagnostics?: DiagnosticsBridge;

  constructor(
    private readonly spec: () => Promise<AgentSpec>,
    private readonly host: ClientHost,
    opts: AgentOptions = {},
  ) {
    this.opts = {
      clientName: "interpreter-vscode",
      clientVersion: "0.0.0",
      maxRestarts: 3,
      restartWindowMs: 60_000,
      restartDelayMs: 300,
      ...opts,
    };
    if (host.diagnostics) this.diagnostics = new DiagnosticsBridge(host.diagnostics);
  }

  /** The session the panel shows; it is reloaded after a restart. */
  get currentSession(): { sessionId: string; cwd: string } | undefined {
    return this.current;
  }

  /** The agent's process id, once started (tests kill it). */
  async pid(): Promise<number | undefined> {
    return (await this.running)?.child.pid;
  }

  /** Starts the process (once) and answers with its `initialize` result. */
  async start(): Promise<InitializeResponse> {
    return (await this.ensure()).init;
  }

  private ensure(): Promise<Running> {
    this.stopping = false;
    if (!this.running) {
      const p = this.launch();
      this.running = p;
      p.catch(() => {
        if (this.running === p) this.running = undefined;
      });
    }
    return this.running;
  }

  private async launch(): Promise<Running> {
    const s0 = performance.now();
    const spec = await this.spec();
    this.host.event({ type: "starting", command: spec.command, args: spec.args, specMs: performance.now() - s0 });
    const t0 = performance.now();
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const state: { stderr: string } = { stderr: "" };
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (c: string) => {
      state.stderr = (state.stderr + c).slice(-STDERR_KEPT);
    });
    child.stdin?.on("error", () => undefined); // EPIPE after a crash: the exit handler reports it
    const spawned = new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (e) => reject(new Error(`could not start ${spec.command}: ${e.message}`)));
    });
    const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
    await spawned;

    const stream = acp.ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      renameSubagentUpdates(Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>),
    );
    const conn = this.app().connect(stream);
    const capabilities = {
      fs: { readTextFile: true, writeTextFile: true },
      terminal: false,
      session: { notices: {} },
      // Subagents as child sessions (the draft `subagent_spawned` updates; not in the stable types).
      subagents: {},
      ...(this.host.elicit ? { elicitation: { form: {} } } : {}),
      ...(this.diagnostics ? { _meta: { [DIAGNOSTICS_CAPABILITY]: true } } : {}),
    };
    let init: InitializeResponse;
    try {
      init = await Promise.race([
        conn.agent.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: capabilities as ClientCapabilities,
          clientInfo: { name: this.opts.clientName, version: this.opts.clientVersion },
        }),
        exited.then(() => {
          throw new Error(`${spec.command} exited before answering initialize: ${state.stderr.trim() || "no output"}`);
        }),
      ]);
    } catch (e) {
      conn.close();
      child.kill("SIGKILL");
      throw asAgentError(e);
    }
    const initializeMs = performance.now() - t0;
    const running: Running = {
      spec: JSON.stringify(spec),
      child,
      conn,
      init,
      exited,
      get stderr() {
        return state.stderr;
      },
    };
    child.once("exit", (code, signal) => this.onExit(running, code, signal));
    this.host.event({ type: "ready", initialize: init, initializeMs, pid: child.pid });
    return running;
  }

  private app(): acp.ClientApp {
    const host = this.host;
    const diagnostics = this.diagnostics;
    const app = acp
      .client({ name: this.opts.clientName })
      .onNotification(acp.methods.client.session.update, ({ params }) => host.update(params))
      // The draft subagent updates, renamed on the way in (./subagents.ts).
      .onNotification(SUBAGENT_UPDATE_METHOD, parseSessionNotification, ({ params }) => host.update(params))
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        try {
          return { content: readText(host.documents, params) };
        } catch (e) {
          throw toRequestError(e);
        }
      })
      .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
        try {
          await writeText(host.edits, host.roots(), params);
          diagnostics?.wrote(params.path);
          return {};
        } catch (e) {
          throw toRequestError(e);
        }
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) =>
        this.askPermission(params, signal),
      );
    if (host.elicit) {
      app.onRequest(acp.methods.client.elicitation.create, ({ params, signal }) =>
        this.withCancel(String((params as { sessionId?: unknown }).sessionId ?? ""), signal, { action: "cancel" }, (s) => host.elicit!(params, s)),
      );
    }
    if (diagnostics) {
      app.onRequest(
        DIAGNOSTICS_METHOD,
        (p: unknown) => (p ?? {}) as DiagnosticsParams,
        ({ params }) => diagnostics.answer(params),
      );
    }
    return app;
  }

  /** Runs `ask` until it answers, the request is cancelled or the turn is: then `cancelled`. */
  private async withCancel<T>(sessionId: string, signal: AbortSignal, cancelled: T, ask: (s: AbortSignal) => Promise<T>): Promise<T> {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal.addEventListener("abort", onAbort);
    const set = this.pendingPermissions.get(sessionId) ?? new Set();
    this.pendingPermissions.set(sessionId, set);
    set.add(ctl);
    const gone = new Promise<T>((resolve) => {
      if (ctl.signal.aborted) resolve(cancelled);
      else ctl.signal.addEventListener("abort", () => resolve(cancelled));
    });
    try {
      return await Promise.race([ask(ctl.signal), gone]);
    } finally {
      set.delete(ctl);
      signal.removeEventListener("abort", onAbort);
    }
  }

  private async askPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal.addEventListener("abort", onAbort);
    const set = this.pendingPermissions.get(params.sessionId) ?? new Set();
    this.pendingPermissions.set(params.sessionId, set);
    set.add(ctl);
    const cancelled = new Promise<RequestPermissionResponse>((resolve) => {
      const done = () => resolve({ outcome: { outcome: "cancelled" } });
      if (ctl.signal.aborted) done();
      else ctl.signal.addEventListener("abort", done);
    });
    try {
      return await Promise.race([this.host.permission(params, ctl.signal), cancelled]);
    } finally {
      set.delete(ctl);
      signal.removeEventListener("abort", onAbort);
    }
  }

  private onExit(r: Running, code: number | null, signal: NodeJS.Signals | null): void {
    r.conn.close(new Error("the agent process exited"));
    for (const set of this.pendingPermissions.values()) for (const c of set) c.abort();
    if (this.stopping) return;
    void this.running?.then((cur) => {
      if (cur !== r) return;
      this.running = undefined;
      const now = Date.now();
      this.restarts = this.restarts.filter((t) => now - t < this.opts.restartWindowMs);
      const restarting = this.restarts.length < this.opts.maxRestarts;
      this.host.event({ type: "exited", code, signal, stderr: r.stderr.trim(), restarting });
      if (restarting) {
        this.restarts.push(now);
        setTimeout(() => void this.recover(), this.opts.restartDelayMs);
      }
    });
  }

  /** After a crash: a new process, and the current session loaded again. */
  private async recover(): Promise<void> {
    if (this.stopping) return;
    try {
      await this.ensure();
      const cur = this.current;
      if (cur) {
        this.host.event({ type: "reloading", sessionId: cur.sessionId });
        await this.loadSession(cur.sessionId, cur.cwd);
      }
      this.host.event({ type: "restarted", sessionId: cur?.sessionId });
    } catch (e) {
      this.host.event({ type: "restarted", sessionId: this.current?.sessionId, error: asAgentError(e).message });
    }
  }

  private async call<T>(op: (agent: acp.ClientContext) => Promise<T>): Promise<T> {
    const r = await this.ensure();
    try {
      return await op(r.conn.agent);
    } catch (e) {
      throw asAgentError(e);
    }
  }

  async newSession(cwd: string): Promise<NewSessionResponse> {
    const res = await this.call((a) => a.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }));
    this.current = { sessionId: res.sessionId, cwd };
    return res;
  }

  /** Loads a stored session; its replay arrives through `host.update` before this resolves. */
  async loadSession(sessionId: string, cwd: string): Promise<LoadSessionResponse> {
    // Current before the request: the replay arrives before the answer.
    const previous = this.current;
    this.current = { sessionId, cwd };
    try {
      return (await this.call((a) => a.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }))) ?? {};
    } catch (e) {
      this.current = previous;
      throw e;
    }
  }

  async listSessions(cwd: string): Promise<ListSessionsResponse> {
    return this.call((a) => a.request(acp.methods.agent.session.list, { cwd }));
  }

  async prompt(sessionId: string, prompt: ContentBlock[]): Promise<PromptResponse> {
    return this.call((a) => a.request(acp.methods.agent.session.prompt, { sessionId, prompt }));
  }

  /** Cancels the turn and answers its open permission requests with `cancelled`. */
  async cancel(sessionId: string): Promise<void> {
    const r = await this.running?.catch(() => undefined);
    if (r) await r.conn.agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => undefined);
    for (const c of this.pendingPermissions.get(sessionId) ?? []) c.abort();
  }

  async setConfigOption(sessionId: string, configId: string, value: string): Promise<SetSessionConfigOptionResponse> {
    return this.call((a) => a.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value }));
  }

  /** Stops the process: stdin closed, then SIGTERM, then SIGKILL. */
  async stop(): Promise<void> {
    this.stopping = true;
    const p = this.running;
    this.running = undefined;
    const r = await p?.catch(() => undefined);
    if (!r) return;
    r.conn.close();
    r.child.stdin?.end();
    const term = setTimeout(() => r.child.kill("SIGTERM"), 500);
    const kill = setTimeout(() => r.child.kill("SIGKILL"), 3000);
    await r.exited;
    clearTimeout(term);
    clearTimeout(kill);
  }

  /** A new process with a new environment (a key was stored); the current session is reloaded. */
  async restart(): Promise<void> {
    await this.stop();
    this.stopping = false;
    await this.ensure();
    const cur = this.current;
    if (cur) {
      this.host.event({ type: "reloading", sessionId: cur.sessionId });
      await this.loadSession(cur.sessionId, cur.cwd);
    }
  }

  /** Restarts only when the spec (settings, keys) changed; a stopped agent just uses it next time. */
  async refresh(): Promise<boolean> {
    const r = await this.running?.catch(() => undefined);
    if (!r) return false;
    if (JSON.stringify(await this.spec()) === r.spec) return false;
    await this.restart();
    return true;
  }

  /** Forgets the current session (New chat). */
  clearSession(): void {
    this.current = undefined;
  }
}

function toRequestError(e: unknown): acp.RequestError {
  if (e instanceof FsError) return new acp.RequestError(e.code, e.message);
  return acp.RequestError.internalError(undefined, (e as Error).message ?? String(e));
}

/** A `session/update` as far as the panel relies on it: a session id and a kind. */
function parseSessionNotification(p: unknown): SessionNotification {
  const n = p as { sessionId?: unknown; update?: { sessionUpdate?: unknown } };
  if (typeof n?.sessionId !== "string" || typeof n.update?.sessionUpdate !== "string") {
    throw acp.RequestError.invalidParams(undefined, "session/update needs a sessionId and an update");
  }
  return n as SessionNotification;
}
