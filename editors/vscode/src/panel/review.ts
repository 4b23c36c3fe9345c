// "The editor is the file system": the agent reads open documents (unsaved text included),
// and its writes become WorkspaceEdits on them: undoable, and not saved until the user keeps
// them. Each edited file waits in the review bar for Keep or Undo; Review opens VS Code's diff
// editor with the text before the agent's first edit on the left.

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

  /** EditSink: the agent's write as a WorkspaceEdit on the document (the disk waits for Keep). */
  async write(p: string, content: string): Promise<void> {
    const uri = vscode.Uri.file(p);
    const edit = new vscode.WorkspaceEdit();
    let doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === p);
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
        if (!this.pending.has(p)) this.pending.set(p, { uri, original: null, wasDirty: false });
      }
      doc = await vscode.workspace.openTextDocument(uri);
    }
    if (!this.pending.has(p)) this.pending.set(p, { uri, original: doc.getText(), wasDirty: doc.isDirty });
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
      const edit = new vscode.WorkspaceEdit();
      if (e.original === null) {
        edit.deleteFile(e.uri, { ignoreIfNotExists: true });
        await vscode.workspace.applyEdit(edit);
        continue;
      }
      const doc = await vscode.workspace.openTextDocument(e.uri);
      edit.replace(e.uri, fullRange(doc), e.original);
      await vscode.workspace.applyEdit(edit);
      // The disk still holds the original: a document the user had not touched is clean again.
      // (Also after an auto save put the agent's text on disk.)
      if (!e.wasDirty) await doc.save();
    }
    this.fire();
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
