// The client side of `_interpreter/diagnostics`: the agent asks for the editor's diagnostics
// of the files it edits, before and after each edit. No vscode import: the extension passes
// a source over `vscode.languages.getDiagnostics` / `onDidChangeDiagnostics`, tests a fake.
//
// After the agent wrote a file, the answer waits until its diagnostics have changed (the
// language server re-checked it) or a short bound passes; a file not written since it was
// last asked about is answered at once.

import { ACP_DIAGNOSTICS_CAPABILITY, ACP_DIAGNOSTICS_METHOD } from "../shared/extensions";

/** The capability key, in `clientCapabilities._meta`. */
export const DIAGNOSTICS_CAPABILITY = ACP_DIAGNOSTICS_CAPABILITY;
/** The extension method, agent → client. */
export const DIAGNOSTICS_METHOD = ACP_DIAGNOSTICS_METHOD;

/** An LSP diagnostic: zero-based positions, severity 1 error … 4 hint. */
export interface LspDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  message: string;
  source?: string;
  code?: string | number;
}

/** Where diagnostics come from (VS Code's languages API in the extension). */
export interface DiagnosticsSource {
  /** Diagnostics of one file (absolute path). */
  get(path: string): LspDiagnostic[];
  /** Every file that has diagnostics. */
  all(): [string, LspDiagnostic[]][];
  /** Calls `listener` with the paths whose diagnostics changed; returns the unsubscribe. */
  onChange(listener: (paths: string[]) => void): () => void;
}

export interface DiagnosticsParams {
  sessionId: string;
  paths?: string[];
}

export interface DiagnosticsAnswer {
  diagnostics: Record<string, LspDiagnostic[]>;
}

/** How long an answer waits for a written file's diagnostics to change. */
export const SETTLE_MS = 2000;
/** After a change, how long to wait for more before answering (servers publish in bursts). */
const QUIET_MS = 150;

export class DiagnosticsBridge {
  /** Files the agent wrote whose diagnostics have not changed since. */
  private readonly stale = new Set<string>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly source: DiagnosticsSource,
    private readonly settleMs = SETTLE_MS,
  ) {
    this.unsubscribe = source.onChange((paths) => {
      for (const p of paths) this.stale.delete(p);
    });
  }

  /** The agent wrote `path`: the next answer for it waits for the language server. */
  wrote(path: string): void {
    this.stale.add(path);
  }

  async answer(params: DiagnosticsParams): Promise<DiagnosticsAnswer> {
    const paths = Array.isArray(params.paths) ? params.paths.filter((p) => typeof p === "string") : [];
    const waitFor = paths.filter((p) => this.stale.has(p));
    if (waitFor.length > 0) await this.settle(waitFor);
    const diagnostics: Record<string, LspDiagnostic[]> = {};
    if (paths.length === 0) {
      for (const [p, list] of this.source.all()) diagnostics[p] = list;
    } else {
      for (const p of paths) diagnostics[p] = this.source.get(p);
    }
    return { diagnostics };
  }

  /** Waits until none of `paths` is stale any more (then a short quiet spell), or the bound. */
  private settle(paths: string[]): Promise<void> {
    return new Promise((resolve) => {
      let quiet: ReturnType<typeof setTimeout> | undefined;
      const finish = () => {
        clearTimeout(bound);
        if (quiet) clearTimeout(quiet);
        off();
        for (const p of paths) this.stale.delete(p);
        resolve();
      };
      const bound = setTimeout(finish, this.settleMs);
      const off = this.source.onChange(() => {
        if (paths.some((p) => this.stale.has(p))) return;
        if (quiet) clearTimeout(quiet);
        quiet = setTimeout(finish, QUIET_MS);
      });
    });
  }

  dispose(): void {
    this.unsubscribe();
  }
}
