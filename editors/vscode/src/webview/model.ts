// The transcript as data: host messages (ACP updates among them) folded into items. No DOM,
// so the reducer is tested on its own and the renderer only draws what changed.

import { ACP_TURN_ID } from "../shared/extensions";
import type {
  AgentStatus,
  Attachment,
  AvailableCommand,
  CreateElicitationRequest,
  HostMessage,
  RequestPermissionRequest,
  ReviewFile,
  SessionConfigOption,
  SessionInfo,
  SessionNotification,
} from "../shared/protocol";

type Update = SessionNotification["update"];
type ToolCallUpdate = Extract<Update, { sessionUpdate: "tool_call_update" }>;
export type ToolCallContent = NonNullable<ToolCallUpdate["content"]>[number];
export type PlanEntry = Extract<Update, { sessionUpdate: "plan" }>["entries"][number];

export interface ToolCall {
  toolCallId: string;
  title: string;
  kind: string;
  status: string;
  content: ToolCallContent[];
  locations: { path: string; line?: number | null }[];
  rawInput?: unknown;
  /** The subagent this call started: its own calls, shown inside the card. */
  subagent?: Subagent;
}

export interface Subagent {
  session: string;
  name: string;
  task: string;
  state?: string;
  calls: ToolCall[];
}

export type Item =
  /** `id`: the prompt (ours); `turnId`: the agent's turn it ran in, once answered. */
  | { kind: "user"; key: string; messageId?: string; id?: string; turnId?: string; text: string; attachments: Attachment[] }
  | { kind: "agent"; key: string; messageId?: string; text: string }
  | { kind: "thought"; key: string; messageId?: string; text: string; startedAt: number; endedAt?: number }
  | { kind: "tool"; key: string; call: ToolCall; permission?: Permission }
  | ({ kind: "permission"; key: string } & Permission)
  | ({ kind: "question"; key: string } & QuestionForm)
  | { kind: "notice"; key: string; severity: string; title: string; description?: string }
  | { kind: "error"; key: string; message: string; action?: "setApiKey"; provider?: string }
  | { kind: "stop"; key: string; reason: string };

/** The agent's questions: a form elicitation, answered from the panel. */
export interface QuestionForm {
  id: string;
  request: CreateElicitationRequest;
  done: boolean;
  action?: "accept" | "decline" | "cancel";
}

/** A permission request; shown inside the tool card of its call when there is one. */
export interface Permission {
  id: string;
  request: RequestPermissionRequest;
  answered?: string;
  done: boolean;
}

export interface Usage {
  used: number;
  size: number;
  cost?: { amount: number; currency: string } | null;
}

export interface Model {
  sessionId?: string;
  title?: string;
  items: Item[];
  plan: PlanEntry[];
  usage?: Usage;
  commands: AvailableCommand[];
  configOptions: SessionConfigOption[];
  review: ReviewFile[];
  sessions?: SessionInfo[];
  status: AgentStatus;
  running: boolean;
  turnStartedAt?: number;
  files?: { query: string; items: { path: string; label: string }[] };
  attachments: Attachment[];
  roots: string[];
  /** Subagents announced (`subagent_spawned`), by child session, until their first call. */
  spawned: Record<string, { name: string; task: string }>;
  /** Where each unanswered prompt's items begin: the key of the item before them (null: none). */
  promptStart: Record<string, string | null>;
}

/** What changed in one batch, so the renderer redraws only that. */
export interface Changes {
  reset: boolean;
  items: Set<string>;
  plan: boolean;
  usage: boolean;
  header: boolean;
  review: boolean;
  composer: boolean;
  status: boolean;
  sessions: boolean;
  files: boolean;
  /** Items taken out (turns undone), by key. */
  removed: string[];
  /** Text to put back in the composer (a rewind). */
  draft?: string;
}

export function emptyChanges(): Changes {
  return {
    reset: false,
    items: new Set(),
    plan: false,
    usage: false,
    header: false,
    review: false,
    composer: false,
    status: false,
    sessions: false,
    files: false,
    removed: [],
  };
}

export function emptyModel(): Model {
  return {
    items: [],
    spawned: {},
    promptStart: {},
    plan: [],
    commands: [],
    configOptions: [],
    review: [],
    status: { state: "starting" },
    running: false,
    attachments: [],
    roots: [],
  };
}

let seq = 0;
const nextKey = (prefix: string) => `${prefix}-${++seq}`;

function textOf(content: { type: string; text?: string | null; uri?: string | null; name?: string | null }): string {
  if (content.type === "text") return content.text ?? "";
  if (content.type === "resource_link") return `[${content.name ?? content.uri}](${content.uri})`;
  return "";
}

function findTool(m: Model, id: string): Extract<Item, { kind: "tool" }> | undefined {
  for (let i = m.items.length - 1; i >= 0; i--) {
    const it = m.items[i];
    if (it.kind === "tool" && it.call.toolCallId === id) return it;
  }
  return undefined;
}

/** Appends a chunk to the item it continues: the last item of `kind` with its messageId, or
 *  an agent message further up (the user steered in while it streamed); else starts an item. */
function appendChunk(m: Model, c: Changes, kind: "agent" | "thought" | "user", text: string, messageId?: string): void {
  const last = m.items.at(-1);
  const same = (it: Item | undefined) => it !== undefined && it.kind === kind && (it as { messageId?: string }).messageId === messageId;
  let target = same(last) ? last : undefined;
  for (let i = m.items.length - 1; !target && kind === "agent" && messageId !== undefined && i >= 0; i--) {
    if (same(m.items[i])) target = m.items[i];
  }
  if (target) {
    (target as { text: string }).text += text;
    c.items.add(target.key);
    return;
  }
  // Agent text after thinking ends the thought.
  endThought(m, c);
  const key = nextKey(kind);
  if (kind === "agent") m.items.push({ kind, key, messageId, text });
  else if (kind === "thought") m.items.push({ kind, key, messageId, text, startedAt: Date.now() });
  else m.items.push({ kind, key, messageId, text, attachments: [] });
  c.items.add(key);
}

/** The user messages that get turn controls: the first of each known turn (by key), and the
 *  turn "Undo turn" takes back, which must be the last prompt's (slash commands that ran no
 *  turn aside), since `/undo` takes the agent's last turn. */
export function turnControls(m: Model): { starts: Set<string>; last?: string } {
  const starts = new Set<string>();
  const seen = new Set<string>();
  for (const it of m.items) {
    if (it.kind === "user" && it.turnId && !seen.has(it.turnId)) {
      seen.add(it.turnId);
      starts.add(it.key);
    }
  }
  let last: string | undefined;
  for (let i = m.items.length - 1; i >= 0; i--) {
    const it = m.items[i];
    if (it.kind !== "user") continue;
    if (it.turnId) {
      last = it.turnId;
      break;
    }
    // A prompt whose turn is not known (it failed, or came with a loaded chat) may be the last.
    if (!it.text.startsWith("/")) break;
  }
  return { starts, last };
}

/** Takes out the undone turns: from the message that started the first of them up to the
 *  undo's own prompt, whose report stays. */
function dropUndone(m: Model, c: Changes, promptId: string, turnIds: string[]): void {
  const before = m.promptStart[promptId];
  if (before === undefined) return;
  const end = before === null ? 0 : m.items.findIndex((it) => it.key === before) + 1;
  const undone = new Set(turnIds);
  const start = m.items.findIndex((it, i) => i < end && it.kind === "user" && it.turnId !== undefined && undone.has(it.turnId));
  if (start < 0) return;
  for (const it of m.items.splice(start, end - start)) c.removed.push(it.key);
}

function endThought(m: Model, c: Changes): void {
  const last = m.items.at(-1);
  if (last?.kind === "thought" && last.endedAt === undefined) {
    last.endedAt = Date.now();
    c.items.add(last.key);
  }
}

/** A subagent's call (attributed with `_meta.claudeCode.parentToolUseId`) into its card. */
function subagentCall(m: Model, c: Changes, u: Update): boolean {
  if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") return false;
  const meta = (u as { _meta?: { claudeCode?: { parentToolUseId?: string }; subagentSessionId?: string } | null })._meta;
  const parentId = meta?.claudeCode?.parentToolUseId;
  const session = meta?.subagentSessionId;
  if (!parentId || !session) return false;
  const parent = findTool(m, parentId);
  if (!parent) return false;
  const spawned = m.spawned[session];
  const sub = (parent.call.subagent ??= { session, name: spawned?.name ?? "Subagent", task: spawned?.task ?? "", calls: [] });
  let call = sub.calls.find((x) => x.toolCallId === u.toolCallId);
  if (!call) {
    call = { toolCallId: u.toolCallId, title: u.title ?? "Tool call", kind: u.kind ?? "other", status: u.status ?? "pending", content: [], locations: [] };
    sub.calls.push(call);
  }
  if (u.title != null) call.title = u.title;
  if (u.kind != null) call.kind = u.kind;
  if (u.status != null) call.status = u.status;
  c.items.add(parent.key);
  return true;
}

export function applyUpdate(m: Model, c: Changes, u: Update): void {
  if (subagentCall(m, c, u)) return;
  const raw = u as unknown as { sessionUpdate: string; subagentSessionId?: string; name?: string; task?: string; state?: string };
  if (raw.sessionUpdate === "subagent_spawned" && raw.subagentSessionId) {
    m.spawned[raw.subagentSessionId] = { name: raw.name || "Subagent", task: raw.task ?? "" };
    return;
  }
  if (raw.sessionUpdate === "subagent_state_update" && raw.subagentSessionId) {
    for (const it of m.items) {
      if (it.kind === "tool" && it.call.subagent?.session === raw.subagentSessionId) {
        it.call.subagent.state = raw.state;
        c.items.add(it.key);
      }
    }
    return;
  }
  switch (u.sessionUpdate) {
    case "agent_message_chunk":
      appendChunk(m, c, "agent", textOf(u.content), u.messageId ?? undefined);
      break;
    case "agent_thought_chunk":
      appendChunk(m, c, "thought", textOf(u.content), u.messageId ?? undefined);
      break;
    case "user_message_chunk": {
      appendChunk(m, c, "user", textOf(u.content), u.messageId ?? undefined);
      // A loaded chat's message names the turn it started, as a live prompt's answer does.
      const turnId = (u as { _meta?: Record<string, unknown> | null })._meta?.[ACP_TURN_ID];
      const it = m.items.at(-1);
      if (typeof turnId === "string" && it?.kind === "user") it.turnId = turnId;
      break;
    }
    case "tool_call": {
      endThought(m, c);
      const call: ToolCall = {
        toolCallId: u.toolCallId,
        title: u.title,
        kind: u.kind ?? "other",
        status: u.status ?? "pending",
        content: u.content ?? [],
        locations: u.locations ?? [],
        rawInput: u.rawInput,
      };
      const existing = findTool(m, u.toolCallId);
      if (existing) {
        call.subagent = existing.call.subagent;
        existing.call = call;
        c.items.add(existing.key);
      } else {
        const key = nextKey("tool");
        m.items.push({ kind: "tool", key, call });
        c.items.add(key);
      }
      break;
    }
    case "tool_call_update": {
      let item = findTool(m, u.toolCallId);
      if (!item) {
        // An update for a call not announced: legal; show it.
        item = {
          kind: "tool",
          key: nextKey("tool"),
          call: { toolCallId: u.toolCallId, title: u.title ?? "Tool call", kind: "other", status: "pending", content: [], locations: [] },
        };
        m.items.push(item);
      }
      const call = item.call;
      if (u.title != null) call.title = u.title;
      if (u.kind != null) call.kind = u.kind;
      if (u.status != null) call.status = u.status;
      if (u.content != null) call.content = u.content;
      if (u.locations != null) call.locations = u.locations;
      if (u.rawInput !== undefined && u.rawInput !== null) call.rawInput = u.rawInput;
      c.items.add(item.key);
      break;
    }
    case "plan":
      m.plan = u.entries;
      c.plan = true;
      break;
    case "available_commands_update":
      m.commands = u.availableCommands;
      c.composer = true;
      break;
    case "config_option_update":
      m.configOptions = u.configOptions;
      c.composer = true;
      break;
    case "current_mode_update":
      m.configOptions = m.configOptions.map((o) =>
        o.category === "mode" && o.type === "select" ? { ...o, currentValue: u.currentModeId } : o,
      );
      c.composer = true;
      break;
    case "session_info_update":
      if (u.title !== undefined) m.title = u.title ?? undefined;
      c.header = true;
      break;
    case "usage_update":
      m.usage = { used: u.used, size: u.size, cost: u.cost };
      c.usage = true;
      break;
    case "notice": {
      const key = nextKey("notice");
      m.items.push({ kind: "notice", key, severity: u.severity, title: u.title, description: u.description ?? undefined });
      c.items.add(key);
      break;
    }
    default:
      break;
  }
}

export function applyMessage(m: Model, c: Changes, msg: HostMessage): void {
  switch (msg.type) {
    case "reset": {
      const keep = { status: m.status, configOptions: m.configOptions, commands: m.commands, review: m.review, sessions: m.sessions };
      Object.assign(m, emptyModel(), keep, { sessionId: msg.sessionId, title: msg.title, attachments: m.attachments, roots: m.roots });
      c.reset = true;
      break;
    }
    case "roots":
      m.roots = msg.roots;
      c.reset = true;
      break;
    case "replay":
      for (const inner of msg.messages) applyMessage(m, c, inner);
      break;
    case "update":
      if (m.sessionId && msg.notification.sessionId !== m.sessionId) break;
      applyUpdate(m, c, msg.notification.update);
      break;
    case "userMessage": {
      endThought(m, c);
      if (msg.id) m.promptStart[msg.id] = m.items.at(-1)?.key ?? null;
      const key = nextKey("user");
      m.items.push({ kind: "user", key, id: msg.id, text: msg.text, attachments: msg.attachments });
      c.items.add(key);
      break;
    }
    case "command":
      m.promptStart[msg.id] = m.items.at(-1)?.key ?? null;
      break;
    case "answered":
      for (const it of m.items) {
        if (msg.turnId && it.kind === "user" && it.id === msg.id) {
          it.turnId = msg.turnId;
          c.items.add(it.key);
        }
      }
      if (msg.undone?.conversation) dropUndone(m, c, msg.id, msg.undone.turnIds);
      delete m.promptStart[msg.id];
      break;
    case "draft":
      c.draft = msg.text;
      if (msg.attachments.length) {
        m.attachments = [...msg.attachments, ...m.attachments];
        c.composer = true;
      }
      break;
    case "turn":
      m.running = msg.running;
      m.turnStartedAt = msg.running ? (msg.startedAt ?? Date.now()) : undefined;
      if (!msg.running) {
        endThought(m, c);
        if (msg.stopReason && msg.stopReason !== "end_turn") {
          const key = nextKey("stop");
          m.items.push({ kind: "stop", key, reason: msg.stopReason });
          c.items.add(key);
        }
      }
      c.status = true;
      c.composer = true;
      break;
    case "status":
      m.status = msg.status;
      c.status = true;
      break;
    case "configOptions":
      m.configOptions = msg.options;
      c.composer = true;
      break;
    case "permission": {
      const permission: Permission = { id: msg.id, request: msg.request, done: false };
      const tool = findTool(m, msg.request.toolCall.toolCallId);
      if (tool) {
        tool.permission = permission;
        c.items.add(tool.key);
      } else {
        const key = nextKey("perm");
        m.items.push({ kind: "permission", key, ...permission });
        c.items.add(key);
      }
      break;
    }
    case "question": {
      const key = nextKey("question");
      m.items.push({ kind: "question", key, id: msg.id, request: msg.request, done: false });
      c.items.add(key);
      break;
    }
    case "questionDone":
      for (const it of m.items) {
        if (it.kind === "question" && it.id === msg.id) {
          it.done = true;
          it.action = msg.action;
          c.items.add(it.key);
        }
      }
      break;
    case "permissionDone":
      for (const it of m.items) {
        const p = it.kind === "permission" ? it : it.kind === "tool" ? it.permission : undefined;
        if (p && p.id === msg.id) {
          p.done = true;
          p.answered = msg.optionId;
          c.items.add(it.key);
        }
      }
      break;
    case "review":
      m.review = msg.files;
      c.review = true;
      break;
    case "sessions":
      m.sessions = msg.sessions;
      c.sessions = true;
      break;
    case "error": {
      const key = nextKey("error");
      m.items.push({ kind: "error", key, message: msg.message, action: msg.action, provider: msg.provider });
      c.items.add(key);
      break;
    }
    case "files":
      m.files = { query: msg.query, items: msg.items };
      c.files = true;
      break;
    case "attach":
      m.attachments = [...m.attachments, msg.attachment];
      c.composer = true;
      break;
  }
}
