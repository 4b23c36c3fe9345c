// The language client's life cycle: starting `interpreter lsp` with the right command line,
// environment and initializationOptions, restarting it, running the server's commands with
// a progress token of our own, and turning the server's messages into notifications and
// status-bar errors.

import * as vscode from "vscode";
import {
  DynamicFeature,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  MessageType,
  RevealOutputChannelOn,
  ServerOptions,
  ShowMessageNotification,
  State,
  StaticFeature,
  TransportKind,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
} from "vscode-languageclient/node";
import type { WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from "vscode-languageclient/node";

import type { CommandArgs, ServerCommand } from "./actions";
import type { Resolved, Unresolved } from "./binary";
import { reportMissingBinary } from "./notify";
import { PROVIDERS, Settings, isBuiltIn, modelLabel, secretName, serverSpec } from "./settings";
import type { Status } from "./status";

export const CLIENT_ID = "interpreter";

/**
 * A LanguageClient that does not register the server's `workspace/executeCommand` ids as
 * VS Code commands. The extension registers those ids itself: `interpreter.ask` and
 * `interpreter.refactor` need the user's text filled in before they reach the server, and
 * `interpreter.ask`/`interpreter.explain` are also palette commands, so a second
 * registration by the client would fail with "command already exists".
 */
export class InterpreterLanguageClient extends LanguageClient {
  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    const method = (feature as Partial<DynamicFeature<unknown>>).registrationType?.method;
    if (method === ExecuteCommandRequest.method) {
      return;
    }
    super.registerFeature(feature);
  }
}

export interface ManagerDeps {
  output: vscode.LogOutputChannel;
  status: Status;
  secrets: vscode.SecretStorage;
  settings: () => Settings;
  workspaceFolder: () => string | undefined;
  env: NodeJS.ProcessEnv;
  /** The binary to run (binary.ts), resolved at each start. */
  binary: () => Resolved | Unresolved;
}

interface Job {
  title: string;
  dispose: () => void;
  report?: (message: string) => void;
  done?: () => void;
}

function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === "object" && e !== null && "message" in e) return String((e as { message: unknown }).message);
  return String(e);
}

/**
 * Reads every stored key the server might need (see settings.keyEnvironment). A secret
 * store that fails (no keyring on a Linux desktop, say) is logged and treated as empty: the
 * server can still find keys in its environment or config.toml.
 */
export async function storedKeys(
  secrets: vscode.SecretStorage,
  s: Settings,
  output: vscode.LogOutputChannel,
): Promise<Record<string, string | undefined>> {
  const ids = Object.keys(PROVIDERS).filter((p) => PROVIDERS[p].envKey);
  if (s.provider && !isBuiltIn(s.provider)) ids.push(s.provider);
  const keys: Record<string, string | undefined> = {};
  // In parallel: in a remote or web window each read is a round trip.
  await Promise.all(
    ids.map(async (id) => {
      try {
        keys[id] = await secrets.get(secretName(id));
      } catch (e) {
        output.warn(`reading the API key for ${id} from VS Code's secret storage: ${messageOf(e)}`);
      }
    }),
  );
  return keys;
}

export class ServerManager implements vscode.Disposable {
  client?: InterpreterLanguageClient;
  private queue: Promise<void> = Promise.resolve();
  private lastStartError?: string;
  private readonly jobs = new Map<string, Job>();
  private seq = 0;

  constructor(private readonly deps: ManagerDeps) {}

  /** Starts the server (after any start or stop in flight). Never throws. */
  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  private async doStart(): Promise<void> {
    const { output, status } = this.deps;
    const settings = this.deps.settings();
    status.setModel(modelLabel(settings), this.modelDetail(settings));
    status.starting();
    const binary = this.deps.binary();
    if (!binary.ok) {
      this.lastStartError = binary.message;
      output.error(binary.message);
      status.stopped(binary.message);
      reportMissingBinary(binary.message);
      return;
    }
    const keys = await storedKeys(this.deps.secrets, settings, output);
    const spec = serverSpec(settings, keys, this.deps.env, this.deps.workspaceFolder(), binary.command);
    const keyVars = Object.keys(spec.env).filter((k) => this.deps.env[k] !== spec.env[k]);
    output.info(
      `starting ${spec.command} ${spec.args.join(" ")} --stdio (${binary.source})` +
        (keyVars.length ? ` (API keys from VS Code's secret storage in ${keyVars.join(", ")})` : ""),
    );
    const serverOptions: ServerOptions = {
      command: spec.command,
      args: spec.args,
      transport: TransportKind.stdio,
      options: { env: spec.env, cwd: spec.cwd },
    };
    const clientOptions: LanguageClientOptions = {
      // A companion server: it offers its actions in every document.
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      initializationOptions: spec.initializationOptions,
      outputChannel: output,
      traceOutputChannel: output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
    };
    const client = new InterpreterLanguageClient(CLIENT_ID, "interpreter", serverOptions, clientOptions);
    client.onNotification(ShowMessageNotification.type, (params) => this.onShowMessage(params.type, params.message));
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) {
        status.running();
      } else if (e.newState === State.Starting) {
        status.starting();
      } else if (e.newState === State.Stopped) {
        this.finishJobs();
        status.stopped("the server stopped; see the logs (interpreter: Show Logs)");
      }
    });
    this.client = client;
    try {
      await client.start();
      this.lastStartError = undefined;
      status.running();
    } catch (e) {
      const reason = `could not start \`${spec.command} lsp\`: ${messageOf(e)}`;
      this.lastStartError = reason;
      this.client = undefined;
      output.error(reason);
      status.stopped(reason);
      void client.dispose().catch(() => undefined);
      void vscode.window
        .showErrorMessage(
          `interpreter: ${reason}. Install the binary or set interpreter.path.`,
          "Open Settings",
          "Show Logs",
        )
        .then((choice) => {
          if (choice === "Open Settings") {
            void vscode.commands.executeCommand("workbench.action.openSettings", "interpreter.path");
          } else if (choice === "Show Logs") {
            output.show(true);
          }
        });
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.finishJobs();
    if (client) {
      try {
        await client.dispose(2000);
      } catch (e) {
        this.deps.output.warn(`stopping the server: ${messageOf(e)}`);
      }
    }
  }

  private modelDetail(s: Settings): string {
    if (s.model) return s.provider ? `provider ${s.provider}` : "from the settings";
    if (s.provider) return `default model of provider ${s.provider}`;
    return "the default, unless config.toml picks another";
  }

  /** The running client, waiting for a start in flight. Throws why there is none. */
  async ready(): Promise<LanguageClient> {
    await this.queue;
    const client = this.client;
    if (!client || client.state !== State.Running) {
      throw new Error(this.lastStartError ?? "the language server is not running; run interpreter: Restart the Language Server");
    }
    return client;
  }

  /**
   * Runs one of the server's commands with a progress token of our own, so its $/progress
   * drives the status bar and a cancellable notification. Resolves once the server accepted
   * the command; the work goes on in the background.
   */
  async run(command: ServerCommand, args: CommandArgs, title: string): Promise<void> {
    const client = await this.ready();
    const token = `interpreter-vscode-${++this.seq}`;
    const { status, output } = this.deps;
    const job: Job = { title, dispose: () => undefined };
    const listener = client.onProgress(WorkDoneProgress.type, token, (value) => {
      const v = value as WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;
      if (v.kind === "begin") {
        job.title = v.title || title;
        status.jobBegin(token, job.title, v.message);
      } else if (v.kind === "report") {
        status.jobReport(token, v.message);
        if (v.message) job.report?.(v.message);
      } else if (v.kind === "end") {
        if (v.message) output.info(`${job.title}: ${v.message}`);
        this.finishJob(token);
      }
    });
    job.dispose = () => listener.dispose();
    this.jobs.set(token, job);
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `interpreter: ${title}`, cancellable: true },
      (progress, cancel) =>
        new Promise<void>((resolve) => {
          cancel.onCancellationRequested(() => this.cancel(token));
          job.report = (message) => progress.report({ message });
          job.done = resolve;
          if (!this.jobs.has(token)) resolve();
        }),
    );
    try {
      await client.sendRequest(ExecuteCommandRequest.type, {
        command,
        arguments: [args],
        workDoneToken: token,
      });
    } catch (e) {
      this.finishJob(token);
      throw e;
    }
  }

  private finishJob(token: string): void {
    const job = this.jobs.get(token);
    if (!job) return;
    this.jobs.delete(token);
    job.dispose();
    job.done?.();
    this.deps.status.jobEnd(token);
  }

  private finishJobs(): void {
    for (const token of [...this.jobs.keys()]) {
      this.finishJob(token);
    }
  }

  /** Asks the server to stop one job (window/workDoneProgress/cancel). */
  cancel(token: string): void {
    const client = this.client;
    if (client && this.jobs.has(token)) {
      void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
    }
  }

  /** Cancels every running job; returns how many there were. */
  cancelAll(): number {
    const tokens = [...this.jobs.keys()];
    tokens.forEach((t) => this.cancel(t));
    return tokens.length;
  }

  /** `window/showMessage`: shown as a notification; errors also go to the status bar. */
  private onShowMessage(type: MessageType, message: string): void {
    const { output, status } = this.deps;
    if (type === MessageType.Error) {
      output.error(message);
      status.error(message);
      const keyProblem = /api[ _-]?key|_API_KEY|login/i.test(message);
      const actions = keyProblem ? ["Set API Key…", "Show Logs"] : ["Show Logs"];
      void vscode.window.showErrorMessage(message, ...actions).then((choice) => {
        if (choice === "Set API Key…") {
          void vscode.commands.executeCommand("interpreter.setApiKey");
        } else if (choice === "Show Logs") {
          output.show(true);
        }
      });
    } else if (type === MessageType.Warning) {
      output.warn(message);
      void vscode.window.showWarningMessage(message);
    } else {
      output.info(message);
      void vscode.window.showInformationMessage(message);
    }
  }

  dispose(): void {
    void this.stop();
  }
}
