"""An OpenAI-compatible embeddings API on 127.0.0.1 for the endpoint tests:
`POST /v1/embeddings` with `{"model", "input"}` answered with
`{"object": "list", "model", "data": [{"object": "embedding", "index",
"embedding"}]}`, computed by ONNX Runtime (Python) over the test model
directory (../shared/tools/test-models): XLM-R tokenizer with truncation at
512 tokens, padding to the batch's longest, mean pooling over the attention
mask. Vectors are returned unnormalised, as a bare BERT server would:
code-intel normalises.

Faults, set on the server object between requests:
- `failures`: a list of (status, retry_after or None) answered, in order,
  to the next requests instead of embeddings;
- `delay`: seconds to sleep before answering (a timeout test);
- `answer_model`: the `model` named in answers (default: the one asked for);
- `dim`: cut vectors to this many values (a wrong-dimension test).

`requests` records {"time", "inputs", "status", "auth"} per request.

    python3 embed_server.py MODEL_DIR    serves on a free port until killed
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from hub_mirror import LocalServer, QuietHandler

MAX_TOKENS = 512


class EmbeddingServer(LocalServer):
    def __init__(self, model_dir: Path):
        model_dir = Path(model_dir)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="<pad>")
        self.failures = []
        self.delay = 0.0
        self.answer_model = None
        self.dim = None
        super().__init__()

    def embed(self, texts):
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled

    def _handler(self):
        server = self

        class Handler(QuietHandler):
            def reply(self, status, body, headers=()):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                texts = request.get("input", [])
                if isinstance(texts, str):
                    texts = [texts]
                record = {"time": time.monotonic(), "inputs": len(texts), "status": 200,
                          "auth": self.headers.get("Authorization")}
                server.requests.append(record)
                if server.delay:
                    time.sleep(server.delay)
                if self.path not in ("/v1/embeddings", "/embeddings"):
                    record["status"] = 404
                    return self.reply(404, {"error": f"no route {self.path}"})
                if server.failures:
                    status, retry_after = server.failures.pop(0)
                    record["status"] = status
                    headers = [("Retry-After", str(retry_after))] if retry_after is not None else []
                    return self.reply(status, {"error": {"message": f"injected {status}"}}, headers)
                vectors = server.embed(texts)
                if server.dim:
                    vectors = vectors[:, : server.dim]
                self.reply(200, {
                    "object": "list",
                    "model": server.answer_model or request.get("model"),
                    "data": [{"object": "embedding", "index": i, "embedding": v.tolist()}
                             for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                })

        return Handler


if __name__ == "__main__":
    with EmbeddingServer(Path(sys.argv[1])) as s:
        print(s.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
