// The client side of `fs/read_text_file` and `fs/write_text_file`: the editor's open documents
// are the file system the agent sees. No vscode import: the document store and the edit
// sink are injected (the extension passes VS Code's; the tests pass fakes).

import * as fs from "node:fs";
import * as path from "node:path";

/** The open documents, unsaved edits included. */
export interface DocumentStore {
  /** The text of the open document at this absolute path, or undefined when none is open. */
  textOf(path: string): string | undefined;
}

/** Where the agent's writes go: edits the user reviews, not the disk. */
export interface EditSink {
  write(path: string, content: string, sessionId: string): Promise<void>;
}

export class FsError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** JSON-RPC codes used in answers. */
export const INVALID_PARAMS = -32602;
export const RESOURCE_NOT_FOUND = -32002;

/** The real path of `p`, or of its nearest existing ancestor joined with the rest. */
function realish(p: string): string {
  const rest: string[] = [];
  let cur = p;
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...rest.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return p;
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

/** Whether `p` (absolute) lies inside one of `roots`, symlinks resolved. */
export function insideRoots(p: string, roots: string[]): boolean {
  const target = realish(path.resolve(p));
  return roots.some((r) => {
    const root = realish(path.resolve(r));
    const rel = path.relative(root, target);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  });
}

/** Lines `line` (1-based) to `line + limit - 1` of `text`, as ACP's read asks. */
export function sliceLines(text: string, line?: number | null, limit?: number | null): string {
  if (!line && !limit) return text;
  const lines = text.split(/(?<=\n)/);
  const start = Math.max(0, (line ?? 1) - 1);
  const end = limit ? start + limit : lines.length;
  return lines.slice(start, end).join("");
}

export interface ReadParams {
  path: string;
  line?: number | null;
  limit?: number | null;
}

export function readText(docs: DocumentStore, p: ReadParams): string {
  if (!path.isAbsolute(p.path)) throw new FsError(INVALID_PARAMS, `fs/read_text_file needs an absolute path, got ${p.path}`);
  const open = docs.textOf(p.path);
  if (open !== undefined) return sliceLines(open, p.line, p.limit);
  try {
    return sliceLines(fs.readFileSync(p.path, "utf8"), p.line, p.limit);
  } catch (e) {
    throw new FsError(RESOURCE_NOT_FOUND, `the editor could not read ${p.path}: ${(e as Error).message}`);
  }
}

export async function writeText(
  sink: EditSink,
  roots: string[],
  p: { path: string; content: string; sessionId: string },
): Promise<void> {
  if (!path.isAbsolute(p.path)) throw new FsError(INVALID_PARAMS, `fs/write_text_file needs an absolute path, got ${p.path}`);
  if (!insideRoots(p.path, roots)) {
    throw new FsError(INVALID_PARAMS, `the editor refuses to write ${p.path}: it is outside the workspace folders`);
  }
  await sink.write(path.resolve(p.path), p.content, p.sessionId);
}
