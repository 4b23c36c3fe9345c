// The status-bar item: the model, the running actions' progress (from $/progress) and the
// last error. It only renders what it is told; the server manager feeds it.

import * as vscode from "vscode";

type ServerState = "starting" | "running" | "stopped";

interface Job {
  title: string;
  message?: string;
}

const MAX_MESSAGE = 48;

function clip(s: string, max = MAX_MESSAGE): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

export class Status implements vscode.Disposable {
  private model = "";
  private detail = "";
  private state: ServerState = "starting";
  private stoppedReason?: string;
  private readonly jobs = new Map<string, Job>();
  private lastError?: { message: string; at: Date };
  private errorUnseen = false;

  constructor(private readonly item: vscode.StatusBarItem) {
    item.name = "interpreter";
    this.render();
    item.show();
  }

  /** `label` is the model; `detail` says where it comes from (tooltip). */
  setModel(label: string, detail: string): void {
    this.model = label;
    this.detail = detail;
    this.render();
  }

  starting(): void {
    this.state = "starting";
    this.stoppedReason = undefined;
    this.jobs.clear();
    this.render();
  }

  running(): void {
    this.state = "running";
    this.stoppedReason = undefined;
    this.render();
  }

  stopped(reason?: string): void {
    this.state = "stopped";
    this.stoppedReason = reason;
    this.jobs.clear();
    if (reason) {
      this.recordError(reason);
    }
    this.render();
  }

  jobBegin(token: string, title: string, message?: string): void {
    this.errorUnseen = false;
    this.jobs.set(token, { title, message });
    this.render();
  }

  jobReport(token: string, message?: string): void {
    const job = this.jobs.get(token);
    if (job && message) {
      job.message = message;
      this.render();
    }
  }

  jobEnd(token: string): void {
    this.jobs.delete(token);
    this.render();
  }

  get busy(): boolean {
    return this.jobs.size > 0;
  }

  error(message: string): void {
    this.recordError(message);
    this.render();
  }

  private recordError(message: string): void {
    this.lastError = { message, at: new Date() };
    this.errorUnseen = true;
  }

  /** What the item shows; public for tests. */
  render(): void {
    const item = this.item;
    const model = this.model || "interpreter";
    let tooltip = `interpreter: ${model}${this.detail ? ` (${this.detail})` : ""}`;
    item.backgroundColor = undefined;
    if (this.jobs.size > 0) {
      const [job] = [...this.jobs.values()].slice(-1);
      const more = this.jobs.size > 1 ? ` (+${this.jobs.size - 1})` : "";
      item.text = `$(loading~spin) ${clip(job.title)}${more}${job.message ? ` · ${clip(job.message)}` : ""}`;
      tooltip = `${tooltip}\nRunning: ${[...this.jobs.values()].map((j) => j.title).join(", ")}\nClick to cancel.`;
      item.command = "interpreter.cancel";
    } else if (this.state === "starting") {
      item.text = `$(loading~spin) ${model}`;
      tooltip = `${tooltip}\nStarting the language server…`;
      item.command = "interpreter.showLogs";
    } else if (this.state === "stopped") {
      item.text = `$(circle-slash) ${model}`;
      item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
      tooltip = `${tooltip}\nThe language server is not running${this.stoppedReason ? `: ${this.stoppedReason}` : "."}\nClick for the logs.`;
      item.command = "interpreter.showLogs";
    } else if (this.errorUnseen) {
      item.text = `$(error) ${model}`;
      item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
      item.command = "interpreter.showLogs";
    } else {
      item.text = `$(sparkle) ${model}`;
      item.command = "interpreter.showLogs";
    }
    if (this.lastError && this.state !== "stopped") {
      tooltip = `${tooltip}\nLast error (${this.lastError.at.toLocaleTimeString()}): ${this.lastError.message}`;
    }
    item.tooltip = tooltip;
  }

  dispose(): void {
    this.item.dispose();
  }
}
