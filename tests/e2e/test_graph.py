"""End-to-end: the code graph and co-change history through the real binary
and MCP client on the Laravel fixture made a git repository: related_files
for a controller, a model and a symbol, query's "also check" list, the CLI's
`related`, history mined incrementally, Laravel's naming conventions (a
model's factory) and the seeder and test that call `Model::factory()`, event
listeners, and translation files of other locales left out of the semantic
index."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, edges, model_env, run_bin, serve

pytestmark = pytest.mark.anyio

APP = Path(__file__).resolve().parents[1] / "fixtures" / "laravel-app"


def git(repo, *args, date="2024-03-01T10:00:00"):
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "PATH": "/usr/bin:/bin:/usr/local/bin"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def touch(repo, rel, line):
    p = repo / rel
    p.write_text(p.read_text() + line)


def app_with_history(tmp_path):
    repo = tmp_path / "app"
    shutil.copytree(APP, repo)
    (repo / "lang" / "en").mkdir(parents=True)
    (repo / "lang" / "en" / "orders.php").write_text("<?php\nreturn ['cancelled' => 'Order cancelled'];\n")
    (repo / "lang" / "fr").mkdir(parents=True)
    (repo / "lang" / "fr" / "orders.php").write_text("<?php\nreturn ['cancelled' => 'Commande annulée'];\n")
    # A factory that names no model (Laravel finds it by name), an event,
    # its listener, and a service that dispatches the event.
    (repo / "database" / "factories").mkdir(parents=True)
    (repo / "database" / "factories" / "OrderFactory.php").write_text(
        "<?php\nnamespace Database\\Factories;\nuse Illuminate\\Database\\Eloquent\\Factories\\Factory;\n"
        "class OrderFactory extends Factory\n{\n    public function definition(): array\n    {\n"
        "        return ['status' => 'new'];\n    }\n}\n")
    # A seeder that makes orders with that factory.
    (repo / "database" / "seeders").mkdir(parents=True)
    (repo / "database" / "seeders" / "DatabaseSeeder.php").write_text(
        "<?php\nnamespace Database\\Seeders;\nuse App\\Models\\Order;\nuse Illuminate\\Database\\Seeder;\n"
        "class DatabaseSeeder extends Seeder\n{\n    public function run(): void\n    {\n"
        "        Order::factory(10)->create();\n    }\n}\n")
    (repo / "app" / "Events").mkdir()
    (repo / "app" / "Events" / "OrderCancelled.php").write_text(
        "<?php\nnamespace App\\Events;\nuse App\\Models\\Order;\n"
        "class OrderCancelled\n{\n    public function __construct(public Order $order) {}\n}\n")
    (repo / "app" / "Listeners").mkdir()
    (repo / "app" / "Listeners" / "RestockCancelledOrder.php").write_text(
        "<?php\nnamespace App\\Listeners;\nuse App\\Events\\OrderCancelled;\n"
        "class RestockCancelledOrder\n{\n    public function handle(OrderCancelled $event): void {}\n}\n")
    (repo / "app" / "Services" / "Refunds.php").write_text(
        "<?php\nnamespace App\\Services;\nuse App\\Events\\OrderCancelled;\nuse App\\Models\\Order;\n"
        "class Refunds\n{\n    public function cancel(Order $order): void\n    {\n"
        "        OrderCancelled::dispatch($order);\n    }\n}\n")
    (repo / ".code-intel").mkdir()
    (repo / ".code-intel" / "config.json").write_text(json.dumps({"sync_on_start": False}))
    (repo / ".gitignore").write_text(".code-intel/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial", date="2024-01-01T10:00:00")
    # The service and the controller change together, three times.
    for i, day in enumerate(["2024-02-01", "2024-02-10", "2024-02-20"]):
        touch(repo, "app/Services/OrderService.php", f"\n// change {i}\n")
        touch(repo, "app/Http/Controllers/OrderController.php", f"\n// change {i}\n")
        git(repo, "commit", "-q", "-am", f"orders: change {i}", date=f"{day}T10:00:00")
    return repo


async def test_related_files_and_also_check(tmp_path):
    repo = app_with_history(tmp_path)
    async with serve(repo) as c:
        await c.wait_model()
        report = (await c.call("sync_index"))["report"]
        assert report["history_commits"] == 4, report
        # Translations into other locales are text-searchable only.
        assert report["skipped"] >= 1
        hits = await c.call("search_text", pattern="Commande annulée")
        assert hits["total"] == 1

        r = await c.call("related_files", files=["app/Http/Controllers/OrderController.php"])
        by_file = {f["file"]: f for f in r["files"]}
        # Its view (by name), the model and service it uses, the routes
        # that point at it, and its co-change partner.
        for want, edge in [
            ("resources/views/orders/show.blade.php", "view"),
            ("app/Models/Order.php", "import"),
            ("routes/web.php", "import ←"),
        ]:
            assert want in by_file, (want, list(by_file))
            assert any(e.startswith(edge) for e in edges(by_file[want])), by_file[want]
        service = by_file["app/Services/OrderService.php"]
        assert service["cochange"] and service["cochange"] > 0.5 and service["cochange_commits"] == 3, service
        assert r["history_commits"] == 3 and r["graph_edges"] > 10  # the initial bulk commit is left out

        # A model: its migrations by table name.
        r = await c.call("related_files", files=["app/Models/Order.php"])
        files = [f["file"] for f in r["files"]]
        for m in ["database/migrations/2024_01_01_000003_create_orders_table.php",
                  "database/migrations/2024_02_01_000004_add_tracking_to_orders_table.php"]:
            assert m in files, files
        # Its factory, found by Laravel's naming convention (no reference).
        factory = next(f for f in r["files"] if f["file"] == "database/factories/OrderFactory.php")
        assert any(e.startswith("convention") for e in edges(factory)), factory
        # The factory: the seeder and the test that call `Order::factory()`,
        # each at its line.
        r = await c.call("related_files", files=["database/factories/OrderFactory.php"])
        shown = {f["file"]: edges(f) for f in r["files"]}
        assert "factory ← database/seeders/DatabaseSeeder.php:9" in shown["database/seeders/DatabaseSeeder.php"], shown
        assert "factory ← tests/Feature/OrderTest.php:12" in shown["tests/Feature/OrderTest.php"], shown
        # The file that dispatches an event: the event and its listener.
        r = await c.call("related_files", files=["app/Services/Refunds.php"])
        by_file = {f["file"]: f for f in r["files"]}
        listener = by_file["app/Listeners/RestockCancelledOrder.php"]
        assert edges(listener) == ["listener → app/Services/Refunds.php:9"], listener
        assert "app/Events/OrderCancelled.php" in by_file, list(by_file)
        # A symbol: the files defining it are the seeds.
        r = await c.call("related_files", symbol="OrderService::cancel")
        assert r["seeds"] == ["app/Services/OrderService.php"], r["seeds"]
        err = await c.call_error("related_files", symbol="NoSuchThing")
        assert "no definition" in err
        err = await c.call_error("related_files", files=["../etc/passwd"])
        assert "outside" in err

        # query: the ranked files, and what the change likely needs too.
        q = await c.session.call_tool("query", {"query": "cancel an order from the order page", "limit": 3})
        s = q.structured_content
        assert isinstance(s["also_check"], list)
        listed = {f["file"] for f in s["files"]}
        assert not listed & {a["file"] for a in s["also_check"]}
        if s["also_check"]:
            assert "also check" in q.content[0].text

        # The CLI's `code-intel query` gives the same answer as the tool:
        # the same files in the same order, the same "also check" with the
        # same ties, and the same text below the index line.
        for request, limit in [("cancel an order from the order page", 3),
                               ("注文をキャンセルしたら在庫を戻す", 10),
                               ("OrderFactory definition status", 5)]:
            q = await c.session.call_tool("query", {"query": request, "limit": limit})
            tool = q.structured_content
            p = subprocess.run([BIN, "query", request, "--repo", str(repo), "-n", str(limit), "--json"],
                               capture_output=True, text=True, env=model_env(), timeout=300)
            assert p.returncode == 0, p.stderr
            cli = json.loads(p.stdout)
            assert [f["file"] for f in cli["files"]] == [f["file"] for f in tool["files"]], (request, cli, tool)
            assert cli["also_check"] == tool["also_check"], (request, cli["also_check"], tool["also_check"])
            p = subprocess.run([BIN, "query", request, "--repo", str(repo), "-n", str(limit)],
                               capture_output=True, text=True, env=model_env(), timeout=300)
            assert p.returncode == 0, p.stderr
            assert p.stdout.split("\n", 1)[1] == q.content[0].text.split("\n", 1)[1], (p.stdout, q.content[0].text)
        assert tool["files"], tool

        # A commit after the last sync: only it is mined.
        touch(repo, "app/Models/Order.php", "\n// later\n")
        git(repo, "commit", "-q", "-am", "order: later", date="2024-03-01T10:00:00")
        report = (await c.call("sync_index"))["report"]
        assert report["history_commits"] == 1, report

    out = run_bin(["related", "app/Http/Controllers/OrderController.php", "--repo", str(repo), "--json"],
                  model_env())
    v = json.loads(out.stdout)
    assert any(f["file"] == "resources/views/orders/show.blade.php" for f in v["files"]), v


async def test_scripts_reach_their_endpoints_and_forms_their_counterparts(tmp_path):
    """A script's request reaches the controller of the route it calls
    (`related_files` both ways, with the request's line), and a listed
    create form brings its edit form into `query`'s "also check"."""
    repo = tmp_path / "app"
    shutil.copytree(APP, repo)
    (repo / ".code-intel").mkdir()
    (repo / ".code-intel" / "config.json").write_text(json.dumps({"sync_on_start": False}))
    js = repo / "resources" / "js"
    (js / "stores").mkdir()
    (js / "stores" / "orderStore.ts").write_text(
        "import { http } from '@/services/http'\n\nexport const orderStore = {\n"
        "  async cancel (order: Order) {\n"
        "    return await http.post<Order>(`orders/${order.id}/cancel`, { reason: 'customer' })\n  },\n}\n")
    forms = js / "components" / "orders"
    forms.mkdir()
    field = "<template>\n  <form>\n    <input name=\"shipping_note\" v-model=\"note\">\n  </form>\n</template>\n"
    (forms / "CreateOrderForm.vue").write_text(field.replace("<form>", "<form @submit=\"create\">"))
    (forms / "EditOrderForm.vue").write_text(field.replace("<form>", "<form @submit=\"update\">"))
    async with serve(repo) as c:
        await c.wait_model()
        await c.call("sync_index")
        r = await c.call("related_files", files=["app/Http/Controllers/OrderController.php"])
        store = next(f for f in r["files"] if f["file"] == "resources/js/stores/orderStore.ts")
        assert "endpoint ← resources/js/stores/orderStore.ts:5" in edges(store), store
        r = await c.call("related_files", files=["resources/js/stores/orderStore.ts"])
        ctl = next(f for f in r["files"] if f["file"] == "app/Http/Controllers/OrderController.php")
        assert "endpoint → resources/js/stores/orderStore.ts:5" in edges(ctl), ctl
        # The request is a reference of the action it reaches.
        refs = await c.call("find_references", symbol="OrderController::cancel")
        req = [x for x in refs["references"] if x["resolution"] == "request"]
        assert [(x["file"], x["line"], x["kind"]) for x in req] == [
            ("resources/js/stores/orderStore.ts", 5, "request")], refs["references"]
        assert "orders/${order.id}/cancel" in req[0]["content"]
        assert any(x["resolution"] == "route" or x["file"] == "routes/web.php" for x in refs["references"]), refs
        refs = await c.call("find_references", symbol="OrderController::show")
        assert not [x for x in refs["references"] if x["resolution"] == "request"], refs["references"]
        # related_files on the action: the requesting script is a caller.
        r = await c.call("related_files", symbol="OrderController::cancel")
        store = next(f for f in r["files"] if f["file"] == "resources/js/stores/orderStore.ts")
        assert "call ← resources/js/stores/orderStore.ts:5" in edges(store), store
        r = await c.call("related_files", files=["resources/js/components/orders/CreateOrderForm.vue"])
        assert r["files"][0]["file"] == "resources/js/components/orders/EditOrderForm.vue", r["files"]

        # One file listed: its counterpart comes under "also check".
        q = await c.session.call_tool("query", {"query": "shipping_note input of CreateOrderForm", "limit": 1})
        s = q.structured_content
        forms = {f"resources/js/components/orders/{n}OrderForm.vue" for n in ["Create", "Edit"]}
        [top] = [f["file"] for f in s["files"]]
        assert top in forms, top
        [other] = forms - {top}
        also = {a["file"]: a for a in s["also_check"]}
        assert f"counterpart → {top}" in edges(also.get(other, {})), s["also_check"]
        assert "also check" in q.content[0].text and other in q.content[0].text


async def test_query_lists_tests_apart_quoted_texts_and_no_deleted_file(tmp_path):
    """`query` keeps tests out of its ranked files and "also check" (they
    come in a `tests` line, found by name and reference), says how many
    files it shows, finds the view that shows a quoted text through its
    translation key, and names no file that co-change history remembers
    but the working tree no longer has."""
    repo = app_with_history(tmp_path)
    views = repo / "resources" / "views" / "orders"
    (views / "cancelled.blade.php").write_text("<div class=\"banner\">{{ __('orders.cancelled') }}</div>\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "cancelled banner", date="2024-02-25T10:00:00")
    # A file that changed with the controller three times, then was deleted.
    gone = repo / "app" / "Services" / "OrderExport.php"
    for i, day in enumerate(["2024-03-01", "2024-03-02", "2024-03-03"]):
        gone.write_text(f"<?php\nnamespace App\\Services;\nclass OrderExport {{}} // {i}\n")
        touch(repo, "app/Http/Controllers/OrderController.php", f"\n// export {i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"export {i}", date=f"{day}T10:00:00")
    git(repo, "rm", "-q", str(gone.relative_to(repo)))
    git(repo, "commit", "-q", "-m", "drop the export", date="2024-03-04T10:00:00")
    async with serve(repo) as c:
        await c.wait_model()
        await c.call("sync_index")
        r = await c.call("related_files", files=["app/Http/Controllers/OrderController.php"])
        assert "app/Services/OrderExport.php" not in {f["file"] for f in r["files"]}, r["files"]

        q = await c.session.call_tool("query", {"query": "cancel an order from the order page"})
        s = q.structured_content
        named = [f["file"] for f in s["files"]] + [a["file"] for a in s["also_check"]]
        assert "app/Services/OrderExport.php" not in named + [t["file"] for t in s["tests"]], s
        assert not [f for f in named if f.startswith("tests/")], named
        assert "tests/Feature/OrderTest.php" in [t["file"] for t in s["tests"]], s["tests"]
        assert s["files_shown"] == len(s["files"]) + len(s["also_check"]), s["files_shown"]
        text = q.content[0].text
        assert "tests (exercise the files above" in text and "tests/Feature/OrderTest.php" in text, text
        assert f"files shown: {s['files_shown']} (" in text, text

        # A request that asks for the test gets it ranked.
        s = await c.call("query", query="the test for cancelling an order")
        assert "tests/Feature/OrderTest.php" in [f["file"] for f in s["files"]], s["files"]

        # The quoted text is the source locale's; the banner says it by key.
        s = await c.call("query", query='Rename the "Order cancelled" banner to say when it happened')
        by_file = {f["file"]: f for f in s["files"]}
        banner = by_file.get("resources/views/orders/cancelled.blade.php")
        assert banner and banner["why"].get("quoted", 0) > 0, s["files"]
        assert by_file.get("lang/en/orders.php", {}).get("why", {}).get("quoted", 0) > 0, s["files"]
