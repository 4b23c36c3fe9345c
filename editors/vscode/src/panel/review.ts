// "The editor is the file system": the agent reads open documents (unsaved text included),
// and its writes become WorkspaceEdits on them: undoable, and not saved until the user keeps
// them. Each edited file waits in the review bar for Keep or Undo; Review opens VS Code's diff
// editor with the text before the agent's first edit on the left. Undoing turns in the chat
// takes back these unsaved edits too: the agent's checkpoints only see the disk.

import * as path from "node:path";
import * as vscode from "vscode";

import type { DocumentStore, EditSink } from "../acp/files";
import { countChanges } from "../shared/diff";
import type { ReviewFile } from "../shared/protocol";

export const ORIGINAL_SCHEME = "interpreter-original";

interface Pending {
  uri: vscode.Uri;
  /** The text before the agent's first edit; null for a file the agent created. */
  original: string | null;
  /** Whether the document had unsaved changes of the user's before that edit. */
  wasDirty: boolean;
  /** The text before each chat turn's first edit of the file, oldest first (null: absent). */
  turns: { turn: number; before: string | null }[];
  /** The text the agent's last write left: other text in the document is the user's. */
  written: string;
}

function fullRange(doc: vscode.TextDocument): vscode.Range {
  return new vscode.Range(new vscode.Position(0, 0), doc.lineAt(doc.lineCount - 1).range.end);
}

export class ReviewManager implements DocumentStore, EditSink, vscode.Disposable {
  private readonly pending = new Map<string, Pending>();
  private readonly changed = new vscode.EventEmitter<ReviewFile[]>();
  /** Fires with the files still waiting whenever the list or a file's counts change. */
  readonly onDidChangeFiles = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  /** The chat turn the agent's writes belong to (the controller counts them). */
  private turn = 0;

  constructor(private readonly roots: () => string[]) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, { provideTextDocumentContent: (u) => this.originalText(u) }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.pending.has(e.document.uri.fsPath)) this.fire();
      }),
      this.changed,
    );
  }

  /** DocumentStore: the open document's text, unsaved edits included. */
  textOf(p: string): string | undefined {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === p);
    return doc?.getText();
  }

  /** Writes from now on belong to chat turn `turn` (what `takeBack` counts in). */
  startTurn(turn: number): void {
    this.turn = turn;
  }

  /** EditSink: the agent's write as a WorkspaceEdit on the document (the disk waits for Keep). */
  async write(p: string, content: string): Promise<void> {
    const uri = vscode.Uri.file(p);
    const edit = new vscode.WorkspaceEdit();
    let doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === p);
    let created = false;
    if (!doc) {
      let exists = true;
      try {
        await vscode.workspace.fs.stat(uri);
      } catch {
        exists = false;
      }
      if (!exists) {
        // A new file: created empty (the agent's next read must find it), its text unsaved.
        const create = new vscode.WorkspaceEdit();
        create.createFile(uri, { ignoreIfExists: true });
        if (!(await vscode.workspace.applyEdit(create))) throw new Error(`VS Code refused to create ${p}`);
        created = true;
      }
      doc = await vscode.workspace.openTextDocument(uri);
    }
    const before = created ? null : doc.getText();
    const e = this.pending.get(p) ?? { uri, original: before, wasDirty: doc.isDirty, turns: [], written: "" };
    this.pending.set(p, e);
    if (e.turns.at(-1)?.turn !== this.turn) e.turns.push({ turn: this.turn, before });
    e.written = content;
    if (doc.getText() === content) {
      this.fire();
      return;
    }
    edit.replace(uri, fullRange(doc), content);
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`VS Code refused the edit of ${p}`);
    // Shown without taking the focus, so the edit is visible and its document stays open.
    await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
    this.fire();
  }

  /** The files waiting for review, with their line counts against the original text. */
  files(): ReviewFile[] {
    const out: ReviewFile[] = [];
    for (const [p, e] of this.pending) {
      const now = this.textOf(p) ?? "";
      const { added, removed } = countChanges(e.original, now);
      out.push({ path: p, label: this.label(p), added, removed, created: e.original === null });
    }
    return out;
  }

  private label(p: string): string {
    for (const r of this.roots()) {
      const rel = path.relative(r, p);
      if (!rel.startsWith("..") && !path.isAbsolute(rel)) return rel;
    }
    return p;
  }

  private fire(): void {
    this.changed.fire(this.files());
  }

  private targets(p?: string): [string, Pending][] {
    if (p === undefined) return [...this.pending];
    const e = this.pending.get(p);
    return e ? [[p, e]] : [];
  }

  /** Keep: saves the documents, which writes the agent's text to disk. */
  async keep(p?: string): Promise<void> {
    for (const [key, e] of this.targets(p)) {
      const doc = await vscode.workspace.openTextDocument(e.uri);
      this.pending.delete(key);
      if (doc.isDirty && !(await doc.save())) throw new Error(`could not save ${key}`);
    }
    this.fire();
  }

  /** Undo: puts the original text back (a created file is deleted). */
  async undo(p?: string): Promise<void> {
    for (const [key, e] of this.targets(p)) {
      this.pending.delete(key);
      await this.putBack(e);
    }
    this.fire();
  }

  private async putBack(e: Pending): Promise<void> {
    const edit = new vscode.WorkspaceEdit();
    if (e.original === null) {
      // Created first in case an undo in the chat removed it already: deleting the file is
      // what drops the document's unsaved text.
      edit.createFile(e.uri, { ignoreIfExists: true });
      edit.deleteFile(e.uri, { ignoreIfNotExists: true });
      await vscode.workspace.applyEdit(edit);
      return;
    }
    const doc = await vscode.workspace.openTextDocument(e.uri);
    edit.replace(e.uri, fullRange(doc), e.original);
    await vscode.workspace.applyEdit(edit);
    // The disk still holds the original: a document the user had not touched is clean again.
    // (Also after an auto save put the agent's text on disk.)
    if (!e.wasDirty) await doc.save();
  }

  /**
   * Turns taken back in the chat, from chat turn `turn` on: each file goes back to its text
   * before the first of them edited it, and leaves the review bar when that was the agent's
   * first edit. A file the user changed after the agent's last write is kept. (The agent
   * leaves files with unsaved changes alone: these edits are the panel's to take back.)
   */
  async takeBack(turn: number): Promise<{ reverted: string[]; kept: string[] }> {
    const reverted: string[] = [];
    const kept: string[] = [];
    for (const [p, e] of [...this.pending]) {
      const at = e.turns.findIndex((t) => t.turn >= turn);
      if (at < 0) continue;
      const now = this.textOf(p);
      if (now !== undefined && now !== e.written) {
        kept.push(p);
        continue;
      }
      reverted.push(p);
      const before = e.turns[at].before;
      if (at === 0 || before === null) {
        this.pending.delete(p);
        await this.putBack({ ...e, original: before });
        continue;
      }
      // Earlier turns' edits stay for review.
      e.turns.length = at;
      e.written = before;
      const doc = await vscode.workspace.openTextDocument(e.uri);
      const edit = new vscode.WorkspaceEdit();
      edit.replace(e.uri, fullRange(doc), before);
      await vscode.workspace.applyEdit(edit);
    }
    this.fire();
    return { reverted, kept };
  }

  /** Review: the diff editor, the original on the left and the document (editable) on the right. */
  async review(p: string): Promise<void> {
    const e = this.pending.get(p);
    if (!e) return;
    const original = vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: e.uri.path, query: String(Date.now()) });
    await vscode.commands.executeCommand("vscode.diff", original, e.uri, `${this.label(p)} (interpreter's edits)`, {
      preview: true,
    });
  }

  private originalText(uri: vscode.Uri): string {
    return this.pending.get(vscode.Uri.file(uri.path).fsPath)?.original ?? "";
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
