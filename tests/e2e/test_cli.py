"""End-to-end: the CLI (`index`, `search`, `status`) and the raw stdio
channel of `serve` (nothing but JSON-RPC on stdout)."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from conftest import ASSETS, BIN, make_repo


def cli_env():
    env = dict(os.environ)
    env["CODE_INTEL_MODEL_DIR"] = str(Path(ASSETS) / "models" / "multilingual-e5-small")
    return env


def run(*args, env=None):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=env or cli_env(), timeout=600)
    assert p.returncode == 0, f"{args}: {p.stderr}"
    return p


def test_index_search_status(tmp_path):
    repo = make_repo(tmp_path, extras=True)
    env = cli_env()
    env["CODE_INTEL_MODEL_CACHE"] = str(tmp_path / "cache")
    out = json.loads(run("index", str(repo), "--json", env=env).stdout)
    # ONNX Runtime maps model_dir's weights from a copy with external data
    # in the model cache (embed::weights); model_dir itself is not written.
    model_dir = Path(env["CODE_INTEL_MODEL_DIR"])
    size = (model_dir / "model.onnx").stat().st_size
    data = list((tmp_path / "cache" / "mapped").glob("*/model.onnx.data"))
    assert len(data) == 1 and size * 0.9 < data[0].stat().st_size < size * 1.1, data
    assert (data[0].parent / "model.onnx").stat().st_size < size // 100
    assert not list(model_dir.glob("*.data")) and not list(model_dir.glob(".*.tmp"))
    assert out["added"] == 13 and out["skipped"] == 2 and out["chunks_embedded"] > 20
    again = json.loads(run("index", str(repo), "--json").stdout)
    assert (again["added"], again["modified"], again["chunks_embedded"], again["unchanged"]) == (0, 0, 0, 13)

    res = json.loads(run("search", "ログイン時にパスワードを検証する", "--repo", str(repo), "-n", "3", "--json").stdout)
    assert res["results"][0]["name"] == "authenticate"
    plain = run("search", "download an invoice", "--repo", str(repo), "-n", "1").stdout
    assert "InvoiceController.php" in plain and "download" in plain

    status = json.loads(run("status", "--repo", str(repo), "--json").stdout)
    assert status["files_indexed"] == 13 and status["files_skipped"] == 2
    assert status["forest_rows"] == status["chunks"] == out["chunks_total"]
    assert status["onnx_runtime"]["found"] is True and status["model"]["present"] is True
    assert status["index"]["state"] == "ready"

    forced = json.loads(run("index", str(repo), "--force", "--json").stdout)
    assert forced["added"] == 13 and forced["chunks_total"] == out["chunks_total"]

    # Where symlinks cannot be made (the cache path is a file), the model is
    # loaded from memory instead, with the same vectors: nothing to re-embed.
    env["CODE_INTEL_MODEL_CACHE"] = str(repo / "broken.py")
    (repo / "app" / "new_module.py").write_text("def shipping_fee(weight):\n    return weight * 10\n")
    fallback = json.loads(run("index", str(repo), "--json", env=env).stdout)
    assert (fallback["added"], fallback["chunks_embedded"], fallback["unchanged"]) == (1, 1, 13), fallback


def test_corrupted_index_gives_a_fix(tmp_path):
    repo = make_repo(tmp_path)
    run("index", str(repo))
    for f in (repo / ".code-intel" / "lance").rglob("*.manifest"):
        f.write_bytes(b"garbage")
    p = subprocess.run([BIN, "search", "login", "--repo", str(repo)], capture_output=True, text=True, env=cli_env())
    assert p.returncode != 0 and "code-intel index --force" in p.stderr, p.stderr
    run("index", str(repo), "--force")
    res = json.loads(run("search", "ログイン時にパスワードを検証する", "--repo", str(repo), "--json").stdout)
    assert res["results"][0]["name"] == "authenticate"


def test_serve_stdout_is_only_json_rpc(tmp_path):
    repo = make_repo(tmp_path)
    proc = subprocess.Popen(
        [BIN, "serve", "--repo", str(repo)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(), text=True,
    )
    try:
        t0 = time.perf_counter()
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}) + "\n")
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        elapsed = time.perf_counter() - t0
        assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "code-intel"
        assert elapsed < 1.0, elapsed
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search_text", "arguments": {"pattern": "class"}}}) + "\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "no_such_tool", "arguments": {}}}) + "\n")
        proc.stdin.flush()
        # Let the background model load and sync run and log while we read.
        time.sleep(8)
        proc.stdin.close()
        rest = proc.stdout.read()
        lines = [l for l in rest.splitlines() if l.strip()]
        assert lines, "no replies"
        replies = [json.loads(l) for l in lines]  # every stdout line is JSON
        assert all(r.get("jsonrpc") == "2.0" for r in replies)
        by_id = {r.get("id"): r for r in replies}
        assert by_id[2]["result"]["structuredContent"]["total"] >= 3
        assert "error" in by_id[3]
    finally:
        proc.kill()
        proc.wait()


def test_killed_sync_resumes_without_duplicates(tmp_path):
    repo = tmp_path / "many"
    (repo / "pkg").mkdir(parents=True)
    for i in range(600):
        (repo / "pkg" / f"mod_{i:03}.py").write_text(
            f"def handler_{i}(request):\n    return request.get('item_{i}')\n"
        )
    state = repo / ".code-intel" / "sync_state.json"
    proc = subprocess.Popen([BIN, "index", str(repo)], env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        committed = 0
        while committed == 0:
            assert proc.poll() is None, "index finished before it could be killed"
            assert time.time() < deadline
            time.sleep(0.05)
            try:
                committed = len(json.loads(state.read_text())["files"])
            except (OSError, ValueError, KeyError):
                pass
        proc.kill()
    finally:
        proc.wait()
    assert 0 < committed < 600
    rest = json.loads(run("index", str(repo), "--json").stdout)
    assert rest["added"] == 600 - committed and rest["unchanged"] == committed, rest
    status = json.loads(run("status", "--repo", str(repo), "--json").stdout)
    assert status["files_indexed"] == 600
    assert status["forest_rows"] == status["chunks"] == 600  # one chunk per file, none twice


def test_lock_vendored_and_generated_files_stay_out_of_the_semantic_index(tmp_path):
    """A Laravel app's lock files, published vendor assets and minified
    bundles are left out of the semantic index by default (classified by
    path and content), stay searchable as text, and `status` says why; the
    config key brings them back."""
    import shutil

    repo = tmp_path / "app"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "laravel-app", repo)
    (repo / "composer.lock").write_text(json.dumps({"packages": [{"name": "laravel/framework", "version": "v11.9.0"}]}, indent=2))
    (repo / "package-lock.json").write_text(json.dumps({"name": "shop", "lockfileVersion": 3}, indent=2))
    (repo / "public" / "vendor" / "horizon").mkdir(parents=True)
    (repo / "public" / "vendor" / "horizon" / "app.css").write_text(".horizon-badge{color:red}\n")
    (repo / "resources" / "css" / "theme.css").write_text("".join(f".c{i}{{margin:{i}px}}" for i in range(400)) + "\n")
    (repo / "resources" / "svg").mkdir(parents=True)
    (repo / "resources" / "svg" / "sprite.svg").write_text('<svg><symbol id="cart"></symbol></svg>\n')
    out = json.loads(run("index", str(repo), "--json").stdout)
    # The fixture's lang/ja/messages.php is the sixth: a translation (l10n).
    assert out["added"] == 30 and out["skipped"] == 6, out

    status = json.loads(run("status", "--repo", str(repo), "--json").stdout)
    left = status["left_out"]
    assert left["lock"]["files"] == 2 and left["vendored"]["files"] == 1 and left["generated"]["files"] == 2, left
    assert left["l10n"]["files"] == 1, left
    text = run("status", "--repo", str(repo)).stdout
    assert "minified" in text and "still text-searchable" in text, text

    # Still text-searchable: grep-style search reads every file.
    p = subprocess.run([BIN, "search", "horizon badge", "--repo", str(repo), "-n", "20", "--json"],
                       capture_output=True, text=True, env=cli_env(), timeout=600)
    files = {h["file"] for h in json.loads(p.stdout)["results"]}
    assert not files & {"composer.lock", "package-lock.json", "public/vendor/horizon/app.css"}, files

    # The config key turns the rule off.
    (repo / ".code-intel" / "config.json").write_text(json.dumps({"index_exclude_classes": []}))
    again = json.loads(run("index", str(repo), "--json").stdout)
    assert again["added"] == 6 and again["skipped"] == 0, again


def test_a_forked_library_is_vendored_and_the_apps_own_locale_is_indexed(tmp_path):
    """A directory holding another project's licence (a holder the root
    licence does not name) is vendored whole; a monorepo-style package under
    the repository's own holder stays source. A translation is `l10n` until
    `config/app.php` names its locale, then it is indexed and found."""
    import shutil

    repo = tmp_path / "app"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "laravel-app", repo)
    mit = "\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n"
    (repo / "LICENSE").write_text("MIT License\n\nCopyright (c) 2024 Shop Makers Ltd" + mit)
    fork = repo / "resources" / "js" / "editor"
    fork.mkdir(parents=True)
    (fork / "ORIGINAL-EDITOR-LICENSE").write_text("MIT License\n\nCopyright (c) Meta Platforms, Inc. and affiliates." + mit)
    (fork / "selection.js").write_text("export function moveSelectionToEnd(editor) {\n  editor.update(() => {});\n}\n")
    own = repo / "packages" / "cart"
    own.mkdir(parents=True)
    (own / "LICENSE.md").write_text("Copyright (c) Shop Makers Ltd" + mit)
    (own / "cart.js").write_text("export function addToCart(item) {\n  return [item];\n}\n")

    out = json.loads(run("index", str(repo), "--json").stdout)
    assert out["skipped"] == 3, out  # the fork's two files and lang/ja
    left = json.loads(run("status", "--repo", str(repo), "--json").stdout)["left_out"]
    assert left["vendored"]["files"] == 2 and left["l10n"]["files"] == 1, left
    text = run("status", "--repo", str(repo)).stdout
    assert "resources/js/editor/ORIGINAL-EDITOR-LICENSE" in text and "not the repository's" in text, text
    p = subprocess.run([BIN, "search", "add an item to the cart", "--repo", str(repo), "-n", "40", "--json"],
                       capture_output=True, text=True, env=cli_env(), timeout=600)
    files = {h["file"] for h in json.loads(p.stdout)["results"]}
    assert "packages/cart/cart.js" in files and "resources/js/editor/selection.js" not in files, files

    # A Japanese application: its own locale is indexed, as source.
    (repo / "config").mkdir()
    (repo / "config" / "app.php").write_text("<?php\nreturn [\n    'locale' => env('APP_LOCALE', 'ja'),\n    'fallback_locale' => 'en',\n];\n")
    again = json.loads(run("index", str(repo), "--json").stdout)
    assert again["skipped"] == 2, again
    left = json.loads(run("status", "--repo", str(repo), "--json").stdout)["left_out"]
    assert "l10n" not in left, left
    p = subprocess.run([BIN, "search", "注文をキャンセルしました", "--repo", str(repo), "-n", "5", "--json"],
                       capture_output=True, text=True, env=cli_env(), timeout=600)
    files = [h["file"] for h in json.loads(p.stdout)["results"]]
    assert files[0] == "lang/ja/messages.php", files


def test_a_release_archive_reads_the_dictionary_beside_its_binary(tmp_path):
    """A release archive carries `dictionary/jmdict-ja-en.tsv` beside the
    binary (.github/build-setup.yml): with no CODE_INTEL_DICTIONARY, that
    file is read, before the user cache's."""
    repo = make_repo(tmp_path)
    bindir = tmp_path / "archive"
    (bindir / "dictionary").mkdir(parents=True)
    exe = bindir / "code-intel"
    try:
        os.link(BIN, exe)  # the executable's own path, as a hard link
    except OSError:
        shutil.copy2(BIN, exe)
    (bindir / "dictionary" / "jmdict-ja-en.tsv").write_text("# JMdict\n請求書\tinvoice bill\n検証\tverification check\n",
                                                           encoding="utf-8")
    env = cli_env()
    env.pop("CODE_INTEL_DICTIONARY", None)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    p = subprocess.run([str(exe), "status", "--repo", str(repo), "--json"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)["dictionary"]
    assert got == {"path": str(bindir / "dictionary" / "jmdict-ja-en.tsv"), "terms": 2}, got
    # Without the archive's file, the user cache's path is the one named.
    (bindir / "dictionary" / "jmdict-ja-en.tsv").unlink()
    p = subprocess.run([str(exe), "status", "--repo", str(repo), "--json"], capture_output=True, text=True,
                       env=env, timeout=120)
    got = json.loads(p.stdout)["dictionary"]
    assert got == {"path": str(tmp_path / "cache" / "code-intel" / "dictionary" / "jmdict-ja-en.tsv"), "terms": 0}, got
