#!/usr/bin/env python3
"""Everyday operations of the official Kubernetes Python client against miniplane.

Loads the kubeconfig the normal way (KUBECONFIG), works in the namespace
`client-python`, and prints one `RESULT <operation> PASS|FAIL ...` line per
operation of the client matrix, in order. Everything else goes to stderr.
Exit code 0 iff every operation passed.
"""

import json
import queue
import socket
import sys
import threading
import time

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException

NS = "client-python"
MANAGER_A = "python-a"
MANAGER_B = "python-b"
WAIT = 60.0  # the longest any single wait may take, in seconds

OPERATIONS = [
    "create",
    "get",
    "list",
    "replace",
    "label_selector",
    "field_selector",
    "limit_continue",
    "merge_patch",
    "strategic_patch",
    "json_patch",
    "apply_twice",
    "apply_conflict",
    "apply_force",
    "scale",
    "watch_from_rv",
    "watch_helper",
    "pod_logs",
    "foreground_delete",
    "status_404",
    "status_409",
    "status_422",
    "discovery",
    "dynamic_client",
    "custom_resource",
]


class Failed(Exception):
    """An operation ran but the server's answer was not the expected one."""


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def expect(cond, message):
    if not cond:
        raise Failed(message)


def expect_eq(actual, wanted, what):
    if actual != wanted:
        raise Failed(f"{what}: got {actual!r}, want {wanted!r}")


def wait_until(pred, what, timeout=WAIT, interval=0.2):
    """Polls pred() until it returns a truthy value; raises Failed after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failed(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def step(what, call):
    """Runs call(); an exception from it becomes a Failed that says which call it was."""
    try:
        return call()
    except Failed:
        raise
    except Exception as e:
        raise Failed(f"{what}: {describe(e)}") from e


def status_body(exc):
    """The metav1.Status carried by an ApiException, as a dict ({} when the body is not one)."""
    try:
        body = exc.body
        if isinstance(body, bytes):
            body = body.decode("utf-8", "replace")
        parsed = json.loads(body)
        return parsed if isinstance(parsed, dict) else {}
    except Exception:
        return {}


def describe(exc):
    """One line describing an exception for a FAIL reason."""
    if isinstance(exc, Failed):
        text = str(exc)
    elif isinstance(exc, ApiException):
        st = status_body(exc)
        if st:
            text = (
                f"ApiException {exc.status} reason={st.get('reason')!r} "
                f"message={st.get('message')!r}"
            )
        else:
            text = f"ApiException {exc.status} {exc.reason!r} body={exc.body!r}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    return text[:400]


def expect_api_error(call, code, reason, what):
    """Runs call(), which must raise an ApiException with this HTTP code and Status reason."""
    try:
        call()
    except ApiException as e:
        st = status_body(e)
        expect(
            e.status == code and st.get("reason") == reason and st.get("code") == code,
            f"{what}: want {code} {reason}, got HTTP {e.status} status={st or e.body!r}",
        )
        return st
    raise Failed(f"{what}: want {code} {reason}, but the call succeeded")


def configmap(name, data=None, labels=None):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels), data=data
    )


def deployment(name, replicas, containers, grace=1):
    labels = {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(
                    termination_grace_period_seconds=grace,
                    containers=[
                        client.V1Container(name=n, image=image) for n, image in containers
                    ],
                ),
            ),
        ),
    )


def names_of(items):
    return sorted(i.metadata.name for i in items)


class Everyday:
    def __init__(self):
        config.load_kube_config()
        self.api_client = client.ApiClient()
        self.core = client.CoreV1Api(self.api_client)
        self.apps = client.AppsV1Api(self.api_client)

    # ---- namespace setup and teardown ----

    def namespace_gone(self):
        try:
            self.core.read_namespace(NS)
            return False
        except ApiException as e:
            if e.status == 404:
                return True
            raise

    def setup(self):
        if not self.namespace_gone():
            log(f"namespace {NS} exists from an earlier run: deleting it")
            try:
                self.core.delete_namespace(NS)
            except ApiException as e:
                if e.status != 404:
                    raise
            wait_until(self.namespace_gone, f"namespace {NS} to be gone")
        self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))

    def teardown(self):
        try:
            self.core.delete_namespace(NS)
            wait_until(self.namespace_gone, f"namespace {NS} to be gone", timeout=30)
        except Exception as e:  # cleanup problems are reported but are not an operation
            log(f"cleanup: {describe(e)}")

    # ---- operations ----

    def op_create(self):
        made = self.core.create_namespaced_config_map(
            NS, configmap("basic", {"a": "1", "b": "two"})
        )
        expect_eq(made.metadata.name, "basic", "created name")
        expect_eq(made.metadata.namespace, NS, "created namespace")
        expect_eq(made.data, {"a": "1", "b": "two"}, "created data")
        expect(made.metadata.resource_version, "created object has no resourceVersion")
        expect(made.metadata.uid, "created object has no uid")

    def op_get(self):
        got = self.core.read_namespaced_config_map("basic", NS)
        expect_eq(got.metadata.name, "basic", "read name")
        expect_eq(got.data, {"a": "1", "b": "two"}, "read data")

    def op_list(self):
        listed = self.core.list_namespaced_config_map(NS)
        expect(listed.metadata.resource_version, "list has no metadata.resourceVersion")
        expect("basic" in names_of(listed.items), f"list lacks basic: {names_of(listed.items)}")
        found = [i for i in listed.items if i.metadata.name == "basic"][0]
        expect_eq(found.data, {"a": "1", "b": "two"}, "listed data")

    def op_replace(self):
        before = self.core.read_namespaced_config_map("basic", NS)
        old_rv = before.metadata.resource_version
        before.data = {"a": "2"}
        after = self.core.replace_namespaced_config_map("basic", NS, before)
        expect_eq(after.data, {"a": "2"}, "replace response data")
        expect(after.metadata.resource_version != old_rv, "resourceVersion did not change")
        expect_eq(
            self.core.read_namespaced_config_map("basic", NS).data, {"a": "2"}, "data read back"
        )
        # `before` still carries the old resourceVersion: the server must refuse it.
        before.data = {"a": "stale"}
        expect_api_error(
            lambda: self.core.replace_namespaced_config_map("basic", NS, before),
            409,
            "Conflict",
            "PUT with a stale resourceVersion",
        )
        expect_eq(
            self.core.read_namespaced_config_map("basic", NS).data,
            {"a": "2"},
            "data after the refused PUT",
        )

    def op_label_selector(self):
        for name, labels in [
            ("lbl-x", {"set": "lbl", "app": "x"}),
            ("lbl-y", {"set": "lbl", "app": "y"}),
            ("lbl-none", {"set": "lbl"}),
        ]:
            self.core.create_namespaced_config_map(NS, configmap(name, {"n": name}, labels))
        for selector, wanted in [
            ("app=x", ["lbl-x"]),
            ("app in (x,y)", ["lbl-x", "lbl-y"]),
            ("set=lbl,!app", ["lbl-none"]),
        ]:
            got = names_of(self.core.list_namespaced_config_map(NS, label_selector=selector).items)
            expect_eq(got, wanted, f"labelSelector {selector!r}")

    def op_field_selector(self):
        got = self.core.list_namespaced_config_map(NS, field_selector="metadata.name=lbl-y")
        expect_eq(names_of(got.items), ["lbl-y"], "fieldSelector metadata.name=lbl-y")

    def op_limit_continue(self):
        pages = [f"page-{i}" for i in range(5)]
        for name in pages:
            self.core.create_namespaced_config_map(NS, configmap(name, {"n": name}))
        everything = names_of(self.core.list_namespaced_config_map(NS).items)
        seen = []
        sizes = []
        token = None
        for _ in range(len(everything) + 2):
            kwargs = {"limit": 2}
            if token:
                kwargs["_continue"] = token
            page = self.core.list_namespaced_config_map(NS, **kwargs)
            sizes.append(len(page.items))
            seen.extend(i.metadata.name for i in page.items)
            token = page.metadata._continue
            if not token:
                break
        else:
            raise Failed(f"continue tokens never ran out; page sizes {sizes}")
        expect(len(sizes) >= 3, f"5+ objects in fewer than 3 pages of 2: sizes {sizes}")
        expect(all(s == 2 for s in sizes[:-1]) and 1 <= sizes[-1] <= 2, f"page sizes {sizes}")
        expect_eq(sorted(seen), everything, "names over all pages (each exactly once)")
        for name in pages:
            expect_eq(seen.count(name), 1, f"times {name} was seen")

    def op_merge_patch(self):
        self.core.create_namespaced_config_map(NS, configmap("merge", {"keep": "k", "drop": "d"}))
        patched = self.core.patch_namespaced_config_map(
            "merge",
            NS,
            {"metadata": {"labels": {"patched": "merge"}}, "data": {"drop": None, "add": "a"}},
            _content_type="application/merge-patch+json",
        )
        expect_eq(patched.data, {"keep": "k", "add": "a"}, "merge patch response data")
        got = self.core.read_namespaced_config_map("merge", NS)
        expect_eq(got.data, {"keep": "k", "add": "a"}, "data read back")
        expect_eq(got.metadata.labels, {"patched": "merge"}, "labels read back")

    def op_strategic_patch(self):
        self.apps.create_namespaced_deployment(
            NS,
            deployment("smp", 1, [("main", "busybox:1.36"), ("sidecar", "busybox:1.35")]),
        )
        # A dict body is sent as application/strategic-merge-patch+json by this client.
        patched = self.apps.patch_namespaced_deployment(
            "smp",
            NS,
            {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}
                    }
                }
            },
        )
        want = [("main", "busybox:1.37"), ("sidecar", "busybox:1.35")]
        got = [(c.name, c.image) for c in patched.spec.template.spec.containers]
        expect_eq(got, want, "containers in the patch response")
        read = self.apps.read_namespaced_deployment("smp", NS)
        got = [(c.name, c.image) for c in read.spec.template.spec.containers]
        expect_eq(got, want, "containers read back")

    def op_json_patch(self):
        self.core.create_namespaced_config_map(NS, configmap("jsonpatch", {"x": "1"}))
        # A list body is sent as application/json-patch+json by this client.
        patched = self.core.patch_namespaced_config_map(
            "jsonpatch",
            NS,
            [
                {"op": "test", "path": "/data/x", "value": "1"},
                {"op": "add", "path": "/data/y", "value": "added"},
                {"op": "replace", "path": "/data/x", "value": "replaced"},
            ],
        )
        expect_eq(patched.data, {"x": "replaced", "y": "added"}, "json patch response data")
        got = self.core.read_namespaced_config_map("jsonpatch", NS)
        expect_eq(got.data, {"x": "replaced", "y": "added"}, "data read back")

    def apply(self, manager, data, force=None):
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "applied", "namespace": NS},
            "data": data,
        }
        return self.core.patch_namespaced_config_map(
            "applied",
            NS,
            body,
            field_manager=manager,
            force=force,
            _content_type="application/apply-patch+yaml",
        )

    def op_apply_twice(self):
        first = self.apply(MANAGER_A, {"k": "1", "j": "1"})
        expect_eq(first.data, {"k": "1", "j": "1"}, "first apply data")
        second = self.apply(MANAGER_A, {"k": "2"})
        expect_eq(second.data, {"k": "2"}, "second apply data (j must be gone)")
        got = self.core.read_namespaced_config_map("applied", NS)
        expect_eq(got.data, {"k": "2"}, "data read back")
        mine = [m for m in got.metadata.managed_fields or [] if m.manager == MANAGER_A]
        expect_eq(len(mine), 1, f"managedFields entries for {MANAGER_A}")
        expect_eq(mine[0].operation, "Apply", f"operation of {MANAGER_A}")
        expect_eq(mine[0].fields_v1, {"f:data": {"f:k": {}}}, f"fieldsV1 of {MANAGER_A}")

    def op_apply_conflict(self):
        st = expect_api_error(
            lambda: self.apply(MANAGER_B, {"k": "other"}),
            409,
            "Conflict",
            f"apply by {MANAGER_B} without force",
        )
        expect(
            MANAGER_A in st.get("message", ""),
            f"conflict message does not name {MANAGER_A}: {st}",
        )
        expect_eq(
            self.core.read_namespaced_config_map("applied", NS).data,
            {"k": "2"},
            "data after the refused apply",
        )

    def op_apply_force(self):
        forced = self.apply(MANAGER_B, {"k": "other"}, force=True)
        expect_eq(forced.data, {"k": "other"}, "forced apply data")
        got = self.core.read_namespaced_config_map("applied", NS)
        expect_eq(got.data, {"k": "other"}, "data read back")
        managed = got.metadata.managed_fields or []
        b = [m for m in managed if m.manager == MANAGER_B]
        expect_eq(len(b), 1, f"managedFields entries for {MANAGER_B}")
        expect_eq(b[0].operation, "Apply", f"operation of {MANAGER_B}")
        expect_eq(b[0].fields_v1, {"f:data": {"f:k": {}}}, f"fieldsV1 of {MANAGER_B}")
        for m in managed:
            if m.manager == MANAGER_A:
                expect(
                    "f:k" not in (m.fields_v1 or {}).get("f:data", {}),
                    f"{MANAGER_A} still owns data.k: {m.fields_v1}",
                )

    def op_scale(self):
        self.apps.create_namespaced_deployment(NS, deployment("scaled", 1, [("main", "busybox")]))
        scale = self.apps.read_namespaced_deployment_scale("scaled", NS)
        expect_eq(scale.kind, "Scale", "scale kind")
        expect_eq(scale.spec.replicas, 1, "scale spec.replicas before")
        # The deployment controller writes the Deployment's status right after the create, and
        # the Scale carries the Deployment's resourceVersion: retry a 409 with a fresh read,
        # as client-go's RetryOnConflict does.
        for attempt in range(5):
            scale.spec.replicas = 3
            try:
                written = self.apps.replace_namespaced_deployment_scale("scaled", NS, scale)
                break
            except ApiException as e:
                if e.status != 409 or attempt == 4:
                    raise
                log(f"scale: conflict on attempt {attempt + 1}, reading the Scale again")
                scale = self.apps.read_namespaced_deployment_scale("scaled", NS)
        expect_eq(written.spec.replicas, 3, "scale spec.replicas in the PUT response")
        expect_eq(
            self.apps.read_namespaced_deployment_scale("scaled", NS).spec.replicas,
            3,
            "scale spec.replicas read back",
        )
        expect_eq(
            self.apps.read_namespaced_deployment("scaled", NS).spec.replicas,
            3,
            "Deployment spec.replicas",
        )

    def op_watch_from_rv(self):
        self.core.create_namespaced_config_map(NS, configmap("watch-old", {"n": "old"}))
        rv = self.core.list_namespaced_config_map(NS).metadata.resource_version
        expect(rv, "list has no metadata.resourceVersion")
        # The raw request: GET .../configmaps?watch=true&resourceVersion=<rv>, read line by line.
        request = self.api_client.param_serialize(
            method="GET",
            resource_path="/api/v1/namespaces/{namespace}/configmaps",
            path_params={"namespace": NS},
            query_params=[("watch", "true"), ("resourceVersion", rv), ("timeoutSeconds", 60)],
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        events = queue.Queue()
        started = threading.Event()
        holder = {}

        def reader():
            try:
                resp = self.api_client.call_api(*request, _request_timeout=(10, WAIT))
                holder["resp"] = resp.response
                started.set()
                if resp.status != 200:
                    events.put(("error", f"HTTP {resp.status}: {resp.read()!r}"))
                    return
                for line in watch.watch.iter_resp_lines(resp.response):
                    if line.strip():
                        events.put(("event", json.loads(line)))
            except Exception as e:  # ends when the main thread shuts the socket
                events.put(("error", describe(e)))
            finally:
                started.set()
                events.put(("end", None))

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        if not started.wait(5):
            log("watch_from_rv: no response headers within 5 s of the watch request")
        self.core.create_namespaced_config_map(NS, configmap("watch-new", {"n": "new"}))
        try:
            kind, value = events.get(timeout=WAIT)
            expect(kind == "event", f"watch gave no event: {kind} {value}")
            expect_eq(
                (value.get("type"), value.get("object", {}).get("metadata", {}).get("name")),
                ("ADDED", "watch-new"),
                "first watch event",
            )
            expect_eq(value["object"].get("data"), {"n": "new"}, "watched object's data")
            # Anything else that arrives soon after must not be a replay of older objects.
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                try:
                    kind, value = events.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if kind != "event":
                    break
                raise Failed(
                    f"unexpected extra watch event {value.get('type')} "
                    f"{value.get('object', {}).get('metadata', {}).get('name')}"
                )
        finally:
            close_stream(holder.get("resp"))
            thread.join(10)

    def op_watch_helper(self):
        rv = self.core.list_namespaced_config_map(NS).metadata.resource_version
        w = watch.Watch()
        seen = []
        errors = []
        done = threading.Event()

        def follow():
            try:
                for ev in w.stream(
                    self.core.list_namespaced_config_map,
                    NS,
                    resource_version=rv,
                    timeout_seconds=60,
                    _request_timeout=(10, WAIT),
                ):
                    obj = ev["object"]
                    if obj.metadata.name != "watched":
                        continue
                    seen.append((ev["type"], dict(obj.data or {})))
                    if ev["type"] == "DELETED":
                        w.stop()
            except Exception as e:
                errors.append(describe(e))
            finally:
                done.set()

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        self.core.create_namespaced_config_map(NS, configmap("watched", {"v": "1"}))
        self.core.patch_namespaced_config_map(
            "watched", NS, {"data": {"v": "2"}}, _content_type="application/merge-patch+json"
        )
        self.core.delete_namespaced_config_map("watched", NS)
        finished = done.wait(WAIT)
        if not finished:
            w.stop()
        expect(not errors, f"watch stream raised: {errors}")
        expect_eq(
            [t for t, _ in seen],
            ["ADDED", "MODIFIED", "DELETED"],
            "event types for the watched ConfigMap" + ("" if finished else " (stream still open)"),
        )
        expect_eq(seen[1][1], {"v": "2"}, "MODIFIED object's data")

    def op_pod_logs(self):
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name="logger"),
            spec=client.V1PodSpec(
                termination_grace_period_seconds=1,
                containers=[client.V1Container(name="main", image="busybox")],
            ),
        )
        self.core.create_namespaced_pod(NS, pod)
        wait_until(
            lambda: self.core.read_namespaced_pod("logger", NS).status.phase == "Running",
            "pod logger to be Running",
        )
        text = self.core.read_namespaced_pod_log("logger", NS)
        log(f"pod_logs: {text[:200]!r}")
        expect(isinstance(text, str), f"log is a {type(text).__name__}, not text")
        expect(text.strip(), "log is empty")
        one = self.core.read_namespaced_pod_log("logger", NS, container="main", tail_lines=1)
        expect_eq(len(one.strip().splitlines()), 1, "lines with tailLines=1")

    def op_foreground_delete(self):
        made = self.apps.create_namespaced_deployment(
            NS, deployment("fg", 2, [("main", "busybox")])
        )
        uid = made.metadata.uid

        def owned_replicasets():
            return [
                rs
                for rs in self.apps.list_namespaced_replica_set(NS).items
                if any(o.uid == uid for o in rs.metadata.owner_references or [])
            ]

        rs = wait_until(owned_replicasets, "the Deployment's ReplicaSet")[0]
        rs_uid = rs.metadata.uid

        def owned_pods():
            return [
                p
                for p in self.core.list_namespaced_pod(NS).items
                if any(o.uid == rs_uid for o in p.metadata.owner_references or [])
            ]

        wait_until(lambda: len(owned_pods()) == 2, "the ReplicaSet's 2 pods")
        resp = self.apps.delete_namespaced_deployment(
            "fg", NS, propagation_policy="Foreground", _preload_content=False
        )
        answer = json.loads(resp.data)
        log(f"foreground_delete: DELETE answered kind={answer.get('kind')}")
        if answer.get("kind") == "Deployment":
            meta = answer.get("metadata", {})
            expect(meta.get("deletionTimestamp"), "DELETE response has no deletionTimestamp")
            expect(
                "foregroundDeletion" in (meta.get("finalizers") or []),
                f"DELETE response finalizers: {meta.get('finalizers')}",
            )
        reads = 0

        def deployment_gone():
            nonlocal reads
            try:
                d = self.apps.read_namespaced_deployment("fg", NS)
            except ApiException as e:
                if e.status == 404:
                    return True
                raise
            reads += 1
            expect(d.metadata.deletion_timestamp, "Deployment has no deletionTimestamp")
            expect(
                "foregroundDeletion" in (d.metadata.finalizers or []),
                f"Deployment still there without foregroundDeletion: {d.metadata.finalizers}",
            )
            return False

        deadline = time.monotonic() + WAIT
        wait_until(deployment_gone, "the Deployment to be gone", timeout=WAIT, interval=0.1)
        log(f"foreground_delete: saw the deleting Deployment {reads} time(s)")
        left = max(1.0, deadline - time.monotonic())
        wait_until(lambda: not owned_replicasets(), "the ReplicaSet to be gone", timeout=left)
        left = max(1.0, deadline - time.monotonic())
        wait_until(lambda: not owned_pods(), "the pods to be gone", timeout=left)

    def op_status_404(self):
        st = expect_api_error(
            lambda: self.core.read_namespaced_config_map("no-such-thing", NS),
            404,
            "NotFound",
            "GET a missing ConfigMap",
        )
        expect_eq(st.get("kind"), "Status", "error kind")
        expect_eq(st.get("status"), "Failure", "error status")
        expect_eq((st.get("details") or {}).get("name"), "no-such-thing", "details.name")

    def op_status_409(self):
        st = expect_api_error(
            lambda: self.core.create_namespaced_config_map(NS, configmap("basic", {"a": "again"})),
            409,
            "AlreadyExists",
            "create an existing name",
        )
        expect_eq((st.get("details") or {}).get("name"), "basic", "details.name")

    def op_status_422(self):
        st = expect_api_error(
            lambda: self.core.create_namespaced_config_map(NS, configmap("Bad_Name", {"a": "1"})),
            422,
            "Invalid",
            "create a ConfigMap named Bad_Name",
        )
        causes = (st.get("details") or {}).get("causes") or []
        expect(
            any(c.get("field") == "metadata.name" for c in causes)
            or "metadata.name" in st.get("message", ""),
            f"no cause/message names metadata.name: {st}",
        )

    def op_discovery(self):
        version = step(
            "VersionApi.get_code (GET /version/)", client.VersionApi(self.api_client).get_code
        )
        expect_eq(version.major, "1", "server version major")
        expect(version.git_version, "server version has no gitVersion")
        core_versions = step(
            "CoreApi.get_api_versions (GET /api/)", client.CoreApi(self.api_client).get_api_versions
        )
        expect("v1" in (core_versions.versions or []), f"core versions {core_versions.versions}")
        groups = step(
            "ApisApi.get_api_versions (GET /apis/)",
            client.ApisApi(self.api_client).get_api_versions,
        )
        names = [g.name for g in groups.groups]
        expect("apps" in names, f"API groups {names} lack apps")
        apps_group = [g for g in groups.groups if g.name == "apps"][0]
        expect_eq(apps_group.preferred_version.group_version, "apps/v1", "apps preferred version")
        resources = step(
            "AppsV1Api.get_api_resources (GET /apis/apps/v1/)", self.apps.get_api_resources
        )
        expect_eq(resources.group_version, "apps/v1", "apps resource list groupVersion")
        by_name = {r.name: r for r in resources.resources}
        expect("deployments" in by_name, f"apps/v1 resources {sorted(by_name)} lack deployments")
        expect_eq(by_name["deployments"].kind, "Deployment", "deployments kind")
        expect(by_name["deployments"].namespaced, "deployments are not namespaced")
        expect("deployments/scale" in by_name, "apps/v1 resources lack deployments/scale")

    def op_dynamic_client(self):
        dyn = dynamic.DynamicClient(self.api_client)
        cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
        made = cms.create(
            body={
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "dynamic"},
                "data": {"via": "dynamic"},
            },
            namespace=NS,
        )
        expect_eq(made.metadata.name, "dynamic", "created name")
        got = cms.get(name="dynamic", namespace=NS)
        expect_eq(got.data.to_dict(), {"via": "dynamic"}, "read data")
        listed = cms.get(namespace=NS)
        expect_eq(listed.kind, "ConfigMapList", "list kind")
        expect("dynamic" in [i.metadata.name for i in listed.items], "list lacks dynamic")
        cms.delete(name="dynamic", namespace=NS)
        try:
            cms.get(name="dynamic", namespace=NS)
        except dynamic.exceptions.NotFoundError:
            return
        raise Failed("the ConfigMap is still there after the dynamic delete")


    def op_custom_resource(self):
        # The Gizmo definition (tests/testdata/crds/gizmos.yaml) is installed by the matrix.
        dyn = dynamic.DynamicClient(self.api_client)
        gizmos = dyn.resources.get(api_version="clients.miniplane.dev/v1", kind="Gizmo")
        expect(gizmos.namespaced, "Gizmo is not namespaced in discovery")
        made = gizmos.create(
            body={
                "apiVersion": "clients.miniplane.dev/v1",
                "kind": "Gizmo",
                "metadata": {"name": "py-gizmo", "labels": {"client": "python"}},
                "spec": {"size": 1, "color": "red"},
            },
            namespace=NS,
        )
        expect(made.metadata.uid, "the created Gizmo has no uid")
        got = gizmos.get(name="py-gizmo", namespace=NS)
        expect_eq(got.spec.to_dict(), {"size": 1, "color": "red"}, "read spec")
        listed = gizmos.get(namespace=NS, label_selector="client=python")
        expect_eq(listed.kind, "GizmoList", "list kind")
        expect_eq([i.metadata.name for i in listed.items], ["py-gizmo"], "listed names")
        patched = gizmos.patch(
            name="py-gizmo",
            namespace=NS,
            body={"spec": {"size": 2}},
            content_type="application/merge-patch+json",
        )
        expect_eq(patched.spec.size, 2, "merge-patched size")
        expect_eq(patched.spec.color, "red", "color kept by the merge patch")
        patched = gizmos.patch(
            name="py-gizmo",
            namespace=NS,
            body=[{"op": "replace", "path": "/spec/color", "value": "blue"}],
            content_type="application/json-patch+json",
        )
        expect_eq(patched.spec.color, "blue", "JSON-patched color")
        status = gizmos.status.patch(
            name="py-gizmo",
            namespace=NS,
            body={"status": {"observed": 2}},
            content_type="application/merge-patch+json",
        )
        expect_eq(status.status.observed, 2, "status written through /status")
        try:
            gizmos.patch(
                name="py-gizmo",
                namespace=NS,
                body={"spec": {"size": "big"}},
                content_type="application/merge-patch+json",
            )
            raise Failed("a string size was accepted")
        except dynamic.exceptions.UnprocessibleEntityError as e:
            st = status_body(e)
            expect("spec.size" in st.get("message", ""), f"422 does not name spec.size: {st}")
        gizmos.delete(name="py-gizmo", namespace=NS)
        try:
            gizmos.get(name="py-gizmo", namespace=NS)
        except dynamic.exceptions.NotFoundError:
            return
        raise Failed("the Gizmo is still there after the delete")


def close_stream(resp):
    """Ends a streaming urllib3 response from another thread: shut the socket, then close."""
    if resp is None:
        return
    try:
        sock = getattr(getattr(resp, "connection", None), "sock", None)
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except Exception:
        pass
    try:
        resp.close()
    except Exception:
        pass


def main():
    started = time.monotonic()
    runner = Everyday()
    try:
        runner.setup()
    except Exception as e:
        log(f"setup failed: {describe(e)}")
    failures = 0
    for op in OPERATIONS:
        t0 = time.monotonic()
        try:
            getattr(runner, f"op_{op}")()
            print(f"RESULT {op} PASS", flush=True)
        except Exception as e:
            failures += 1
            print(f"RESULT {op} FAIL {describe(e)}", flush=True)
        log(f"{op}: {time.monotonic() - t0:.2f}s")
    runner.teardown()
    log(f"total {time.monotonic() - started:.1f}s, {failures} failed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
