"use strict";

// fs/* on the client side: reads from open documents, writes refused outside the workspace.

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { readText, writeText, insideRoots, sliceLines, FsError } = require("../out/acp/files.js");

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "interp-files-")));

test("reads: the open document first, else the disk; line and limit are 1-based lines", () => {
  const dir = tmp();
  const f = path.join(dir, "a.txt");
  fs.writeFileSync(f, "disk 1\ndisk 2\n");
  const open = new Map([[f, "buf 1\nbuf 2\nbuf 3\n"]]);
  const docs = { textOf: (p) => open.get(p) };
  assert.equal(readText(docs, { path: f }), "buf 1\nbuf 2\nbuf 3\n");
  assert.equal(readText(docs, { path: f, line: 2, limit: 1 }), "buf 2\n");
  assert.equal(readText(docs, { path: f, line: 2 }), "buf 2\nbuf 3\n");
  open.clear();
  assert.equal(readText(docs, { path: f }), "disk 1\ndisk 2\n");
  assert.throws(() => readText(docs, { path: "rel.txt" }), (e) => e instanceof FsError && e.code === -32602);
  assert.throws(() => readText(docs, { path: path.join(dir, "none") }), (e) => e instanceof FsError && e.code === -32002);
  assert.equal(sliceLines("a\nb", 2, 5), "b");
});

test("writes go to the sink inside the workspace and are refused outside it, symlinks included", async () => {
  const dir = tmp();
  const work = path.join(dir, "work");
  const outside = path.join(dir, "outside");
  fs.mkdirSync(work);
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, path.join(work, "link"));
  const writes = [];
  const sink = { write: async (p, c) => writes.push([p, c]) };
  await writeText(sink, [work], { path: path.join(work, "new/dir/file.txt"), content: "x", sessionId: "s" });
  assert.deepEqual(writes, [[path.join(work, "new/dir/file.txt"), "x"]]);
  for (const p of [path.join(outside, "f.txt"), path.join(work, "../outside/f.txt"), path.join(work, "link/f.txt"), "/etc/passwd"]) {
    await assert.rejects(writeText(sink, [work], { path: p, content: "x", sessionId: "s" }), (e) => e instanceof FsError && /outside the workspace folders/.test(e.message), p);
  }
  await assert.rejects(writeText(sink, [work], { path: "rel.txt", content: "x", sessionId: "s" }), /absolute path/);
  assert.equal(writes.length, 1);
  assert.ok(insideRoots(work, [work]));
  assert.ok(!insideRoots(`${work}-sibling/x`, [work]));
});
