// A small DevTools-protocol client for the code-server e2e checks (Node 22+: global
// WebSocket). Evaluates in the workbench page or in a webview's frame, sends real key and
// mouse events, and takes screenshots.

import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

export { sleep };

export async function connect({ cdpPort, serverPort, runDir, timeoutMs }) {
  const deadline = Date.now() + timeoutMs;
  let url;
  while (!url && Date.now() < deadline) {
    try {
      const targets = await (await fetch(`http://127.0.0.1:${cdpPort}/json`)).json();
      url = targets.find((t) => t.type === "page" && t.url.includes(`127.0.0.1:${serverPort}`))?.webSocketDebuggerUrl;
    } catch {
      // Chromium is still starting.
    }
    if (!url) await sleep(500);
  }
  if (!url) throw new Error("no code-server page in Chromium");
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let nextId = 0;
  const pending = new Map();
  const contexts = new Map(); // frameId → default execution context id
  ws.onmessage = (event) => {
    const msg = JSON.parse(event.data);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(JSON.stringify(msg.error)));
      else resolve(msg.result);
    } else if (msg.method === "Runtime.executionContextCreated") {
      const c = msg.params.context;
      if (c.auxData?.isDefault && c.auxData.frameId) contexts.set(c.auxData.frameId, c.id);
    } else if (msg.method === "Runtime.executionContextDestroyed") {
      for (const [f, id] of contexts) if (id === msg.params.executionContextId) contexts.delete(f);
    }
  };
  const send = (method, params = {}) => {
    const id = ++nextId;
    ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  };

  const cdp = {
    send,
    contexts,
    close: () => ws.close(),
    async evaluate(expression, contextId) {
      const r = await send("Runtime.evaluate", { expression, returnByValue: true, ...(contextId ? { contextId } : {}) });
      if (r.exceptionDetails) throw new Error(`${expression.slice(0, 80)}: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
      return r.result.value;
    },
    async screenshot(name, clip) {
      const { data } = await send("Page.captureScreenshot", { format: "png", ...(clip ? { clip: { ...clip, scale: 1 } } : {}) });
      const file = `${runDir}/${name}`;
      writeFileSync(file, Buffer.from(data, "base64"));
      return file;
    },
    /** Waits until `expression` is truthy (in `contextId`, else the page). */
    async waitFor(what, expression, contextId) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const ctx = typeof contextId === "function" ? await contextId() : contextId;
        try {
          const v = await cdp.evaluate(expression, ctx);
          if (v) {
            console.log(`ok: ${what}`);
            return v;
          }
        } catch {
          // The frame may be reloading.
        }
        await sleep(300);
      }
      await cdp.screenshot("failure.png");
      throw new Error(`timed out waiting for: ${what} (screenshot: ${runDir}/failure.png)`);
    },
    async key(keyName, code, keyCode, modifiers = 0) {
      const base = { key: keyName, code, windowsVirtualKeyCode: keyCode, nativeVirtualKeyCode: keyCode, modifiers };
      await send("Input.dispatchKeyEvent", { type: "keyDown", ...base, ...(keyName.length === 1 ? { text: keyName } : {}) });
      await send("Input.dispatchKeyEvent", { type: "keyUp", ...base });
    },
    /** A real mouse click at page coordinates. */
    async clickAt(x, y) {
      for (const type of ["mouseMoved", "mousePressed", "mouseReleased"]) {
        await send("Input.dispatchMouseEvent", { type, x, y, button: "left", clickCount: 1 });
      }
    },
    /** Clicks the middle of the page element `expression` evaluates to. */
    async click(what, expression) {
      const until = Date.now() + timeoutMs;
      let rect;
      while (Date.now() < until) {
        rect = await cdp.evaluate(`(() => { const el = ${expression}; if (!el) return null; const r = el.getBoundingClientRect(); return r.width ? { x: r.x + Math.min(r.width / 2, 40), y: r.y + r.height / 2 } : null; })()`);
        if (rect) break;
        await sleep(300);
      }
      if (!rect) {
        await cdp.screenshot("failure.png");
        throw new Error(`nothing to click: ${what} (screenshot: ${runDir}/failure.png)`);
      }
      await cdp.clickAt(rect.x, rect.y);
      console.log(`ok: clicked ${what}`);
    },
  };
  await send("Page.enable");
  await send("Runtime.enable");
  return cdp;
}

/** The frame tree flattened: [{id, url, parentId}]. */
export async function frames(cdp) {
  const { frameTree } = await cdp.send("Page.getFrameTree");
  const out = [];
  const walk = (node, parentId) => {
    out.push({ id: node.frame.id, url: node.frame.url, parentId });
    for (const c of node.childFrames ?? []) walk(c, node.frame.id);
  };
  walk(frameTree);
  return out;
}
