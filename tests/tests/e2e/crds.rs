//! CustomResourceDefinitions end to end, through the real kubectl: what a
//! real cluster prints for each step, checked against upstream's texts.
//!
//! * [`lifecycle`]: a definition is applied, becomes Established, shows in
//!   discovery (`kubectl api-resources`, short names, categories) and OpenAPI;
//!   names that collide are refused with NamesAccepted False; deleting the
//!   definition removes its resources and its objects, waiting for their
//!   finalizers.
//! * [`verbs`]: every verb on a custom resource (create, get, list with label
//!   and field selectors, replace, the patch types, client- and server-side
//!   apply with conflicts and list-type maps, delete, dry run, watch, edit,
//!   finalizers, ownerReferences and garbage collection).
//! * [`validation`]: the structural schema (422 with field paths, several
//!   errors at once), unknown fields (strict / warn / ignore), defaulting,
//!   pruning, CEL rules, int-or-string, preserve-unknown-fields.
//! * [`subresources`]: `status` and `scale` (`kubectl patch --subresource`,
//!   `kubectl scale`, `kubectl get --subresource`).
//! * [`printing`]: printer columns in `kubectl get` tables, `-o wide`,
//!   `kubectl explain`; several served versions with one storage version and
//!   kubectl's deprecation warnings.
//! * [`prometheus`]: the prometheus-operator definitions, unmodified, with an
//!   object of each kind that its schema accepts and one that it refuses, and
//!   an install bundle applied after them.
//!
//! The definitions are in `tests/testdata/crds/`; the real manifests in
//! `tests/testdata/manifests/`.

#[path = "crds/lifecycle.rs"]
mod lifecycle;
#[path = "crds/printing.rs"]
mod printing;
#[path = "crds/prometheus.rs"]
mod prometheus;
#[path = "crds/subresources.rs"]
mod subresources;
#[path = "crds/validation.rs"]
mod validation;
#[path = "crds/verbs.rs"]
mod verbs;

use std::collections::BTreeMap;

use e2e::{Cluster, Run};
use serde_json::Value;

/// The widgets definition (`tests/testdata/crds/widgets.yaml`).
const WIDGETS: &str = "widgets.stable.example.com";

/// The path of a file in `tests/testdata/`.
fn testdata(rel: &str) -> String {
    format!("{}/testdata/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// `kubectl apply -f` of a definition in `tests/testdata/crds/`, then
/// `kubectl wait` for each of `names` to be Established.
async fn install(c: &Cluster, file: &str, names: &[&str]) {
    let out = c.ok(&["apply", "-f", &testdata(&format!("crds/{file}"))]).await;
    for name in names {
        assert!(
            out.contains(&format!(
                "customresourcedefinition.apiextensions.k8s.io/{name} created"
            )),
            "{out}"
        );
        established(c, name).await;
    }
}

/// `kubectl wait --for condition=established crd/<name>`.
async fn established(c: &Cluster, name: &str) {
    let out = c
        .ok(&[
            "wait",
            "--for",
            "condition=established",
            &format!("crd/{name}"),
            "--timeout=60s",
        ])
        .await;
    assert_eq!(
        out.trim(),
        format!("customresourcedefinition.apiextensions.k8s.io/{name} condition met")
    );
}

/// Runs kubectl with extra environment variables (`KUBE_EDITOR`, ...), with
/// the cluster's kubeconfig and cache dir as [`Cluster::run`] does.
async fn run_env(c: &Cluster, env: &[(&str, &str)], args: &[&str]) -> Run {
    let cache = c.dir.path().join("kube-cache");
    let mut cmd = tokio::process::Command::new(&c.kubectl);
    cmd.args(args)
        .arg(format!("--cache-dir={}", cache.display()))
        .env("KUBECONFIG", c.server().kubeconfig())
        .env("HOME", c.dir.path())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().await.expect("kubectl runs").into()
}

/// `kubectl get <args> -o jsonpath=<expr>`.
async fn jsonpath(c: &Cluster, args: &[&str], expr: &str) -> String {
    let flag = format!("-o=jsonpath={expr}");
    c.ok(&[args, &[flag.as_str()]].concat()).await
}

/// `kubectl create -f` of `yaml`, which must succeed; returns stdout.
async fn create(c: &Cluster, yaml: &str) -> String {
    let r = c.run_with_yaml(&["create"], yaml).await;
    assert!(r.success, "create failed: {}\n{yaml}", r.stderr);
    r.stdout
}

/// A Widget named `name` with `spec` (YAML flow or block, indented by 2).
fn widget(name: &str, spec: &str) -> String {
    format!("apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n{spec}\n")
}

/// The rows of a kubectl table as maps header → cell, read by the columns'
/// positions in the header line (cells may be empty, as kubectl prints a
/// null cell). Headers are separated by at least two spaces.
fn table(out: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = out.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let mut starts = Vec::new();
    let bytes = header.as_bytes();
    for i in 0..bytes.len() {
        let starts_word = bytes[i] != b' ' && (i == 0 || (i >= 2 && &bytes[i - 2..i] == b"  "));
        if starts_word {
            starts.push(i);
        }
    }
    let names: Vec<String> = starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let end = starts.get(k + 1).copied().unwrap_or(header.len());
            header[s..end].trim().to_string()
        })
        .collect();
    lines
        .map(|line| {
            names
                .iter()
                .enumerate()
                .map(|(k, name)| {
                    let s = starts[k].min(line.len());
                    let e = starts.get(k + 1).copied().unwrap_or(line.len()).min(line.len());
                    let cell = if k + 1 == names.len() {
                        &line[s..]
                    } else {
                        &line[s..e]
                    };
                    (name.clone(), cell.trim().to_string())
                })
                .collect()
        })
        .collect()
}

/// The header cells of a kubectl table.
fn headers(out: &str) -> Vec<String> {
    out.lines()
        .next()
        .unwrap_or_default()
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The row of `rows` whose NAME is `name`.
fn row<'a>(rows: &'a [BTreeMap<String, String>], name: &str) -> &'a BTreeMap<String, String> {
    rows.iter()
        .find(|r| r.get("NAME").is_some_and(|n| n == name))
        .unwrap_or_else(|| panic!("no row {name} in {rows:#?}"))
}

/// Whether `age` reads as kubectl's HumanDuration of a recent time (`0s`,
/// `12s`, `2m3s`).
fn is_age(age: &str) -> bool {
    let digits = age.trim_end_matches(|ch: char| ch.is_ascii_alphabetic());
    !age.is_empty()
        && age.chars().next().is_some_and(|ch| ch.is_ascii_digit())
        && age.chars().all(|ch| ch.is_ascii_alphanumeric())
        && !digits.is_empty()
}

/// The condition of `obj.status.conditions` of type `ty`.
fn condition<'a>(obj: &'a Value, ty: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == ty)
}

/// The names of the items of a list.
/// The CRDs every miniplane installs at start (the Gateway API, the Canary).
const BUILT_IN_GROUPS: [&str; 2] = [".gateway.networking.k8s.io", ".rollouts.miniplane.dev"];

/// The names of a CRD list's items that are not built in.
fn user_crd_names(list: &Value) -> Vec<String> {
    item_names(list)
        .into_iter()
        .filter(|n| !BUILT_IN_GROUPS.iter().any(|g| n.ends_with(g)))
        .collect()
}

fn item_names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

#[test]
fn tables_are_read_by_column_positions_with_empty_cells() {
    let out = "NAME   REPLICAS   MODE     READY   AGE\nw1     3          HA       True    5s\nw2     1          Simple           7s\n";
    let rows = table(out);
    assert_eq!(rows.len(), 2);
    assert_eq!(row(&rows, "w1")["READY"], "True");
    assert_eq!(row(&rows, "w2")["READY"], "");
    assert_eq!(row(&rows, "w2")["AGE"], "7s");
    assert_eq!(headers(out), ["NAME", "REPLICAS", "MODE", "READY", "AGE"]);
    assert!(is_age("0s") && is_age("2m3s") && !is_age("<invalid>") && !is_age(""));
}
