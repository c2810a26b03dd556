#!/usr/bin/env python3
"""Drives one agent-like session through the real binary over MCP on a real
repository and prints an abbreviated transcript (for closing notes).

    transcript.py REPO        (laravel/framework src: see bench/README.md)

The script plays a careful agent on the request 「パスワードリセットのメールが
送信されない不具合を直して」: it first tries three shortcuts the gate must
refuse, then extracts the frame, explores with code tools, submits its
understanding, and asks to write. It exits non-zero if the gate lets a
shortcut through or READY is not reached.
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = os.environ.get("CODE_INTEL_BIN") or str(
    Path(os.environ.get("CARGO_TARGET_DIR", Path(__file__).resolve().parents[1] / "target")) / "debug" / "code-intel")
QUERY = "パスワードリセットのメールが送信されない不具合を直して"


def short(r):
    text = r.content[0].text if r.content else ""
    return ("ERROR " if r.is_error else "") + text.splitlines()[0][:160] if text else ""


async def main(repo):
    params = StdioServerParameters(command=BIN, args=["serve", "--repo", str(repo)], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            while True:  # wait for the model, as an agent would on retry_after_seconds
                r = await s.call_tool("semantic_search", {"query": "warm up", "collection": "map"})
                if not (r.is_error and "model_loading" in r.content[0].text):
                    break
                await asyncio.sleep(1)

            async def call(tool, expect_error=False, **args):
                r = await s.call_tool(tool, args)
                shown = {k: v for k, v in args.items() if k != "session_id"}
                print(f"> {tool} {json.dumps(shown, ensure_ascii=False)[:150]}")
                print(f"  {short(r)}")
                if r.is_error != expect_error:
                    raise SystemExit(f"unexpected {'success' if expect_error else 'error'} from {tool}")
                return r.structured_content

            st = await call("start_session", intent="MODIFY", query=QUERY)
            sid = st["session_id"]
            print("-- shortcuts the gate must refuse")
            await call("semantic_search", True, query="パスワードリセット", collection="forest", session_id=sid)
            await call("check_write_target", True, session_id=sid, file_path="src/Illuminate/Auth/Passwords/PasswordBroker.php")
            await call("submit_understanding", True, session_id=sid, symbols_identified=["PasswordResetMailer"])
            print("-- frame")
            await call("set_query_frame", session_id=sid, slots={
                "target_feature": {"value": "password reset email", "quote": "パスワードリセットのメール"},
                "observed_issue": {"value": "email is not sent", "quote": "送信されない"},
                "desired_action": {"value": "fix the bug", "quote": "不具合を直して"},
            })
            u = await call("submit_understanding", session_id=sid, symbols_identified=["PasswordResetMailer", "sendResetLink"],
                           files_analyzed=["src/Illuminate/Auth/Passwords/PasswordBroker.php"])
            print(f"  rejected claims: {u['assessment']['rejected_claims']}")
            print("-- exploration")
            await call("find_definitions", symbol="sendResetLink", session_id=sid)
            await call("find_references", symbol="sendPasswordResetNotification", session_id=sid)
            await call("search_text", pattern="ResetPassword", literal=True, path="src/Illuminate/Auth", session_id=sid)
            await call("get_function_at_line", file="src/Illuminate/Auth/Passwords/PasswordBroker.php", line=60, session_id=sid)
            await call("analyze_structure", path="src/Illuminate/Auth/Notifications/ResetPassword.php", session_id=sid)
            await call("get_symbols", path="src/Illuminate/Auth/Passwords", session_id=sid)
            await call("validate_symbol_relevance", session_id=sid, nl_term="パスワードリセットのメール",
                       symbols=["sendPasswordResetNotification", "ResetPassword", "getOrCreateDatabase"],
                       code_evidence="src/Illuminate/Auth/Passwords/CanResetPassword.php: sendPasswordResetNotification notifies ResetPassword")
            u = await call("submit_understanding", session_id=sid,
                           symbols_identified=["sendResetLink", "sendPasswordResetNotification", "ResetPassword", "PasswordBroker", "CanResetPassword", "toMail"],
                           entry_points=["sendResetLink", "sendPasswordResetNotification"],
                           existing_patterns=[{"name": "notification with toMail", "files": ["src/Illuminate/Auth/Notifications/ResetPassword.php"]},
                                              {"name": "broker returns status constants", "files": ["src/Illuminate/Auth/Passwords/PasswordBroker.php"]}],
                           files_analyzed=["src/Illuminate/Auth/Passwords/PasswordBroker.php",
                                           "src/Illuminate/Auth/Notifications/ResetPassword.php",
                                           "src/Illuminate/Auth/Passwords/CanResetPassword.php",
                                           "src/Illuminate/Auth/Passwords/DatabaseTokenRepository.php"],
                           slot_evidence={"target_feature": "src/Illuminate/Auth/Notifications/ResetPassword.php toMail",
                                          "observed_issue": "src/Illuminate/Auth/Passwords/PasswordBroker.php sendResetLink returns INVALID_USER / RESET_THROTTLED before notifying"})
            print(f"  phase {u['phase']}, confidence {u['confidence']:.2f}, missing {u['assessment']['missing']}")
            if u["phase"] != "READY":
                raise SystemExit("READY not reached")
            await call("check_write_target", session_id=sid, file_path="src/Illuminate/Auth/Passwords/PasswordBroker.php")
            await call("check_write_target", True, session_id=sid, file_path="src/Illuminate/Queue/Worker.php")
            await call("record_outcome", session_id=sid, outcome="success", analysis="transcript run")
            a = await call("get_session_analysis", session_id=sid)
            print(f"-- {len(a['session']['refusals'])} refusals, calls per tool {a['calls_per_tool']}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]).resolve()))
