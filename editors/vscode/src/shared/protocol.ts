// Messages between the extension host (src/panel) and the chat webview (src/webview).
// Types only: both sides import them with `import type`.

import type {
  AvailableCommand,
  CreateElicitationRequest,
  RequestPermissionRequest,
  SessionConfigOption,
  SessionInfo,
  SessionNotification,
  StopReason,
} from "@agentclientprotocol/sdk";

export type { AvailableCommand, CreateElicitationRequest, RequestPermissionRequest, SessionConfigOption, SessionInfo, SessionNotification, StopReason };

/** The agent process as the panel shows it. */
export type AgentStatus =
  | { state: "starting" }
  | { state: "ready"; initializeMs: number; agent: string }
  | { state: "restarting"; reason: string }
  | { state: "stopped"; reason: string };

/** One file the agent edited in this chat, waiting for Keep or Undo. */
export interface ReviewFile {
  path: string;
  /** Relative to the workspace folder, for display. */
  label: string;
  added: number;
  removed: number;
  created: boolean;
}

/**
 * What `/undo` or `/rewind` took back: the prompt answer's `_meta["interpreter/undone"]`.
 * Paths are relative to the session's folder.
 */
export interface Undone {
  turnIds: string[];
  /** Whether the turns left the conversation (false: only their files went back). */
  conversation: boolean;
  restored: string[];
  removed: string[];
  skipped: { path: string; reason: string }[];
}

/** Something attached to the next prompt: a file (resource link), a selection (embedded) or
 * an image pasted or dropped into the composer (an ACP image block). */
export interface Attachment {
  kind: "file" | "selection" | "image";
  path: string;
  label: string;
  /** For a selection: 1-based lines and the selected text. */
  startLine?: number;
  endLine?: number;
  text?: string;
  /** For an image: its base64 bytes and type. */
  data?: string;
  mimeType?: string;
}

export type HostMessage =
  /** Clear the transcript: a new chat, a loaded one, or a reload after a restart. */
  | { type: "reset"; sessionId?: string; title?: string }
  /** The workspace folders, to show paths relative to them. */
  | { type: "roots"; roots: string[] }
  | { type: "update"; notification: SessionNotification }
  /** A prompt of ours went out (shown at once; the agent does not echo it). `id` names the prompt. */
  | { type: "userMessage"; id: string; text: string; attachments: Attachment[] }
  /** A command sent for a click (Undo turn, Rewind to here): no bubble, its report follows. */
  | { type: "command"; id: string; text: string }
  /** A prompt's answer: the turn it ran (`_meta["interpreter/turnId"]`), or what an undo took back. */
  | { type: "answered"; id: string; turnId?: string; undone?: Undone }
  /** Text and attachments back in the composer: the prompt of the turn rewound to (not replayed). */
  | { type: "draft"; text: string; attachments: Attachment[] }
  | { type: "turn"; running: boolean; stopReason?: StopReason; startedAt?: number }
  | { type: "status"; status: AgentStatus }
  | { type: "configOptions"; options: SessionConfigOption[] }
  | { type: "permission"; id: string; request: RequestPermissionRequest }
  | { type: "permissionDone"; id: string; optionId?: string }
  /** The agent's questions (a form elicitation), answered with a `question` message. */
  | { type: "question"; id: string; request: CreateElicitationRequest }
  | { type: "questionDone"; id: string; action: "accept" | "decline" | "cancel" }
  | { type: "review"; files: ReviewFile[] }
  | { type: "sessions"; sessions: SessionInfo[]; currentId?: string }
  | { type: "error"; message: string; action?: "setApiKey"; provider?: string }
  | { type: "files"; query: string; items: { path: string; label: string }[] }
  | { type: "attach"; attachment: Attachment }
  /** Everything since the last reset, sent when a (re)created webview says `ready`. */
  | { type: "replay"; messages: HostMessage[] };

export type WebviewMessage =
  | { type: "ready" }
  | { type: "send"; text: string; attachments: Attachment[] }
  | { type: "cancel" }
  /** Take back the last turn (`/undo`). */
  | { type: "undoTurn" }
  /** Go back to just before this turn (`/rewind <turnId>`). */
  | { type: "rewind"; turnId: string }
  | { type: "permission"; id: string; optionId: string }
  | { type: "question"; id: string; action: "accept" | "decline" | "cancel"; content?: Record<string, string | string[]> }
  | { type: "setConfig"; configId: string; value: string }
  | { type: "newChat" }
  | { type: "listSessions" }
  | { type: "loadSession"; sessionId: string }
  | { type: "keep"; path?: string }
  | { type: "undo"; path?: string }
  | { type: "review"; path: string }
  | { type: "open"; path: string; line?: number }
  | { type: "openLink"; href: string }
  | { type: "setApiKey"; key: string; provider?: string }
  | { type: "searchFiles"; query: string };
