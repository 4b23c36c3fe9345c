"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { stub, deactivate, activate, run, FAKE_BIN } = require("./helpers.cjs");
const { COMMAND_IDS } = require("../out/commands.js");

test.after(() => deactivate());

test("activation starts `interpreter lsp` over stdio with the settings and the stored key", async () => {
  const { client } = await activate(
    {
      "interpreter.path": FAKE_BIN,
      "interpreter.provider": "kimi",
      "interpreter.model": "kimi-k3",
      "interpreter.harness": "kimi-code",
      "interpreter.extraArgs": ["--profile", "fast"],
    },
    { "interpreter.apiKey.kimi": "sk-test-123" },
  );
  assert.equal(stub.state.clients.length, 1);
  assert.equal(client.id, "interpreter");
  const so = client.serverOptions;
  assert.equal(so.command, FAKE_BIN);
  assert.deepEqual(so.args, ["lsp", "--profile", "fast"]);
  assert.equal(so.transport, stub.languageclient.TransportKind.stdio, "the client appends --stdio");
  assert.equal(so.options.env.MOONSHOT_API_KEY, "sk-test-123");
  assert.equal(so.options.env.PATH, process.env.PATH, "the rest of the environment is kept");
  assert.deepEqual(client.clientOptions.initializationOptions, {
    provider: "kimi",
    model: "kimi-k3",
    harness: "kimi-code",
  });
  assert.deepEqual(client.clientOptions.documentSelector, [{ scheme: "file" }, { scheme: "untitled" }]);
  assert.equal(client.state, stub.State.Running);
});

test("defaults: `interpreter` from PATH (nothing bundled), no extra args, empty initializationOptions", async () => {
  const saved = process.env.MOONSHOT_API_KEY;
  delete process.env.MOONSHOT_API_KEY;
  try {
    const { client } = await activate();
    assert.equal(client.serverOptions.command, FAKE_BIN, "found on PATH");
    assert.deepEqual(client.serverOptions.args, ["lsp"]);
    assert.deepEqual(client.clientOptions.initializationOptions, {});
    assert.equal(client.serverOptions.options.env.MOONSHOT_API_KEY, undefined);
  } finally {
    if (saved !== undefined) process.env.MOONSHOT_API_KEY = saved;
  }
});

test("every command is registered, and the server's command ids are ours, not the client's", async () => {
  const { client } = await activate();
  for (const id of COMMAND_IDS) {
    assert.ok(stub.state.commands.has(id), `${id} registered`);
  }
  for (const id of ["interpreter.fix", "interpreter.explain", "interpreter.refactor", "interpreter.writeTests", "interpreter.ask"]) {
    assert.ok(stub.state.commands.has(id), `server command ${id} registered by the extension`);
  }
  const methods = client.features.map((f) => f.registrationType?.method);
  assert.ok(methods.includes("textDocument/codeAction"), "code actions still come from the client");
  assert.ok(!methods.includes("workspace/executeCommand"), "the client must not register the command ids again");
});

test("the status bar shows the model once the server runs", async () => {
  const { item } = await activate({ "interpreter.model": "kimi-k2.6" });
  assert.ok(item.shown);
  assert.equal(item.text, "$(sparkle) kimi-k2.6");
  assert.equal(item.command, "interpreter.showLogs");
  const { item: defaultItem } = await activate({ "interpreter.provider": "deepseek" });
  assert.equal(defaultItem.text, "$(sparkle) deepseek-chat");
});

test("a server that cannot start is reported, and commands say why", async () => {
  const { item } = await activate({}, {}, { failStart: new Error(`spawn ${FAKE_BIN} EACCES`) });
  assert.match(item.text, /^\$\(circle-slash\)/);
  assert.match(item.tooltip, /EACCES/);
  const err = stub.state.messages.find((m) => m.kind === "error");
  assert.ok(err.text.includes(`could not start \`${FAKE_BIN} lsp\`: spawn ${FAKE_BIN} EACCES`), err.text);
  assert.deepEqual(err.actions, ["Open Settings", "Show Logs"]);

  stub.openEditor("/w/a.py", [0, 0, 0, 3]);
  await run("interpreter.explain");
  const last = stub.state.messages.at(-1);
  assert.equal(last.kind, "error");
  assert.match(last.text, /Explain failed: could not start/);
});

test("a missing binary is a notification with a button to the install docs, and nothing is spawned", async () => {
  const { item } = await activate({ "interpreter.path": "/nope/interpreter" }, {}, { messageAnswers: ["Install…"] });
  assert.equal(stub.state.clients.length, 0, "no language client for a missing binary");
  assert.match(item.tooltip, /\/nope\/interpreter, which does not exist/);
  const err = stub.state.messages.find((m) => m.kind === "error");
  assert.match(err.text, /^interpreter: interpreter.path names \/nope\/interpreter, which does not exist/);
  assert.deepEqual(err.actions, ["Install…", "Open Settings"]);
  await stub.tick(1);
  assert.deepEqual(stub.state.opened, ["https://github.com/openinterpreter/interpreter/blob/main/docs/vscode.md#install"]);
});

test("a non-executable interpreter.path is named as such", async () => {
  const fs = require("node:fs");
  const p = `${FAKE_BIN}-noexec`;
  fs.writeFileSync(p, "", { mode: 0o644 });
  await activate({ "interpreter.path": p });
  const err = stub.state.messages.find((m) => m.kind === "error");
  assert.match(err.text, /which is not executable/);
});

test("restartServer replaces the client; deactivate stops it", async () => {
  const { client } = await activate();
  await run("interpreter.restartServer");
  assert.equal(stub.state.clients.length, 2);
  assert.ok(client.disposed);
  const second = stub.state.clients[1];
  assert.equal(second.state, stub.State.Running);
  await deactivate();
  assert.ok(second.disposed);
});

test("showLogs reveals the output channel the client logs to", async () => {
  const { client } = await activate();
  const channel = stub.state.outputs.find((o) => o.name === "interpreter");
  assert.equal(client.clientOptions.outputChannel, channel);
  await run("interpreter.showLogs");
  assert.equal(channel.shown, 1);
  assert.ok(channel.lines.some((l) => l.includes(`starting ${FAKE_BIN} lsp --stdio (path)`)), channel.lines.join("\n"));
});

test("a failing secret store does not stop the server from starting", async () => {
  const { client } = await activate({}, {}, { secretsFail: new Error("no keyring") });
  assert.equal(client.state, stub.State.Running);
  assert.ok(stub.state.outputs[0].lines.some((l) => l.includes("no keyring")));
});
