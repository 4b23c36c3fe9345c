// Entry point: wires the settings, the status bar, the language client, the commands and the
// chat panel. `interpreter lsp` serves the light-bulb actions; `interpreter acp` (one per
// window, started when the panel first opens) serves the chat.

import * as vscode from "vscode";

import { resolveBinary } from "./binary";
import { ServerManager, storedKeys } from "./client";
import { registerCommands } from "./commands";
import { reportMissingBinary } from "./notify";
import { ChatController } from "./panel/chat";
import { ReviewManager } from "./panel/review";
import { ChatViewProvider, VIEW_ID } from "./panel/view";
import { RESTART_KEYS, Settings, acpSpec, readSettings } from "./settings";
import { Status } from "./status";

/** Settings changes arrive per keystroke in the settings editor; restart once they settle. */
export const timing = { restartDelayMs: 400 };

/** The chat panel's commands (package.json contributes them). */
export const CHAT_COMMAND_IDS = ["interpreter.newChat", "interpreter.addSelectionToChat"] as const;

let manager: ServerManager | undefined;
let chat: ChatController | undefined;

/** What activate returns (used by the tests). */
export interface Api {
  manager: ServerManager;
  status: Status;
  chat: ChatController;
}

function settings(): Settings {
  const config = vscode.workspace.getConfiguration("interpreter");
  return readSettings((key) => config.get(key));
}

function workspaceFolder(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined;
}

function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

/** The binary both faces run (binary.ts): the setting, the bundled one, or PATH. */
export function binary(context: vscode.ExtensionContext) {
  return resolveBinary({ setting: settings().path, extensionPath: context.extensionPath, workspaceFolder: workspaceFolder() });
}

export async function activate(context: vscode.ExtensionContext): Promise<Api> {
  const output = vscode.window.createOutputChannel("interpreter", { log: true });
  const status = new Status(
    vscode.window.createStatusBarItem("interpreter.status", vscode.StatusBarAlignment.Right, 100),
  );
  const m = new ServerManager({
    output,
    status,
    secrets: context.secrets,
    settings,
    workspaceFolder,
    env: process.env,
    binary: () => binary(context),
  });
  manager = m;
  context.subscriptions.push(output, status, m);

  const review = new ReviewManager(workspaceRoots);
  const c = new ChatController({
    output,
    secrets: context.secrets,
    review,
    roots: workspaceRoots,
    provider: () => settings().provider,
    version: String((context.extension?.packageJSON as { version?: string } | undefined)?.version ?? "0.0.0"),
    spec: async () => {
      const b = binary(context);
      if (!b.ok) {
        reportMissingBinary(b.message);
        throw new Error(b.message);
      }
      const s = settings();
      const keys = await storedKeys(context.secrets, s, output);
      return acpSpec(s, keys, process.env, workspaceFolder(), b.command);
    },
  });
  chat = c;
  const provider = new ChatViewProvider(context.extensionUri, c);
  context.subscriptions.push(review, c, vscode.window.registerWebviewViewProvider(VIEW_ID, provider));

  let timer: ReturnType<typeof setTimeout> | undefined;
  const restartSoon = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void m.restart();
      void c.agent.refresh().catch((e) => output.error(`restarting the chat agent: ${e instanceof Error ? e.message : e}`));
    }, timing.restartDelayMs);
  };
  context.subscriptions.push({ dispose: () => timer && clearTimeout(timer) });

  registerCommands(context, { manager: m, status, output, secrets: context.secrets, settings, restartSoon });
  context.subscriptions.push(
    vscode.commands.registerCommand("interpreter.newChat", async () => {
      await provider.reveal();
      await c.newChat();
    }),
    vscode.commands.registerCommand("interpreter.addSelectionToChat", async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) {
        void vscode.window.showWarningMessage("interpreter: open a file and select some code first.");
        return;
      }
      await provider.reveal();
      c.attachSelection(editor);
    }),
  );

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(`interpreter.${k}`))) {
        output.info("settings changed; restarting the server");
        restartSoon();
      }
    }),
    context.secrets.onDidChange((e) => {
      if (e.key.startsWith("interpreter.apiKey.")) restartSoon();
    }),
  );

  await m.start();
  return { manager: m, status, chat: c };
}

export async function deactivate(): Promise<void> {
  const m = manager;
  const c = chat;
  manager = undefined;
  chat = undefined;
  await Promise.all([m?.stop(), c?.agent.stop()]);
}
