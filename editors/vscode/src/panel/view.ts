// The chat panel: a webview view in the activity bar (movable to the secondary side bar).
// Its page loads only the bundled dist/webview.{js,css}, under a CSP with a fresh nonce.

import { randomBytes } from "node:crypto";
import * as vscode from "vscode";

import type { WebviewMessage } from "../shared/protocol";
import type { ChatController } from "./chat";

export const VIEW_ID = "interpreter.chat";

export function csp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    "img-src data:",
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join("; ");
}

export function pageHtml(cspSource: string, scriptUri: string, styleUri: string, nonce = randomBytes(16).toString("base64")): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp(cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" nonce="${nonce}" href="${styleUri}">
<title>interpreter</title>
</head>
<body>
<div id="app" aria-label="interpreter chat"></div>
<script nonce="${nonce}" src="${scriptUri}"></script>
</body>
</html>`;
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view?: vscode.WebviewView;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: ChatController,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    const webview = view.webview;
    webview.options = { enableScripts: true, localResourceRoots: [dist] };
    webview.html = pageHtml(
      webview.cspSource,
      webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js")).toString(),
      webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.css")).toString(),
    );
    this.chat.attach(webview);
    this.chat.visible = () => view.visible;
    const sub = webview.onDidReceiveMessage((m: WebviewMessage) => void this.chat.handle(m));
    view.onDidDispose(() => {
      sub.dispose();
      this.chat.detach(webview);
      if (this.view === view) {
        this.view = undefined;
        this.chat.visible = () => false;
      }
    });
  }

  /** Shows the panel (for commands that add to the chat). */
  async reveal(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }
}
