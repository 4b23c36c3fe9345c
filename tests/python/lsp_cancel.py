"""A second real LSP client: pygls drives `interpreter lsp` over stdio through the cancel path.

The mock model answers slowly (delay_ms), so the agent turn is still waiting when the client
cancels. Checked twice, once per cancellation route:
  1. window/workDoneProgress/cancel with the server-created progress token;
  2. $/cancelRequest with the id of the workspace/executeCommand request.
Each time: progress begins, then ends with "cancelled", and no workspace/applyEdit arrives.

Usage: python lsp_cancel.py <interpreter binary> <mock-llm binary>
Exits non-zero with a message on any failure.
"""

import asyncio
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Union

from lsprotocol import types
from pygls.lsp.client import LanguageClient

DISK = "def add(a, b):\n    return a - b\n"
PATCH = (
    "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n"
    "-    return a - b\n+    return a + b\n*** End Patch\n"
)


def fail(message: str) -> None:
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def slow_reply() -> dict:
    args = json.dumps({"input": PATCH})
    return {
        "delay_ms": 6000,
        "events": [{"tool_call": {"id": "c1", "name": "apply_patch", "arguments": args}}],
    }


def fix_code_action_parsing(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 parses every CodeAction that carries a `command` as a Command
    (its hook only checks for the key). Tell them apart by the field's type, as the spec does:
    a Command's `command` is a string, a CodeAction's is an object."""
    converter = client.protocol._converter

    def hook(obj, _):
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], hook)


async def wait_until(what: str, predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def within(awaitable, seconds: float = 20.0):
    """Awaits a request with a deadline, so a lost reply fails the test instead of hanging."""
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError:
        fail(f"no reply within {seconds}s")


def value_of(params) -> dict:
    """$/progress values arrive as plain dicts or lsprotocol objects; normalise."""
    v = params.value
    if isinstance(v, dict):
        return v
    return {"kind": getattr(v, "kind", None), "message": getattr(v, "message", None)}


async def main() -> None:
    interpreter, mock_llm = sys.argv[1], sys.argv[2]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="lsp-cancel-"))
    repo = tmp / "repo"
    home = tmp / "home"
    repo.mkdir()
    home.mkdir()
    (repo / ".git").mkdir()
    (repo / "calc.py").write_text(DISK)
    script = tmp / "script.json"
    script.write_text(json.dumps({"replies": [slow_reply(), slow_reply()]}))
    mock = subprocess.Popen(
        [mock_llm, "--script", str(script), "--exit-on-stdin-eof"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = mock.stdout.readline().split()
    if len(line) != 2 or line[0] != "MOCK_LISTENING":
        fail(f"mock-llm did not start: {line}")
    url = line[1]

    client = LanguageClient("pygls-cancel-test", "1.0")
    fix_code_action_parsing(client)
    created, progress, applied, messages = [], [], [], []

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def on_create(params: types.WorkDoneProgressCreateParams):
        created.append(params.token)
        return None

    @client.feature(types.PROGRESS)
    def on_progress(params):
        progress.append((params.token, value_of(params)))

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params):
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason="test: no edits expected")

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def on_message(params: types.ShowMessageParams):
        messages.append(params.message)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params):
        pass

    env = dict(os.environ)
    env.update({"OPENINTERPRETER_HOME": str(home), "INTERPRETER_LOG": "warn"})
    for var in ("CODEX_HOME", "OPENINTERPRETER_MODEL", "OPENINTERPRETER_PROVIDER", "MOONSHOT_API_KEY"):
        env.pop(var, None)
    await client.start_io(interpreter, "lsp", "--stdio", cwd=str(repo), env=env)

    root_uri = repo.resolve().as_uri()
    result = await within(client.initialize_async(
        types.InitializeParams(
            process_id=os.getpid(),
            root_uri=root_uri,
            workspace_folders=[types.WorkspaceFolder(uri=root_uri, name="repo")],
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                workspace=types.WorkspaceClientCapabilities(
                    apply_edit=True,
                    workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
                ),
                general=types.GeneralClientCapabilities(position_encodings=["utf-16"]),
            ),
            initialization_options={
                "provider": "mock",
                "model": "mock-model",
                "baseUrl": url,
                "wireApi": "chat",
            },
        )
    ))
    if result.capabilities.execute_command_provider is None:
        fail("no executeCommandProvider")
    client.initialized(types.InitializedParams())

    uri = (repo / "calc.py").resolve().as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=DISK)
        )
    )
    diag_range = types.Range(start=types.Position(line=1, character=11), end=types.Position(line=1, character=16))
    actions = await within(client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag_range,
            context=types.CodeActionContext(
                diagnostics=[types.Diagnostic(range=diag_range, message="add subtracts", severity=types.DiagnosticSeverity.Error)]
            ),
        )
    ))
    fix = next((a for a in actions or [] if a.title.startswith("Fix with interpreter")), None)
    if fix is None or fix.command is None:
        fail(f"no 'Fix with interpreter' command in {[a.title for a in actions or []]}")
    params = types.ExecuteCommandParams(command=fix.command.command, arguments=fix.command.arguments)

    async def run(route: str, request_id: str) -> None:
        seen = len(created)
        await within(client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=request_id))
        await wait_until("window/workDoneProgress/create", lambda: len(created) > seen)
        token = created[-1]
        await wait_until(
            "progress begin", lambda: any(t == token and v["kind"] == "begin" for t, v in progress)
        )
        # The turn is now waiting on the slow model reply.
        await asyncio.sleep(0.5)
        started = time.monotonic()
        if route == "progress":
            client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        else:
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
        await wait_until("progress end", lambda: any(t == token and v["kind"] == "end" for t, v in progress))
        end = next(v for t, v in progress if t == token and v["kind"] == "end")
        if "cancelled" not in (end.get("message") or ""):
            fail(f"{route}: progress ended with {end!r}, expected 'cancelled'")
        took = time.monotonic() - started
        # Longer than the cancel took, so an edit that was still coming would have arrived.
        await asyncio.sleep(2.0)
        if applied:
            fail(f"{route}: an edit was applied after cancel: {applied}")
        print(f"ok: cancel via {route}: progress ended '{end.get('message')}' in {took:.2f}s, no edit applied", flush=True)

    await run("progress", "exec-1")
    await run("$/cancelRequest", "exec-2")

    await within(client.shutdown_async(None))
    client.exit(None)
    await client.stop()
    mock.stdin.close()
    mock.wait(timeout=10)
    if (repo / "calc.py").read_text() != DISK:
        fail("the file on disk changed")
    print("RESULT: ok", flush=True)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(), timeout=90))
