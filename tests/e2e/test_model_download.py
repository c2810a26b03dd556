"""End-to-end: the model on first use. A Hub mirror on 127.0.0.1
(hub_mirror.py) serves the test model that ../shared/tools/test-models
builds, in the Hugging Face layout; the real binary downloads it through
HF_ENDPOINT into a fresh cache, resumes a download that was killed, and
refuses a corrupted file."""

import json
import os
import subprocess
import time
from pathlib import Path

from conftest import ASSETS, BIN, make_repo
from conftest import run_bin as run
from hub_mirror import HubMirror, PypiMirror, make_ca, mirror_env, sha256_of

MODEL_DIR = Path(ASSETS) / "models" / "multilingual-e5-small"
REPO_CACHE = "models--intfloat--multilingual-e5-small"


def model_check(repo, env):
    out = json.loads(run(["doctor", "--repo", str(repo), "--json"], env, check=False).stdout)
    return next(c for c in out["checks"] if c["check"] == "model")


def onnx_requests(mirror):
    return [r for r in mirror.requests if r["file"] == "onnx/model.onnx" and r["range"] != "bytes=0-0"]


def test_first_index_downloads_the_model_from_the_mirror(tmp_path):
    assert (MODEL_DIR / "model.onnx").is_file(), f"test model missing: {MODEL_DIR}"
    repo = make_repo(tmp_path)
    cache = tmp_path / "cache"
    with HubMirror(MODEL_DIR) as mirror:
        env = mirror_env(os.environ, mirror, CODE_INTEL_MODEL_CACHE=str(cache))
        before = model_check(repo, env)
        assert before["ok"] and "not downloaded yet (5 of 5 files missing)" in before["message"], before
        assert mirror.url in before["message"]

        # No `model pull` first: the first index downloads what it needs.
        p = run(["index", str(repo), "--json"], env)
        size = (MODEL_DIR / "model.onnx").stat().st_size
        total_mb = -(-sum(f["size"] for f in mirror.files.values()) // 1_000_000)
        assert f"downloading intfloat/multilingual-e5-small ({total_mb} MB) to {cache} from {mirror.url}" in p.stderr, p.stderr
        assert json.loads(p.stdout)["chunks_embedded"] > 20
        blob = cache / REPO_CACHE / "snapshots" / "0123456789abcdef0123456789abcdef01234567" / "onnx" / "model.onnx"
        assert blob.is_file() and blob.stat().st_size == size
        assert sha256_of(blob) == mirror.files["onnx/model.onnx"]["sha256"]
        assert (cache / REPO_CACHE / "refs" / "main").read_text() == "0123456789abcdef0123456789abcdef01234567"
        after = model_check(repo, env)
        assert after["ok"] and str(cache) in after["message"] and "MB)" in after["message"], after

        # The downloaded model answers searches; nothing is fetched again.
        served = len(mirror.requests)
        res = json.loads(run(["search", "ログイン時にパスワードを検証する", "--repo", str(repo), "-n", "3", "--json"], env).stdout)
        assert res["results"][0]["name"] == "authenticate"
        # ONNX Runtime maps the weights from a copy with aligned external
        # data instead of reading them into memory (embed::weights).
        data = list((cache / "mapped").glob("*/model.onnx.data"))
        assert len(data) == 1 and size * 0.9 < data[0].stat().st_size < size * 1.1, data
        assert (data[0].parent / "model.onnx").stat().st_size < size // 100
        again = run(["model", "pull", "--repo", str(repo)], env)
        assert "is present in" in again.stdout
        assert len(mirror.requests) == served


def test_killed_download_resumes_and_corrupt_file_is_refused(tmp_path):
    repo = make_repo(tmp_path)
    home = tmp_path / "hf-home"
    with HubMirror(MODEL_DIR) as mirror:
        # HF_HOME names the cache (as for Hugging Face's tools) when set.
        env = mirror_env(os.environ, mirror, HF_HOME=str(home))
        size = mirror.files["onnx/model.onnx"]["size"]
        cut = 64 * 1024 * 1024
        mirror.stall_after["onnx/model.onnx"] = cut
        proc = subprocess.Popen([BIN, "model", "pull", "--repo", str(repo)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        part = None
        deadline = time.time() + 300
        while time.time() < deadline:
            parts = list((home / REPO_CACHE / "blobs").glob("*.part")) if (home / REPO_CACHE / "blobs").is_dir() else []
            if parts and parts[0].stat().st_size >= cut:
                part = parts[0]
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        assert part is not None, "the download never reached the stall point"
        proc.kill()
        proc.wait()
        kept = part.stat().st_size
        assert kept == cut
        assert model_check(repo, env)["message"].startswith("not downloaded yet (1 of 5"), model_check(repo, env)

        p = run(["model", "pull", "--repo", str(repo), "--json"], env)
        pulled = json.loads(p.stdout)
        assert pulled["downloaded"] == ["onnx/model.onnx"] and pulled["cache"] == str(home)
        resumed = onnx_requests(mirror)[-1]
        assert resumed["range"] == f"bytes={cut}-", mirror.requests
        assert resumed["sent"] == size - cut
        assert not part.exists()
        pointer = home / REPO_CACHE / "snapshots" / "0123456789abcdef0123456789abcdef01234567" / "onnx" / "model.onnx"
        assert sha256_of(pointer) == mirror.files["onnx/model.onnx"]["sha256"]
        assert model_check(repo, env)["message"].startswith("intfloat/multilingual-e5-small in ")

        # A mirror that serves a damaged file: refused, removed, not loaded.
        bad_home = tmp_path / "hf-home-bad"
        bad_env = mirror_env(os.environ, mirror, HF_HOME=str(bad_home))
        mirror.corrupt["onnx/model.onnx"] = True
        bad = run(["model", "pull", "--repo", str(repo)], bad_env, check=False)
        assert bad.returncode == 1
        assert "onnx/model.onnx of intfloat/multilingual-e5-small" in bad.stderr and "is corrupt: sha256 " in bad.stderr, bad.stderr
        assert "the file was removed; run `code-intel model pull` again" in bad.stderr
        assert not list((bad_home / REPO_CACHE / "blobs").glob(mirror.files["onnx/model.onnx"]["sha256"] + "*"))
        assert model_check(repo, bad_env)["message"].startswith("not downloaded yet (1 of 5"), model_check(repo, bad_env)
        # index does not embed with it either: the same refusal, exit 1.
        refused = run(["index", str(repo)], bad_env, check=False)
        assert refused.returncode == 1 and "is corrupt" in refused.stderr, refused.stderr

        # Offline with files missing: a clear error, no request.
        served = len(mirror.requests)
        offline = run(["model", "pull", "--repo", str(repo)], dict(bad_env, HF_HUB_OFFLINE="1"), check=False)
        assert offline.returncode == 1 and "downloads are off (HF_HUB_OFFLINE" in offline.stderr, offline.stderr
        assert len(mirror.requests) == served


def test_missing_onnx_runtime_is_downloaded_from_pypi(tmp_path):
    import platform

    assert platform.system() == "Linux" and platform.machine() == "x86_64", "the fake wheel is manylinux x86_64"
    library = Path(os.environ["ORT_DYLIB_PATH"])
    repo = make_repo(tmp_path)
    cache = tmp_path / "xdg-cache"
    empty_path = tmp_path / "no-python"  # no python3: no pip-installed onnxruntime
    empty_path.mkdir()
    with PypiMirror(library, tmp_path) as mirror:
        env = dict(os.environ)
        env.pop("ORT_DYLIB_PATH", None)
        env.update(XDG_CACHE_HOME=str(cache), CODE_INTEL_PYPI_URL=mirror.url, PATH=str(empty_path),
                   CODE_INTEL_MODEL_DIR=str(MODEL_DIR), NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        runtime_dir = cache / "code-intel" / "onnxruntime" / "1.31.1"
        doctor = json.loads(run(["doctor", "--repo", str(repo), "--json"], env, check=False).stdout)
        rt = next(c for c in doctor["checks"] if c["check"] == "onnx_runtime")
        assert rt["ok"] and "the first index or serve downloads ONNX Runtime 1.31.1 from PyPI" in rt["message"], rt

        mirror.bad_digest = True
        bad = run(["model", "pull", "--repo", str(repo)], env, check=False)
        assert bad.returncode == 1 and f"{mirror.name} from {mirror.url}/files/{mirror.name} is corrupt: sha256 {mirror.sha256}" in bad.stderr, bad.stderr
        assert "nothing was installed" in bad.stderr
        assert not runtime_dir.exists() or not list(runtime_dir.iterdir()), list(runtime_dir.iterdir())

        mirror.bad_digest = False
        p = run(["index", str(repo), "--json"], env)
        mb = -(-len(mirror.wheel) // 1_000_000)
        assert f"downloading ONNX Runtime 1.31.1 ({mb} MB) to {runtime_dir} from {mirror.url}/files/{mirror.name}" in p.stderr, p.stderr
        assert json.loads(p.stdout)["chunks_embedded"] > 20
        lib = runtime_dir / "libonnxruntime.so.1.31.1"
        assert lib.read_bytes() == library.read_bytes()
        assert sorted(x.name for x in runtime_dir.iterdir()) == ["libonnxruntime.so.1.31.1"]

        served = len(mirror.requests)
        doctor = json.loads(run(["doctor", "--repo", str(repo), "--json"], env, check=False).stdout)
        rt = next(c for c in doctor["checks"] if c["check"] == "onnx_runtime")
        assert rt["ok"] and rt["message"].startswith(f"{lib} (version 1.31.1)"), rt
        run(["search", "download an invoice", "--repo", str(repo), "-n", "1"], env)
        assert len(mirror.requests) == served

        # Offline: no request, a clear error.
        offline = dict(env, XDG_CACHE_HOME=str(tmp_path / "other-cache"), CODE_INTEL_OFFLINE="1")
        refused = run(["index", str(repo)], offline, check=False)
        assert refused.returncode == 1 and "ONNX Runtime library not found" in refused.stderr, refused.stderr
        assert len(mirror.requests) == served


def test_downloads_trust_the_systems_certificates(tmp_path):
    """Behind a TLS-intercepting proxy every certificate is signed by the
    proxy's CA, which the machine trusts and Mozilla's bundled list does
    not. Both downloads (ONNX Runtime from PyPI, the model from the Hub)
    are served over HTTPS by a CA of the test's own: refused while no trust
    store names it, fetched once the system's store (SSL_CERT_FILE) does."""
    library = Path(os.environ["ORT_DYLIB_PATH"])
    repo = make_repo(tmp_path)
    ca, cert, key = make_ca(tmp_path / "ca")
    empty_path = tmp_path / "no-python"  # no pip-installed onnxruntime to find
    empty_path.mkdir()
    with HubMirror(MODEL_DIR, tls=(cert, key)) as hub, PypiMirror(library, tmp_path, tls=(cert, key)) as pypi:
        assert hub.url.startswith("https://") and pypi.url.startswith("https://")
        cache = tmp_path / "cache"
        env = mirror_env(os.environ, hub, CODE_INTEL_MODEL_CACHE=str(cache / "models"), XDG_CACHE_HOME=str(cache),
                         CODE_INTEL_PYPI_URL=pypi.url, PATH=str(empty_path))
        env.pop("ORT_DYLIB_PATH", None)
        env.pop("SSL_CERT_DIR", None)
        # The system's store without the CA (the distribution's bundle): refused.
        env["SSL_CERT_FILE"] = "/etc/ssl/certs/ca-certificates.crt"
        refused = run(["model", "pull", "--repo", str(repo)], env, check=False)
        assert refused.returncode == 1, refused.stderr
        assert f"could not download ONNX Runtime 1.31.1 from {pypi.url}" in refused.stderr, refused.stderr
        assert "UnknownIssuer" in refused.stderr, refused.stderr
        with_runtime = dict(env, ORT_DYLIB_PATH=str(library))
        refused = run(["model", "pull", "--repo", str(repo)], with_runtime, check=False)
        assert refused.returncode == 1 and f"from {hub.url}" in refused.stderr, refused.stderr
        assert "UnknownIssuer" in refused.stderr, refused.stderr
        assert not (cache / "models" / REPO_CACHE / "snapshots").exists()

        # The CA in the trust store: both downloads go through, and work.
        env["SSL_CERT_FILE"] = str(ca)
        p = run(["model", "pull", "--repo", str(repo)], env)
        runtime = cache / "code-intel" / "onnxruntime" / "1.31.1" / "libonnxruntime.so.1.31.1"
        assert runtime.read_bytes() == library.read_bytes()
        assert f"downloading intfloat/multilingual-e5-small" in p.stderr and hub.url in p.stderr, p.stderr
        model = cache / "models" / REPO_CACHE / "snapshots" / "0123456789abcdef0123456789abcdef01234567" / "onnx" / "model.onnx"
        assert sha256_of(model) == hub.files["onnx/model.onnx"]["sha256"]
        assert json.loads(run(["index", str(repo), "--json"], env).stdout)["chunks_embedded"] > 20
