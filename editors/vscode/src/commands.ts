// The extension's commands. The server's own command ids (interpreter.fix, .explain,
// .refactor, .writeTests, .ask) are registered here too, so a code action picked from the
// light bulb comes through these handlers, which fill in what the server needs (the prompt
// for Ask, the instruction for Refactor) before sending `workspace/executeCommand`.

import * as vscode from "vscode";

import { CommandArgs, LspRange, SERVER_COMMANDS, codeActionArgs, diagnosticsToFix } from "./actions";
import type { ServerManager } from "./client";
import { DEFAULT_PROVIDER, PROVIDERS, Settings, isBuiltIn, secretName } from "./settings";
import type { Status } from "./status";

export interface CommandDeps {
  manager: ServerManager;
  status: Status;
  output: vscode.LogOutputChannel;
  secrets: vscode.SecretStorage;
  settings: () => Settings;
  /** Restart soon (debounced), e.g. after a key changed. */
  restartSoon: () => void;
}

/** Every command id this extension registers. */
export const COMMAND_IDS = [
  "interpreter.ask",
  "interpreter.fixDiagnostics",
  "interpreter.explain",
  "interpreter.refactor",
  "interpreter.writeTests",
  "interpreter.fix",
  "interpreter.cancel",
  "interpreter.restartServer",
  "interpreter.showLogs",
  "interpreter.setApiKey",
  "interpreter.clearApiKey",
] as const;

function toLspRange(r: vscode.Range): LspRange {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

/** The active editor's document and selection as a command argument. */
function editorTarget(): CommandArgs | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  return { uri: editor.document.uri.toString(), range: toLspRange(editor.selection) };
}

function noEditor(): void {
  void vscode.window.showWarningMessage("interpreter: open a file and select some code first.");
}

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const { manager, status, output } = deps;

  /** Runs a handler; a failure becomes an error notification and the status bar's error. */
  const guarded =
    (name: string, handler: (...args: unknown[]) => Promise<void>) =>
    async (...args: unknown[]): Promise<void> => {
      try {
        await handler(...args);
      } catch (e) {
        const message = `interpreter: ${name} failed: ${e instanceof Error ? e.message : String(e)}`;
        output.error(message);
        status.error(message);
        const choice = await vscode.window.showErrorMessage(message, "Show Logs");
        if (choice === "Show Logs") output.show(true);
      }
    };

  const register = (id: (typeof COMMAND_IDS)[number], name: string, handler: (...args: unknown[]) => Promise<void>) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, guarded(name, handler)));

  const ask = async (arg?: unknown) => {
    const target = codeActionArgs(arg) ?? editorTarget();
    if (!target) return noEditor();
    const prompt =
      target.prompt ??
      (await vscode.window.showInputBox({
        title: "Ask interpreter",
        prompt: "A question or a task about the selection",
        placeHolder: "e.g. why can this panic? / add input validation",
        ignoreFocusOut: true,
      }));
    if (!prompt?.trim()) return;
    await manager.run(SERVER_COMMANDS.ask, { uri: target.uri, range: target.range, prompt: prompt.trim() }, "Ask");
  };

  const explain = async (arg?: unknown) => {
    const target = codeActionArgs(arg) ?? editorTarget();
    if (!target) return noEditor();
    await manager.run(SERVER_COMMANDS.explain, { uri: target.uri, range: target.range }, "Explain");
  };

  const fix = async (arg?: unknown) => {
    const fromAction = codeActionArgs(arg);
    if (fromAction) {
      await manager.run(SERVER_COMMANDS.fix, fromAction, "Fix");
      return;
    }
    const editor = vscode.window.activeTextEditor;
    if (!editor) return noEditor();
    const diagnostics = vscode.languages.getDiagnostics(editor.document.uri).map((d) => ({
      range: toLspRange(d.range),
      message: d.message,
      severity: d.severity as number,
      source: d.source,
      code: d.code as string | number | { value: string | number } | undefined,
    }));
    const chosen = diagnosticsToFix(toLspRange(editor.selection), diagnostics);
    if (!chosen) {
      void vscode.window.showInformationMessage("interpreter: there are no diagnostics in this file to fix.");
      return;
    }
    await manager.run(
      SERVER_COMMANDS.fix,
      { uri: editor.document.uri.toString(), range: chosen.range, diagnostics: chosen.diagnostics },
      "Fix",
    );
  };

  const refactor = async (arg?: unknown) => {
    const target = codeActionArgs(arg) ?? editorTarget();
    if (!target) return noEditor();
    const how =
      target.prompt ??
      (await vscode.window.showInputBox({
        title: "Refactor with interpreter",
        prompt: "How should the selection be refactored? Empty: make it clearer and simpler.",
        ignoreFocusOut: true,
      }));
    if (how === undefined) return;
    const args: CommandArgs = { uri: target.uri, range: target.range };
    if (how.trim()) args.prompt = how.trim();
    await manager.run(SERVER_COMMANDS.refactor, args, "Refactor");
  };

  const writeTests = async (arg?: unknown) => {
    const target = codeActionArgs(arg) ?? editorTarget();
    if (!target) return noEditor();
    await manager.run(SERVER_COMMANDS.writeTests, { uri: target.uri, range: target.range }, "Write tests");
  };

  register("interpreter.ask", "Ask", ask);
  register("interpreter.explain", "Explain", explain);
  register("interpreter.fixDiagnostics", "Fix", fix);
  register("interpreter.fix", "Fix", fix);
  register("interpreter.refactor", "Refactor", refactor);
  register("interpreter.writeTests", "Write tests", writeTests);

  register("interpreter.cancel", "Cancel", async () => {
    if (manager.cancelAll() === 0) {
      void vscode.window.showInformationMessage("interpreter: nothing is running.");
    }
  });
  register("interpreter.restartServer", "Restart", () => manager.restart());
  register("interpreter.showLogs", "Show Logs", async () => output.show(true));

  register("interpreter.setApiKey", "Set API Key", async () => {
    const s = deps.settings();
    const current = s.provider || DEFAULT_PROVIDER;
    const ids = Object.keys(PROVIDERS).filter((p) => PROVIDERS[p].envKey);
    if (!isBuiltIn(current)) ids.unshift(current);
    ids.sort((a, b) => Number(b === current) - Number(a === current));
    const picked = await vscode.window.showQuickPick(
      ids.map((id) => ({
        label: id,
        description: id === current ? "current provider" : undefined,
        detail: `passed to the server as ${PROVIDERS[id]?.envKey ?? "INTERPRETER_API_KEY (envKey)"}`,
      })),
      { title: "interpreter: which provider is the key for?" },
    );
    if (!picked) return;
    const key = await vscode.window.showInputBox({
      title: `API key for ${picked.label}`,
      prompt: "Kept in VS Code's secret storage, never in settings; passed to the server's environment.",
      password: true,
      ignoreFocusOut: true,
    });
    if (!key?.trim()) return;
    await deps.secrets.store(secretName(picked.label), key.trim());
    output.info(`stored an API key for ${picked.label}; restarting the server`);
    deps.restartSoon();
  });

  register("interpreter.clearApiKey", "Clear API Key", async () => {
    const s = deps.settings();
    const ids = Object.keys(PROVIDERS).filter((p) => PROVIDERS[p].envKey);
    if (s.provider && !isBuiltIn(s.provider)) ids.push(s.provider);
    const stored: string[] = [];
    for (const id of ids) {
      if (await deps.secrets.get(secretName(id))) stored.push(id);
    }
    if (stored.length === 0) {
      void vscode.window.showInformationMessage("interpreter: no API key is stored.");
      return;
    }
    const picked = await vscode.window.showQuickPick(stored, { title: "interpreter: forget the key of…" });
    if (!picked) return;
    await deps.secrets.delete(secretName(picked));
    output.info(`removed the API key for ${picked}; restarting the server`);
    deps.restartSoon();
  });
}
