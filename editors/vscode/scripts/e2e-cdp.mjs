// Drives the code-server workbench in headless Chromium over the DevTools protocol, for
// e2e-code-server.sh. Needs Node 22+ (global WebSocket).
//
// usage: node e2e-cdp.mjs <cdp-port> <code-server-port> <run-dir> <timeout-seconds>

import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const [cdpPort, serverPort, runDir, timeoutArg] = process.argv.slice(2);
const timeoutMs = Number(timeoutArg || 120) * 1000;

async function pageSocketUrl() {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const targets = await (await fetch(`http://127.0.0.1:${cdpPort}/json`)).json();
      const page = targets.find((t) => t.type === "page" && t.url.includes(`127.0.0.1:${serverPort}`));
      if (page) return page.webSocketDebuggerUrl;
    } catch {
      // Chromium is still starting.
    }
    await sleep(500);
  }
  throw new Error("no code-server page in Chromium");
}

const ws = new WebSocket(await pageSocketUrl());
await new Promise((resolve, reject) => {
  ws.onopen = resolve;
  ws.onerror = reject;
});
let nextId = 0;
const pending = new Map();
ws.onmessage = (event) => {
  const msg = JSON.parse(event.data);
  if (msg.id && pending.has(msg.id)) {
    const { resolve, reject } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) reject(new Error(JSON.stringify(msg.error)));
    else resolve(msg.result);
  }
};
function send(method, params = {}) {
  const id = ++nextId;
  ws.send(JSON.stringify({ id, method, params }));
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

async function evaluate(expression) {
  const r = await send("Runtime.evaluate", { expression, returnByValue: true });
  return r.result.value;
}

/** Waits until `expression` is truthy in the page. */
async function waitFor(what, expression) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await evaluate(expression)) {
      console.log(`ok: ${what}`);
      return;
    }
    await sleep(500);
  }
  await screenshot("failure.png");
  throw new Error(`timed out waiting for: ${what} (screenshot: ${runDir}/failure.png)`);
}

async function key(keyName, code, keyCode, modifiers = 0) {
  const base = { key: keyName, code, windowsVirtualKeyCode: keyCode, nativeVirtualKeyCode: keyCode, modifiers };
  await send("Input.dispatchKeyEvent", { type: "keyDown", ...base });
  await send("Input.dispatchKeyEvent", { type: "keyUp", ...base });
}

/** Clicks the middle of the element `expression` evaluates to, with real mouse events. */
async function click(what, expression) {
  const deadline = Date.now() + timeoutMs;
  let rect;
  while (Date.now() < deadline) {
    rect = await evaluate(`(() => { const el = ${expression}; if (!el) return null; const r = el.getBoundingClientRect(); return r.width ? { x: r.x + Math.min(r.width / 2, 40), y: r.y + r.height / 2 } : null; })()`);
    if (rect) break;
    await sleep(500);
  }
  if (!rect) {
    await screenshot("failure.png");
    throw new Error(`nothing to click: ${what} (screenshot: ${runDir}/failure.png)`);
  }
  for (const type of ["mouseMoved", "mousePressed", "mouseReleased"]) {
    await send("Input.dispatchMouseEvent", { type, x: rect.x, y: rect.y, button: "left", clickCount: 1 });
  }
  console.log(`ok: clicked ${what}`);
}

async function screenshot(name) {
  const { data } = await send("Page.captureScreenshot", { format: "png" });
  writeFileSync(`${runDir}/${name}`, Buffer.from(data, "base64"));
}

const CTRL = 2;
// Editors render spaces as no-break spaces: compare with all whitespace folded.
const text = (s) => `document.body.innerText.replace(/\\s+/g, ' ').includes(${JSON.stringify(s)})`;

await send("Page.enable");
await send("Runtime.enable");

// The status bar item shows the model once the server runs.
await waitFor("the status bar shows the model", `(document.querySelector('.statusbar')?.innerText ?? '').includes('mock-model')`);

// Open stats.py with Quick Open.
await waitFor("the workbench is ready", `!!document.querySelector('.monaco-workbench .part.editor')`);
await key("p", "KeyP", 80, CTRL);
await sleep(1000);
await send("Input.insertText", { text: "stats.py" });
await sleep(1000);
await key("Enter", "Enter", 13);
await waitFor("stats.py is open", `!!document.querySelector('.monaco-editor .view-lines') && ${text("sum(values)")}`);
await sleep(1500);

// Put the cursor on line 2, then open the light bulb menu there.
await click("line 2 of stats.py", `[...document.querySelectorAll('.monaco-editor .view-line')].find((l) => l.innerText.replace(/\\s+/g, ' ').includes('return sum'))`);
await sleep(2000);
// Ctrl+. (editor.action.quickFix) opens the light bulb's menu at the cursor.
await key(".", "Period", 190, CTRL);
await waitFor("the light bulb lists the server's actions", text("Explain with interpreter"));
await sleep(500);
await screenshot("lightbulb.png");
console.log(`screenshot: ${runDir}/lightbulb.png`);

// Pick "Explain with interpreter": the answer from the mock model opens as a document.
await click(
  "Explain with interpreter",
  `[...document.querySelectorAll('.action-widget .monaco-list-row')].find((r) => r.innerText.includes('Explain with interpreter'))`,
);
await waitFor("the explanation from the mock model opens", text("Hello from the mock model."));
await screenshot("explain.png");
ws.close();
