"""The `chatgptAuthTokens` login: an access token the embedding app manages. Model requests of
every thread on a provider that requires OpenAI auth carry it as the bearer token, a fresh
login replaces it for running threads too, `account/read` names the account, and the token is
never written to disk."""

from __future__ import annotations

import base64
import dataclasses
import json

from openai_codex import Codex
from openai_codex.generated import v2_all as v2

from conftest import text_reply


def jwt(claims: dict) -> str:
    def part(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part(claims)}.c2lnbmF0dXJl"


def test_token_login_authorizes_requests_and_a_refresh_reaches_a_running_thread(env):
    env.start_mock([text_reply("First."), text_reply("Second.")])
    config = env.config()
    # A provider that needs a key nobody set and takes the OpenAI login (as the built-in
    # `openai` does): without the app's token no thread opens.
    config = dataclasses.replace(
        config,
        config_overrides=config.config_overrides
        + (
            'model_providers.mock.env_key="TOKEN_TEST_UNSET_KEY"',
            "model_providers.mock.requires_openai_auth=true",
        ),
        env={**config.env, "TOKEN_TEST_UNSET_KEY": ""},
    )
    first = jwt({"email": "dev@example.com", "https://api.openai.com/auth": {"chatgpt_plan_type": "pro"}})
    second = jwt({"email": "dev@example.com"})
    codex = Codex(config)
    try:
        before = v2.GetAccountResponse.model_validate(codex._client._request_raw("account/read", {}))
        assert before.account is None and before.requires_openai_auth

        answer = codex._client._request_raw(
            "account/login/start",
            {"type": "chatgptAuthTokens", "accessToken": first, "chatgptAccountId": "acct-1"},
        )
        assert v2.LoginAccountResponse.model_validate(answer).root.type == "chatgptAuthTokens"
        account = v2.GetAccountResponse.model_validate(codex._client._request_raw("account/read", {}))
        assert account.account.root.type == "chatgpt"
        assert account.account.root.email == "dev@example.com"
        assert account.account.root.plan_type.value == "pro"
        assert not account.requires_openai_auth

        thread = codex.thread_start()
        assert thread.run("hello").final_response == "First."
        # The app refreshes its token: the running thread's next request carries the new one.
        codex._client._request_raw(
            "account/login/start",
            {"type": "chatgptAuthTokens", "accessToken": second, "chatgptAccountId": "acct-1",
             "chatgptPlanType": "team"},
        )
        assert thread.run("again").final_response == "Second."
        auth = [r["headers"].get("authorization") for r in env.mock.requests()]
        assert auth == [f"Bearer {first}", f"Bearer {second}"]
    finally:
        codex.close()
    # Kept in memory only: nothing under the home folder holds either token.
    for path in env.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert first.encode() not in data and second.encode() not in data, path


def test_a_token_login_without_a_token_is_refused(env):
    env.start_mock([])
    codex = Codex(env.config())
    try:
        try:
            codex._client._request_raw(
                "account/login/start", {"type": "chatgptAuthTokens", "accessToken": " ", "chatgptAccountId": "a"}
            )
        except Exception as e:  # noqa: BLE001 - the SDK's JSON-RPC error
            assert "accessToken" in str(e)
        else:
            raise AssertionError("an empty token was accepted")
    finally:
        codex.close()
