"""The README's pytest fixture for miniplane, run as a plain script by
tests/harness.rs (`the_python_fixture_works`): MINIPLANE names the binary.

In a conftest.py, decorate `miniplane` with `@pytest.fixture` (scope as you
like) and take `miniplane` (the kubeconfig path) as a test argument.
"""

import os
import subprocess
import tempfile
import time

import kubernetes


def miniplane():
    """Starts a throwaway miniplane, yields its kubeconfig path, stops it."""
    binary = os.environ.get("MINIPLANE", "miniplane")
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        server = subprocess.Popen(
            [binary, "up", "--in-memory", "--listen", "127.0.0.1:0",
             "--kubeconfig", kubeconfig],
            stdout=subprocess.DEVNULL,
        )
        try:
            # The kubeconfig is written (atomically) once /readyz answers.
            deadline = time.monotonic() + 30
            while not os.path.exists(kubeconfig):
                if server.poll() is not None:
                    raise RuntimeError(f"miniplane exited with {server.returncode}")
                if time.monotonic() > deadline:
                    raise TimeoutError("miniplane did not become ready in 30 s")
                time.sleep(0.01)
            yield kubeconfig
        finally:
            server.terminate()
            server.wait(timeout=10)


def check(kubeconfig):
    """What a test would do: a client from the kubeconfig, one write, one read."""
    client = kubernetes.config.new_client_from_config(config_file=kubeconfig)
    core = kubernetes.client.CoreV1Api(client)
    core.create_namespaced_config_map(
        "default", {"metadata": {"name": "from-python"}, "data": {"a": "1"}})
    got = core.read_namespaced_config_map("from-python", "default")
    assert got.data == {"a": "1"}, got.data


if __name__ == "__main__":
    for kubeconfig in miniplane():
        check(kubeconfig)
    print("fixture ok")
