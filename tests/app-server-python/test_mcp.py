"""MCP servers through the Python SDK (issue 41): `mcpServer/startupStatus/updated` as each
server starts, `mcpServerStatus/list` for a thread and without one, and
`config/mcpServer/reload`, all checked by the SDK's own models. The config has a working
server (`mcp-echo`), an unset token variable, a missing command, a hanging server and a
disabled one: the turn still runs."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from conftest import MOCK_LLM_BIN, request_text, run, text_reply
from openai_codex.generated import v2_all as v2

MCP_ECHO_BIN = Path(os.environ.get("MCP_ECHO_BIN") or MOCK_LLM_BIN.parent / "mcp-echo").resolve()

ECHO = f"""
[mcp_servers.echo]
command = '{MCP_ECHO_BIN}'
enabled_tools = ["say", "fail"]
disabled_tools = ["fail"]
"""

BROKEN = """
[mcp_servers.github]
url = "https://tracker.example/mcp"
bearer_token_env_var = "INTERPRETER_TEST_UNSET_TOKEN"

[mcp_servers.gone]
command = "/nonexistent/mcp-server"

[mcp_servers.hangs]
command = "sleep"
args = ["30"]
startup_timeout_sec = 0.5

[mcp_servers.off]
command = "true"
enabled = false
"""


async def request(side, method: str, params: dict, model):
    return await asyncio.to_thread(lambda: side.client.request(method, params, response_model=model))


async def startup(side, thread_id: str, names: set[str], warned: set[str] = frozenset()):
    """Reads global notifications until each of `names` is ready or failed and a warning
    names each of `warned`; the final updates by name, and every status seen in order."""
    final: dict[str, v2.McpServerStatusUpdatedNotification] = {}
    seen: list[tuple[str, str]] = []
    warnings: list[str] = []
    while set(final) != names or not all(any(f"`{w}`" in m for m in warnings) for w in warned):
        n = await side.next_notification()
        if n.method == "mcpServer/startupStatus/updated":
            p = n.payload
            assert p.thread_id == thread_id, p
            seen.append((p.name, p.status.value))
            if p.status != v2.McpServerStartupState.starting:
                final[p.name] = p
        elif n.method == "warning":
            warnings.append(n.payload.message)
    return final, seen, warnings


def test_every_server_reports_its_start_and_the_list_says_why(env, mode):
    (env.home / "config.toml").write_text(ECHO + BROKEN)
    env.start_mock([text_reply("Ran anyway.")])

    async def scenario(side):
        thread = await side.thread_start()
        final, seen, warnings = await startup(
            side, thread.id, {"echo", "github", "gone", "hangs"}, {"github", "gone", "hangs"}
        )
        # Started servers say `starting` first; the unusable entry fails at once; the
        # disabled one never starts.
        for name in ("echo", "gone", "hangs"):
            assert seen.index((name, "starting")) < seen.index((name, final[name].status.value)), seen
        assert ("github", "starting") not in seen and not any(n == "off" for n, _ in seen), seen
        assert final["echo"].status == v2.McpServerStartupState.ready and final["echo"].error is None
        assert "INTERPRETER_TEST_UNSET_TOKEN" in final["github"].error
        assert "/nonexistent/mcp-server" in final["gone"].error
        assert "0.5 s" in final["hangs"].error
        assert any("`hangs`" in w and "0.5 s" in w for w in warnings), warnings

        listed = await request(side, "mcpServerStatus/list", {"threadId": thread.id}, v2.ListMcpServerStatusResponse)
        by_name = {s.name: s for s in listed.data}
        assert [s.name for s in listed.data] == ["echo", "github", "gone", "hangs", "off"]
        assert listed.next_cursor is None
        echo = by_name["echo"]
        assert echo.runtime_status == v2.McpServerConnectionStatus.connected
        assert list(echo.tools) == ["say"] and echo.tools["say"].description == "Repeats the text."
        assert echo.tools["say"].input_schema["required"] == ["text"]
        assert echo.auth_status == v2.McpAuthStatus.unsupported
        assert by_name["github"].auth_status == v2.McpAuthStatus.bearer_token
        assert by_name["github"].runtime_status == v2.McpServerConnectionStatus.failed
        assert by_name["off"].runtime_status == v2.McpServerConnectionStatus.disabled
        assert by_name["hangs"].tools == {}

        first = await request(
            side, "mcpServerStatus/list", {"threadId": thread.id, "limit": 2}, v2.ListMcpServerStatusResponse
        )
        assert [s.name for s in first.data] == ["echo", "github"] and first.next_cursor
        rest = await request(
            side,
            "mcpServerStatus/list",
            {"threadId": thread.id, "cursor": first.next_cursor, "limit": 10},
            v2.ListMcpServerStatusResponse,
        )
        assert [s.name for s in rest.data] == ["gone", "hangs", "off"] and rest.next_cursor is None
        one = await request(
            side, "mcpServerStatus/list", {"threadId": thread.id, "serverName": "gone"}, v2.ListMcpServerStatusResponse
        )
        assert [s.name for s in one.data] == ["gone"]

        result = await thread.run("hi")
        assert result.final_response == "Ran anyway."
        body = request_text(env.mock.requests()[0])
        assert "echo__say" in body and "echo__fail" not in body

    run(mode, env, scenario)


def test_without_a_thread_the_configured_servers_are_started_and_listed(env, mode):
    (env.home / "config.toml").write_text(ECHO + BROKEN)
    env.start_mock([])

    async def scenario(side):
        listed = await request(side, "mcpServerStatus/list", {}, v2.ListMcpServerStatusResponse)
        by_name = {s.name: s for s in listed.data}
        assert sorted(by_name) == ["echo", "github", "gone", "hangs", "off"]
        assert list(by_name["echo"].tools) == ["say"]
        # No thread: no runtime state to report.
        assert all(s.runtime_status is None for s in listed.data)
        assert by_name["gone"].tools == {} and by_name["gone"].auth_status == v2.McpAuthStatus.unsupported

    run(mode, env, scenario)


def test_reload_reads_the_config_again_for_a_loaded_thread(env, mode):
    config = env.home / "config.toml"
    config.write_text(ECHO)
    env.start_mock([text_reply("With the new server.")])

    async def scenario(side):
        thread = await side.thread_start()
        final, _, _ = await startup(side, thread.id, {"echo"})
        assert final["echo"].status == v2.McpServerStartupState.ready
        config.write_text(ECHO.replace("[mcp_servers.echo]", "[mcp_servers.echo2]"))
        await request(side, "config/mcpServer/reload", None, v2.McpServerRefreshResponse)
        final, _, _ = await startup(side, thread.id, {"echo2"})
        assert final["echo2"].status == v2.McpServerStartupState.ready
        listed = await request(side, "mcpServerStatus/list", {"threadId": thread.id}, v2.ListMcpServerStatusResponse)
        assert [s.name for s in listed.data] == ["echo2"]
        await thread.run("hi")
        body = request_text(env.mock.requests()[0])
        assert "echo2__say" in body and "echo__say" not in body

    run(mode, env, scenario)
