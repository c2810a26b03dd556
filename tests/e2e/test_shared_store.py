"""End-to-end: the shared vector store on object storage (the
`vector_store` setting). An S3-compatible server (moto's server mode, from PyPI) runs on
127.0.0.1 as a process of its own, so a test can kill it mid-sync; the real
binary indexes copies of a repository from separate `.code-intel/`
directories, as a second machine would."""

import json
import re
import socket
import subprocess
import sys
import time

import boto3

from conftest import BIN, make_repo, model_env, run_bin

BUCKET = "team-vectors"
STORE = f"s3://{BUCKET}/code-intel"


class MotoServer:
    """moto's S3 server on a free port of 127.0.0.1; in-memory, so a killed
    and restarted server starts empty."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert time.time() < deadline, "moto server did not start"
                time.sleep(0.2)
        self.s3().create_bucket(Bucket=BUCKET)
        return self

    def s3(self):
        return boto3.client("s3", endpoint_url=self.url, aws_access_key_id="testing",
                            aws_secret_access_key="testing", region_name="us-east-1")

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.kill()


def s3_env(server):
    return model_env(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                     AWS_REGION="us-east-1", AWS_ENDPOINT_URL=server.url, AWS_ALLOW_HTTP="true")


def index(repo, env, *extra, check=True):
    p = run_bin(["index", str(repo), "--vector-store", STORE, "--json", *extra], env, check)
    return json.loads(p.stdout) if check else p


def search(repo, env, query):
    p = run_bin(["search", query, "--repo", str(repo), "-n", "5", "--json"], env, timeout=300)
    return [(r["file"], r["name"], round(r["score"], 5)) for r in json.loads(p.stdout)["results"]]


def store_check(repo, env):
    p = run_bin(["doctor", "--repo", str(repo), "--json"], {**env, "CODE_INTEL_VECTOR_STORE": STORE},
                check=False, timeout=300)
    return next(c for c in json.loads(p.stdout)["checks"] if c["check"] == "vector_store")


def generated_module(n, tag):
    """`n` distinct small functions: chunks no other file has."""
    return "\n\n".join(
        f"def {tag}_rule_{i}(order):\n    \"\"\"Applies discount rule {i} of {tag}.\"\"\"\n"
        f"    return order.total * {i + 1} / 100\n" for i in range(n))


def test_second_machine_embeds_nothing_and_writers_do_not_duplicate(tmp_path):
    with MotoServer() as server:
        env = s3_env(server)
        first = make_repo(tmp_path / "ci")
        ci = index(first, env)
        assert ci["chunks_embedded"] > 20 and ci["chunks_from_store"] == 0
        assert ci["vectors_to_store"] > 20 and ci["vector_store_error"] is None, ci

        # A second machine: another checkout, its own .code-intel/.
        second = make_repo(tmp_path / "laptop")
        dev = index(second, env)
        assert dev["chunks_embedded"] == 0 and dev["vocabulary_embedded"] == 0, dev
        assert dev["vocabulary_from_store"] == dev["vocabulary_words"] > 0, dev
        assert dev["chunks_from_store"] == ci["chunks_embedded"] + ci["chunks_reused"], (ci, dev)
        assert dev["vectors_to_store"] == 0 and dev["chunks_total"] == ci["chunks_total"]
        for q in ("ログイン時にパスワードを検証する", "download an invoice"):
            assert search(first, env, q) == search(second, env, q)

        # One changed function body: only its chunk is embedded, and added.
        service = second / "app" / "auth" / "service.py"
        service.write_text(service.read_text().replace("return", "return  ", 1))
        changed = index(second, env)
        assert changed["modified"] == 1 and changed["chunks_embedded"] == 1, changed
        assert changed["vectors_to_store"] == 1

        # Two writers at once adding the same 150 new chunks, three rounds:
        # no duplicate rows (rows in the store = distinct content hashes).
        # Each writer is indexed locally first, so its store run only opens
        # the store and adds: the two adds run within moments of each other.
        # Before the store's primary key (store/shared.rs) this left 257
        # distinct hashes in 410 rows once in CI; the overlap is likely, not
        # forced.
        for round_ in range(3):
            writers = []
            for name in ("runner-a", "runner-b"):
                repo = make_repo(tmp_path / f"{name}-{round_}")
                (repo / "app" / "discounts.py").write_text(generated_module(150, f"promo{round_}"))
                run_bin(["index", str(repo), "--json"], env)
                writers.append(repo)
            procs = [subprocess.Popen([BIN, "index", str(r), "--vector-store", STORE, "--json"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                     for r in writers]
            outs = [p.communicate(timeout=900) for p in procs]
            assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
            reports = [json.loads(o[0]) for o in outs]
            assert all(r["vector_store_error"] is None for r in reports), reports
            check = store_check(first, env)
            assert check["ok"], check
            held, rows = (int(x) for x in
                          re.search(r": (\d+) vectors of .* \((\d+) rows in all\)", check["message"]).groups())
            assert held == rows, (round_, check["message"])
        assert held >= ci["vectors_to_store"] + 1 + 3 * 150, check["message"]


def test_killed_s3_server_mid_sync_falls_back_locally_and_next_sync_fills_the_store(tmp_path):
    server = MotoServer().start()
    try:
        env = s3_env(server)
        seeded = make_repo(tmp_path / "ci")
        index(seeded, env)
        repo = make_repo(tmp_path / "laptop")
        (repo / "app" / "discounts.py").write_text(generated_module(400, "season"))
        proc = subprocess.Popen([BIN, "index", str(repo), "--vector-store", STORE, "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        # Killed once the first batch is stored locally: the store was
        # opened (at the start of the sync) and the sync is under way.
        data = repo / ".code-intel" / "lance" / "forest.lance" / "data"
        deadline = time.time() + 300
        while not (data.is_dir() and any(data.iterdir())):
            assert proc.poll() is None, f"the sync ended before the server was killed: {proc.stderr.read()}"
            assert time.time() < deadline
            time.sleep(0.05)
        assert proc.poll() is None, "the sync ended before the server was killed"
        server.kill()
        out, err = proc.communicate(timeout=900)
        # Carries on locally, says so, and leaves a consistent index.
        assert proc.returncode == 0, err
        report = json.loads(out)
        assert report["vector_store_error"], report
        assert "shared vector store" in report["vector_store_error"]
        assert "127.0.0.1" in report["vector_store_error"] and ".rs:" not in report["vector_store_error"]
        assert len(report["vector_store_error"]) < 600, report["vector_store_error"]
        assert report["chunks_embedded"] >= 400 and report["vectors_to_store"] == 0, report
        status = json.loads(run_bin(["status", "--repo", str(repo), "--json"], env).stdout)
        assert status["forest_rows"] == status["chunks"] == report["chunks_total"], status
        assert search(repo, env, "discount rule 7 of season")[0][1] == "season_rule_7"

        # The store is back (empty: moto keeps it in memory): the next sync
        # has nothing to embed and adds every vector of the local index.
        server.start()
        again = index(repo, env)
        assert again["vector_store_error"] is None and again["chunks_embedded"] == 0, again
        assert again["vectors_to_store"] >= 400, again
        check = store_check(repo, env)
        assert check["ok"] and f": {again['vectors_to_store']} vectors" in check["message"], check
    finally:
        if server.proc.poll() is None:
            server.kill()
