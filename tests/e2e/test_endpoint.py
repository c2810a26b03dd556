"""End-to-end: a remote OpenAI-compatible embeddings endpoint
(`embedding_endpoint`). An embeddings server on 127.0.0.1
(embed_server.py) runs the same test model with ONNX Runtime's Python
package; the real binary must get the vectors the local model gives,
retry 429/500/timeouts with backoff and then report, and refuse a wrong
dimension or model."""

import json
from pathlib import Path

from functools import partial

from conftest import ASSETS, make_repo, model_env, run_bin
from embed_server import EmbeddingServer

MODEL_DIR = Path(ASSETS) / "models" / "multilingual-e5-small"
MODEL = "intfloat/multilingual-e5-small"
TEXTS = [
    "def authenticate(user, password): return check_password(user.hash, password)",
    "ログイン時にパスワードを検証する",
    "Illuminate\\Support\\Collection::chunk splits the collection into chunks of the given size "
    * 60,  # over 512 tokens: both sides truncate
]


run = partial(run_bin, timeout=600)


def set_endpoint(repo, url, **extra):
    config = repo / ".code-intel" / "config.json"
    config.parent.mkdir(exist_ok=True)
    current = json.loads(config.read_text()) if config.exists() else {}
    current["embedding_endpoint"] = {"url": url, "model": MODEL, **extra}
    config.write_text(json.dumps(current))


def embed(repo, env, *texts, query=False, check=True):
    args = ["model", "embed", "--repo", str(repo), *texts] + (["--query"] if query else [])
    p = run(args, env, check=check)
    return json.loads(p.stdout) if p.returncode == 0 else p


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb)


def test_endpoint_vectors_equal_local_ones_and_index_through_it(tmp_path):
    env = model_env()
    local_repo = make_repo(tmp_path / "local")
    remote_repo = make_repo(tmp_path / "remote")
    local = {q: embed(local_repo, env, *TEXTS, query=q) for q in (False, True)}
    assert local[False]["model_id"] == MODEL
    with EmbeddingServer(MODEL_DIR) as server:
        set_endpoint(remote_repo, server.url, batch_size=4)
        for q in (False, True):
            remote = embed(remote_repo, env, *TEXTS, query=q)
            assert remote["model_id"] == MODEL and remote["dim"] == 384
            for a, b in zip(local[q]["vectors"], remote["vectors"]):
                assert abs(sum(x * x for x in b) - 1) < 1e-5, "remote vectors are normalised by us"
                assert cosine(a, b) > 1 - 1e-4, (q, cosine(a, b))

        # A whole index through the endpoint, in batches of at most 4.
        before = len(server.requests)
        report = json.loads(run(["index", str(remote_repo), "--json"], env).stdout)
        assert report["chunks_embedded"] > 4
        sent = [r["inputs"] for r in server.requests[before:]]
        assert max(sent) <= 4 and sum(sent) >= report["chunks_embedded"], sent
        hits = json.loads(run(["search", "ログイン時にパスワードを検証する", "--repo", str(remote_repo),
                                "-n", "3", "--json"], env).stdout)
        assert hits["results"][0]["name"] == "authenticate", hits["results"][:3]
        # The doctor probes the endpoint instead of the local model.
        doctor = json.loads(run(["doctor", "--repo", str(remote_repo), "--json"], env, check=False).stdout)
        check = next(c for c in doctor["checks"] if c["check"] == "embedding_endpoint")
        assert check["ok"] and MODEL in check["message"], check
        assert not any(c["check"] == "model" for c in doctor["checks"])

    # The same index, now embedded locally with the same model id, is
    # compatible: an incremental sync reuses everything.
    config = remote_repo / ".code-intel" / "config.json"
    config.write_text("{}")
    again = json.loads(run(["index", str(remote_repo), "--json"], env).stdout)
    assert again["chunks_embedded"] == 0 and again["unchanged"] > 0, again


def test_retries_with_backoff_then_reports(tmp_path):
    env = model_env(CODE_INTEL_TEST_API_KEY="sk-test-123")
    repo = make_repo(tmp_path)
    with EmbeddingServer(MODEL_DIR) as server:
        set_endpoint(repo, server.url + "/v1", retries=2, timeout_seconds=2,
                     api_key_env="CODE_INTEL_TEST_API_KEY")
        # 429 (Retry-After: 0), then 500 (backoff 1 s after the second
        # failure), then success.
        server.failures = [(429, 0), (500, None)]
        out = embed(repo, env, "hello")
        assert len(out["vectors"]) == 1
        statuses = [r["status"] for r in server.requests]
        assert statuses == [429, 500, 200], statuses
        times = [r["time"] for r in server.requests]
        assert times[2] - times[1] >= 0.9, "second retry waits 1 s"
        assert all(r["auth"] == "Bearer sk-test-123" for r in server.requests)

        # Always 500: 1 + 2 retries, then a clear error.
        server.requests.clear()
        server.failures = [(500, None)] * 10
        p = embed(repo, env, "hello", check=False)
        assert p.returncode != 0
        assert "HTTP 500" in p.stderr and "gave up after 3 attempts" in p.stderr, p.stderr
        assert len(server.requests) == 3

        # A server slower than timeout_seconds: timed out, retried, reported.
        server.requests.clear()
        server.failures = []
        server.delay = 3
        p = embed(repo, env, "hello", check=False)
        assert p.returncode != 0 and "timed out" in p.stderr, p.stderr
        assert len(server.requests) == 3
        server.delay = 0

        # 401 is final: no retry, the fix named.
        server.requests.clear()
        server.failures = [(401, None)]
        p = embed(repo, env, "hello", check=False)
        assert p.returncode != 0 and "api_key_env" in p.stderr, p.stderr
        assert len(server.requests) == 1

    # The key variable unset: refused before any request.
    p = embed(repo, model_env(), "hello", check=False)
    assert p.returncode != 0 and "CODE_INTEL_TEST_API_KEY" in p.stderr, p.stderr


def test_wrong_dimension_or_model_is_refused_and_the_index_kept(tmp_path):
    env = model_env()
    repo = make_repo(tmp_path)
    first = json.loads(run(["index", str(repo), "--json"], env).stdout)
    assert first["chunks_embedded"] > 0
    (repo / "app" / "new_module.py").write_text("def fresh_function():\n    return 42\n")
    with EmbeddingServer(MODEL_DIR) as server:
        set_endpoint(repo, server.url)
        server.dim = 256
        p = run(["index", str(repo)], env, check=False)
        assert p.returncode != 0 and "256-dimensional" in p.stderr, p.stderr
        server.dim = None
        server.answer_model = "BAAI/bge-m3"
        p = run(["index", str(repo)], env, check=False)
        assert p.returncode != 0 and "BAAI/bge-m3" in p.stderr and "--force" in p.stderr, p.stderr
        server.answer_model = None
        # The refused syncs changed nothing: the next one embeds only the
        # new file's chunk.
        report = json.loads(run(["index", str(repo), "--json"], env).stdout)
        assert report["added"] == 1 and report["chunks_embedded"] == 1, report

    # Another model id than the index's: refused, the fix named.
    config = repo / ".code-intel" / "config.json"
    config.write_text(json.dumps({"model_dir": str(MODEL_DIR)}))
    p = run(["index", str(repo)], env, check=False)
    assert p.returncode != 0 and "index --force" in p.stderr, p.stderr
    assert "intfloat/multilingual-e5-small" in p.stderr
    report = json.loads(run(["index", str(repo), "--force", "--json"], env).stdout)
    assert report["chunks_embedded"] > 0
