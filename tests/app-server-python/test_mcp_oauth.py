"""OAuth sign-in through the Python SDK (issue 41): a thread whose streamable HTTP server wants
a sign-in reports it as failed with `failureReason: reauthenticationRequired`;
`mcpServer/oauth/login` answers the authorization URL, the client follows it, and
`mcpServer/oauthLogin/completed` says it worked; the thread then reconnects, the server is
`oAuth` and ready, and its tool reaches the model. All checked by the SDK's own models.

The server is the official MCP Python SDK behind its own OAuth authorization server
(tests/mcp-python/oauth_server.py), run from `.venv-mcp` (or MCP_PYTHON), which
scripts/test.sh installs before this suite."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT, request_text, run, text_reply
from openai_codex.generated import v2_all as v2
from test_mcp import request, startup

MCP_PYTHON = Path(os.environ.get("MCP_PYTHON") or ROOT / ".venv-mcp/bin/python")
OAUTH_SERVER = ROOT / "tests/mcp-python/oauth_server.py"


@pytest.fixture
def oauth_url(tmp_path: Path):
    assert MCP_PYTHON.exists(), (
        "the MCP Python SDK is not installed: python3 -m venv .venv-mcp && "
        ".venv-mcp/bin/pip install -r tests/mcp-python/requirements.txt (or set MCP_PYTHON)"
    )
    port_file = tmp_path / "oauth-port"
    proc = subprocess.Popen(
        [str(MCP_PYTHON), str(OAUTH_SERVER), str(port_file), str(tmp_path / "oauth.log")],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists():
            assert proc.poll() is None, "the SDK server exited"
            assert time.monotonic() < deadline, "the SDK server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text().strip()}/mcp"
    finally:
        proc.kill()
        proc.wait()


def test_sign_in_from_the_client_then_the_thread_has_the_server(env, mode, oauth_url):
    (env.home / "config.toml").write_text(
        f'mcp_oauth_credentials_store = "file"\n\n[mcp_servers.docs]\nurl = "{oauth_url}"\n'
    )
    env.start_mock([text_reply("Signed in.")])

    async def scenario(side):
        thread = await side.thread_start()
        final, _, _ = await startup(side, thread.id, {"docs"})
        assert final["docs"].status == v2.McpServerStartupState.failed
        assert final["docs"].failure_reason.root == "reauthenticationRequired", final["docs"]
        listed = await request(side, "mcpServerStatus/list", {"threadId": thread.id}, v2.ListMcpServerStatusResponse)
        assert listed.data[0].auth_status == v2.McpAuthStatus.not_logged_in

        # A stdio server, an unknown one: clear errors, nothing started.
        with pytest.raises(Exception, match="no MCP server named `nope`"):
            await request(side, "mcpServer/oauth/login", {"name": "nope"}, v2.McpServerOauthLoginResponse)

        login = await request(
            side,
            "mcpServer/oauth/login",
            {"name": "docs", "threadId": thread.id, "timeoutSecs": 60},
            v2.McpServerOauthLoginResponse,
        )
        assert "/authorize?" in login.authorization_url and "resource=" in login.authorization_url
        assert login.login_id
        # The client opens the URL; this one follows the redirects back to the callback.
        await asyncio.to_thread(lambda: urllib.request.urlopen(login.authorization_url, timeout=30).read())

        completed = None
        ready = False
        while completed is None or not ready:
            n = await side.next_notification()
            if n.method == "mcpServer/oauthLogin/completed":
                completed = n.payload
            elif n.method == "mcpServer/startupStatus/updated" and n.payload.name == "docs":
                ready = n.payload.status == v2.McpServerStartupState.ready
        assert completed.success and completed.error is None, completed
        assert completed.login_id == login.login_id and completed.name == "docs"
        assert completed.thread_id == thread.id

        listed = await request(side, "mcpServerStatus/list", {"threadId": thread.id}, v2.ListMcpServerStatusResponse)
        docs = listed.data[0]
        assert docs.auth_status == v2.McpAuthStatus.o_auth
        assert docs.runtime_status == v2.McpServerConnectionStatus.connected
        assert "lookup" in docs.tools
        token_file = (env.home / ".credentials.json").read_text()
        assert "access_token" in token_file

        result = await thread.run("look it up")
        assert result.final_response == "Signed in."
        assert "docs__lookup" in request_text(env.mock.requests()[0])

    run(mode, env, scenario)
