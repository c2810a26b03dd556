"""End-to-end reliability: malformed requests answered over the raw stdio
channel, concurrent session writes from two server processes, corrupt
state files, and the tools/list snapshot (a schema change is deliberate)."""

import json
import os
import subprocess
import time
from pathlib import Path

import anyio
import pytest

from conftest import BIN, ROOT, make_repo, model_env, serve

pytestmark = pytest.mark.anyio

SNAPSHOT = ROOT / "tests" / "snapshots" / "tools_list.json"


async def test_tools_list_matches_the_snapshot(tmp_path):
    """Names, descriptions, input and output schemas and annotations of every
    tool: UPDATE_SNAPSHOTS=1 rewrites tests/snapshots/tools_list.json; review
    the diff before committing."""
    repo = make_repo(tmp_path, {"sync_on_start": False})
    async with serve(repo) as c:
        tools = (await c.session.list_tools()).tools
    got = {
        t.name: {
            "description": t.description,
            "input": t.input_schema,
            "output": t.output_schema,
            "annotations": t.annotations.model_dump(exclude_none=True) if t.annotations else None,
        }
        for t in sorted(tools, key=lambda t: t.name)
    }
    text = json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") or not SNAPSHOT.exists():
        SNAPSHOT.write_text(text)
    assert json.loads(SNAPSHOT.read_text()) == got, "tools/list changed: UPDATE_SNAPSHOTS=1 and review the diff"


def raw_session(repo, lines, wait=2.0):
    """Writes JSON-RPC lines (bytes) to a fresh `serve` and returns the
    decoded replies by id (the process ends at end of input)."""
    init = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    head = json.dumps(init).encode() + b"\n" + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    p = subprocess.Popen([BIN, "serve", "--repo", str(repo)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=model_env())
    p.stdin.write(head + b"".join(l + b"\n" for l in lines))
    p.stdin.flush()
    time.sleep(wait)
    out, _ = p.communicate(timeout=60)
    replies = [json.loads(l) for l in out.splitlines() if l.strip()]
    return replies


def test_malformed_requests_are_answered(tmp_path):
    repo = make_repo(tmp_path, {"sync_on_start": False})
    deep = b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"search_text","arguments":{"pattern":' + b"[" * 300 + b"]" * 300 + b"}}}"
    lines = [
        b"this is not json",
        b'{"jsonrpc":"2.0","id":"nan","method":"tools/call","params":{"name":"search_text","arguments":{"pattern":NaN}}}',
        b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"search_text","arguments":{"max_results":1e400}}}',
        b'{"jsonrpc":"2.0","id":"surrogate","method":"tools/call","params":{"name":"search_text","arguments":{"pattern":"\\ud800"}}}',
        b'{"jsonrpc":"2.0","id":"utf8","method":"tools/call","params":{"name":"search_text","arguments":{"pattern":"\xff\xfe"}}}',
        b'{"jsonrpc":"2.0","id":"truncated","method":"tools/call","params":{"name":"sea',
        deep,
        b'[{"jsonrpc":"2.0","id":"batch","method":"ping"}]',
        b'{"jsonrpc":"2.0","id":"types","method":"tools/call","params":{"name":"search_text","arguments":{"pattern":7}}}',
        b'{"jsonrpc":"2.0","id":"unknown","method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}',
        b'{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"search_text","arguments":{"pattern":"' + b"a" * (5 * 1024 * 1024) + b'"}}}',
        b'{"jsonrpc":"2.0","id":"ping","method":"ping"}',
    ]
    replies = raw_session(repo, lines)
    by_id = {r.get("id"): r for r in replies}
    # A parse error carries id null; every request with a readable id is
    # answered, and the server kept serving (the last ping).
    assert any(r.get("id") is None and r["error"]["code"] == -32700 for r in replies), replies
    for rid in ["nan", "big", "surrogate", "utf8", "truncated"]:
        assert by_id[rid]["error"]["code"] == -32700, by_id.get(rid)
    assert by_id["deep"]["result"]["isError"] is True and "32 levels" in by_id["deep"]["result"]["content"][0]["text"]
    assert any(r.get("id") is None and r.get("error", {}).get("code") == -32600 for r in replies)  # the batch
    assert by_id["types"].get("result", {}).get("isError") is True or "error" in by_id["types"], by_id["types"]
    assert "error" in by_id["unknown"], by_id["unknown"]
    assert by_id["huge"]["error"]["code"] == -32600 and "bytes" in by_id["huge"]["error"]["message"]
    assert by_id["ping"]["result"] == {}


async def test_concurrent_session_writes_from_two_processes(tmp_path):
    """40 gated calls on one session, 20 from each of two servers at once:
    every call's evidence is recorded exactly once."""
    repo = make_repo(tmp_path, {"sync_on_start": False})
    async with serve(repo) as a, serve(repo) as b:
        sid = (await a.call("start_session", intent="INVESTIGATE", query="how does login work?"))["session_id"]

        async with anyio.create_task_group() as tg:
            for c, tag in ((a, "a"), (b, "b")):
                for k in range(4):  # four concurrent streams per process
                    tg.start_soon(calls_slice, c, tag, k, sid)
        status = await b.call("get_session_status", session_id=sid)
        patterns = [e for e in json.loads((repo / ".code-intel" / "sessions" / f"{sid}.json").read_text())["evidence"]]
        got = sorted(e["params"]["pattern"] for e in patterns)
        want = sorted(f"def|{t}{k}_{i}" for t in "ab" for k in range(4) for i in range(5))
        assert got == want, (len(got), len(want))
        assert status["evidence_count"] == 40


async def calls_slice(c, tag, k, sid):
    for i in range(5):
        await c.call("search_text", pattern=f"def|{tag}{k}_{i}", session_id=sid, max_results=1)


async def test_corrupt_session_is_moved_aside_and_reported(tmp_path):
    repo = make_repo(tmp_path, {"sync_on_start": False})
    async with serve(repo) as c:
        sid = (await c.call("start_session", intent="INVESTIGATE", query="how does login work?"))["session_id"]
        path = repo / ".code-intel" / "sessions" / f"{sid}.json"
        path.write_text(path.read_text()[:40])
        err = await c.call_error("get_session_status", session_id=sid)
        assert "moved aside" in err and "start_session" in err, err
        assert list(path.parent.glob(f"{sid}.json.corrupt-*"))
