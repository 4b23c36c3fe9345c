// The server's AI actions and the one argument each `workspace/executeCommand` takes
// (crates/lsp/src/actions.rs, docs/lsp.md). Pure: takes plain data, so the shapes
// are unit-tested without an editor.

/** The server's command ids. The extension registers these itself (see client.ts). */
export const SERVER_COMMANDS = {
  fix: "interpreter.fix",
  explain: "interpreter.explain",
  refactor: "interpreter.refactor",
  writeTests: "interpreter.writeTests",
  ask: "interpreter.ask",
} as const;

export type ServerCommand = (typeof SERVER_COMMANDS)[keyof typeof SERVER_COMMANDS];

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface LspDiagnostic {
  range: LspRange;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number;
}

/** `{uri, range, diagnostics?, prompt?}`. */
export interface CommandArgs {
  uri: string;
  range: LspRange;
  diagnostics?: LspDiagnostic[];
  prompt?: string;
}

function isPosition(v: unknown): v is LspPosition {
  const p = v as LspPosition;
  return (
    typeof p === "object" &&
    p !== null &&
    Number.isInteger(p.line) &&
    Number.isInteger(p.character) &&
    p.line >= 0 &&
    p.character >= 0
  );
}

function isRange(v: unknown): v is LspRange {
  const r = v as LspRange;
  return typeof r === "object" && r !== null && isPosition(r.start) && isPosition(r.end);
}

/**
 * The argument a code action from the light bulb carries, if `v` is one. Anything else
 * (nothing, when run from the palette; a malformed value) gives undefined.
 */
export function codeActionArgs(v: unknown): CommandArgs | undefined {
  const a = v as CommandArgs;
  if (typeof a !== "object" || a === null || typeof a.uri !== "string" || !isRange(a.range)) {
    return undefined;
  }
  const out: CommandArgs = { uri: a.uri, range: a.range };
  if (Array.isArray(a.diagnostics)) out.diagnostics = a.diagnostics;
  if (typeof a.prompt === "string" && a.prompt.trim()) out.prompt = a.prompt;
  return out;
}

/** VS Code's DiagnosticSeverity (Error 0 … Hint 3) to LSP's (Error 1 … Hint 4). */
export function lspSeverity(vscodeSeverity: number | undefined): number | undefined {
  return vscodeSeverity === undefined ? undefined : vscodeSeverity + 1;
}

/** The plain shape of a VS Code diagnostic that this module needs. */
export interface EditorDiagnostic {
  range: LspRange;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number | { value: string | number };
}

export function toLspDiagnostic(d: EditorDiagnostic): LspDiagnostic {
  const out: LspDiagnostic = { range: d.range, message: d.message };
  const severity = lspSeverity(d.severity);
  if (severity !== undefined) out.severity = severity;
  if (d.source) out.source = d.source;
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  if (code !== undefined) out.code = code;
  return out;
}

function overlaps(a: LspRange, b: LspRange): boolean {
  const before = (p: LspPosition, q: LspPosition) =>
    p.line < q.line || (p.line === q.line && p.character < q.character);
  return !before(a.end, b.start) && !before(b.end, a.start);
}

/**
 * The diagnostics to fix for `interpreter.fixDiagnostics`: those touching the selection (or
 * the cursor's line when nothing is selected); if none do, every diagnostic in the file.
 * Returns them with the range to send: the selection if there is one, else the span of the
 * chosen diagnostics.
 */
export function diagnosticsToFix(
  selection: LspRange,
  all: EditorDiagnostic[],
): { range: LspRange; diagnostics: LspDiagnostic[] } | undefined {
  if (all.length === 0) return undefined;
  const empty =
    selection.start.line === selection.end.line && selection.start.character === selection.end.character;
  const probe: LspRange = empty
    ? {
        start: { line: selection.start.line, character: 0 },
        end: { line: selection.start.line, character: Number.MAX_SAFE_INTEGER },
      }
    : selection;
  const near = all.filter((d) => overlaps(d.range, probe));
  const chosen = (near.length > 0 ? near : all).map(toLspDiagnostic);
  if (!empty) return { range: selection, diagnostics: chosen };
  const first = chosen.reduce((a, d) => (compare(d.range.start, a) < 0 ? d.range.start : a), chosen[0].range.start);
  const last = chosen.reduce((a, d) => (compare(d.range.end, a) > 0 ? d.range.end : a), chosen[0].range.end);
  return { range: { start: first, end: last }, diagnostics: chosen };
}

function compare(p: LspPosition, q: LspPosition): number {
  return p.line - q.line || p.character - q.character;
}
