// Entry point: wires the settings, the status bar, the language client and the commands.
// `interpreter lsp` does the work; this extension starts it, hands it the settings and the
// API key, and routes the editor's commands to it.

import * as vscode from "vscode";

import { resolveBinary } from "./binary";
import { ServerManager } from "./client";
import { registerCommands } from "./commands";
import { RESTART_KEYS, Settings, readSettings } from "./settings";
import { Status } from "./status";

/** Settings changes arrive per keystroke in the settings editor; restart once they settle. */
export const timing = { restartDelayMs: 400 };

let manager: ServerManager | undefined;

/** What activate returns (used by the tests). */
export interface Api {
  manager: ServerManager;
  status: Status;
}

function settings(): Settings {
  const config = vscode.workspace.getConfiguration("interpreter");
  return readSettings((key) => config.get(key));
}

function workspaceFolder(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined;
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

  let timer: ReturnType<typeof setTimeout> | undefined;
  const restartSoon = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void m.restart();
    }, timing.restartDelayMs);
  };
  context.subscriptions.push({ dispose: () => timer && clearTimeout(timer) });

  registerCommands(context, { manager: m, status, output, secrets: context.secrets, settings, restartSoon });

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
  return { manager: m, status };
}

export async function deactivate(): Promise<void> {
  const m = manager;
  manager = undefined;
  await m?.stop();
}
