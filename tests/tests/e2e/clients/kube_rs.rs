//! The kube-rs entry of the client matrix: the everyday operations of
//! `tests/clients/` driven through kube 5 (`kube::Client`, `Api<K>`,
//! `kube::runtime`), plus a few kube-rs-specific checks.
//!
//! The client is built from the kubeconfig miniplane writes, unmodified
//! (`Kubeconfig::read_from` + `Config::from_custom_kubeconfig`), so the same
//! code runs against plain HTTP and against HTTPS with a CA, token and client
//! certificate. Patches are built as raw JSON (`serde_json::json!`): kube
//! depends on json-patch 4 while the workspace uses 5, and a JSON value keeps
//! the two apart.
//!
//! [`everyday`] returns one result per operation of the matrix, in order; an
//! `Err` holds a one-line reason. Every wait has a deadline.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::path::Path;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, LogParams, Patch,
    PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, CustomResource, CustomResourceExt, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

// The operations of the matrix, in the order they run: the list the
// scripts' runner (`clients.rs`, which includes this module) checks.
use super::OPERATIONS;

/// The namespace the everyday operations run in.
const NS: &str = "client-kube-rs";
/// Field managers for server-side apply.
const MANAGER_A: &str = "kube-rs-a";
const MANAGER_B: &str = "kube-rs-b";
/// The longest any single wait may take.
const WAIT: Duration = Duration::from_secs(60);
/// The longest the whole run may take.
const BUDGET: Duration = Duration::from_secs(170);

/// An operation's outcome: `Err` holds a one-line reason.
type Outcome = Result<(), String>;

/// Runs every operation of the client matrix, in order, in namespace
/// `client-kube-rs`, against the cluster `kubeconfig` points at.
pub async fn everyday(kubeconfig: &Path) -> Vec<(&'static str, Outcome)> {
    let t = match setup(kubeconfig).await {
        Ok(t) => t,
        Err(e) => {
            let why = format!("setup failed: {e}");
            return OPERATIONS.iter().map(|&op| (op, Err(why.clone()))).collect();
        }
    };
    // The whole run stays under the matrix's three minutes.
    let budget_end = tokio::time::Instant::now() + BUDGET;
    let mut results = Vec::with_capacity(OPERATIONS.len());
    for op in OPERATIONS {
        let op_end = (tokio::time::Instant::now() + WAIT).min(budget_end);
        let outcome = match tokio::time::timeout_at(op_end, t.run(op)).await {
            Ok(outcome) => outcome,
            Err(_) if op_end == budget_end => Err(format!(
                "stopped: the run's {}s budget is spent",
                BUDGET.as_secs()
            )),
            Err(_) => Err(format!("no result within {}s", WAIT.as_secs())),
        };
        results.push((op, outcome.map_err(|e| one_line(&e))));
    }
    // Clean up; the next client's script waits for the namespace to go.
    let namespaces: Api<Namespace> = Api::all(t.client.clone());
    let _ = namespaces.delete(NS, &DeleteParams::default()).await;
    results
}

/// Builds a client from `kubeconfig` exactly as a kube-rs program would.
pub async fn client_from(kubeconfig: &Path) -> Result<Client, String> {
    let kc = Kubeconfig::read_from(kubeconfig).why("reading the kubeconfig")?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .why("loading the kubeconfig")?;
    Client::try_from(config).why("building the client")
}

/// A fresh namespace `client-kube-rs` and the APIs the operations use.
async fn setup(kubeconfig: &Path) -> Result<Everyday, String> {
    let client = client_from(kubeconfig).await?;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if let Some(old) = namespaces.get_opt(NS).await.why("looking for an old namespace")? {
        // A namespace already Terminating refuses a second delete (409).
        if old.metadata.deletion_timestamp.is_none() {
            namespaces
                .delete(NS, &DeleteParams::default())
                .await
                .why("deleting the old namespace")?;
        }
        let uid = old.uid().unwrap_or_default();
        let gone = await_condition(namespaces.clone(), NS, conditions::is_deleted(&uid));
        tokio::time::timeout(WAIT, gone)
            .await
            .map_err(|_| "the old namespace did not go within 60s".to_string())?
            .why("waiting for the old namespace to go")?;
    }
    let ns: Namespace = from_json(json!({"metadata": {"name": NS}}))?;
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .why("creating the namespace")?;
    Ok(Everyday {
        cms: Api::namespaced(client.clone(), NS),
        deployments: Api::namespaced(client.clone(), NS),
        replicasets: Api::namespaced(client.clone(), NS),
        pods: Api::namespaced(client.clone(), NS),
        client,
    })
}

/// What the operations share.
struct Everyday {
    client: Client,
    cms: Api<ConfigMap>,
    deployments: Api<Deployment>,
    replicasets: Api<ReplicaSet>,
    pods: Api<Pod>,
}

/// The ConfigMap most operations work on.
const MAIN: &str = "kr-main";

impl Everyday {
    async fn run(&self, op: &str) -> Outcome {
        match op {
            "create" => self.create().await,
            "get" => self.get().await,
            "list" => self.list().await,
            "replace" => self.replace().await,
            "label_selector" => self.label_selector().await,
            "field_selector" => self.field_selector().await,
            "limit_continue" => self.limit_continue().await,
            "merge_patch" => self.merge_patch().await,
            "strategic_patch" => self.strategic_patch().await,
            "json_patch" => self.json_patch().await,
            "apply_twice" => self.apply_twice().await,
            "apply_conflict" => self.apply_conflict().await,
            "apply_force" => self.apply_force().await,
            "scale" => self.scale().await,
            "watch_from_rv" => self.watch_from_rv().await,
            "watch_helper" => self.watch_helper().await,
            "pod_logs" => self.pod_logs().await,
            "foreground_delete" => self.foreground_delete().await,
            "status_404" => self.status_404().await,
            "status_409" => self.status_409().await,
            "status_422" => self.status_422().await,
            "discovery" => self.discovery().await,
            "dynamic_client" => self.dynamic_client().await,
            "custom_resource" => self.custom_resource().await,
            other => Err(format!("unknown operation {other}")),
        }
    }

    async fn create(&self) -> Outcome {
        let made = self
            .cms
            .create(&PostParams::default(), &configmap(MAIN, &[], &[("k", "v")]))
            .await
            .why("create")?;
        ensure_data(&made, &[("k", "v")], "the created object")?;
        ensure(made.uid().is_some(), "the created object has no uid")?;
        ensure(
            made.resource_version().is_some(),
            "the created object has no resourceVersion",
        )
    }

    async fn get(&self) -> Outcome {
        let got = self.cms.get(MAIN).await.why("get")?;
        ensure_data(&got, &[("k", "v")], "get")
    }

    async fn list(&self) -> Outcome {
        let list = self.cms.list(&ListParams::default()).await.why("list")?;
        ensure(
            list.metadata.resource_version.is_some_and(|rv| !rv.is_empty()),
            "the list has no resourceVersion",
        )?;
        let names = names(&list.items);
        ensure(names.contains(MAIN), format!("{MAIN} not in the list: {names:?}"))
    }

    async fn replace(&self) -> Outcome {
        let mut cm = self.cms.get(MAIN).await.why("get before replace")?;
        let read_rv = cm.resource_version().unwrap_or_default();
        cm.data = Some(data(&[("k", "replaced")]));
        let replaced = self
            .cms
            .replace(MAIN, &PostParams::default(), &cm)
            .await
            .why("replace with the read resourceVersion")?;
        ensure_data(&replaced, &[("k", "replaced")], "the replaced object")?;
        ensure(
            replaced.resource_version().unwrap_or_default() != read_rv,
            "replace did not change the resourceVersion",
        )?;
        // `cm` still carries the resourceVersion read before the replace.
        cm.data = Some(data(&[("k", "stale")]));
        let stale = self.cms.replace(MAIN, &PostParams::default(), &cm).await;
        expect_status(stale, 409, "Conflict", "replace with a stale resourceVersion")?;
        let now = self.cms.get(MAIN).await.why("get after the stale replace")?;
        ensure_data(&now, &[("k", "replaced")], "after the stale replace")
    }

    async fn label_selector(&self) -> Outcome {
        for (name, app) in [("kr-lx", Some("x")), ("kr-ly", Some("y")), ("kr-ln", None)] {
            let mut labels = vec![("set", "selectors")];
            labels.extend(app.map(|a| ("app", a)));
            self.cms
                .create(&PostParams::default(), &configmap(name, &labels, &[]))
                .await
                .why(&format!("creating {name}"))?;
        }
        for (selector, expected) in [
            ("set=selectors,app=x", &["kr-lx"][..]),
            ("set=selectors,app in (x,y)", &["kr-lx", "kr-ly"][..]),
            ("set=selectors,!app", &["kr-ln"][..]),
        ] {
            let list = self
                .cms
                .list(&ListParams::default().labels(selector))
                .await
                .why(&format!("list with {selector}"))?;
            let got = names(&list.items);
            let want: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
            ensure(got == want, format!("{selector}: got {got:?}, expected {want:?}"))?;
        }
        Ok(())
    }

    async fn field_selector(&self) -> Outcome {
        let selector = format!("metadata.name={MAIN}");
        let list = self
            .cms
            .list(&ListParams::default().fields(&selector))
            .await
            .why("list with a field selector")?;
        let got: Vec<String> = list.items.iter().map(|c| c.name_any()).collect();
        ensure(got == [MAIN], format!("{selector}: got {got:?}"))
    }

    async fn limit_continue(&self) -> Outcome {
        let want: BTreeSet<String> = (0..5).map(|i| format!("kr-page-{i}")).collect();
        for name in &want {
            self.cms
                .create(&PostParams::default(), &configmap(name, &[("set", "pages")], &[]))
                .await
                .why(&format!("creating {name}"))?;
        }
        let mut seen = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = 0;
        loop {
            pages += 1;
            ensure(pages <= 10, "more than 10 pages for 5 objects")?;
            let mut lp = ListParams::default().labels("set=pages").limit(2);
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let page = self.cms.list(&lp).await.why(&format!("list page {pages}"))?;
            ensure(
                page.items.len() <= 2,
                format!("page {pages} has {} items with limit=2", page.items.len()),
            )?;
            seen.extend(page.items.iter().map(|c| c.name_any()));
            token = page.metadata.continue_.filter(|t| !t.is_empty());
            if token.is_none() {
                break;
            }
        }
        let unique: BTreeSet<String> = seen.iter().cloned().collect();
        ensure(
            unique.len() == seen.len() && unique == want,
            format!("pages returned {seen:?}, expected each of {want:?} once"),
        )?;
        ensure(
            pages == 3,
            format!("{pages} pages for 5 objects with limit=2, expected 3"),
        )
    }

    async fn merge_patch(&self) -> Outcome {
        let patch = json!({
            "metadata": {"labels": {"patched": "merge"}},
            "data": {"m": "1", "k": null},
        });
        let patched = self
            .cms
            .patch(MAIN, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .why("merge patch")?;
        ensure_data(&patched, &[("m", "1")], "after the merge patch")?;
        let got = self.cms.get(MAIN).await.why("get after the merge patch")?;
        ensure_data(&got, &[("m", "1")], "read back after the merge patch")?;
        ensure(
            got.labels().get("patched").map(String::as_str) == Some("merge"),
            format!("labels after the merge patch: {:?}", got.labels()),
        )
    }

    async fn strategic_patch(&self) -> Outcome {
        let name = "kr-strategic";
        let deployment = deployment(
            name,
            0,
            json!([
                {"name": "a", "image": "busybox:1.36"},
                {"name": "b", "image": "nginx:1.27"},
            ]),
        )?;
        self.deployments
            .create(&PostParams::default(), &deployment)
            .await
            .why("creating the Deployment")?;
        let patch = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "busybox:1.37"},
        ]}}}});
        self.deployments
            .patch(name, &PatchParams::default(), &Patch::Strategic(&patch))
            .await
            .why("strategic merge patch")?;
        let got = self.deployments.get(name).await.why("get after the patch")?;
        let images: Vec<(String, String)> = got
            .spec
            .and_then(|s| s.template.spec)
            .map(|s| s.containers)
            .unwrap_or_default()
            .into_iter()
            .map(|c| (c.name, c.image.unwrap_or_default()))
            .collect();
        let want = [("a", "busybox:1.37"), ("b", "nginx:1.27")].map(|(n, i)| (n.to_string(), i.to_string()));
        ensure(
            images == want,
            format!("containers after the patch: {images:?}, expected {want:?}"),
        )
    }

    async fn json_patch(&self) -> Outcome {
        let name = "kr-json-patch";
        self.cms
            .create(&PostParams::default(), &configmap(name, &[], &[("k", "1")]))
            .await
            .why("creating the ConfigMap")?;
        let ops = json!([
            {"op": "test", "path": "/data/k", "value": "1"},
            {"op": "add", "path": "/data/n", "value": "new"},
            {"op": "replace", "path": "/data/k", "value": "2"},
        ]);
        let patch: Patch<()> = Patch::Json(from_json(ops)?);
        self.cms
            .patch(name, &PatchParams::default(), &patch)
            .await
            .why("JSON patch")?;
        let got = self.cms.get(name).await.why("get after the patch")?;
        ensure_data(&got, &[("k", "2"), ("n", "new")], "after the JSON patch")
    }

    async fn apply_twice(&self) -> Outcome {
        let first = self
            .apply(
                "kr-apply",
                &[("k", "1"), ("j", "1")],
                &PatchParams::apply(MANAGER_A),
            )
            .await
            .why("first apply")?;
        ensure_data(&first, &[("k", "1"), ("j", "1")], "after the first apply")?;
        let second = self
            .apply("kr-apply", &[("k", "2")], &PatchParams::apply(MANAGER_A))
            .await
            .why("second apply")?;
        ensure_data(
            &second,
            &[("k", "2")],
            "after the second apply (j should be pruned)",
        )?;
        let entries = managed_entries(&second, MANAGER_A);
        ensure(
            entries.len() == 1 && entries[0].0 == "Apply",
            format!("managedFields entries for {MANAGER_A}: {entries:?}, expected one Apply"),
        )
    }

    async fn apply_conflict(&self) -> Outcome {
        let result = self
            .apply("kr-apply", &[("k", "other")], &PatchParams::apply(MANAGER_B))
            .await;
        expect_status(result, 409, "Conflict", "apply by another manager without force")?;
        let got = self.cms.get("kr-apply").await.why("get after the conflict")?;
        ensure_data(&got, &[("k", "2")], "after the refused apply")
    }

    async fn apply_force(&self) -> Outcome {
        let forced = self
            .apply(
                "kr-apply",
                &[("k", "other")],
                &PatchParams::apply(MANAGER_B).force(),
            )
            .await
            .why("forced apply")?;
        ensure(
            forced.data.as_ref().and_then(|d| d.get("k")).map(String::as_str) == Some("other"),
            format!("data after the forced apply: {:?}", forced.data),
        )?;
        let entries = managed_entries(&forced, MANAGER_B);
        let owns_k = entries
            .iter()
            .any(|(op, fields)| op == "Apply" && fields.pointer("/f:data/f:k").is_some());
        ensure(
            owns_k,
            format!("managedFields for {MANAGER_B}: {entries:?}, expected an Apply owning data.k"),
        )
    }

    async fn apply(&self, name: &str, pairs: &[(&str, &str)], pp: &PatchParams) -> kube::Result<ConfigMap> {
        let body = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name},
            "data": data(pairs),
        });
        self.cms.patch(name, pp, &Patch::Apply(&body)).await
    }

    async fn scale(&self) -> Outcome {
        let name = "kr-scale";
        let d = deployment(name, 1, json!([{"name": "main", "image": "nginx:1.27"}]))?;
        self.deployments
            .create(&PostParams::default(), &d)
            .await
            .why("creating the Deployment")?;
        let scale = self.deployments.get_scale(name).await.why("get scale")?;
        let replicas = scale.spec.and_then(|s| s.replicas);
        ensure(
            replicas == Some(1),
            format!("scale.spec.replicas is {replicas:?}, expected 1"),
        )?;
        let patch = json!({"spec": {"replicas": 3}});
        let scaled = self
            .deployments
            .patch_scale(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .why("patch scale")?;
        let replicas = scaled.spec.and_then(|s| s.replicas);
        ensure(
            replicas == Some(3),
            format!("patched scale.spec.replicas is {replicas:?}, expected 3"),
        )?;
        let got = self.deployments.get(name).await.why("get the Deployment")?;
        let replicas = got.spec.and_then(|s| s.replicas);
        ensure(
            replicas == Some(3),
            format!("Deployment spec.replicas is {replicas:?}, expected 3"),
        )
    }

    async fn watch_from_rv(&self) -> Outcome {
        let list = self.cms.list(&ListParams::default()).await.why("list")?;
        let rv = list.metadata.resource_version.unwrap_or_default();
        ensure(!rv.is_empty(), "the list has no resourceVersion")?;
        let stream = self
            .cms
            .watch(&WatchParams::default().timeout(50), &rv)
            .await
            .why(&format!("watch from resourceVersion {rv}"))?;
        let mut stream = std::pin::pin!(stream);
        let name = "kr-watched";
        self.cms
            .create(&PostParams::default(), &configmap(name, &[], &[("w", "1")]))
            .await
            .why("creating the watched ConfigMap")?;
        loop {
            let event = tokio::time::timeout(Duration::from_secs(20), stream.next())
                .await
                .map_err(|_| format!("no event within 20s of creating {name}"))?
                .ok_or("the watch ended before any event")?
                .why("watch stream")?;
            return match event {
                WatchEvent::Bookmark(_) => continue,
                WatchEvent::Added(cm) if cm.name_any() == name => Ok(()),
                WatchEvent::Added(cm) => Err(format!(
                    "first event is ADDED {} (a replay of an older object), expected ADDED {name}",
                    cm.name_any()
                )),
                WatchEvent::Modified(cm) => Err(format!("first event is MODIFIED {}", cm.name_any())),
                WatchEvent::Deleted(cm) => Err(format!("first event is DELETED {}", cm.name_any())),
                WatchEvent::Error(status) => Err(format!("first event is ERROR {status:?}")),
            };
        }
    }

    async fn watch_helper(&self) -> Outcome {
        let name = "kr-helper";
        let config = watcher::Config::default().labels("watch=helper");
        let mut events = Events::spawn(watcher(self.cms.clone(), config));
        events
            .next_matching("the initial list", |e| matches!(e, watcher::Event::InitDone))
            .await?;
        self.cms
            .create(
                &PostParams::default(),
                &configmap(name, &[("watch", "helper")], &[("k", "1")]),
            )
            .await
            .why("create")?;
        events
            .next_matching(
                "ADDED",
                |e| matches!(e, watcher::Event::Apply(c) if has(c, "k", "1")),
            )
            .await?;
        let patch = json!({"data": {"k": "2"}});
        self.cms
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .why("patch")?;
        events
            .next_matching(
                "MODIFIED",
                |e| matches!(e, watcher::Event::Apply(c) if has(c, "k", "2")),
            )
            .await?;
        self.cms
            .delete(name, &DeleteParams::default())
            .await
            .why("delete")?;
        events
            .next_matching(
                "DELETED",
                |e| matches!(e, watcher::Event::Delete(c) if c.name_any() == name),
            )
            .await?;
        Ok(())
    }

    async fn pod_logs(&self) -> Outcome {
        let name = "kr-logs";
        let pod: Pod = from_json(json!({
            "metadata": {"name": name},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "containers": [{
                    "name": "main",
                    "image": "busybox",
                    "command": ["sh", "-c", "echo hello from kube-rs; sleep 3600"],
                }],
            },
        }))?;
        self.pods
            .create(&PostParams::default(), &pod)
            .await
            .why("creating the Pod")?;
        let running = await_condition(self.pods.clone(), name, conditions::is_pod_running());
        tokio::time::timeout(WAIT, running)
            .await
            .map_err(|_| "the Pod was not Running within 60s".to_string())?
            .why("waiting for Running")?;
        let logs = self
            .pods
            .logs(name, &LogParams::default())
            .await
            .why("reading the logs")?;
        ensure(!logs.trim().is_empty(), "the logs are empty")
    }

    async fn foreground_delete(&self) -> Outcome {
        let name = "kr-foreground";
        let mut d = deployment(name, 2, json!([{"name": "main", "image": "nginx:1.27"}]))?;
        if let Some(pod_spec) = d.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
            pod_spec.termination_grace_period_seconds = Some(1);
        }
        let made = self
            .deployments
            .create(&PostParams::default(), &d)
            .await
            .why("creating the Deployment")?;
        let uid = made.uid().unwrap_or_default();
        let selector = format!("app={name}");

        let rs_config = watcher::Config::default().labels(&selector);
        let mut replicasets = Events::spawn(watcher(self.replicasets.clone(), rs_config));
        replicasets
            .next_matching("a ReplicaSet owned by the Deployment", |e| match e {
                watcher::Event::Apply(rs) | watcher::Event::InitApply(rs) => {
                    rs.owner_references().iter().any(|o| o.uid == uid)
                }
                _ => false,
            })
            .await?;
        drop(replicasets);

        let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let mut watched = Events::spawn(watcher(self.deployments.clone(), config));
        watched
            .next_matching("the Deployment's initial list", |e| {
                matches!(e, watcher::Event::InitDone)
            })
            .await?;
        let deleted = self
            .deployments
            .delete(name, &DeleteParams::foreground())
            .await
            .why("delete with propagationPolicy=Foreground")?;
        if let Some(d) = deleted.left() {
            ensure_foreground(&d, "the delete response")?;
        }
        // From the deletion on, every state the Deployment passes through
        // until it goes carries the finalizer. (Updates from before the
        // delete, such as a status write, may still arrive first.)
        let mut marked = false;
        loop {
            let event = watched
                .next_matching("the Deployment's deletion", |e| {
                    matches!(e, watcher::Event::Apply(_) | watcher::Event::Delete(_))
                })
                .await?;
            match event {
                watcher::Event::Apply(d) => {
                    marked |= d.meta().deletion_timestamp.is_some();
                    if marked {
                        ensure_foreground(&d, "a watched MODIFIED event before DELETED")?;
                    }
                }
                _ => break,
            }
        }
        wait_all_gone(self.replicasets.clone(), &selector, "ReplicaSets").await?;
        wait_all_gone(self.pods.clone(), &selector, "Pods").await
    }

    async fn status_404(&self) -> Outcome {
        let result = self.cms.get("kr-missing").await;
        expect_status(result, 404, "NotFound", "get a missing ConfigMap").map(drop)
    }

    async fn status_409(&self) -> Outcome {
        let result = self
            .cms
            .create(&PostParams::default(), &configmap(MAIN, &[], &[]))
            .await;
        expect_status(result, 409, "AlreadyExists", "create an existing name").map(drop)
    }

    async fn status_422(&self) -> Outcome {
        let result = self
            .cms
            .create(&PostParams::default(), &configmap("Bad_Name", &[], &[]))
            .await;
        let status = expect_status(result, 422, "Invalid", "create a ConfigMap named Bad_Name")?;
        let cause_names_it = status
            .details
            .as_ref()
            .is_some_and(|d| d.causes.iter().any(|c| c.field == "metadata.name"));
        ensure(
            cause_names_it || status.message.contains("metadata.name"),
            format!("neither causes nor message name metadata.name: {status:?}"),
        )
    }

    async fn discovery(&self) -> Outcome {
        let version = self.client.apiserver_version().await.why("GET /version")?;
        ensure(
            version.major == "1",
            format!("server major version is {:?}", version.major),
        )?;
        let discovery = kube::discovery::Discovery::new(self.client.clone())
            .run()
            .await
            .why("discovery")?;
        let core = discovery.get("").ok_or("no core API group")?;
        let core_versions: Vec<&str> = core.versions().collect();
        ensure(
            core_versions.contains(&"v1"),
            format!("core API versions {core_versions:?} lack v1"),
        )?;
        let apps = discovery.get("apps").ok_or("no apps API group")?;
        let resources: Vec<String> = apps
            .versioned_resources("v1")
            .into_iter()
            .map(|(r, _)| r.plural)
            .collect();
        ensure(
            resources.iter().any(|r| r == "deployments"),
            format!("apps/v1 resources {resources:?} lack deployments"),
        )
    }

    async fn dynamic_client(&self) -> Outcome {
        let gvk = GroupVersionKind::gvk("", "v1", "ConfigMap");
        let resource = ApiResource::from_gvk_with_plural(&gvk, "configmaps");
        let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), NS, &resource);
        let name = "kr-dynamic";
        let object = DynamicObject::new(name, &resource).data(json!({"data": {"d": "1"}}));
        let made = api.create(&PostParams::default(), &object).await.why("create")?;
        ensure(
            made.data.pointer("/data/d") == Some(&json!("1")),
            format!("created object data: {}", made.data),
        )?;
        let got = api.get(name).await.why("get")?;
        ensure(
            got.data.pointer("/data/d") == Some(&json!("1")),
            format!("read back data: {}", got.data),
        )?;
        let list = api.list(&ListParams::default()).await.why("list")?;
        let names: BTreeSet<String> = list.items.iter().map(|o| o.name_any()).collect();
        ensure(names.contains(name), format!("{name} not in the list: {names:?}"))?;
        api.delete(name, &DeleteParams::default()).await.why("delete")?;
        expect_status(api.get(name).await, 404, "NotFound", "get after delete").map(drop)
    }
}

/// The client matrix's custom resource, as a kube-rs program declares one:
/// `tests/testdata/crds/gizmos.yaml` is the definition this derives.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "clients.miniplane.dev",
    version = "v1",
    kind = "Gizmo",
    namespaced,
    status = "GizmoStatus"
)]
pub struct GizmoSpec {
    size: i32,
    color: String,
}

/// What a controller of Gizmos would report.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct GizmoStatus {
    observed: i32,
}

impl Everyday {
    /// The derived definition applied server-side, then `Api<Gizmo>` CRUD
    /// with a `watcher` seeing each change.
    async fn custom_resource(&self) -> Outcome {
        let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let crd_name = Gizmo::crd_name();
        crds.patch(
            crd_name,
            &PatchParams::apply("kube-rs").force(),
            &Patch::Apply(Gizmo::crd()),
        )
        .await
        .why("applying Gizmo::crd() server-side")?;
        let established = await_condition(crds, crd_name, conditions::is_crd_established());
        tokio::time::timeout(WAIT, established)
            .await
            .map_err(|_| format!("{crd_name} not Established within 60s"))?
            .why("waiting for the definition")?;

        let gizmos: Api<Gizmo> = Api::namespaced(self.client.clone(), NS);
        let mut events = Events::spawn(watcher(gizmos.clone(), watcher::Config::default()));
        events
            .next_matching("the initial list", |e| matches!(e, watcher::Event::InitDone))
            .await?;
        let name = "kr-gizmo";
        let made = gizmos
            .create(
                &PostParams::default(),
                &Gizmo::new(
                    name,
                    GizmoSpec {
                        size: 1,
                        color: "red".into(),
                    },
                ),
            )
            .await
            .why("create")?;
        ensure(made.uid().is_some(), "the created Gizmo has no uid")?;
        events
            .next_matching(
                "the Gizmo ADDED",
                |e| matches!(e, watcher::Event::Apply(g) if g.name_any() == name),
            )
            .await?;
        let got = gizmos.get(name).await.why("get")?;
        ensure(
            got.spec
                == GizmoSpec {
                    size: 1,
                    color: "red".into(),
                },
            format!("read back {:?}", got.spec),
        )?;
        let list = gizmos.list(&ListParams::default()).await.why("list")?;
        ensure(names(&list.items).contains(name), "the Gizmo is not in the list")?;

        // Replace, merge patch and status, each seen by the watcher.
        let mut changed = got.clone();
        changed.spec.size = 2;
        gizmos
            .replace(name, &PostParams::default(), &changed)
            .await
            .why("replace")?;
        events
            .next_matching(
                "the replaced Gizmo",
                |e| matches!(e, watcher::Event::Apply(g) if g.spec.size == 2),
            )
            .await?;
        let patch = json!({"spec": {"color": "blue"}});
        gizmos
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .why("merge patch")?;
        events
            .next_matching(
                "the patched Gizmo",
                |e| matches!(e, watcher::Event::Apply(g) if g.spec.color == "blue"),
            )
            .await?;
        let status = json!({"status": {"observed": 2}});
        gizmos
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .why("status patch")?;
        let seen = events
            .next_matching(
                "the Gizmo's status",
                |e| matches!(e, watcher::Event::Apply(g) if g.status.is_some()),
            )
            .await?;
        if let watcher::Event::Apply(g) = seen {
            ensure(
                g.status == Some(GizmoStatus { observed: 2 }),
                format!("status {:?}", g.status),
            )?;
        }
        // A wrong type in the spec: 422 naming the field.
        let wrong = json!({"spec": {"size": "big"}});
        let status = expect_status(
            gizmos
                .patch(name, &PatchParams::default(), &Patch::Merge(&wrong))
                .await,
            422,
            "Invalid",
            "a string size",
        )?;
        ensure(
            status.message.contains("spec.size"),
            format!("the 422 does not name spec.size: {}", status.message),
        )?;

        gizmos
            .delete(name, &DeleteParams::default())
            .await
            .why("delete")?;
        events
            .next_matching(
                "the Gizmo DELETED",
                |e| matches!(e, watcher::Event::Delete(g) if g.name_any() == name),
            )
            .await?;
        expect_status(gizmos.get(name).await, 404, "NotFound", "get after delete").map(drop)
    }
}

/// Fails unless `d` is being deleted in the foreground.
fn ensure_foreground(d: &Deployment, what: &str) -> Outcome {
    ensure(
        d.meta().deletion_timestamp.is_some() && d.finalizers().iter().any(|f| f == "foregroundDeletion"),
        format!(
            "{what}: deletionTimestamp {:?}, finalizers {:?}, expected foregroundDeletion",
            d.meta().deletion_timestamp,
            d.finalizers()
        ),
    )
}

/// Waits until no object of `api` matches `selector`, following a watcher.
async fn wait_all_gone<K>(api: Api<K>, selector: &str, what: &str) -> Outcome
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    let mut events = Events::spawn(watcher(api, watcher::Config::default().labels(selector)));
    let mut listing = BTreeSet::new();
    let mut present: Option<BTreeSet<String>> = None;
    loop {
        if present.as_ref().is_some_and(BTreeSet::is_empty) {
            return Ok(());
        }
        let still = present.clone().unwrap_or_default();
        let why = format!("{what} {selector} to go (still there: {still:?})");
        match events.next_matching(&why, |_| true).await? {
            watcher::Event::Init => listing.clear(),
            watcher::Event::InitApply(o) => {
                listing.insert(o.name_any());
            }
            watcher::Event::InitDone => present = Some(std::mem::take(&mut listing)),
            watcher::Event::Apply(o) => {
                present.get_or_insert_default().insert(o.name_any());
            }
            watcher::Event::Delete(o) => {
                present.get_or_insert_default().remove(&o.name_any());
            }
        }
    }
}

/// A watcher stream polled by its own task, so that the caller can change
/// objects while events arrive. Dropping it stops the task.
struct Events<K> {
    /// Filled by the task; closed when the stream ends.
    rx: mpsc::UnboundedReceiver<Result<watcher::Event<K>, String>>,
    task: tokio::task::JoinHandle<()>,
}

impl<K: Send + 'static> Events<K> {
    fn spawn<S>(stream: S) -> Self
    where
        S: Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream.default_backoff());
            while let Some(item) = stream.next().await {
                if tx.send(item.map_err(|e| e.to_string())).is_err() {
                    return;
                }
            }
        });
        Events { rx, task }
    }

    /// The next event `want` accepts, skipping others and watcher errors
    /// (the watcher recovers on its own), within [`WAIT`].
    async fn next_matching(
        &mut self,
        what: &str,
        want: impl Fn(&watcher::Event<K>) -> bool,
    ) -> Result<watcher::Event<K>, String> {
        let mut last_error = None;
        let found = tokio::time::timeout(WAIT, async {
            while let Some(item) = self.rx.recv().await {
                match item {
                    Ok(event) if want(&event) => return Some(event),
                    Ok(_) => {}
                    Err(e) => last_error = Some(e),
                }
            }
            None
        })
        .await;
        let errors = last_error
            .map(|e| format!(" (last watcher error: {e})"))
            .unwrap_or_default();
        match found {
            Ok(Some(event)) => Ok(event),
            Ok(None) => Err(format!("the watcher stream ended before {what}{errors}")),
            Err(_) => Err(format!("no watcher event for {what} within 60s{errors}")),
        }
    }
}

impl<K> Drop for Events<K> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `(operation, fieldsV1)` of each managedFields entry of `manager`.
fn managed_entries(cm: &ConfigMap, manager: &str) -> Vec<(String, Value)> {
    cm.managed_fields()
        .iter()
        .filter(|m| m.manager.as_deref() == Some(manager))
        .map(|m| {
            let fields = m.fields_v1.as_ref().map(|f| f.0.clone()).unwrap_or(Value::Null);
            (m.operation.clone().unwrap_or_default(), fields)
        })
        .collect()
}

/// Expects an API error with `code` and `reason`; returns its Status.
fn expect_status<T>(
    result: kube::Result<T>,
    code: u16,
    reason: &str,
    what: &str,
) -> Result<kube::core::Status, String> {
    match result {
        Ok(_) => Err(format!("{what}: succeeded, expected {code} {reason}")),
        Err(kube::Error::Api(status)) if status.code == code && status.reason == reason => Ok(*status),
        Err(kube::Error::Api(status)) => Err(format!(
            "{what}: got {} {} ({}), expected {code} {reason}",
            status.code, status.reason, status.message
        )),
        Err(e) => Err(format!("{what}: {e}, expected {code} {reason}")),
    }
}

fn configmap(name: &str, labels: &[(&str, &str)], pairs: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_string());
    if !labels.is_empty() {
        cm.metadata.labels = Some(data(labels));
    }
    if !pairs.is_empty() {
        cm.data = Some(data(pairs));
    }
    cm
}

/// A Deployment of `replicas` pods labelled `app=<name>`.
fn deployment(name: &str, replicas: i32, containers: Value) -> Result<Deployment, String> {
    from_json(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": containers},
            },
        },
    }))
}

fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn has(cm: &ConfigMap, key: &str, value: &str) -> bool {
    cm.data.as_ref().and_then(|d| d.get(key)).map(String::as_str) == Some(value)
}

fn ensure_data(cm: &ConfigMap, pairs: &[(&str, &str)], what: &str) -> Outcome {
    let got = cm.data.clone().unwrap_or_default();
    let want = data(pairs);
    ensure(got == want, format!("{what}: data is {got:?}, expected {want:?}"))
}

fn names<K: Resource>(items: &[K]) -> BTreeSet<String> {
    items.iter().map(|o| o.name_any()).collect()
}

fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, String> {
    serde_json::from_value(v).why("building the request body")
}

fn ensure(cond: bool, why: impl Into<String>) -> Outcome {
    if cond { Ok(()) } else { Err(why.into()) }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Turns any displayable error into a reason that says what was being done.
trait Why<T> {
    fn why(self, what: &str) -> Result<T, String>;
}

impl<T, E: Display> Why<T> for Result<T, E> {
    fn why(self, what: &str) -> Result<T, String> {
        self.map_err(|e| format!("{what}: {e}"))
    }
}

// ---------------------------------------------------------------------------
// kube-rs-specific tests (they run in the `clients` test binary).

mod tests {
    use super::*;
    use e2e::{Cluster, Config};
    use kube::core::PartialObjectMeta;

    /// A loopback address with a port that was free a moment ago, so that a
    /// restarted server can come back at the same address.
    fn fixed_loopback_addr() -> std::net::SocketAddr {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a probe port");
        probe.local_addr().expect("probe address")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kube_rs_watcher_resumes_across_a_server_restart() {
        let data_dir = tempfile::tempdir().expect("data dir");
        let listen = fixed_loopback_addr();
        let config = || Config {
            listen,
            data_dir: Some(data_dir.path().to_path_buf()),
            sim: None,
            ..Config::ephemeral()
        };
        let mut cluster = Cluster::start_with(config()).await;
        let client = client_from(cluster.server().kubeconfig()).await.expect("client");
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let mut events = Events::spawn(watcher(cms.clone(), watcher::Config::default()));
        events
            .next_matching("the initial list", |e| matches!(e, watcher::Event::InitDone))
            .await
            .expect("the watcher lists");

        cms.create(&PostParams::default(), &configmap("a", &[], &[]))
            .await
            .expect("create a");
        // Seeing `Init` again would mean the watcher listed afresh instead
        // of resuming from the last resourceVersion it saw.
        let relisted = std::cell::Cell::new(false);
        let applied = |name: &'static str| {
            let relisted = &relisted;
            move |e: &watcher::Event<ConfigMap>| match e {
                watcher::Event::Init => {
                    relisted.set(true);
                    false
                }
                watcher::Event::Apply(c) | watcher::Event::InitApply(c) => c.name_any() == name,
                _ => false,
            }
        };
        events
            .next_matching("a", applied("a"))
            .await
            .expect("the watcher reports a");

        cluster.stop().await;
        let cluster = Cluster::start_with(config()).await;
        cms.create(&PostParams::default(), &configmap("b", &[], &[]))
            .await
            .expect("create b after the restart");
        events
            .next_matching("b after the restart", applied("b"))
            .await
            .expect("the watcher reports b");
        assert!(!events.task.is_finished(), "the watcher stream ended");
        assert!(!relisted.get(), "the watcher listed again instead of resuming");
        drop(cluster);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kube_rs_apply_twice_by_one_manager() {
        let cluster = Cluster::start().await;
        let client = client_from(cluster.server().kubeconfig()).await.expect("client");
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let pp = PatchParams::apply(MANAGER_A);
        let first = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "applied", "labels": {"keep": "1", "drop": "1"}},
            "data": {"k": "1", "j": "1"},
        });
        cms.patch("applied", &pp, &Patch::Apply(&first))
            .await
            .expect("first apply");
        let second = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "applied", "labels": {"keep": "2"}},
            "data": {"k": "2"},
        });
        let cm = cms
            .patch("applied", &pp, &Patch::Apply(&second))
            .await
            .expect("second apply");
        assert_eq!(cm.data, Some(data(&[("k", "2")])), "j is pruned");
        assert_eq!(cm.labels(), &data(&[("keep", "2")]), "label drop is pruned");
        let managers: Vec<(Option<&str>, Option<&str>)> = cm
            .managed_fields()
            .iter()
            .map(|m| (m.manager.as_deref(), m.operation.as_deref()))
            .collect();
        assert_eq!(managers, [(Some(MANAGER_A), Some("Apply"))], "one Apply entry");
        let fields = &managed_entries(&cm, MANAGER_A)[0].1;
        assert!(fields.pointer("/f:data/f:k").is_some(), "owns data.k: {fields}");
        assert!(
            fields.pointer("/f:data/f:j").is_none(),
            "no longer owns data.j: {fields}"
        );
        assert!(
            fields.pointer("/f:metadata/f:labels/f:drop").is_none(),
            "no longer owns the drop label: {fields}"
        );
        let read = cms.get("applied").await.expect("get");
        assert_eq!(read.data, cm.data, "what was read back matches the response");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kube_rs_get_metadata() {
        let cluster = Cluster::start().await;
        let client = client_from(cluster.server().kubeconfig()).await.expect("client");
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        for name in ["meta-1", "meta-2"] {
            cms.create(
                &PostParams::default(),
                &configmap(name, &[("meta", "yes")], &[("k", "v")]),
            )
            .await
            .expect("create");
        }
        let is_partial = |types: Option<&kube::core::TypeMeta>| {
            types.is_some_and(|t| t.api_version == "meta.k8s.io/v1" && t.kind == "PartialObjectMetadata")
        };

        let one = cms.get_metadata("meta-1").await.expect("get_metadata");
        assert!(
            is_partial(one.types.as_ref()),
            "get_metadata types: {:?}",
            one.types
        );
        assert_eq!(one.metadata.name.as_deref(), Some("meta-1"));
        assert!(one.metadata.resource_version.is_some());
        assert_eq!(one.metadata.labels, Some(data(&[("meta", "yes")])));

        let list = cms
            .list_metadata(&ListParams::default().labels("meta=yes"))
            .await
            .expect("list_metadata");
        assert_eq!(
            (list.types.api_version.as_str(), list.types.kind.as_str()),
            ("meta.k8s.io/v1", "PartialObjectMetadataList"),
            "list_metadata types"
        );
        assert_eq!(names(&list.items), ["meta-1", "meta-2"].map(String::from).into());
        for item in &list.items {
            assert!(
                is_partial(item.types.as_ref()),
                "list item types: {:?}",
                item.types
            );
        }

        let config = watcher::Config::default().labels("meta=yes");
        // kube 5's replacement for the deprecated `metadata_watcher`: a
        // watcher over `Api<PartialObjectMeta<K>>`, which asks for metadata only.
        let metas: Api<PartialObjectMeta<ConfigMap>> = Api::namespaced(cms.clone().into_client(), "default");
        let mut events = Events::spawn(watcher(metas, config));
        events
            .next_matching("the initial list", |e| matches!(e, watcher::Event::InitDone))
            .await
            .expect("the metadata watcher lists");
        cms.create(
            &PostParams::default(),
            &configmap("meta-3", &[("meta", "yes")], &[]),
        )
        .await
        .expect("create meta-3");
        let event = events
            .next_matching(
                "meta-3",
                |e| matches!(e, watcher::Event::Apply(m) if m.name_any() == "meta-3"),
            )
            .await
            .expect("the metadata watcher reports meta-3");
        let watcher::Event::Apply(m) = event else {
            unreachable!("matched above")
        };
        assert!(
            is_partial(m.types.as_ref()),
            "watched object types: {:?}",
            m.types
        );
    }
}
