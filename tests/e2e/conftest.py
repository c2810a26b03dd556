"""Shared helpers: the real `code-intel` binary driven over stdio by the
`mcp` Python SDK's client, on copies of tests/fixtures/polyglot."""

import json
import os
import shutil
import subprocess
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "polyglot"
BIN = os.environ.get("CODE_INTEL_BIN") or str(
    Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "code-intel"
)
ASSETS = os.environ.get("CODE_INTEL_ASSETS", "")


def run_bin(args, env, check=True, timeout=900):
    """Runs the binary with `args` to completion; with `check`, asserts exit
    code 0 (the failure shows stderr)."""
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=env, timeout=timeout)
    if check:
        assert p.returncode == 0, f"{args}: {p.stderr}"
    return p


def model_env(**extra):
    """Environment for a server with the offline test model: the default
    model's path, over the Hugging Face cache that test-models builds."""
    env = dict(os.environ)
    env.pop("CODE_INTEL_MODEL_DIR", None)
    env["CODE_INTEL_MODEL_CACHE"] = str(Path(ASSETS) / "hf-cache")
    env["HF_HUB_OFFLINE"] = "1"
    env.update(extra)
    return env


def make_repo(tmp_path: Path, config: dict | None = None, extras: bool = False) -> Path:
    """Copies the fixture (its .gitignore and ignored/ dir included). With
    `extras`, adds a binary file and a 5 MB one-line minified JS file."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    if extras:
        (repo / "assets").mkdir()
        (repo / "assets" / "logo.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00authenticate\x00" * 64)
        line = "var a=function(b){return b+1};" * (5 * 1024 * 1024 // 30)
        (repo / "web" / "vendor.min.js").write_text(line + "\n")
    if config is not None:
        (repo / ".code-intel").mkdir(exist_ok=True)
        (repo / ".code-intel" / "config.json").write_text(json.dumps(config))
    return repo


class Client:
    """A connected MCP client session with helpers that assert on results."""

    def __init__(self, session: ClientSession, init_seconds: float, init):
        self.session = session
        self.init_seconds = init_seconds
        self.init = init

    async def call(self, tool, **args):
        r = await self.session.call_tool(tool, args)
        assert not r.is_error, f"{tool}({args}) failed: {r.content[0].text}"
        assert r.structured_content is not None, f"{tool} returned no structured content"
        assert r.content and r.content[0].text, f"{tool} returned no text content"
        return r.structured_content

    async def call_error(self, tool, **args) -> str:
        r = await self.session.call_tool(tool, args)
        assert r.is_error, f"{tool}({args}) should have failed, got {r.structured_content}"
        return r.content[0].text

    async def wait_model(self, timeout=120):
        """Polls semantic_search until the model has loaded."""
        deadline = time.time() + timeout
        while True:
            r = await self.session.call_tool("semantic_search", {"query": "warm up", "collection": "forest"})
            text = r.content[0].text
            if not r.is_error or "model_loading" not in text:
                return r
            assert time.time() < deadline, "model did not load in time"
            time.sleep(0.5)


@asynccontextmanager
async def serve(repo: Path, env=None):
    params = StdioServerParameters(
        command=BIN, args=["serve", "--repo", str(repo)], env=env or model_env()
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            t0 = time.perf_counter()
            init = await session.initialize()
            yield Client(session, time.perf_counter() - t0, init)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def edges(related: dict) -> list[str]:
    """A related file's ties as the text reply shows them
    (`view ← app/Http/Controllers/X.php:18`, `sibling (parent) ← file`)."""
    out = []
    for e in related.get("edges", []):
        site = e["site"]["file"] + (f":{e['site']['line']}" if e["site"]["line"] else "")
        if e.get("sibling_of"):
            out.append(f"sibling ({e['sibling_of']}) ← {site}")
        else:
            out.append(f"{e['kind']} {'→' if e['direction'] == 'out' else '←'} {site}")
    return out
