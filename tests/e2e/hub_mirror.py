"""Local mirrors for the download tests. A Hugging Face Hub mirror on
127.0.0.1 for the model:
serves a model directory (the test model from ../shared/tools/test-models)
in the Hub's layout, `/<repo>/resolve/<revision>/<file>`, the way hf-hub
talks to the Hub: range requests answered 206 with `Content-Range`, the
commit in `X-Repo-Commit`, and the checksum in the ETag (`X-Linked-Etag` =
SHA-256 for `onnx/` files, as the Hub does for LFS files; the git blob
SHA-1 for the small JSON files).

Faults, set on the server object between requests:
- `stall_after[file] = n`: the next full transfer of `file` sends `n`
  bytes, then hangs (a test kills the client meanwhile);
- `corrupt[file] = True`: every transfer of `file` flips one byte while the
  ETag still names the true checksum.

`requests` records (method, file, Range header, bytes sent) per request.
"""

import hashlib
import json
import ssl
import subprocess
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = "intfloat/multilingual-e5-small"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
# The Hub's layout: tokenizer files at the top, the ONNX export in onnx/.
FILES = {
    "config.json": "config.json",
    "special_tokens_map.json": "special_tokens_map.json",
    "tokenizer_config.json": "tokenizer_config.json",
    "tokenizer.json": "tokenizer.json",
    "onnx/model.onnx": "model.onnx",
}
CORRUPT_OFFSET = 1000


def _digests(path: Path):
    sha256 = hashlib.sha256()
    size = path.stat().st_size
    sha1 = hashlib.sha1(f"blob {size}\0".encode())
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            sha256.update(block)
            sha1.update(block)
    return size, sha256.hexdigest(), sha1.hexdigest()


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that does not log each request to stderr."""

    def log_message(self, *args):
        pass


def make_ca(directory: Path):
    """A certificate authority of the test's own and a certificate it signs
    for 127.0.0.1, made with the openssl CLI: (ca.pem, server.pem,
    server.key). No trust store holds the CA until a test names it
    (SSL_CERT_FILE), like a TLS-intercepting proxy's CA on a machine that
    was not told about it."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    ca, ca_key = d / "ca.pem", d / "ca.key"
    cert, key, csr, ext = d / "server.pem", d / "server.key", d / "server.csr", d / "server.ext"

    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", str(ca_key),
            "-out", str(ca), "-subj", "/CN=code-intel test proxy CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr), "-subj", "/CN=127.0.0.1")
    ext.write_text("basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
                   "extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
            "-days", "2", "-out", str(cert), "-extfile", str(ext))
    return ca, cert, key


class LocalServer:
    """An HTTP server on 127.0.0.1 (a free port) serving `self._handler()`
    on a daemon thread while used as a context manager; HTTPS when `tls` is
    (certificate, key) files, e.g. from `make_ca`."""

    def __init__(self, tls=None):
        self.requests = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self):
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        raise NotImplementedError


class HubMirror(LocalServer):
    def __init__(self, model_dir: Path, tls=None):
        self.files = {}
        for name, local in FILES.items():
            path = Path(model_dir) / local
            size, sha256, sha1 = _digests(path)
            self.files[name] = {"path": path, "size": size, "sha256": sha256, "sha1": sha1}
        self.stall_after = {}
        self.corrupt = {}
        super().__init__(tls)

    def _handler(self):
        mirror = self

        class Handler(QuietHandler):
            def do_GET(self):
                prefix = f"/{REPO}/resolve/main/"
                name = self.path[len(prefix):] if self.path.startswith(prefix) else None
                info = mirror.files.get(name)
                rng = self.headers.get("Range")
                record = {"method": "GET", "file": name, "range": rng, "sent": 0}
                mirror.requests.append(record)
                if info is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                size = info["size"]
                start, end = 0, size - 1
                if rng and rng.startswith("bytes="):
                    a, _, b = rng[len("bytes="):].partition("-")
                    start = int(a)
                    end = int(b) if b else size - 1
                if start >= size:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                lfs = name.startswith("onnx/")
                self.send_response(206 if rng else 200)
                self.send_header("Content-Length", str(end - start + 1))
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                self.send_header("X-Repo-Commit", COMMIT)
                if lfs:
                    self.send_header("X-Linked-Etag", f'"{info["sha256"]}"')
                    self.send_header("X-Linked-Size", str(size))
                self.send_header("ETag", f'"{info["sha1"]}"')
                self.end_headers()
                stall = None
                if end - start > 0 and name in mirror.stall_after:
                    stall = mirror.stall_after.pop(name)
                with info["path"].open("rb") as f:
                    f.seek(start)
                    pos = start
                    while pos <= end:
                        block = f.read(min(1 << 20, end - pos + 1))
                        if not block:
                            break
                        if mirror.corrupt.get(name) and pos <= CORRUPT_OFFSET < pos + len(block):
                            i = CORRUPT_OFFSET - pos
                            block = block[:i] + bytes([block[i] ^ 0xFF]) + block[i + 1:]
                        if stall is not None and record["sent"] + len(block) > stall:
                            block = block[: max(0, stall - record["sent"])]
                            self.wfile.write(block)
                            record["sent"] += len(block)
                            self.wfile.flush()
                            time.sleep(300)
                            return
                        try:
                            self.wfile.write(block)
                        except (BrokenPipeError, ConnectionResetError):
                            return
                        record["sent"] += len(block)
                        pos += len(block)

        return Handler


class PypiMirror(LocalServer):
    """PyPI's JSON API for onnxruntime 1.31.1, with one manylinux x86_64
    wheel holding `library` (built in `tmp`) and a Windows entry pointing
    nowhere. `bad_digest` makes the index announce a wrong SHA-256."""

    def __init__(self, library: Path, tmp: Path, tls=None):
        self.name = "onnxruntime-1.31.1-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
        wheel = tmp / self.name
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("onnxruntime/__init__.py", "")
            z.write(library, "onnxruntime/capi/libonnxruntime.so.1.31.1")
        self.wheel = wheel.read_bytes()
        self.sha256 = hashlib.sha256(self.wheel).hexdigest()
        self.bad_digest = False
        super().__init__(tls)

    def _handler(self):
        mirror = self

        class Handler(QuietHandler):
            def do_GET(self):
                mirror.requests.append(self.path)
                if self.path == "/pypi/onnxruntime/1.31.1/json":
                    digest = "0" * 64 if mirror.bad_digest else mirror.sha256
                    body = json.dumps({"urls": [
                        {"filename": "onnxruntime-1.31.1-cp312-cp312-win_amd64.whl",
                         "url": f"{mirror.url}/files/missing.whl", "digests": {"sha256": "1" * 64}},
                        {"filename": mirror.name, "url": f"{mirror.url}/files/{mirror.name}",
                         "digests": {"sha256": digest}},
                    ]}).encode()
                elif self.path == f"/files/{mirror.name}":
                    body = mirror.wheel
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


def mirror_env(base: dict, mirror: HubMirror, **extra) -> dict:
    """An environment that downloads from `mirror` into a fresh cache: no
    model_dir, no offline switch, no proxy for 127.0.0.1."""
    env = dict(base)
    for key in ("CODE_INTEL_MODEL_DIR", "CODE_INTEL_MODEL_CACHE", "HF_HOME", "HF_HUB_OFFLINE"):
        env.pop(key, None)
    env["HF_ENDPOINT"] = mirror.url
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.update(extra)
    return env


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


if __name__ == "__main__":
    # python3 tests/e2e/hub_mirror.py MODEL_DIR: serve it until interrupted
    # (e.g. HF_ENDPOINT=<printed url> code-intel model pull).
    import sys

    with HubMirror(Path(sys.argv[1])) as m:
        print(m.url, flush=True)
        try:
            m.thread.join()
        except KeyboardInterrupt:
            pass
