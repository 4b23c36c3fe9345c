"""A streamable HTTP MCP server behind its own OAuth authorization server, built with the
official MCP Python SDK (MCPServer with an OAuthAuthorizationServerProvider), for
tests/e2e/mcp_oauth.rs.

The authorization endpoint approves at once (no login page): a "browser" that follows the
redirects signs in. Tokens are bound to the RFC 8707 resource the client asked for
(validate_token_resource), so a client that leaves `resource` out is refused.

    python oauth_server.py PORT_FILE LOG_FILE [--token-ttl SECONDS] [--hang-token]
                           [--redirect-metadata-to ORIGIN]

--redirect-metadata-to answers the authorization server's metadata with a redirect to another
origin, as a hijacked or misconfigured server would.

Writes the port to PORT_FILE once it listens, and one JSON line per OAuth event to LOG_FILE.
"""

import argparse
import asyncio
import json
import secrets
import socket
import sys
import time

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


def log(path, **event):
    with open(path, "a") as f:
        f.write(json.dumps(event) + "\n")


class Provider:
    def __init__(self, log_file, ttl, hang_token):
        self.log_file = log_file
        self.ttl = ttl
        self.hang_token = hang_token
        self.clients = {}
        self.codes = {}
        self.access = {}
        self.refresh = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        self.clients[client_info.client_id] = client_info
        log(self.log_file, event="register", client_name=client_info.client_name)

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["docs"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        log(self.log_file, event="authorize", resource=params.resource, scopes=params.scopes)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def issue(self, client_id, scopes, resource):
        access = "at-" + secrets.token_urlsafe(16)
        refresh = "rt-" + secrets.token_urlsafe(16)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.ttl,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=self.ttl,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(self, client, authorization_code):
        if self.hang_token:
            log(self.log_file, event="token-hang")
            await asyncio.sleep(3600)
        self.codes.pop(authorization_code.code, None)
        log(self.log_file, event="token", grant="authorization_code")
        return self.issue(
            client.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)
        log(self.log_file, event="token", grant="refresh_token")
        return self.issue(
            client.client_id, scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(getattr(token, "token", ""), None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port_file")
    parser.add_argument("log_file")
    parser.add_argument("--token-ttl", type=int, default=3600)
    parser.add_argument("--hang-token", action="store_true")
    parser.add_argument("--redirect-metadata-to")
    args = parser.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    provider = Provider(args.log_file, args.token_ttl, args.hang_token)
    server = MCPServer(
        "docs",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["docs"], default_scopes=["docs"]
            ),
            required_scopes=["docs"],
        ),
    )

    @server.tool()
    def lookup(topic: str) -> str:
        """Look a topic up in the team's docs."""
        log(args.log_file, event="tool", topic=topic)
        return f"docs on {topic}: signed in"

    app = server.streamable_http_app()
    if args.redirect_metadata_to:
        from starlette.responses import RedirectResponse

        inner = app

        async def app(scope, receive, send):  # noqa: F811 (wraps the SDK's app)
            if scope["type"] == "http" and scope["path"].startswith("/.well-known/oauth-authorization-server"):
                log(args.log_file, event="metadata-redirect")
                target = args.redirect_metadata_to + scope["path"]
                await RedirectResponse(target, status_code=302)(scope, receive, send)
                return
            await inner(scope, receive, send)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    userver = uvicorn.Server(config)

    async def serve():
        task = asyncio.create_task(userver.serve())
        while not userver.started:
            await asyncio.sleep(0.05)
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        import os

        os.replace(args.port_file + ".tmp", args.port_file)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(main())
