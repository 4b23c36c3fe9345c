"use strict";

// Which binary runs: interpreter.path, else the bundled bin/interpreter, else PATH.

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { resolveBinary, findOnPath, binaryName, expandSetting } = require("../out/binary.js");

/** A fake file system: path → {exec}. */
function files(map) {
  return {
    isFile: (p) => p in map,
    isExecutable: (p) => Boolean(map[p]?.exec),
  };
}

const ext = "/ext";
const bundled = "/ext/bin/interpreter";

test("the setting wins over the bundled binary and PATH", () => {
  const f = files({ "/opt/i": { exec: true }, [bundled]: { exec: true }, "/usr/bin/interpreter": { exec: true } });
  assert.deepEqual(resolveBinary({ setting: "/opt/i", extensionPath: ext, env: { PATH: "/usr/bin" }, platform: "linux", files: f }), {
    ok: true,
    command: "/opt/i",
    source: "setting",
  });
});

test("no setting: the bundled binary when present and executable", () => {
  const f = files({ [bundled]: { exec: true }, "/usr/bin/interpreter": { exec: true } });
  assert.deepEqual(resolveBinary({ setting: "", extensionPath: ext, env: { PATH: "/usr/bin" }, platform: "linux", files: f }), {
    ok: true,
    command: bundled,
    source: "bundled",
  });
});

test("no setting, bundled binary not executable or absent: PATH", () => {
  for (const map of [{ [bundled]: { exec: false } }, {}]) {
    const f = files({ ...map, "/a/interpreter": { exec: false }, "/b/interpreter": { exec: true } });
    assert.deepEqual(resolveBinary({ setting: "", extensionPath: ext, env: { PATH: "/a:/b" }, platform: "linux", files: f }), {
      ok: true,
      command: "/b/interpreter",
      source: "path",
    });
  }
});

test("nothing anywhere: a message naming the fix; a non-executable bundled binary is mentioned", () => {
  const none = resolveBinary({ setting: "", extensionPath: ext, env: { PATH: "/usr/bin" }, platform: "linux", files: files({}) });
  assert.equal(none.ok, false);
  assert.match(none.message, /not bundled with this extension and not on PATH.*set interpreter\.path/);
  const noexec = resolveBinary({ setting: "", extensionPath: ext, env: { PATH: "" }, platform: "linux", files: files({ [bundled]: { exec: false } }) });
  assert.match(noexec.message, /The bundled \/ext\/bin\/interpreter is not executable/);
});

test("a setting that is missing, not executable, or a name not on PATH fails clearly (no fallback)", () => {
  const f = files({ "/opt/noexec": { exec: false }, [bundled]: { exec: true } });
  const base = { extensionPath: ext, env: { PATH: "/usr/bin" }, platform: "linux", files: f };
  assert.match(resolveBinary({ ...base, setting: "/opt/missing" }).message, /\/opt\/missing, which does not exist/);
  assert.match(resolveBinary({ ...base, setting: "/opt/noexec" }).message, /\/opt\/noexec, which is not executable/);
  assert.match(resolveBinary({ ...base, setting: "my-interpreter" }).message, /`my-interpreter`, and no such program is on PATH/);
});

test("the setting: ~ expands, relative paths are from the workspace folder, names go through PATH", () => {
  assert.equal(expandSetting("~/bin/i", "/w", "/home/u"), "/home/u/bin/i");
  assert.equal(expandSetting("target/debug/interpreter", "/w", "/home/u"), "/w/target/debug/interpreter");
  assert.equal(expandSetting("interpreter", "/w", "/home/u"), "interpreter");
  const f = files({ "/home/u/bin/i": { exec: true }, "/w/target/debug/interpreter": { exec: true }, "/p/interpreter": { exec: true } });
  const base = { extensionPath: ext, env: { PATH: "/p" }, platform: "linux", files: f, workspaceFolder: "/w", home: "/home/u" };
  assert.equal(resolveBinary({ ...base, setting: "~/bin/i" }).command, "/home/u/bin/i");
  assert.equal(resolveBinary({ ...base, setting: "target/debug/interpreter" }).command, "/w/target/debug/interpreter");
  assert.equal(resolveBinary({ ...base, setting: "interpreter" }).command, "/p/interpreter");
});

test("Windows: interpreter.exe is bundled, PATH lookups use PATHEXT", () => {
  assert.equal(binaryName("win32"), "interpreter.exe");
  const exe = path.join("/ext", "bin", "interpreter.exe");
  assert.equal(resolveBinary({ setting: "", extensionPath: "/ext", env: {}, platform: "win32", files: files({ [exe]: {} }) }).command, exe);
  const onPath = path.join("C:/tools", "interpreter.EXE");
  assert.equal(findOnPath("interpreter", { PATH: "C:/tools", PATHEXT: ".COM;.EXE" }, "win32", files({ [onPath]: {} })), onPath);
});

test("real files: the exec bit decides", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "interp-binary-"));
  fs.mkdirSync(path.join(dir, "bin"));
  const b = path.join(dir, "bin", "interpreter");
  fs.writeFileSync(b, "#!/bin/sh\n", { mode: 0o644 });
  assert.equal(resolveBinary({ setting: "", extensionPath: dir, env: { PATH: "" } }).ok, false);
  fs.chmodSync(b, 0o755);
  assert.deepEqual(resolveBinary({ setting: "", extensionPath: dir, env: { PATH: "" } }), { ok: true, command: b, source: "bundled" });
  fs.rmSync(dir, { recursive: true, force: true });
});
