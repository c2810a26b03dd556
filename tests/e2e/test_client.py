"""End-to-end: `code-intel init`, the Claude Code PreToolUse hook fed with
recorded payloads, and `code-intel doctor` on a healthy and a broken setup."""

import json
import os
import subprocess
import time

import pytest

from conftest import BIN, make_repo, serve
from test_cli import cli_env, run


def test_init_merges_and_is_idempotent(tmp_path):
    repo = make_repo(tmp_path)
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "other-server"}}}))
    (repo / ".gitignore").write_text("node_modules/")  # no trailing newline
    dry = run("init", str(repo), "--hooks", "--dry-run").stdout
    assert "would be updated" in dry and "would be created" in dry
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"other": {"command": "other-server"}}}

    first = run("init", str(repo), "--hooks", "--cursor").stdout
    mcp = json.loads((repo / ".mcp.json").read_text())
    assert mcp["mcpServers"]["other"] == {"command": "other-server"}
    assert mcp["mcpServers"]["code-intel"]["args"] == ["serve", "--repo", "."]
    assert (repo / ".gitignore").read_text() == "node_modules/\n.code-intel/\n"
    code_md = (repo / ".claude/commands/code.md").read_text()
    assert "the `intent` and `slots`" in code_md and "opens the session" in code_md and "{{" not in code_md
    # With the hook, edits go straight to it: no check_write_target per edit.
    assert "PreToolUse hook checks every write" in code_md and "before every edit" not in code_md
    assert "record_outcome" in (repo / ".claude/commands/outcome.md").read_text()
    settings = json.loads((repo / ".claude/settings.json").read_text())
    (hook,) = settings["hooks"]["PreToolUse"]
    assert hook["matcher"] == "Edit|Write|MultiEdit|NotebookEdit|Bash"
    assert hook["hooks"][0]["command"].endswith("hook pre-tool-use")
    assert json.loads((repo / ".cursor/mcp.json").read_text())["mcpServers"]["code-intel"]
    cfg = json.loads((repo / ".code-intel/config.json").read_text())
    # Every other key keeps its default; with the hook, writes need a session.
    assert cfg == {"source_dirs": ["app", "config"], "require_session": True}
    assert "created" in first

    second = run("init", str(repo), "--hooks", "--cursor").stdout
    files = [line for line in second.strip().splitlines() if not line.startswith("command:")]
    assert files and all(line.startswith("unchanged") for line in files), second
    # Not on PATH: the absolute path, and init says why.
    assert mcp["mcpServers"]["code-intel"]["command"].startswith("/") and "not this binary" in first

    # With `code-intel` on PATH the entry names the command, so a team can commit it.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "code-intel").symlink_to(BIN)
    env = {**cli_env(), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    p = subprocess.run(["code-intel", "init", str(repo)], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "found on PATH" in p.stdout, p.stdout + p.stderr
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["code-intel"]
    assert entry["command"] == "code-intel" and entry["args"] == ["serve", "--repo", "."], entry
    # init without --hooks keeps the installed hook's workflow; a repository
    # without the hook gets check_write_target before every edit.
    assert "PreToolUse hook checks every write" in (repo / ".claude/commands/code.md").read_text()
    bare = make_repo(tmp_path / "bare")
    run("init", str(bare))
    code_md = (bare / ".claude/commands/code.md").read_text()
    assert "before every edit call `check_write_target`" in code_md and "{{" not in code_md

    # An older release's hook entry (no Bash in its matcher) is brought up
    # to date, not duplicated; doctor says when it lags.
    settings["hooks"]["PreToolUse"][0]["matcher"] = "Edit|Write|MultiEdit|NotebookEdit"
    (repo / ".claude/settings.json").write_text(json.dumps(settings))
    p = subprocess.run([BIN, "doctor", "--repo", str(repo), "--json"], capture_output=True, text=True,
                       env=cli_env(), timeout=300)
    hook_check = next(c for c in json.loads(p.stdout)["checks"] if c["check"] == "hook")
    assert "Bash writes pass ungated" in hook_check["message"], hook_check
    run("init", str(repo), "--hooks")
    (hook,) = json.loads((repo / ".claude/settings.json").read_text())["hooks"]["PreToolUse"]
    assert hook["matcher"] == "Edit|Write|MultiEdit|NotebookEdit|Bash", hook


def hook(payload):
    t0 = time.perf_counter()
    p = subprocess.run([BIN, "hook", "pre-tool-use"], input=json.dumps(payload), capture_output=True, text=True, timeout=30)
    dt = time.perf_counter() - t0
    assert p.returncode == 0, p.stderr
    return (json.loads(p.stdout) if p.stdout.strip() else None), dt


def bash(repo, command):
    """Claude Code's PreToolUse payload of a Bash call run in `repo`."""
    out, _ = hook({"session_id": "cc-1", "hook_event_name": "PreToolUse", "cwd": str(repo), "tool_name": "Bash",
                   "tool_input": {"command": command, "description": "x"}})
    return out


def denied(out):
    return out is not None and out["hookSpecificOutput"].get("permissionDecision") == "deny"


def payload(repo, tool, file):
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {"session_id": "cc-1", "hook_event_name": "PreToolUse", "cwd": str(repo), "tool_name": tool,
            "tool_input": {key: str(repo / file), "content": "x"}}


@pytest.mark.anyio
async def test_pre_tool_use_hook_follows_the_active_session(tmp_path):
    repo = make_repo(tmp_path, {"sync_on_start": False})
    out, _ = hook(payload(repo, "Write", "app/auth/service.py"))
    assert out is None  # no session: allowed
    async with serve(repo) as c:
        query = "ログインでパスワードが空でも通るのを直して"
        sid = (await c.call("start_session", intent="MODIFY", query=query, slots={
            "target_feature": {"value": "login", "quote": "ログイン"},
            "desired_action": {"value": "fix", "quote": "直して"}}))["session_id"]
        # A new file in directories that do not exist yet is still gated.
        out, _ = hook(payload(repo, "Write", "app/Observers/deep/OrderObserver.php"))
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny", out
        out, dt = hook(payload(repo, "Write", "app/auth/service.py"))
        decision = out["hookSpecificOutput"]
        assert decision["hookEventName"] == "PreToolUse" and decision["permissionDecision"] == "deny"
        assert "READY" in decision["permissionDecisionReason"] and sid in decision["permissionDecisionReason"]
        assert dt < 2.0, dt
        assert hook(payload(repo, "Read", "app/auth/service.py"))[0] is None  # not a write tool

        await c.call("read_file", file="app/auth/service.py", session_id=sid)
        await c.call("find_references", symbol="authenticate", session_id=sid)
        u = await c.call("submit_understanding", session_id=sid, symbols_identified=["authenticate"],
                         entry_points=["authenticate"], files_to_edit=["app/auth/service.py"])
        assert u["phase"] == "READY", u
        assert hook(payload(repo, "Edit", "app/auth/service.py"))[0] is None
        assert hook(payload(repo, "MultiEdit", "app/auth/service.py"))[0] is None
        assert hook(payload(repo, "Write", "app/auth/new_module.py"))[0] is None  # new file, explored dir
        denied, _ = hook(payload(repo, "Edit", "web/cart.js"))
        assert "add_explored_files" in denied["hookSpecificOutput"]["permissionDecisionReason"]
        denied, _ = hook(payload(repo, "NotebookEdit", "notes/analysis.ipynb"))
        assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
        await c.call("record_outcome", session_id=sid, outcome="success")
    assert hook(payload(repo, "Edit", "web/cart.js"))[0] is None  # session closed: allowed
    # Input the hook cannot read is blocked (exit 2, Claude Code's blocking
    # code) with the reason on stderr, never let through.
    for bad in [b"not json", b'{"tool_name": "Write", "tool_input": {"file_path": "\\ud800"}}', b"\xff\xfe{}"]:
        p = subprocess.run([BIN, "hook", "pre-tool-use"], input=bad, capture_output=True)
        assert p.returncode == 2 and b"write gate" in p.stderr, (bad, p.returncode, p.stderr)


def test_doctor_healthy_and_broken(tmp_path):
    repo = make_repo(tmp_path)
    run("init", str(repo), "--hooks")
    run("index", str(repo))
    healthy = json.loads(run("doctor", "--repo", str(repo), "--json").stdout)
    assert healthy["ok"] is True, healthy
    checks = {c["check"]: c for c in healthy["checks"]}
    assert "forest" in checks["index"]["message"] and checks["hook"]["message"].startswith("Claude Code PreToolUse hook")

    env = cli_env()
    env["ORT_DYLIB_PATH"] = str(tmp_path / "missing" / "libonnxruntime.so")
    (repo / ".code-intel" / "config.json").write_text('{"embedding_batch_size": 0, "chunk_max_tokenz": 1}')
    p = subprocess.run([BIN, "doctor", "--repo", str(repo)], capture_output=True, text=True, env=env)
    assert p.returncode == 2, p.stdout
    fails = [l for l in p.stdout.splitlines() if l.startswith("FAIL")]
    assert any("config" in l and "embedding_batch_size" in l for l in fails), p.stdout
    assert "unknown keys ignored: chunk_max_tokenz" in p.stdout
    assert any("onnx_runtime" in l and "ORT_DYLIB_PATH" in l for l in fails), p.stdout

    # Corrupt state files are named with their fix.
    state = repo / ".code-intel"
    (state / "config.json").write_text("{}")
    (state / "sync_state.json").write_text('{"version": 3, "files": {')
    (state / "learned_pairs.json").write_text('[{"term": "x"}, 7]')
    (state / "sessions").mkdir(exist_ok=True)
    (state / "sessions" / "abc.json.corrupt-1700000000").write_text("{")
    p = subprocess.run([BIN, "doctor", "--repo", str(repo), "--json"], capture_output=True, text=True, env=cli_env())
    assert p.returncode == 2, p.stdout
    broken = json.loads(p.stdout)
    checks = {c["check"]: c for c in broken["checks"]}
    assert not checks["sync_state"]["ok"] and "code-intel index" in checks["sync_state"]["message"]
    assert not checks["learned_pairs"]["ok"] and "2 of 2 records" in checks["learned_pairs"]["message"]
    assert not checks["corrupt_files"]["ok"] and "abc.json.corrupt-1700000000" in checks["corrupt_files"]["message"]


def test_mcp_inspector_cli_lists_and_calls(tmp_path):
    inspector = os.environ.get("CODE_INTEL_INSPECTOR")
    assert inspector, "scripts/test.sh installs the MCP Inspector and sets CODE_INTEL_INSPECTOR"
    repo = make_repo(tmp_path, {"sync_on_start": False})
    base = [inspector, "--cli", BIN, "serve", "--repo", str(repo)]
    p = subprocess.run(base + ["--method", "tools/list"], capture_output=True, text=True, timeout=120, env=cli_env())
    assert p.returncode == 0, p.stderr
    names = {t["name"] for t in json.loads(p.stdout)["tools"]}
    assert {"search_text", "start_session", "check_write_target"} <= names
    p = subprocess.run(base + ["--method", "tools/call", "--tool-name", "find_definitions", "--tool-arg", "symbol=AuthService"],
                       capture_output=True, text=True, timeout=120, env=cli_env())
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["structuredContent"]["symbols"][0]["file"] == "app/auth/service.py"


def test_claude_mcp_list_connects_without_schema_warnings(tmp_path):
    """Claude Code's own client (`claude mcp list`, npm, no account) reports
    the server connected and prints no schema warning (it warned `unknown
    format "uint64" ignored` on the schemas of earlier releases)."""
    claude = os.environ.get("CODE_INTEL_CLAUDE")
    assert claude, "scripts/test.sh installs the Claude Code CLI and sets CODE_INTEL_CLAUDE"
    repo = make_repo(tmp_path, {"sync_on_start": False})
    env = {**cli_env(), "HOME": str(tmp_path / "home")}
    (tmp_path / "home").mkdir()
    p = subprocess.run([claude, "mcp", "add", "code-intel", "--", BIN, "serve", "--repo", str(repo)],
                       capture_output=True, text=True, timeout=120, env=env, cwd=repo)
    assert p.returncode == 0, p.stdout + p.stderr
    p = subprocess.run([claude, "mcp", "list"], capture_output=True, text=True, timeout=180, env=env, cwd=repo)
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "code-intel" in out and "Connected" in out, out
    assert "unknown format" not in out and "schema" not in out.lower(), out


@pytest.mark.anyio
async def test_two_servers_share_one_index(tmp_path):
    repo = make_repo(tmp_path, {"sync_on_start": False})
    async with serve(repo) as a, serve(repo) as b:
        await a.wait_model()
        await b.wait_model()
        import anyio
        results = {}

        async def sync(name, c):
            r = await c.session.call_tool("sync_index", {})
            results[name] = (r.is_error, r.content[0].text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(sync, "a", a)
            tg.start_soon(sync, "b", b)
        ok = [n for n, (err, _) in results.items() if not err]
        busy = [n for n, (err, text) in results.items() if err]
        assert ok, results
        assert all("already running" in results[n][1] for n in busy), results
        # The other server finds nothing left to do.
        for c in (a, b):
            r = await c.call("sync_index")
            assert (r["report"]["added"], r["report"]["chunks_embedded"]) == (0, 0), r
        sid = (await a.call("start_session", intent="INVESTIGATE", query="how does login work?"))["session_id"]
        st = await b.call("get_session_status", session_id=sid)  # sessions are shared
        assert st["phase"] == "EXPLORATION"
        hits_a = await a.call("semantic_search", query="ログイン時にパスワードを検証する", limit=3)
        hits_b = await b.call("semantic_search", query="ログイン時にパスワードを検証する", limit=3)
        assert hits_a["results"][0]["name"] == hits_b["results"][0]["name"] == "authenticate"
    status = json.loads(run("status", "--repo", str(repo), "--json").stdout)
    assert status["forest_rows"] == status["chunks"] == hits_a["index"]["chunks"], status


@pytest.mark.anyio
async def test_phase_scoped_tool_list(tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from conftest import model_env

    repo = make_repo(tmp_path, {"sync_on_start": False, "phase_scoped_tools": True})
    seen = []

    async def on_message(message):
        seen.append(repr(message))

    params = StdioServerParameters(command=BIN, args=["serve", "--repo", str(repo)], env=model_env())
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as s:
            init = await s.initialize()
            assert init.capabilities.tools.list_changed is True
            names = lambda r: {t.name for t in r.tools}
            assert "submit_semantic" in names(await s.list_tools())  # no session yet: everything
            sid = (await s.call_tool("start_session", {"intent": "MODIFY", "query": "ログイン機能直して"})).structured_content["session_id"]
            listed = names(await s.list_tools())
            assert "find_definitions" in listed and "submit_semantic" not in listed and "submit_verification" not in listed
            await s.call_tool("set_query_frame", {"session_id": sid, "slots": {"target_feature": {"value": "login", "quote": "ログイン機能"}}})
            for tool, args in [("find_definitions", {"symbol": "authenticate"}), ("find_references", {"symbol": "authenticate"}),
                               ("search_text", {"pattern": "password"})]:
                await s.call_tool(tool, {**args, "session_id": sid})
            r = await s.call_tool("submit_understanding", {"session_id": sid, "symbols_identified": ["authenticate"],
                                  "semantic_reasons": {"symbols": "no_definition_found", "entry_points": "no_reference_found",
                                                       "files": "context_fragmented", "patterns": "no_similar_implementation"}})
            assert r.structured_content["phase"] == "SEMANTIC", r.content[0].text
            listed = names(await s.list_tools())
            assert "find_definitions" not in listed and "submit_semantic" in listed and "semantic_search" in listed
    assert sum("list_changed" in m or "ToolListChanged" in m for m in seen) >= 2, seen[-3:]


# (tool, path, allow_new for check_write_target) — the hook treats Write as
# creating files (allow_new) and Edit / MultiEdit / NotebookEdit as editing.
AGREEMENT_CASES = [
    ("Edit", "app/auth/service.py", False),          # explored, exists
    ("MultiEdit", "app/auth/service.py", False),
    ("Write", "app/auth/service.py", True),
    ("Edit", "web/cart.js", False),                  # exists, never read
    ("Write", "web/cart.js", True),
    ("Write", "app/auth/new_module.py", True),       # new, explored directory
    ("Edit", "app/auth/new_module.py", False),       # new file, not allowed as new
    ("Write", "web/new_widget.js", True),            # new, unexplored directory
    ("Write", "app/Observers/OrderObserver.php", True),  # new directory
    ("Write", "app/a/b/c/deep.py", True),            # several new directories
    ("Edit", ".env", False),                         # withheld file
    ("Write", ".env.local", True),
    ("Edit", "config/settings.py", False),
    ("NotebookEdit", "notes/analysis.ipynb", True),
    ("Write", "composer.lock", True),                # lock file, not named in the request
    ("Write", "package-lock.json", True),
    ("Write", "vendor/acme/lib/src/Thing.php", True),  # vendored
    ("Write", "node_modules/x/index.js", True),
    ("Write", "web/dist/bundle.min.js", True),       # generated
    ("Edit", "app/cli.py", False),                   # named by find_references, never read
    ("Edit", "app/report.py", False),
    ("Write", "app/auth/../../outside.py", True),    # escapes the repository
    ("Edit", ".git/config", False),                  # withheld
    ("Write", "docs/guide/new_page.md", True),       # new directory, no convention
    ("Edit", "web/api.ts", False),                   # read in READY, not in the understanding
    ("Write", "web/new_api.ts", True),               # new, beside a file only read
    ("Edit", "app/Http/Controllers/InvoiceController.php", False),  # analysed, not to edit
    ("Write", "app/Http/Controllers/NewController.php", True),      # new, beside an analysed file
]


@pytest.mark.anyio
async def test_hook_and_check_write_target_agree(tmp_path):
    """For every case, in EXPLORATION and in READY, the hook denies exactly
    when check_write_target refuses."""
    repo = make_repo(tmp_path, {"sync_on_start": False})
    (repo / ".env").write_text("APP_KEY=x\n")
    disagreements, decided, outcomes, refused = [], 0, set(), {}
    async with serve(repo) as c:
        query = "ログインでパスワードが空でも通るのを直して"
        sid = (await c.call("start_session", intent="MODIFY", query=query, slots={
            "target_feature": {"value": "login", "quote": "ログイン"},
            "desired_action": {"value": "fix", "quote": "直して"}}))["session_id"]
        for phase in ("EXPLORATION", "READY"):
            if phase == "READY":
                await c.call("read_file", file="app/auth/service.py", session_id=sid)
                await c.call("read_file", file="app/Http/Controllers/InvoiceController.php", session_id=sid)
                await c.call("find_references", symbol="authenticate", session_id=sid)
                u = await c.call("submit_understanding", session_id=sid, symbols_identified=["authenticate"],
                                 entry_points=["authenticate"], files_to_edit=["app/auth/service.py"],
                                 files_analyzed=["app/auth/service.py", "app/Http/Controllers/InvoiceController.php"])
                assert u["phase"] == "READY", u
                await c.call("read_file", file="web/api.ts", session_id=sid)
            for tool, path, allow_new in AGREEMENT_CASES:
                r = await c.session.call_tool("check_write_target", {
                    "session_id": sid, "file_path": path, "allow_new_files": allow_new})
                server_refuses = r.is_error
                out, _ = hook(payload(repo, tool, path))
                hook_denies = out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
                decided += 1
                outcomes.add((phase, server_refuses))
                refused[(phase, tool, path)] = server_refuses
                if server_refuses != hook_denies:
                    disagreements.append((phase, tool, path, server_refuses, hook_denies,
                                          r.content[0].text[:120]))
    assert not disagreements, disagreements
    assert decided == 2 * len(AGREEMENT_CASES)
    # Both answers occur in READY, so agreement is not "everything refused".
    assert {("READY", True), ("READY", False), ("EXPLORATION", True)} <= outcomes, outcomes
    # The change covers the file its understanding lists, not one read after.
    assert not refused[("READY", "Edit", "app/auth/service.py")]
    assert refused[("READY", "Edit", "web/api.ts")] and refused[("READY", "Write", "web/new_api.ts")]
    # A file analysed next to named edits stays read-only (its risk was not
    # judged); its directory still takes new files.
    assert refused[("READY", "Edit", "app/Http/Controllers/InvoiceController.php")]
    assert not refused[("READY", "Write", "app/Http/Controllers/NewController.php")]


@pytest.mark.anyio
async def test_hook_gates_every_way_to_write(tmp_path):
    """Bash command lines that write files are judged like Edit; malformed
    payloads, writes without a session (require_session) and writes to
    code-intel's own state are refused; with several open sessions a write
    passes when one allows it, and the reply names that session."""
    repo = make_repo(tmp_path, {"sync_on_start": False, "require_session": True})
    # No session open: every write in the repository is refused, with the reason.
    out, _ = hook(payload(repo, "Edit", "app/auth/service.py"))
    assert denied(out) and "no code-intel session is open" in out["hookSpecificOutput"]["permissionDecisionReason"]
    assert denied(bash(repo, "sed -i 's/a/b/' app/auth/service.py"))
    assert bash(repo, "ls -la && rg -n login app | head") is None  # writes nothing
    assert bash(repo, f"echo x > {tmp_path}/outside.txt") is None  # outside the repository
    # Malformed payloads are refused with a reason, never let through.
    for bad in [{"cwd": str(repo), "tool_input": {"file_path": str(repo / "app/x.py")}},
                {"cwd": str(repo), "tool_name": "Edit", "tool_input": {"file_path": 7}},
                {"cwd": str(repo), "tool_name": "Write", "tool_input": {}},
                {"cwd": str(repo), "tool_name": "Bash", "tool_input": {"command": ["rm", "x"]}}]:
        out, _ = hook(bad)
        assert denied(out) and "malformed" in out["hookSpecificOutput"]["permissionDecisionReason"], (bad, out)
    # The gate's own state is never written by a tool call.
    out = bash(repo, "echo '{}' > .code-intel/sessions/forged.json")
    assert denied(out) and "code-intel's own state" in out["hookSpecificOutput"]["permissionDecisionReason"], out

    async with serve(repo) as c:
        query = "ログインでパスワードが空でも通るのを直して"
        slots = {"target_feature": {"value": "login", "quote": "ログイン"},
                 "desired_action": {"value": "fix", "quote": "直して"}}
        first = (await c.call("start_session", intent="MODIFY", query=query, slots=slots))["session_id"]
        out = bash(repo, "sed -i 's/a/b/' app/auth/service.py")
        assert denied(out) and "READY" in out["hookSpecificOutput"]["permissionDecisionReason"], out
        await c.call("read_file", file="app/auth/service.py", session_id=first)
        await c.call("find_references", symbol="authenticate", session_id=first)
        u = await c.call("submit_understanding", session_id=first, symbols_identified=["authenticate"],
                         entry_points=["authenticate"], files_to_edit=["app/auth/service.py"])
        assert u["phase"] == "READY", u
        # READY for service.py: the ways to write it pass, other files do not.
        for ok in ["sed -i 's/a/b/' app/auth/service.py",
                   "cd app/auth && perl -pi -e 's/a/b/' service.py",
                   "printf 'x' | tee app/auth/service.py >/dev/null",
                   "cp /dev/null app/auth/service.py"]:
            assert bash(repo, ok) is None, ok
        for bad in ["cat > web/cart.js <<'EOF'\nx\nEOF",
                    "git checkout -- web/cart.js",
                    "rm web/cart.js",
                    "mv web/cart.js web/cart2.js",
                    "bash -c 'echo x >> web/cart.js'",
                    "sed -i.bak -e 's/a/b/' app/auth/service.py web/cart.js"]:
            out = bash(repo, bad)
            assert denied(out) and "web/cart.js" in out["hookSpecificOutput"]["permissionDecisionReason"], (bad, out)

        # A second, newer session in EXPLORATION: the write the first allows
        # still passes, named; one neither allows is refused with both reasons.
        second = (await c.call("start_session", intent="MODIFY", query=query, slots=slots))["session_id"]
        out, _ = hook(payload(repo, "Edit", "app/auth/service.py"))
        assert out is not None and not denied(out), out
        assert first in out["hookSpecificOutput"]["additionalContext"], out
        out, _ = hook(payload(repo, "Edit", "web/cart.js"))
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert denied(out) and first in reason and second in reason, out
        for sid in (first, second):
            await c.call("record_outcome", session_id=sid, outcome="success")
    # Both closed: require_session refuses again.
    assert denied(hook(payload(repo, "Edit", "app/auth/service.py"))[0])
