"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { stub, deactivate, activate, run } = require("./helpers.cjs");

test.after(() => deactivate());

const range = (a, b, c, d) => ({ start: { line: a, character: b }, end: { line: c, character: d } });

function executeCommands(client) {
  return client.requests.filter((r) => r.method === "workspace/executeCommand").map((r) => r.params);
}

test("ask: the prompt from the input box goes to interpreter.ask with the selection", async () => {
  const { client } = await activate();
  stub.openEditor("/w/app.py", [1, 0, 2, 3]);
  stub.state.inputAnswers.push("  why can this panic?  ");
  await run("interpreter.ask");
  assert.equal(stub.state.inputBoxes.length, 1);
  const [params] = executeCommands(client);
  assert.equal(params.command, "interpreter.ask");
  assert.deepEqual(params.arguments, [{ uri: "file:///w/app.py", range: range(1, 0, 2, 3), prompt: "why can this panic?" }]);
  assert.match(params.workDoneToken, /^interpreter-vscode-\d+$/);
});

test("ask: an empty or dismissed input box sends nothing", async () => {
  const { client } = await activate();
  stub.openEditor("/w/app.py", [0, 0, 0, 0]);
  stub.state.inputAnswers.push(undefined, "   ");
  await run("interpreter.ask");
  await run("interpreter.ask");
  assert.equal(executeCommands(client).length, 0);
});

test("ask from the light bulb: the code action's argument plus the typed prompt", async () => {
  const { client } = await activate();
  stub.state.inputAnswers.push("add input validation");
  await run("interpreter.ask", { uri: "file:///w/other.rs", range: range(4, 2, 4, 9) });
  const [params] = executeCommands(client);
  assert.deepEqual(params.arguments[0], { uri: "file:///w/other.rs", range: range(4, 2, 4, 9), prompt: "add input validation" });
});

test("explain and writeTests send the selection without a prompt", async () => {
  const { client } = await activate();
  stub.openEditor("/w/lib.rs", [3, 0, 9, 1]);
  await run("interpreter.explain");
  await run("interpreter.writeTests");
  const [explain, tests] = executeCommands(client);
  assert.equal(explain.command, "interpreter.explain");
  assert.deepEqual(explain.arguments, [{ uri: "file:///w/lib.rs", range: range(3, 0, 9, 1) }]);
  assert.equal(tests.command, "interpreter.writeTests");
});

test("refactor: an empty instruction means the default, a dismissed box cancels", async () => {
  const { client } = await activate();
  stub.openEditor("/w/lib.rs", [3, 0, 9, 1]);
  stub.state.inputAnswers.push("", undefined, "extract a function");
  await run("interpreter.refactor");
  await run("interpreter.refactor");
  await run("interpreter.refactor");
  const sent = executeCommands(client);
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[0].arguments, [{ uri: "file:///w/lib.rs", range: range(3, 0, 9, 1) }]);
  assert.equal(sent[1].arguments[0].prompt, "extract a function");
});

test("fixDiagnostics: the diagnostics on the cursor's line, in LSP form", async () => {
  const { client } = await activate();
  const uri = stub.openEditor("/w/app.py", [1, 4, 1, 4]);
  const { Range, DiagnosticSeverity } = stub.vscode;
  stub.state.diagnostics.set(uri.toString(), [
    { range: new Range(1, 6, 1, 20), message: "undefined name 'x'", severity: DiagnosticSeverity.Error, source: "pyflakes", code: { value: "F821" } },
    { range: new Range(7, 0, 7, 5), message: "unused import", severity: DiagnosticSeverity.Warning, source: "pyflakes", code: 401 },
  ]);
  await run("interpreter.fixDiagnostics");
  const [params] = executeCommands(client);
  assert.equal(params.command, "interpreter.fix");
  assert.deepEqual(params.arguments, [
    {
      uri: "file:///w/app.py",
      range: range(1, 6, 1, 20),
      diagnostics: [{ range: range(1, 6, 1, 20), message: "undefined name 'x'", severity: 1, source: "pyflakes", code: "F821" }],
    },
  ]);
});

test("fixDiagnostics: with nothing on the cursor's line, every diagnostic in the file", async () => {
  const { client } = await activate();
  const uri = stub.openEditor("/w/app.py", [20, 0, 20, 0]);
  const { Range } = stub.vscode;
  stub.state.diagnostics.set(uri.toString(), [
    { range: new Range(1, 6, 1, 20), message: "a", severity: 0 },
    { range: new Range(7, 0, 7, 5), message: "b", severity: 3 },
  ]);
  await run("interpreter.fixDiagnostics");
  const [params] = executeCommands(client);
  assert.deepEqual(params.arguments[0].range, range(1, 6, 7, 5));
  assert.deepEqual(params.arguments[0].diagnostics.map((d) => d.severity), [1, 4]);
});

test("fixDiagnostics: no diagnostics, no request", async () => {
  const { client } = await activate();
  stub.openEditor("/w/app.py", [0, 0, 0, 0]);
  await run("interpreter.fixDiagnostics");
  assert.equal(executeCommands(client).length, 0);
  assert.match(stub.state.messages.at(-1).text, /no diagnostics/);
});

test("interpreter.fix from the light bulb passes the code action's diagnostics through", async () => {
  const { client } = await activate();
  const arg = { uri: "file:///w/a.ts", range: range(0, 0, 0, 4), diagnostics: [{ range: range(0, 0, 0, 4), message: "x", severity: 1 }] };
  await run("interpreter.fix", arg);
  assert.deepEqual(executeCommands(client)[0].arguments, [arg]);
});

test("commands without an editor warn instead of sending", async () => {
  const { client } = await activate();
  await run("interpreter.explain");
  await run("interpreter.ask");
  assert.equal(executeCommands(client).length, 0);
  assert.equal(stub.state.messages.filter((m) => m.kind === "warning").length, 2);
});

test("a rejected command is an error notification and the status bar's error", async () => {
  const { client, item } = await activate();
  client.requestError = Object.assign(new Error("interpreter.ask needs a `prompt` in its argument"), { code: -32602 });
  stub.openEditor("/w/app.py", [0, 0, 0, 1]);
  await run("interpreter.explain");
  const err = stub.state.messages.at(-1);
  assert.equal(err.kind, "error");
  assert.match(err.text, /Explain failed: interpreter.ask needs a `prompt`/);
  assert.match(item.text, /^\$\(error\)/);
  assert.match(item.tooltip, /Last error/);
});

test("cancel sends window/workDoneProgress/cancel for each running action", async () => {
  const { client } = await activate();
  stub.openEditor("/w/app.py", [0, 0, 0, 1]);
  await run("interpreter.explain");
  const token = executeCommands(client)[0].workDoneToken;
  client.progress(token, { kind: "begin", title: "interpreter: Explain", cancellable: true });
  await run("interpreter.cancel");
  assert.deepEqual(client.notifications, [{ method: "window/workDoneProgress/cancel", params: { token } }]);
  client.progress(token, { kind: "end", message: "cancelled" });
  await run("interpreter.cancel");
  assert.equal(client.notifications.length, 1);
  assert.match(stub.state.messages.at(-1).text, /nothing is running/);
});
