"use strict";

// The chat panel's page: a strict CSP with a fresh nonce, and only the bundled script and style.

const test = require("node:test");
const assert = require("node:assert/strict");
const { stub, activate, deactivate } = require("./helpers.cjs");

test.after(() => deactivate());

function fakeView() {
  const posted = [];
  const handlers = [];
  const webview = {
    cspSource: "vscode-webview://x",
    options: undefined,
    html: "",
    asWebviewUri: (u) => ({ toString: () => `vscode-webview://x${u.fsPath}` }),
    postMessage: async (m) => posted.push(m),
    onDidReceiveMessage: (fn) => {
      handlers.push(fn);
      return { dispose() {} };
    },
  };
  return { view: { webview, onDidDispose() {}, show() {} }, posted, send: (m) => Promise.all(handlers.map((h) => h(m))) };
}

test("the chat view's page: CSP with a nonce, no inline or remote code, the bundled files only", async () => {
  await activate();
  const provider = stub.state.webviewProviders.get("interpreter.chat");
  assert.ok(provider, "the webview view provider is registered");
  const { view } = fakeView();
  provider.resolveWebviewView(view);
  const html = view.webview.html;
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)[1];
  const nonce = /'nonce-([^']+)'/.exec(csp)[1];
  assert.ok(nonce.length >= 16);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, new RegExp(`script-src 'nonce-${nonce.replace(/[+/=]/g, "\\$&")}'`));
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
  assert.equal(scripts.length, 1);
  assert.ok(scripts[0].includes(`nonce="${nonce}"`) && scripts[0].includes("/dist/webview.js"));
  assert.ok(html.includes("/dist/webview.css"));
  assert.deepEqual(view.webview.options.localResourceRoots.map((u) => u.fsPath.replace(/.*\//, "")), ["dist"]);
  // A second page gets another nonce.
  const again = fakeView();
  provider.resolveWebviewView(again.view);
  assert.notEqual(/'nonce-([^']+)'/.exec(again.view.webview.html)[1], nonce);
});

test("no workspace folder: the panel says to open one instead of starting a session", async () => {
  await activate();
  const provider = stub.state.webviewProviders.get("interpreter.chat");
  const { view, posted, send } = fakeView();
  provider.resolveWebviewView(view);
  await send({ type: "ready" });
  await stub.tick(5);
  assert.ok(posted.some((m) => m.type === "replay"));
  const err = posted.find((m) => m.type === "error");
  assert.match(err.message, /Open a folder/);
});
