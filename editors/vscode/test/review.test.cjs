"use strict";

// The review flow with the real agent: `interpreter acp` writes through fs/write_text_file,
// the extension's ReviewManager turns it into a WorkspaceEdit (recorded by the vscode stub),
// the disk waits for Keep; Undo restores; Review opens the diff against the original.

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const stub = require("./vscode-stub.cjs");
const { setup, textReply, toolReply } = require("./agent-helpers.cjs");
const { ReviewManager, ORIGINAL_SCHEME } = require("../out/panel/review.js");

const TIMEOUT = { timeout: 40_000 };
const patch = (file) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-old line\n+new line\n*** End Patch\n`;
const addPatch = "*** Begin Patch\n*** Add File: fresh.txt\n+hello\n*** End Patch\n";

async function reviewRun(t, replies) {
  stub.reset();
  const ctx = await setup(t, { replies });
  const review = new ReviewManager(() => [ctx.work]);
  t.after(() => review.dispose());
  const files = [];
  review.onDidChangeFiles((f) => files.push(f));
  // The agent talks to the real review manager instead of the fake editor.
  ctx.agent.host.documents = review;
  ctx.agent.host.edits = review;
  const { sessionId } = await ctx.agent.newSession(ctx.work);
  return { ctx, review, files, sessionId };
}

test("an agent write is a WorkspaceEdit on the document; Keep saves it", TIMEOUT, async (t) => {
  const { ctx, review, sessionId } = await reviewRun(t, [toolReply("call_1", "apply_patch", { input: patch("a.txt") }), textReply("Done.")]);
  const file = path.join(ctx.work, "a.txt");
  fs.writeFileSync(file, "old line\n");
  const res = await ctx.agent.prompt(sessionId, [{ type: "text", text: "edit a.txt" }]);
  assert.equal(res.stopReason, "end_turn");
  const replaces = stub.state.appliedEdits.flatMap((e) => e.ops).filter((o) => o.op === "replace");
  assert.equal(replaces.length, 1);
  assert.equal(replaces[0].uri.fsPath, file);
  assert.equal(replaces[0].newText, "new line\n");
  const doc = stub.state.textDocuments.find((d) => d.uri.fsPath === file);
  assert.equal(doc.getText(), "new line\n");
  assert.equal(doc.isDirty, true);
  assert.equal(fs.readFileSync(file, "utf8"), "old line\n", "nothing on disk before Keep");
  assert.deepEqual(stub.state.shown.map((s) => [s.path, s.options.preserveFocus]), [[file, true]]);
  assert.deepEqual(review.files(), [{ path: file, label: "a.txt", added: 1, removed: 1, created: false }]);

  // Review: the diff editor, the original text on the left.
  await review.review(file);
  const diff = stub.state.executed.find((e) => e.id === "vscode.diff");
  assert.equal(diff.args[0].scheme, ORIGINAL_SCHEME);
  assert.equal(stub.state.contentProviders.get(ORIGINAL_SCHEME).provideTextDocumentContent(diff.args[0]), "old line\n");
  assert.equal(diff.args[1].fsPath, file);

  await review.keep(file);
  assert.equal(fs.readFileSync(file, "utf8"), "new line\n");
  assert.deepEqual(review.files(), []);
});

test("Undo puts the original back (and deletes a file the agent created)", TIMEOUT, async (t) => {
  const { ctx, review, sessionId } = await reviewRun(t, [
    toolReply("call_1", "apply_patch", { input: patch("a.txt") }),
    toolReply("call_2", "apply_patch", { input: addPatch }),
    textReply("Done."),
  ]);
  const file = path.join(ctx.work, "a.txt");
  const fresh = path.join(ctx.work, "fresh.txt");
  fs.writeFileSync(file, "old line\n");
  await ctx.agent.prompt(sessionId, [{ type: "text", text: "edit" }]);
  const listed = review.files();
  assert.deepEqual(listed.map((f) => [f.label, f.created]), [["a.txt", false], ["fresh.txt", true]]);
  assert.equal(stub.state.textDocuments.find((d) => d.uri.fsPath === fresh).getText(), "hello\n");
  assert.equal(fs.readFileSync(fresh, "utf8"), "", "a new file is created empty; its text waits for Keep");
  await review.undo();
  assert.equal(stub.state.textDocuments.find((d) => d.uri.fsPath === file).getText(), "old line\n");
  assert.equal(fs.readFileSync(file, "utf8"), "old line\n");
  assert.ok(!fs.existsSync(fresh), "Undo deletes the created file");
  assert.deepEqual(review.files(), []);
});

test("a read sees the open document's unsaved text, through the review manager", TIMEOUT, async (t) => {
  const { ctx, sessionId } = await reviewRun(t, [toolReply("call_r", "read_file", { path: "n.txt" }), textReply("ok")]);
  const file = path.join(ctx.work, "n.txt");
  fs.writeFileSync(file, "on disk\n");
  const doc = new stub.TextDocument(stub.vscode.Uri.file(file), "in the buffer\n");
  doc.isDirty = true;
  stub.state.textDocuments.push(doc);
  await ctx.agent.prompt(sessionId, [{ type: "text", text: "read" }]);
  const reqs = await ctx.mock.modelRequests();
  assert.match(JSON.stringify(reqs[1].body.messages), /in the buffer/);
});
