// A stand-in for the `vscode` module and for `vscode-languageclient/node`, installed with
// Module._load before the compiled extension (out/) is required. It records what the
// extension does (commands, status bar, messages, language clients, requests) and lets a
// test answer prompts and drive the fake client (progress, messages, start failures).

"use strict";

const Module = require("node:module");

function emitter() {
  const listeners = new Set();
  const event = (fn) => {
    listeners.add(fn);
    return { dispose: () => listeners.delete(fn) };
  };
  event.fire = (value) => [...listeners].forEach((fn) => fn(value));
  return event;
}

const state = {
  commands: new Map(),
  executed: [],
  messages: [],
  inputBoxes: [],
  quickPicks: [],
  statusItems: [],
  progress: [],
  clients: [],
  outputs: [],
  config: {},
  diagnostics: new Map(),
  activeTextEditor: undefined,
  workspaceFolders: undefined,
  // Answers for the next prompts, consumed in order.
  inputAnswers: [],
  pickAnswers: [],
  messageAnswers: [],
  // When set, the next LanguageClient.start() rejects with this error.
  failNextStart: undefined,
  webviewProviders: new Map(),
  appliedEdits: [],
  contentProviders: new Map(),
  shown: [],
  opened: [],
  textDocuments: [],
};

const onDidChangeConfiguration = emitter();

class Position {
  constructor(line, character) {
    this.line = line;
    this.character = character;
  }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") {
      this.start = new Position(a, b);
      this.end = new Position(c, d);
    } else {
      this.start = a;
      this.end = b;
    }
  }
}

class Selection extends Range {}

class Uri {
  constructor(scheme, fsPath) {
    this.scheme = scheme;
    this.fsPath = fsPath;
  }
  static from({ scheme, path, query }) {
    const u = new Uri(scheme, path);
    u.query = query;
    return u;
  }
  static file(p) {
    return new Uri("file", p);
  }
  static parse(s) {
    const m = /^([a-z][\w+.-]*):(?:\/\/)?(.*)$/i.exec(s);
    return m ? new Uri(m[1], m[2]) : new Uri("file", s);
  }
  static joinPath(base, ...parts) {
    return new Uri(base.scheme, [base.fsPath, ...parts].join("/"));
  }
  get path() {
    return this.fsPath;
  }
  toString() {
    return `${this.scheme}://${this.fsPath}`;
  }
}

class EventEmitter {
  constructor() {
    this.event = emitter();
  }
  fire(v) {
    this.event.fire(v);
  }
  dispose() {}
}

class ThemeColor {
  constructor(id) {
    this.id = id;
  }
}

function message(kind) {
  return (text, ...actions) => {
    state.messages.push({ kind, text, actions });
    return Promise.resolve(state.messageAnswers.shift());
  };
}

function outputChannel(name) {
  const lines = [];
  const log = (level) => (m) => lines.push(`[${level}] ${m}`);
  const channel = {
    name,
    lines,
    shown: 0,
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    debug: log("debug"),
    trace: log("trace"),
    append: (m) => lines.push(m),
    appendLine: (m) => lines.push(m),
    show: () => {
      channel.shown += 1;
    },
    dispose() {},
  };
  state.outputs.push(channel);
  return channel;
}

// ---- documents and WorkspaceEdits (enough for the review manager) ----

const nodeFs = require("node:fs");

class TextDocument {
  constructor(uri, text) {
    this.uri = uri;
    this.text = text;
    this.isDirty = false;
    this.saves = 0;
  }
  getText() {
    return this.text;
  }
  get lineCount() {
    return this.text.split("\n").length;
  }
  lineAt(n) {
    const line = this.text.split("\n")[n] ?? "";
    return { range: { end: new Position(n, line.length) } };
  }
  offsetAt(pos) {
    const lines = this.text.split("\n");
    let off = 0;
    for (let i = 0; i < pos.line; i++) off += lines[i].length + 1;
    return off + pos.character;
  }
  async save() {
    nodeFs.writeFileSync(this.uri.fsPath, this.text);
    this.isDirty = false;
    this.saves += 1;
    return true;
  }
}

class WorkspaceEdit {
  constructor() {
    this.ops = [];
  }
  replace(uri, range, newText) {
    this.ops.push({ op: "replace", uri, range, newText });
  }
  createFile(uri, options) {
    this.ops.push({ op: "createFile", uri, options });
  }
  deleteFile(uri, options) {
    this.ops.push({ op: "deleteFile", uri, options });
  }
}

function openDocument(uri) {
  let doc = state.textDocuments.find((d) => d.uri.fsPath === uri.fsPath);
  if (!doc) {
    doc = new TextDocument(uri, nodeFs.readFileSync(uri.fsPath, "utf8"));
    state.textDocuments.push(doc);
  }
  return doc;
}

const onDidChangeTextDocument = emitter();
const onDidChangeDiagnostics = emitter();

async function applyEdit(edit) {
  state.appliedEdits.push(edit);
  for (const o of edit.ops) {
    if (o.op === "createFile") {
      if (!nodeFs.existsSync(o.uri.fsPath)) nodeFs.writeFileSync(o.uri.fsPath, "");
    } else if (o.op === "deleteFile") {
      nodeFs.rmSync(o.uri.fsPath, { force: true });
      state.textDocuments = state.textDocuments.filter((d) => d.uri.fsPath !== o.uri.fsPath);
    } else {
      const doc = openDocument(o.uri);
      doc.text = doc.text.slice(0, doc.offsetAt(o.range.start)) + o.newText + doc.text.slice(doc.offsetAt(o.range.end));
      doc.isDirty = true;
      onDidChangeTextDocument.fire({ document: doc });
    }
  }
  return true;
}

const vscode = {
  Position,
  WorkspaceEdit,
  Range,
  Selection,
  Uri,
  ThemeColor,
  EventEmitter,
  env: {
    openExternal(uri) {
      state.opened.push(uri.toString());
      return Promise.resolve(true);
    },
  },
  StatusBarAlignment: { Left: 1, Right: 2 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  commands: {
    registerCommand(id, fn) {
      if (state.commands.has(id)) throw new Error(`command '${id}' already exists`);
      state.commands.set(id, fn);
      return { dispose: () => state.commands.delete(id) };
    },
    executeCommand(id, ...args) {
      state.executed.push({ id, args });
      const fn = state.commands.get(id);
      return Promise.resolve(fn ? fn(...args) : undefined);
    },
  },
  window: {
    get activeTextEditor() {
      return state.activeTextEditor;
    },
    get state() {
      return { focused: state.windowFocused !== false };
    },
    createOutputChannel: outputChannel,
    async showTextDocument(doc, options) {
      state.shown.push({ path: doc.uri.fsPath, options });
    },
    registerWebviewViewProvider(id, provider) {
      state.webviewProviders.set(id, provider);
      return { dispose: () => state.webviewProviders.delete(id) };
    },
    createStatusBarItem(id, alignment, priority) {
      const item = { id, alignment, priority, text: "", tooltip: "", shown: false, disposed: false };
      item.show = () => {
        item.shown = true;
      };
      item.hide = () => {
        item.shown = false;
      };
      item.dispose = () => {
        item.disposed = true;
      };
      state.statusItems.push(item);
      return item;
    },
    showInputBox(options) {
      state.inputBoxes.push(options);
      return Promise.resolve(state.inputAnswers.shift());
    },
    showQuickPick(items, options) {
      state.quickPicks.push({ items, options });
      const answer = state.pickAnswers.shift();
      const list = items.map((i) => (typeof i === "string" ? i : i));
      return Promise.resolve(list.find((i) => (typeof i === "string" ? i : i.label) === answer));
    },
    showErrorMessage: message("error"),
    showWarningMessage: message("warning"),
    showInformationMessage: message("info"),
    withProgress(options, task) {
      const record = { options, reports: [], cancel: emitter(), done: false };
      state.progress.push(record);
      const token = { isCancellationRequested: false, onCancellationRequested: record.cancel };
      return Promise.resolve(task({ report: (r) => record.reports.push(r) }, token)).then((v) => {
        record.done = true;
        return v;
      });
    },
  },
  workspace: {
    get workspaceFolders() {
      return state.workspaceFolders;
    },
    getConfiguration(section) {
      return {
        get: (key, fallback) => {
          const v = state.config[`${section}.${key}`];
          return v === undefined ? fallback : v;
        },
      };
    },
    onDidChangeConfiguration,
    onDidChangeTextDocument,
    applyEdit,
    openTextDocument: async (uri) => openDocument(uri),
    fs: {
      async stat(uri) {
        return nodeFs.statSync(uri.fsPath);
      },
    },
    onDidSaveTextDocument: emitter(),
    get textDocuments() {
      return state.textDocuments;
    },
    registerTextDocumentContentProvider(scheme, provider) {
      state.contentProviders.set(scheme, provider);
      return { dispose: () => state.contentProviders.delete(scheme) };
    },
  },
  languages: {
    getDiagnostics(uri) {
      if (uri === undefined) return [...state.diagnostics].map(([u, list]) => [Uri.parse(u), list]);
      return state.diagnostics.get(uri.toString()) ?? [];
    },
    onDidChangeDiagnostics,
  },
};

// ---- vscode-languageclient/node ----

const State = { Stopped: 1, Running: 2, Starting: 3 };

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions });
    this.features = [];
    this.notificationHandlers = new Map();
    this.progressHandlers = new Map();
    this.requests = [];
    this.notifications = [];
    this.state = State.Stopped;
    this.stateChange = emitter();
    this.onDidChangeState = this.stateChange;
    this.disposed = false;
    this.startError = state.failNextStart;
    state.failNextStart = undefined;
    state.clients.push(this);
    // Like the real client: the base constructor registers the built-in features.
    this.registerFeature({ registrationType: { method: "textDocument/codeAction" } });
    this.registerFeature({ registrationType: { method: "workspace/executeCommand" } });
    this.registerFeature({ fillClientCapabilities() {} });
  }
  registerFeature(feature) {
    this.features.push(feature);
  }
  setState(newState) {
    const oldState = this.state;
    this.state = newState;
    this.stateChange.fire({ oldState, newState });
  }
  async start() {
    this.setState(State.Starting);
    if (this.startError) {
      this.state = State.Stopped;
      throw this.startError;
    }
    this.setState(State.Running);
  }
  async stop() {
    this.setState(State.Stopped);
  }
  async dispose() {
    this.disposed = true;
    if (this.state !== State.Stopped) this.setState(State.Stopped);
  }
  onNotification(type, handler) {
    this.notificationHandlers.set(type.method, handler);
    return { dispose: () => this.notificationHandlers.delete(type.method) };
  }
  onProgress(_type, token, handler) {
    this.progressHandlers.set(token, handler);
    return { dispose: () => this.progressHandlers.delete(token) };
  }
  async sendRequest(type, params) {
    this.requests.push({ method: type.method, params });
    if (this.requestError) throw this.requestError;
    return null;
  }
  async sendNotification(type, params) {
    this.notifications.push({ method: type.method, params });
  }
  // Test helpers: play the server's side.
  progress(token, value) {
    const handler = this.progressHandlers.get(token);
    if (!handler) throw new Error(`no progress handler for ${token}`);
    handler(value);
  }
  showMessage(type, message) {
    const handler = this.notificationHandlers.get("window/showMessage");
    if (!handler) throw new Error("no window/showMessage handler");
    handler({ type, message });
  }
}

const languageclient = {
  LanguageClient,
  State,
  TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 },
  RevealOutputChannelOn: { Debug: 0, Info: 1, Warn: 2, Error: 3, Never: 4 },
  MessageType: { Error: 1, Warning: 2, Info: 3, Log: 4, Debug: 5 },
  ExecuteCommandRequest: { method: "workspace/executeCommand", type: { method: "workspace/executeCommand" } },
  ShowMessageNotification: { method: "window/showMessage", type: { method: "window/showMessage" } },
  WorkDoneProgress: { type: { method: "$/progress" } },
  WorkDoneProgressCancelNotification: {
    method: "window/workDoneProgress/cancel",
    type: { method: "window/workDoneProgress/cancel" },
  },
};

const originalLoad = Module._load;
Module._load = function load(request, ...rest) {
  if (request === "vscode") return vscode;
  if (request === "vscode-languageclient/node") return languageclient;
  return originalLoad.call(this, request, ...rest);
};

// An extension folder without bin/: the binary comes from the setting or PATH.
const emptyExtensionDir = require("node:fs").mkdtempSync(require("node:path").join(require("node:os").tmpdir(), "interp-ext-"));

/** A fresh ExtensionContext with an in-memory SecretStorage (`secrets.values`). */
function context() {
  const values = new Map();
  const changed = emitter();
  return {
    subscriptions: [],
    extensionPath: emptyExtensionDir,
    extensionUri: Uri.file(emptyExtensionDir),
    extension: { packageJSON: { version: "0.0.0-test" } },
    secrets: {
      values,
      get: async (key) => values.get(key),
      async store(key, value) {
        values.set(key, value);
        changed.fire({ key });
      },
      async delete(key) {
        values.delete(key);
        changed.fire({ key });
      },
      onDidChange: changed,
    },
  };
}

/** Clears everything recorded; `config` replaces the settings. */
function reset(config = {}) {
  state.commands.clear();
  state.diagnostics.clear();
  for (const key of [
    "executed",
    "messages",
    "inputBoxes",
    "quickPicks",
    "statusItems",
    "progress",
    "clients",
    "outputs",
    "inputAnswers",
    "pickAnswers",
    "messageAnswers",
    "opened",
    "appliedEdits",
    "shown",
  ]) {
    state[key].length = 0;
  }
  state.config = { ...config };
  state.textDocuments = [];
  state.activeTextEditor = undefined;
  state.workspaceFolders = undefined;
  state.failNextStart = undefined;
}

/** Changes settings and fires onDidChangeConfiguration for the changed keys. */
function changeConfig(changes) {
  Object.assign(state.config, changes);
  const keys = Object.keys(changes);
  onDidChangeConfiguration.fire({
    affectsConfiguration: (section) => keys.some((k) => k === section || k.startsWith(`${section}.`)),
  });
}

/** Opens a fake editor on `path` with `selection` = [line, char, line, char]. */
function openEditor(path, selection) {
  const uri = Uri.file(path);
  state.activeTextEditor = {
    document: { uri },
    selection: new Selection(...selection),
  };
  return uri;
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sets the diagnostics of `path` (vscode.Diagnostic-like objects) and fires onDidChangeDiagnostics. */
function setDiagnostics(path, list) {
  const uri = Uri.file(path);
  state.diagnostics.set(uri.toString(), list);
  onDidChangeDiagnostics.fire({ uris: [uri] });
}

module.exports = { TextDocument, state, vscode, languageclient, context, reset, changeConfig, openEditor, tick, State, setDiagnostics };
