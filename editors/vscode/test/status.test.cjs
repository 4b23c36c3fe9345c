"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { stub, deactivate, activate, run } = require("./helpers.cjs");

test.after(() => deactivate());

async function startExplain(client) {
  stub.openEditor("/w/app.py", [0, 0, 0, 1]);
  await run("interpreter.explain");
  return client.requests.at(-1).params.workDoneToken;
}

test("$/progress drives the status bar and a cancellable notification", async () => {
  const { client, item } = await activate({ "interpreter.model": "kimi-k3" });
  const token = await startExplain(client);
  client.progress(token, { kind: "begin", title: "interpreter: Explain", cancellable: true, message: "starting" });
  assert.equal(item.text, "$(loading~spin) interpreter: Explain · starting");
  assert.equal(item.command, "interpreter.cancel");
  client.progress(token, { kind: "report", message: "read_file app.py" });
  assert.equal(item.text, "$(loading~spin) interpreter: Explain · read_file app.py");
  const notification = stub.state.progress.at(-1);
  assert.equal(notification.options.cancellable, true);
  assert.deepEqual(notification.reports, [{ message: "read_file app.py" }]);

  notification.cancel.fire();
  assert.deepEqual(client.notifications.at(-1), { method: "window/workDoneProgress/cancel", params: { token } });

  client.progress(token, { kind: "end", message: "explained" });
  await stub.tick();
  assert.equal(item.text, "$(sparkle) kimi-k3");
  assert.equal(notification.done, true);
  assert.throws(() => client.progress(token, { kind: "report" }), /no progress handler/, "the listener is gone");
});

test("two actions at once: the newest is shown with a count", async () => {
  const { client, item } = await activate({ "interpreter.model": "m" });
  const a = await startExplain(client);
  const b = await startExplain(client);
  client.progress(a, { kind: "begin", title: "interpreter: Explain" });
  client.progress(b, { kind: "begin", title: "interpreter: Fix" });
  assert.equal(item.text, "$(loading~spin) interpreter: Fix (+1)");
  client.progress(b, { kind: "end" });
  assert.equal(item.text, "$(loading~spin) interpreter: Explain");
  client.progress(a, { kind: "end" });
  assert.equal(item.text, "$(sparkle) m");
});

test("an error from the server (window/showMessage) is the last error, with a way to set the key", async () => {
  const { client, item } = await activate({ "interpreter.model": "kimi-k3" });
  const message = "interpreter: no API key for provider `kimi`: set MOONSHOT_API_KEY or run `interpreter login`";
  client.showMessage(stub.languageclient.MessageType.Error, message);
  assert.equal(item.text, "$(error) kimi-k3");
  assert.equal(item.backgroundColor.id, "statusBarItem.errorBackground");
  assert.match(item.tooltip, /Last error \(.*\): interpreter: no API key/);
  const shown = stub.state.messages.at(-1);
  assert.equal(shown.kind, "error");
  assert.deepEqual(shown.actions, ["Set API Key…", "Show Logs"]);

  // The next action clears the error icon; the tooltip keeps the last error.
  const token = await startExplain(client);
  client.progress(token, { kind: "begin", title: "interpreter: Explain" });
  client.progress(token, { kind: "end" });
  assert.equal(item.text, "$(sparkle) kimi-k3");
  assert.match(item.tooltip, /Last error/);
});

test("warnings and information from the server become notifications, not errors", async () => {
  const { client, item } = await activate({ "interpreter.model": "m" });
  client.showMessage(stub.languageclient.MessageType.Warning, "interpreter: unknown setting `x` ignored");
  client.showMessage(stub.languageclient.MessageType.Info, "interpreter: Fix changed nothing");
  assert.deepEqual(
    stub.state.messages.map((m) => m.kind),
    ["warning", "info"],
  );
  assert.equal(item.text, "$(sparkle) m");
});

test("a server that stops by itself shows as stopped", async () => {
  const { client, item } = await activate({ "interpreter.model": "m" });
  const token = await startExplain(client);
  client.progress(token, { kind: "begin", title: "interpreter: Explain" });
  client.setState(stub.State.Stopped);
  assert.equal(item.text, "$(circle-slash) m");
  assert.match(item.tooltip, /not running: the server stopped/);
  assert.equal(stub.state.progress.at(-1).done || (await stub.tick(), stub.state.progress.at(-1).done), true);
});
