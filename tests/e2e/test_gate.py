"""End-to-end: the gate's back doors stay shut and its replies fit a context
window, through the real binary and MCP client on the Laravel
fixture: read-only intents never write, a name in a result is not a read,
add_explored_files reads with a reason, lock/vendored/generated files are
not writable unless named, an entry point must be read, new files go where
the framework and composer.json PSR-4 put code, tools/list and replies stay
within their budgets."""

import json
import shutil
from pathlib import Path

import pytest

from conftest import serve

pytestmark = pytest.mark.anyio

APP = Path(__file__).resolve().parents[1] / "fixtures" / "laravel-app"


def est_tokens(s: str) -> int:
    """The server's budget estimate (src/server/budget.rs)."""
    return -(-sum(1 for ch in s if ord(ch) < 128) // 4) + sum(1 for ch in s if ord(ch) >= 128)


def app_repo(tmp_path):
    repo = tmp_path / "app"
    shutil.copytree(APP, repo)
    (repo / "composer.lock").write_text('{"packages": []}\n')
    (repo / "public" / "vendor" / "filament").mkdir(parents=True)
    (repo / "public" / "vendor" / "filament" / "app.js").write_text("console.log(1)\n")
    (repo / ".code-intel").mkdir()
    (repo / ".code-intel" / "config.json").write_text(json.dumps({"sync_on_start": False}))
    return repo


async def refused(c, tool, **args):
    r = await c.session.call_tool(tool, args)
    assert r.is_error and r.structured_content["error"] == "gate_refused", (tool, args, r.content[0].text)
    assert r.structured_content["recovery_options"], r.structured_content
    return r.structured_content["message"]


async def modify_ready(c, query, slots, read, symbols, entry, edit):
    """A MODIFY session taken to READY the way the agent benchmark does."""
    sid = (await c.call("start_session", intent="MODIFY", query=query, slots=slots))["session_id"]
    for f in read:
        await c.call("read_file", file=f, session_id=sid)
    for e in entry:
        await c.call("find_references", symbol=e, session_id=sid)
    u = await c.call("submit_understanding", session_id=sid, symbols_identified=symbols,
                     entry_points=entry, files_to_edit=edit)
    assert u["phase"] == "READY", u
    return sid


async def test_back_doors_are_shut(tmp_path):
    repo = app_repo(tmp_path)
    async with serve(repo) as c:
        # 1. QUESTION is READY at once but never writes: not a model, not a
        #    new migration, not a file it read.
        q = await c.call("start_session", intent="QUESTION", query="where is the order total computed?")
        assert q["phase"] == "READY"
        await c.call("read_file", file="app/Models/Order.php", session_id=q["session_id"])
        for f, new in [("app/Models/Order.php", False), ("database/migrations/2030_01_01_000000_add_x.php", True)]:
            assert "never writes" in await refused(c, "check_write_target", session_id=q["session_id"],
                                                   file_path=f, allow_new_files=new)

        # 2. A name in a result is not a read: analyze_structure of a
        #    directory and find_references name files without returning them.
        slots = {"target_feature": {"value": "order service", "quote": "OrderService"},
                 "desired_action": {"value": "round the total", "quote": "round the total"}}
        query = "In OrderService, round the total to two decimals"
        sid = (await c.call("start_session", intent="MODIFY", query=query, slots=slots))["session_id"]
        await c.call("analyze_structure", path="app/Models", session_id=sid)
        await c.call("find_references", symbol="OrderService::place", session_id=sid)
        u = await c.call("submit_understanding", session_id=sid, symbols_identified=["OrderService::place"],
                         entry_points=["OrderService::place"], files_to_edit=["app/Services/OrderService.php"])
        assert u["phase"] == "EXPLORATION" and "files" in u["missing"] and "symbols" in u["missing"], u

        # 3. An entry point the change edits whose definition was never read
        #    does not pass, even when another symbol's file was read (one
        #    it leaves alone is context below HIGH: docs/sessions.md §
        #    Requirements).
        await c.call("read_file", file="app/Services/OrderService.php", session_id=sid)
        u = await c.call("submit_understanding", session_id=sid,
                         symbols_identified=["OrderService::place", "Order"], entry_points=["Order"],
                         files_to_edit=["app/Services/OrderService.php", "app/Models/Order.php"])
        assert u["phase"] == "EXPLORATION" and "entry point" in u["missing"]["symbols"], u
        u = await c.call("submit_understanding", session_id=sid, symbols_identified=["OrderService::place"],
                         entry_points=["OrderService::place"], files_to_edit=["app/Services/OrderService.php"])
        assert u["phase"] == "READY", u
        assert (await c.call("check_write_target", session_id=sid, file_path="app/Services/OrderService.php"))["file"]
        # Named by analyze_structure, never read: refused.
        assert "not read" in await refused(c, "check_write_target", session_id=sid, file_path="app/Models/Order.php")

        # 4. add_explored_files needs a reason and returns the content.
        err = await c.call_error("add_explored_files", session_id=sid, files=["app/Models/Order.php"], reason=" ")
        assert "reason" in err
        r = await c.session.call_tool("add_explored_files", {
            "session_id": sid, "files": ["app/Models/Order.php"], "reason": "the total is cast here"})
        assert not r.is_error and "class Order" in r.content[0].text
        assert r.structured_content["files"][0]["content"].count("\n") > 5
        assert (await c.call("check_write_target", session_id=sid, file_path="app/Models/Order.php"))["file"]

        # 5. Lock, vendored and generated files: refused even when read,
        #    unless the request names them.
        await c.call("add_explored_files", session_id=sid, files=["composer.lock", "public/vendor/filament/app.js"],
                     reason="dependencies")
        assert "lock file" in await refused(c, "check_write_target", session_id=sid, file_path="composer.lock")
        assert "vendored" in await refused(c, "check_write_target", session_id=sid,
                                           file_path="public/vendor/filament/app.js")
        named = await modify_ready(
            c, "composer.lock の Filament を更新して",
            {"target_feature": {"value": "composer.lock", "quote": "composer.lock"}},
            ["composer.lock", "app/Services/OrderService.php"], ["OrderService::place"], ["OrderService::place"],
            ["composer.lock"])
        assert (await c.call("check_write_target", session_id=named, file_path="composer.lock"))["file"]

        # 6. A read file outside the understanding is not writable; adding
        #    it with a reason re-assesses the risk: a migration makes this
        #    LOW change MEDIUM, so the session goes back to EXPLORATION.
        sid2 = await modify_ready(c, "In OrderService, round the total", slots, ["app/Services/OrderService.php"],
                                  ["OrderService::place"], ["OrderService::place"], ["app/Services/OrderService.php"])
        migration = "database/migrations/2024_01_01_000003_create_orders_table.php"
        await c.call("read_file", file=migration, session_id=sid2)
        msg = await refused(c, "check_write_target", session_id=sid2, file_path=migration)
        assert "not in the submitted understanding" in msg and "add_explored_files" in msg, msg
        r = await c.call("add_explored_files", session_id=sid2, files=[migration], reason="the total column is here")
        assert r["phase"] == "EXPLORATION", r
        assert "READY" in await refused(c, "check_write_target", session_id=sid2, file_path=migration)


async def test_new_files_where_the_framework_puts_them(tmp_path):
    repo = app_repo(tmp_path)
    async with serve(repo) as c:
        query = "注文のステータスが変わったら顧客に通知して"
        sid = (await c.call("start_session", intent="IMPLEMENT", query=query, slots={
            "target_feature": {"value": "order status", "quote": "注文のステータス"},
            "desired_action": {"value": "notify the customer", "quote": "顧客に通知して"}}))["session_id"]
        # Before anything under app/ was read, a new directory is refused
        # with the way out.
        # Both files in one read_file call: each counts as read.
        r = await c.call("read_file", files=["app/Models/Order.php", "app/Services/OrderService.php"],
                         session_id=sid)
        assert [f["file"] for f in r["files"]] == ["app/Models/Order.php", "app/Services/OrderService.php"], r
        u = await c.call("submit_understanding", session_id=sid, symbols_identified=["Order"], entry_points=["Order"],
                         existing_patterns=[{"name": "service", "files": ["app/Services/OrderService.php"]}],
                         files_to_edit=["app/Observers/OrderObserver.php", "app/Notifications/OrderStatusChanged.php"])
        assert u["phase"] == "READY", u
        for f in ["app/Observers/OrderObserver.php", "app/Notifications/OrderStatusChanged.php",
                  "app/Listeners/SendOrderNotification.php"]:
            ok = await c.call("check_write_target", session_id=sid, file_path=f, allow_new_files=True)
            assert ok["file"] and ok["convention"].startswith("PSR-4"), ok
        # Not a class path (lowercase directory), not a convention: refused with options.
        msg = await refused(c, "check_write_target", session_id=sid, file_path="app/observers/order_observer.php",
                            allow_new_files=True)
        assert "convention" in msg
        await refused(c, "check_write_target", session_id=sid, file_path="lib/Deep/New.php", allow_new_files=True)


async def test_replies_and_tool_list_fit_a_context_window(tmp_path):
    repo = app_repo(tmp_path)
    async with serve(repo) as c:
        assert c.init.instructions and "query" in c.init.instructions
        tools = (await c.session.list_tools()).tools
        raw = json.dumps([t.model_dump(exclude_none=True, by_alias=True) for t in tools], ensure_ascii=False)
        assert len(tools) == 24 and est_tokens(raw) <= 6000, est_tokens(raw)
        assert '"format"' not in raw and '"$schema"' not in raw  # no uint64 etc. for clients to warn about
        assert all(t.output_schema is None for t in tools)

        await c.wait_model()
        # A value unrelated to its quote is accepted with a warning (the
        # value check warns: rank::value_check); a quote that is not in
        # the request is rejected; a plain translation passes.
        query = "Send an alert when a product runs low on stock, please fix"
        s = await c.call("start_session", intent="IMPLEMENT", query=query, slots={
            "target_feature": {"value": "customer birthday calendar export", "quote": "a product runs low on stock"},
            "trigger_condition": {"value": "on checkout", "quote": "when a customer checks out"},
            "desired_action": {"value": "send an alert", "quote": "Send an alert"}})
        assert [w["slot"] for w in s["warnings"]] == ["target_feature"], s
        assert [r["slot"] for r in s["rejected"]] == ["trigger_condition"], s
        assert s["accepted"] == ["target_feature", "desired_action"]
        # The frame accumulates: re-sending a slot alone keeps the accepted
        # one; null clears a slot.
        f = await c.call("set_query_frame", session_id=s["session_id"], slots={
            "target_feature": {"value": "products running low on stock", "quote": "a product runs low on stock"}})
        assert f["accepted"] == ["target_feature", "desired_action"], f
        assert "warnings" not in f and "with a doubt" not in json.dumps(f), f
        assert f["frame"]["desired_action"]["value"] == "send an alert"
        assert "trigger_condition" in f["missing_slots"] and "desired_action" not in f["missing_slots"]
        f = await c.call("set_query_frame", session_id=s["session_id"], slots={"desired_action": None})
        assert f["accepted"] == ["target_feature"] and list(f["frame"]) == ["target_feature"], f
        # The opposite of the quote is flagged however close the embeddings,
        # in the text too; an honest paraphrase of a Japanese request passes.
        r = await c.session.call_tool("start_session", {"intent": "MODIFY", "query": "商品のタイトルを必須項目にして", "slots": {
            "target_feature": {"value": "the product title", "quote": "商品のタイトル"},
            "desired_action": {"value": "make it optional", "quote": "必須項目にして"}}})
        s = r.structured_content
        assert [w["slot"] for w in s["warnings"]] == ["desired_action"], s
        assert "`optional`" in s["warnings"][0]["reason"], s
        assert "accepted desired_action with a doubt" in r.content[0].text, r.content[0].text
        f = await c.call("set_query_frame", session_id=s["session_id"], slots={
            "desired_action": {"value": "make the title a required field", "quote": "必須項目にして"}})
        assert f["accepted"] == ["target_feature", "desired_action"] and "warnings" not in f, f

        await c.call("sync_index")
        r = await c.session.call_tool("query", {"query": "商品のフォームに在庫数フィールドを追加"})
        text, structured = r.content[0].text, json.dumps(r.structured_content, ensure_ascii=False)
        assert est_tokens(text) <= 1200 + 60, est_tokens(text)  # default budget (+ the index line)
        assert "     | " in text and "facts:" in text  # code and framework facts in the text itself
        # The text names each ranked file in one line past the top three; the
        # structured form carries each one's features too (scores at four
        # decimals, zeros and empty fields left out): at most 2.5 times the text.
        assert est_tokens(structured) <= 2.5 * est_tokens(text), (est_tokens(structured), est_tokens(text))
        r = await c.session.call_tool("search_text", {"pattern": "function", "max_tokens": 200})
        assert est_tokens(r.content[0].text) <= 260 and "showing" in r.content[0].text
        assert len(r.structured_content["matches"]) < r.structured_content["total"]
        r = await c.session.call_tool("read_file", {"file": "app/Models/Order.php", "max_tokens": 150})
        assert "cut at line" in r.content[0].text and r.structured_content["truncated"] is True
        err = await c.call_error("read_file", file="app/Models/Order.php", max_tokens=5)
        assert "max_tokens" in err
