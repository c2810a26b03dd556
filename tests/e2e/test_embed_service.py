"""One model per machine (src/embed/service.rs; docs/measurements.md): servers on different repositories
share one embedding service, survive its death (the next request restarts
it) and leave nothing running once they exit."""

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import FIXTURE, model_env, serve
from test_cli import run

pytestmark = pytest.mark.anyio


def services(run_dir):
    """PIDs of embedding services whose socket is under `run_dir`."""
    out = subprocess.run(["pgrep", "-f", f"embed-service --socket {run_dir}"], capture_output=True, text=True)
    return sorted(int(p) for p in out.stdout.split())


async def wait_vectors(c, timeout=120):
    """semantic_search until the model answers and the background sync has
    embedded the fixture (its 13 files)."""
    deadline = time.time() + timeout
    while True:
        r = await c.session.call_tool("semantic_search", {"query": "authenticate a user", "collection": "forest"})
        if not r.is_error and "partial" not in r.content[0].text and r.structured_content["results"]:
            return r.structured_content
        assert time.time() < deadline, r.content[0].text
        time.sleep(0.5)


async def test_servers_share_one_embedding_service_and_restart_it(tmp_path):
    run_dir = tmp_path / "run"
    env = model_env(XDG_RUNTIME_DIR=str(run_dir), CODE_INTEL_EMBED_SERVICE_IDLE="2")
    env.pop("CODE_INTEL_SHARED_EMBEDDER", None)
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(FIXTURE, a)
    shutil.copytree(FIXTURE, b)
    async with serve(a, env) as ca, serve(b, env) as cb:
        ra, rb = await wait_vectors(ca), await wait_vectors(cb)
        assert ra["results"] and [h["file"] for h in ra["results"]] == [h["file"] for h in rb["results"]]
        first = services(run_dir)
        assert len(first) == 1, first
        sockets = list((run_dir / "code-intel").glob("embed-*.sock"))
        assert len(sockets) == 1 and oct(sockets[0].stat().st_mode & 0o777) == "0o600"
        # The service dies: text tools never needed it, and the next request
        # that needs vectors starts a new one.
        os.kill(first[0], signal.SIGKILL)
        assert (await ca.call("search_text", pattern="authenticate"))["matches"]
        again = await wait_vectors(ca)
        assert [h["file"] for h in again["results"]] == [h["file"] for h in ra["results"]]
        second = services(run_dir)
        assert len(second) == 1 and second != first, (first, second)
        assert (await cb.call("query", query="authenticate a user"))["files"]
        assert services(run_dir) == second
        st = json.loads(run("status", "--repo", str(a), "--json", env=env).stdout)["embedding_service"]
        assert st == {"enabled": True, "socket": str(sockets[0]), "running": True}, st
    # Both servers gone: the service leaves after its idle time (2 s here).
    deadline = time.time() + 20
    while services(run_dir) and time.time() < deadline:
        time.sleep(0.2)
    assert not services(run_dir)
    assert not list((run_dir / "code-intel").glob("embed-*.sock"))
    st = json.loads(run("status", "--repo", str(a), "--json", env=env).stdout)["embedding_service"]
    assert st["enabled"] and not st["running"], st


async def test_a_server_without_the_service_loads_its_own_model(tmp_path):
    run_dir = tmp_path / "run"
    env = model_env(XDG_RUNTIME_DIR=str(run_dir), CODE_INTEL_SHARED_EMBEDDER="0")
    a = tmp_path / "a"
    shutil.copytree(FIXTURE, a)
    async with serve(a, env) as c:
        assert (await wait_vectors(c))["results"]
        assert not services(run_dir)
