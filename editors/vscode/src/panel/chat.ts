// The chat panel's controller: one AgentClient (one `interpreter acp` per window), the
// current session, prompts, permissions, history, keys, and the log of host messages that a
// re-created webview replays.

import { randomUUID } from "node:crypto";
import * as path from "node:path";
import * as vscode from "vscode";

import { AgentClient, AgentError, type AgentEvent, type AgentSpec } from "../acp/agent";
import type {
  ContentBlock,
  CreateElicitationRequest,
  CreateElicitationResponse,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
} from "@agentclientprotocol/sdk";
import { ACP_TURN_ID, ACP_UNDONE } from "../shared/extensions";
import type { AgentStatus, Attachment, HostMessage, Undone, WebviewMessage } from "../shared/protocol";
import { DEFAULT_PROVIDER, providerFromAuthError, secretName } from "../settings";
import { vscodeDiagnostics } from "./diagnostics";
import type { ReviewManager } from "./review";

export interface ChatDeps {
  output: vscode.LogOutputChannel;
  secrets: vscode.SecretStorage;
  review: ReviewManager;
  /** The spec to start `interpreter acp` with; throws (after telling the user) when there is no binary. */
  spec: () => Promise<AgentSpec>;
  roots: () => string[];
  /** The configured provider, for "Set API key…" when the error does not name one. */
  provider: () => string;
  version: string;
}

type Chunk = Extract<SessionNotification["update"], { sessionUpdate: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" }>;

function isChunk(u: SessionNotification["update"]): u is Chunk {
  return u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_thought_chunk" || u.sessionUpdate === "user_message_chunk";
}

/** `_meta["interpreter/undone"]` of an undo's answer, when it has the shape the panel relies on. */
function undoneOf(meta: PromptResponse["_meta"]): Undone | undefined {
  const u = meta?.[ACP_UNDONE] as Record<string, unknown> | undefined;
  if (!u || !Array.isArray(u.turnIds) || typeof u.conversation !== "boolean") return undefined;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const skipped = Array.isArray(u.skipped) ? (u.skipped as Undone["skipped"]).filter((x) => typeof x?.path === "string") : [];
  return { turnIds: strings(u.turnIds), conversation: u.conversation, restored: strings(u.restored), removed: strings(u.removed), skipped };
}

/** Whether a typed or clicked undo puts files back (`/rewind <id> conversation` does not). */
function restoresFiles(command: string): boolean {
  return !/^\/rewind\s+\S+\s+conversation\s*$/.test(command.trim());
}

export class ChatController implements vscode.Disposable {
  readonly agent: AgentClient;
  private view?: vscode.Webview;
  private log: HostMessage[] = [];
  private status: AgentStatus = { state: "starting" };
  private configOptions: HostMessage & { type: "configOptions" } = { type: "configOptions", options: [] };
  private sessionReady?: Promise<string | undefined>;
  private running = false;
  /** Prompts sent and not answered: one runs, the others wait behind it in the agent. */
  private inFlight = 0;
  /** Running stretches of this window (the review manager tags the agent's edits with them). */
  private turnCount = 0;
  /** Known turns by the agent's id: their running stretch, and the prompt that started them. */
  private readonly turns = new Map<string, { count: number; text: string; attachments: Attachment[] }>();
  private readonly permissions = new Map<string, (optionId?: string) => void>();
  /** Child sessions of the agent's subagents, by id: their updates join the current chat. */
  private readonly children = new Set<string>();
  private readonly questions = new Map<string, (answer: Extract<WebviewMessage, { type: "question" }> | undefined) => void>();
  private lastPrompt?: { text: string; attachments: Attachment[] };
  private openedAt?: number;
  /** Selections added before the webview existed: posted once it is ready. */
  private pendingAttach: Attachment[] = [];
  /** Updates for a session not yet current (they can race the session/new answer). */
  private early: SessionNotification[] = [];
  /** Measured: panel opened → the agent's `initialize` answer (ms). */
  initializeAfterOpenMs?: number;
  /** Whether the panel is on screen (the view provider sets it). */
  visible: () => boolean = () => false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly deps: ChatDeps) {
    this.agent = new AgentClient(deps.spec, {
      documents: deps.review,
      edits: deps.review,
      roots: deps.roots,
      permission: (req, signal) => this.askPermission(req, signal),
      elicit: (req, signal) => this.askQuestion(req, signal),
      update: (n) => this.onUpdate(n),
      event: (e) => this.onAgentEvent(e),
      diagnostics: vscodeDiagnostics,
    }, { clientVersion: deps.version });
    this.disposables.push(deps.review.onDidChangeFiles((files) => this.post({ type: "review", files }, false)));
  }

  /** A (re)created webview: replay everything since the last reset, then the live state. */
  attach(webview: vscode.Webview): void {
    this.view = webview;
    if (this.openedAt === undefined) this.openedAt = performance.now();
    // The agent starts while the page loads; the page gets the session in its replay.
    void this.ensureSession();
  }

  detach(webview: vscode.Webview): void {
    if (this.view === webview) this.view = undefined;
  }

  private post(msg: HostMessage, logged = true): void {
    if (logged) this.record(msg);
    void this.view?.postMessage(msg);
  }

  /** Keeps the replay log short: streamed chunks of one message are merged. */
  private record(msg: HostMessage): void {
    if (msg.type === "reset") {
      this.log = [{ type: "roots", roots: this.deps.roots() }, msg];
      return;
    }
    const last = this.log.at(-1);
    if (msg.type === "update" && last?.type === "update" && isChunk(msg.notification.update)) {
      const a = last.notification.update;
      const b = msg.notification.update;
      if (isChunk(a) && a.sessionUpdate === b.sessionUpdate && a.messageId === b.messageId && a.content.type === "text" && b.content.type === "text") {
        last.notification = { ...last.notification, update: { ...a, content: { ...a.content, text: a.content.text + b.content.text } } };
        return;
      }
    }
    this.log.push(msg);
  }

  async handle(msg: WebviewMessage): Promise<void> {
    try {
      await this.dispatch(msg);
    } catch (e) {
      this.showError(e);
    }
  }

  private async dispatch(msg: WebviewMessage): Promise<void> {
    switch (msg.type) {
      case "ready":
        void this.view?.postMessage({ type: "replay", messages: this.log.length ? this.log : [{ type: "roots", roots: this.deps.roots() }] });
        this.post({ type: "status", status: this.status }, false);
        this.post(this.configOptions, false);
        this.post({ type: "review", files: this.deps.review.files() }, false);
        this.post({ type: "turn", running: this.running }, false);
        for (const attachment of this.pendingAttach.splice(0)) this.post({ type: "attach", attachment }, false);
        void this.ensureSession();
        return;
      case "send":
        return this.send(msg.text, msg.attachments);
      case "cancel":
        return this.cancel();
      case "undoTurn":
        return this.command("/undo");
      case "rewind":
        return this.command(`/rewind ${msg.turnId}`);
      case "question":
        this.questions.get(msg.id)?.(msg);
        return;
      case "permission":
        this.permissions.get(msg.id)?.(msg.optionId);
        return;
      case "setConfig": {
        const sid = await this.ensureSession();
        if (!sid) return;
        const res = await this.agent.setConfigOption(sid, msg.configId, msg.value);
        this.setConfigOptions(res.configOptions);
        return;
      }
      case "newChat":
        return this.newChat();
      case "listSessions": {
        const cwd = this.deps.roots()[0];
        if (!cwd) return;
        const res = await this.agent.listSessions(cwd);
        this.post({ type: "sessions", sessions: res.sessions, currentId: this.agent.currentSession?.sessionId }, false);
        return;
      }
      case "loadSession":
        return this.loadSession(msg.sessionId);
      case "keep":
        return this.deps.review.keep(msg.path);
      case "undo":
        return this.deps.review.undo(msg.path);
      case "review":
        return this.deps.review.review(msg.path);
      case "open":
        return this.open(msg.path, msg.line);
      case "openLink":
        return this.openLink(msg.href);
      case "setApiKey":
        return this.setApiKey(msg.key, msg.provider);
      case "searchFiles":
        return this.searchFiles(msg.query);
    }
  }

  /** The current session, created on first use. Undefined when it could not be (the error is shown). */
  ensureSession(): Promise<string | undefined> {
    const sid = this.agent.currentSession?.sessionId;
    if (sid) return Promise.resolve(sid);
    if (!this.sessionReady) {
      this.sessionReady = this.createSession().finally(() => {
        this.sessionReady = undefined;
      });
    }
    return this.sessionReady;
  }

  private async createSession(): Promise<string | undefined> {
    const cwd = this.deps.roots()[0];
    if (!cwd) {
      this.post({ type: "error", message: "Open a folder to chat with interpreter: the agent works in the workspace folder." });
      return undefined;
    }
    try {
      const res = await this.agent.newSession(cwd);
      this.post({ type: "reset", sessionId: res.sessionId });
      this.setConfigOptions(res.configOptions ?? []);
      for (const n of this.early.splice(0)) if (n.sessionId === res.sessionId) this.onUpdate(n);
      return res.sessionId;
    } catch (e) {
      this.showError(e);
      return undefined;
    }
  }

  private setConfigOptions(options: NonNullable<HostMessage & { type: "configOptions" }>["options"] | null | undefined): void {
    this.configOptions = { type: "configOptions", options: options ?? [] };
    this.post(this.configOptions, false);
  }

  private showError(e: unknown): void {
    const message = e instanceof Error ? e.message : String(e);
    this.deps.output.error(`chat: ${message}`);
    if (e instanceof AgentError && e.authRequired) {
      const provider = providerFromAuthError(message) ?? (this.deps.provider() || DEFAULT_PROVIDER);
      this.post({ type: "error", message, action: "setApiKey", provider });
    } else {
      this.post({ type: "error", message });
    }
  }

  private blocks(text: string, attachments: Attachment[]): ContentBlock[] {
    const blocks: ContentBlock[] = [];
    if (text) blocks.push({ type: "text", text });
    for (const a of attachments) {
      if (a.kind === "image" && a.data && a.mimeType) {
        blocks.push({ type: "image", data: a.data, mimeType: a.mimeType });
        continue;
      }
      const uri = vscode.Uri.file(a.path).toString();
      if (a.kind === "selection" && a.text !== undefined) {
        const ref = `${uri}#L${a.startLine}-${a.endLine}`;
        blocks.push({ type: "resource", resource: { uri: ref, text: a.text, mimeType: "text/plain" } });
      } else {
        blocks.push({ type: "resource_link", uri, name: a.label });
      }
    }
    return blocks;
  }

  async send(text: string, attachments: Attachment[]): Promise<void> {
    const sid = await this.ensureSession();
    this.lastPrompt = { text, attachments };
    if (!sid) return;
    const id = randomUUID();
    this.post({ type: "userMessage", id, text, attachments });
    if (await this.prompt(sid, id, text, attachments)) this.lastPrompt = undefined;
  }

  /** A click in the panel (Undo turn, Rewind to here) as prompt text, without a bubble. */
  private async command(text: string): Promise<void> {
    // The panel offers these only between turns; a queued undo would take back the next one.
    if (this.running) return;
    const sid = await this.ensureSession();
    if (!sid) return;
    const id = randomUUID();
    this.post({ type: "command", id, text });
    await this.prompt(sid, id, text, []);
  }

  /** Sends a prompt and acts on its answer; false when it failed (the error is shown). */
  private async prompt(sid: string, id: string, text: string, attachments: Attachment[]): Promise<boolean> {
    this.inFlight += 1;
    if (!this.running) {
      this.turnCount += 1;
      this.deps.review.startTurn(this.turnCount);
      this.post({ type: "turn", running: true, startedAt: Date.now() });
    }
    this.running = true;
    const count = this.turnCount;
    try {
      const res = await this.agent.prompt(sid, this.blocks(text, attachments));
      await this.answered(sid, id, count, text, attachments, res);
      if (this.inFlight === 1) this.post({ type: "turn", running: false, stopReason: res.stopReason });
      if (this.inFlight === 1 && res.stopReason === "end_turn") this.notifyIfAway("Turn complete");
      return true;
    } catch (e) {
      if (this.inFlight === 1) this.post({ type: "turn", running: false });
      this.showError(e);
      return false;
    } finally {
      this.inFlight -= 1;
      this.running = this.inFlight > 0;
    }
  }

  /** The answer's `_meta`: the turn the prompt ran, or what an undo took back. */
  private async answered(sid: string, id: string, count: number, text: string, attachments: Attachment[], res: PromptResponse): Promise<void> {
    const meta = res._meta?.[ACP_TURN_ID];
    const turnId = typeof meta === "string" ? meta : undefined;
    const undone = undoneOf(res._meta);
    // A prompt steered into a running turn shares its id; the first one started it.
    if (turnId && !this.turns.has(turnId)) this.turns.set(turnId, { count, text, attachments });
    if (turnId) this.post({ type: "answered", id, turnId });
    if (!undone) return;
    this.post({ type: "answered", id, undone });
    const taken = undone.turnIds.flatMap((t) => this.turns.get(t) ?? []);
    // Oldest first: a rewind puts the prompt of the turn it went back to in the box again.
    const first = this.turns.get(undone.turnIds[0] ?? "");
    if (undone.conversation) {
      for (const t of undone.turnIds) this.turns.delete(t);
      if (text.startsWith("/rewind") && first) this.post({ type: "draft", text: first.text, attachments: first.attachments }, false);
    }
    if (!restoresFiles(text) || taken.length === 0) return;
    const { reverted, kept } = await this.deps.review.takeBack(Math.min(...taken.map((t) => t.count)));
    // The agent's report calls files with unsaved changes kept: say which of them were its own.
    const notice = (severity: string, title: string, paths: string[]) =>
      this.post({ type: "update", notification: { sessionId: sid, update: { sessionUpdate: "notice", severity, title, description: paths.map((p) => this.relative(p)).join(", ") } } });
    if (reverted.length) notice("info", "Took back the agent's unsaved edits of those turns:", reverted);
    if (kept.length) notice("warning", "Kept the files you changed after the turn; the agent's edits in them still wait for review:", kept);
  }

  async cancel(): Promise<void> {
    const sid = this.agent.currentSession?.sessionId;
    if (sid) await this.agent.cancel(sid);
  }

  /**
   * Tells a user who looks elsewhere (the panel hidden, or VS Code not focused) that the chat
   * needs them: a notification with a button to the panel (`interpreter.notifications`).
   */
  private notifyIfAway(text: string): void {
    const focused = vscode.window.state?.focused ?? true;
    if (this.visible() && focused) return;
    if (!vscode.workspace.getConfiguration("interpreter").get<boolean>("notifications", true)) return;
    void Promise.resolve(vscode.window.showInformationMessage(`interpreter: ${text}`, "Show")).then((choice) => {
      if (choice === "Show") void vscode.commands.executeCommand("interpreter.chat.focus");
    });
  }

  private askPermission(req: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    this.notifyIfAway(`waiting for your approval: ${req.toolCall.title ?? "a tool call"}`);
    const id = randomUUID();
    this.post({ type: "permission", id, request: req });
    return new Promise((resolve) => {
      const finish = (optionId?: string) => {
        if (!this.permissions.delete(id)) return;
        this.post({ type: "permissionDone", id, optionId });
        resolve(optionId ? { outcome: { outcome: "selected", optionId } } : { outcome: { outcome: "cancelled" } });
      };
      this.permissions.set(id, finish);
      signal.addEventListener("abort", () => finish());
    });
  }

  /** A form in the panel; a cancelled turn (or a new chat) answers `cancel`. */
  private askQuestion(req: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> {
    const id = randomUUID();
    this.post({ type: "question", id, request: req });
    return new Promise((resolve) => {
      const finish = (answer?: Extract<WebviewMessage, { type: "question" }>) => {
        if (!this.questions.delete(id)) return;
        const action = answer?.action ?? "cancel";
        this.post({ type: "questionDone", id, action });
        resolve(action === "accept" ? { action, content: answer?.content ?? {} } : { action });
      };
      this.questions.set(id, finish);
      signal.addEventListener("abort", () => finish());
    });
  }

  private onUpdate(n: SessionNotification): void {
    const current = this.agent.currentSession?.sessionId;
    const kind = (n.update as { sessionUpdate: string }).sessionUpdate;
    if (kind === "subagent_spawned" && n.sessionId === current) {
      const child = (n.update as { subagentSessionId?: unknown }).subagentSessionId;
      if (typeof child === "string") this.children.add(child);
    }
    // A subagent's calls go into the card of the call that started it.
    if (current && this.children.has(n.sessionId)) {
      const update = n.update as SessionNotification["update"] & { _meta?: Record<string, unknown> | null };
      const meta = { ...(update._meta ?? {}), subagentSessionId: n.sessionId };
      this.post({ type: "update", notification: { ...n, sessionId: current, update: { ...update, _meta: meta } } });
      return;
    }
    if (n.sessionId !== current) {
      if (this.early.length < 100) this.early.push(n);
      return;
    }
    if (n.update.sessionUpdate === "config_option_update") {
      this.setConfigOptions(n.update.configOptions);
      return;
    }
    // A loaded chat's message that started a turn: a rewind to it puts its text back. It came
    // before every turn of this window (running stretch 0).
    const turnId = n.update.sessionUpdate === "user_message_chunk" ? n.update._meta?.[ACP_TURN_ID] : undefined;
    if (typeof turnId === "string" && n.update.sessionUpdate === "user_message_chunk" && n.update.content.type === "text" && !this.turns.has(turnId)) {
      this.turns.set(turnId, { count: 0, text: n.update.content.text, attachments: [] });
    }
    this.post({ type: "update", notification: n });
  }

  private onAgentEvent(e: AgentEvent): void {
    const out = this.deps.output;
    switch (e.type) {
      case "starting":
        out.info(`starting ${e.command} ${e.args.join(" ")} (settings and keys read in ${e.specMs.toFixed(0)} ms)`);
        this.setStatus({ state: "starting" });
        break;
      case "ready": {
        const sinceOpen = this.openedAt === undefined ? undefined : performance.now() - this.openedAt;
        if (this.initializeAfterOpenMs === undefined && sinceOpen !== undefined) this.initializeAfterOpenMs = sinceOpen;
        const agent = `${e.initialize.agentInfo?.name ?? "agent"} ${e.initialize.agentInfo?.version ?? ""}`.trim();
        out.info(
          `agent ready: ${agent} (pid ${e.pid}); initialize answered ${e.initializeMs.toFixed(0)} ms after spawn` +
            (sinceOpen !== undefined ? `, ${sinceOpen.toFixed(0)} ms after the panel opened` : ""),
        );
        this.setStatus({ state: "ready", initializeMs: e.initializeMs, agent });
        break;
      }
      case "exited": {
        const how = e.signal ? `killed by ${e.signal}` : `exit code ${e.code}`;
        out.error(`the agent stopped (${how})${e.stderr ? `: ${e.stderr.split("\n").slice(-5).join(" | ")}` : ""}`);
        this.setStatus(e.restarting ? { state: "restarting", reason: how } : { state: "stopped", reason: `${how}; it kept stopping, so it was not restarted. Send a message to start it again.` });
        if (!e.restarting) {
          void vscode.window.showErrorMessage(`interpreter: the chat agent stopped (${how}) and was not restarted. See the logs.`, "Show Logs").then((c) => {
            if (c) out.show(true);
          });
        }
        break;
      }
      case "reloading":
        this.post({ type: "reset", sessionId: e.sessionId });
        break;
      case "restarted":
        if (e.error) {
          out.error(`reloading the chat after the restart failed: ${e.error}`);
          this.post({ type: "error", message: `The agent restarted, but this chat could not be reloaded: ${e.error}` });
          this.agent.clearSession();
          void this.ensureSession();
        } else {
          out.info(`the agent restarted${e.sessionId ? `; session ${e.sessionId} reloaded` : ""}`);
          if (e.sessionId) this.post({ type: "update", notification: { sessionId: e.sessionId, update: { sessionUpdate: "notice", severity: "warning", title: "The agent stopped and was restarted; this chat was reloaded." } } });
        }
        break;
      case "log":
        out[e.level](e.message);
        break;
    }
  }

  private setStatus(s: AgentStatus): void {
    this.status = s;
    this.post({ type: "status", status: s }, false);
  }

  async newChat(): Promise<void> {
    if (this.running) await this.cancel();
    this.turns.clear();
    this.agent.clearSession();
    this.post({ type: "reset" });
    await this.ensureSession();
  }

  async loadSession(sessionId: string): Promise<void> {
    const cwd = this.deps.roots()[0];
    if (!cwd) return;
    if (this.running) await this.cancel();
    this.turns.clear();
    this.post({ type: "reset", sessionId });
    const res = await this.agent.loadSession(sessionId, cwd);
    this.setConfigOptions(res.configOptions ?? []);
  }

  /** Adds the editor's selection to the next prompt (path and range). */
  attachSelection(editor: vscode.TextEditor): void {
    const doc = editor.document;
    const sel = editor.selection;
    const startLine = sel.start.line + 1;
    const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
    const range = new vscode.Range(sel.start.line, 0, endLine - 1, doc.lineAt(endLine - 1).range.end.character);
    const text = sel.isEmpty ? doc.getText() : doc.getText(range);
    const rel = this.relative(doc.uri.fsPath);
    const attachment: Attachment = sel.isEmpty
      ? { kind: "selection", path: doc.uri.fsPath, label: rel, startLine: 1, endLine: doc.lineCount, text }
      : { kind: "selection", path: doc.uri.fsPath, label: `${rel}:${startLine}-${endLine}`, startLine, endLine, text };
    if (this.view) this.post({ type: "attach", attachment }, false);
    else this.pendingAttach.push(attachment);
  }

  private relative(p: string): string {
    for (const r of this.deps.roots()) {
      const rel = path.relative(r, p);
      if (!rel.startsWith("..") && !path.isAbsolute(rel)) return rel;
    }
    return p;
  }

  private async open(p: string, line?: number): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(p));
    const pos = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), preview: true });
  }

  private async openLink(href: string): Promise<void> {
    if (/^https?:\/\//i.test(href)) {
      await vscode.env.openExternal(vscode.Uri.parse(href));
      return;
    }
    // A path in the model's text, maybe with :line or #Lline.
    const m = /^(?:file:\/\/)?([^#:]+)(?:[:#]L?(\d+))?/.exec(decodeURIComponent(href));
    if (!m) return;
    const root = this.deps.roots()[0];
    const p = path.isAbsolute(m[1]) ? m[1] : root ? path.join(root, m[1]) : undefined;
    if (p) await this.open(p, m[2] ? Number(m[2]) : undefined);
  }

  private async setApiKey(key: string, provider?: string): Promise<void> {
    const id = provider || this.deps.provider() || DEFAULT_PROVIDER;
    await this.deps.secrets.store(secretName(id), key);
    this.deps.output.info(`stored an API key for ${id}; restarting the chat agent`);
    // Keys reach the agent through its environment: a new process.
    await this.agent.restart();
    const sid = await this.ensureSession();
    const retry = this.lastPrompt;
    if (sid && retry) await this.send(retry.text, retry.attachments);
  }

  /** Restarts the agent with new settings or keys; the current chat is reloaded. */
  async restart(): Promise<void> {
    await this.agent.restart().catch((e) => this.showError(e));
  }

  private async searchFiles(query: string): Promise<void> {
    const glob = query ? `**/*${query.replace(/[[\]{}*?]/g, "")}*` : "**/*";
    const uris = await vscode.workspace.findFiles(glob, undefined, 30);
    const items = uris
      .map((u) => ({ path: u.fsPath, label: this.relative(u.fsPath) }))
      .sort((a, b) => a.label.length - b.label.length || a.label.localeCompare(b.label))
      .slice(0, 12);
    this.post({ type: "files", query, items }, false);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    void this.agent.stop();
  }
}
