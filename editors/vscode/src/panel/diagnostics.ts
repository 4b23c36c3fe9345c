// VS Code's diagnostics as the panel's agent sees them: `vscode.languages.getDiagnostics`
// and `onDidChangeDiagnostics`, in LSP form (see ../acp/diagnostics.ts for the protocol).

import * as vscode from "vscode";

import type { DiagnosticsSource, LspDiagnostic } from "../acp/diagnostics";
import { toLspDiagnostic } from "../actions";

function lsp(d: vscode.Diagnostic): LspDiagnostic {
  const r = d.range;
  const out = toLspDiagnostic({
    range: {
      start: { line: r.start.line, character: r.start.character },
      end: { line: r.end.line, character: r.end.character },
    },
    message: d.message,
    severity: d.severity as number,
    source: d.source,
    code: d.code as string | number | { value: string | number } | undefined,
  });
  return { ...out, severity: out.severity ?? 1 };
}

export const vscodeDiagnostics: DiagnosticsSource = {
  get(path) {
    return vscode.languages.getDiagnostics(vscode.Uri.file(path)).map(lsp);
  },
  all() {
    return vscode.languages
      .getDiagnostics()
      .filter(([uri]) => uri.scheme === "file")
      .map(([uri, list]) => [uri.fsPath, list.map(lsp)] as [string, LspDiagnostic[]]);
  },
  onChange(listener) {
    const sub = vscode.languages.onDidChangeDiagnostics((e) =>
      listener(e.uris.filter((u) => u.scheme === "file").map((u) => u.fsPath)),
    );
    return () => sub.dispose();
  },
};
