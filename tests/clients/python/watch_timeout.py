#!/usr/bin/env python3
"""Measures how long a ConfigMap watch with timeoutSeconds=5 lasts in wall-clock time.

Starts kubernetes.watch.Watch().stream on ConfigMaps in namespace `default` with
timeout_seconds=5 and prints `ELAPSED <seconds>` once the server ends the stream
by itself (exit 0). Exits 1 if the stream is still open after 30 s or fails.
"""

import sys
import threading
import time

from kubernetes import client, config, watch

LIMIT = 30.0


def main():
    config.load_kube_config()
    core = client.CoreV1Api()
    w = watch.Watch()
    outcome = {}

    def follow():
        try:
            for ev in w.stream(core.list_namespaced_config_map, "default", timeout_seconds=5):
                print(f"event {ev['type']} {ev['object'].metadata.name}", file=sys.stderr)
            outcome["ended"] = True
        except Exception as e:
            outcome["error"] = f"{type(e).__name__}: {e}"

    started = time.monotonic()
    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    thread.join(LIMIT)
    elapsed = time.monotonic() - started
    if thread.is_alive():
        w.stop()
        print(f"the watch was still open after {elapsed:.1f}s", file=sys.stderr)
        return 1
    if "error" in outcome:
        print(f"the watch failed after {elapsed:.3f}s: {outcome['error']}", file=sys.stderr)
        return 1
    print(f"ELAPSED {elapsed:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
