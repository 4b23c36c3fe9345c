// Notifications shared by the language client and the chat panel.

import * as vscode from "vscode";

import { INSTALL_DOCS } from "./binary";

let lastShown = { message: "", at: 0 };

/**
 * A missing or non-executable binary: an error with a button to the install docs and one to
 * the setting. The LSP client and the panel both resolve the binary; one notice is enough.
 */
export function reportMissingBinary(message: string): void {
  const now = Date.now();
  if (lastShown.message === message && now - lastShown.at < 10_000) return;
  lastShown = { message, at: now };
  void vscode.window
    .showErrorMessage(`interpreter: ${message}`, "Install…", "Open Settings")
    .then((choice) => {
      if (choice === "Install…") {
        void vscode.env.openExternal(vscode.Uri.parse(INSTALL_DOCS));
      } else if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "interpreter.path");
      }
    });
}

/** For tests: forget the last notice. */
export function resetNotices(): void {
  lastShown = { message: "", at: 0 };
}
