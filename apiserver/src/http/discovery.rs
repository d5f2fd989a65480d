//! API discovery: what kubectl reads to map kinds and short names to URLs.
//!
//! Two forms, both built from the [`Registry`]:
//! - aggregated (`apidiscovery.k8s.io` `v2` and `v2beta1`), answered to
//!   `/api` and `/apis` when the Accept header asks for it (kubectl 1.30+
//!   asks for v2, 1.27–1.29 for v2beta1); the Content-Type must name the
//!   group, version and kind exactly, or kubectl treats it as legacy;
//! - legacy: `APIVersions`, `APIGroupList`, and one `APIResourceList` per
//!   group-version.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/discovery/`.

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::registry::{Registry, ResourceInfo, Subresource};

/// Which aggregated version the Accept header asks for, if any.
pub fn aggregated_version(headers: &HeaderMap) -> Option<&'static str> {
    let accept = headers.get("accept")?.to_str().ok()?;
    for alternative in accept.split(',') {
        let alt = alternative.replace(' ', "");
        if alt.contains("g=apidiscovery.k8s.io") && alt.contains("as=APIGroupDiscoveryList") {
            if alt.contains("v=v2beta1") {
                return Some("v2beta1");
            }
            if alt.contains("v=v2") {
                return Some("v2");
            }
        }
    }
    None
}

/// The aggregated discovery document of the core group (`core = true`) or of
/// every named group.
pub fn aggregated(registry: &Registry, core: bool, version: &str) -> Value {
    let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
    for (group, gv_version) in registry.group_versions() {
        if group.is_empty() != core {
            continue;
        }
        let resources: Vec<Value> = registry
            .all()
            .iter()
            .filter(|r| r.group == group && r.version == gv_version)
            .map(|r| aggregated_resource(r))
            .collect();
        let entry = json!({"version": gv_version, "resources": resources, "freshness": "Current"});
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, versions)) => versions.push(entry),
            None => groups.push((group, vec![entry])),
        }
    }
    let items: Vec<Value> = groups
        .into_iter()
        .map(|(name, versions)| json!({"metadata": {"name": name}, "versions": versions}))
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {},
        "items": items,
    })
}

fn aggregated_resource(r: &ResourceInfo) -> Value {
    let subresources: Vec<Value> = r
        .subresources
        .iter()
        .map(|s| {
            let (group, version, kind) = sub_kind(r, *s);
            json!({
                "subresource": s.as_str(),
                "responseKind": {"group": group, "version": version, "kind": kind},
                "verbs": sub_verbs(*s),
            })
        })
        .collect();
    let mut v = json!({
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs(),
    });
    if !r.short_names.is_empty() {
        v["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        v["categories"] = json!(r.categories);
    }
    if !subresources.is_empty() {
        v["subresources"] = json!(subresources);
    }
    v
}

/// Group, version and kind of a subresource's responses.
fn sub_kind(r: &ResourceInfo, s: Subresource) -> (String, String, String) {
    match s {
        Subresource::Scale => ("autoscaling".into(), "v1".into(), "Scale".into()),
        Subresource::Binding => ("".into(), "v1".into(), "Binding".into()),
        Subresource::Log => ("".into(), "v1".into(), "Pod".into()),
        Subresource::Status | Subresource::EphemeralContainers | Subresource::Approval => {
            (r.group.clone(), r.version.clone(), r.kind.clone())
        }
        Subresource::Eviction => ("policy".into(), "v1".into(), "Eviction".into()),
        Subresource::Token => ("authentication.k8s.io".into(), "v1".into(), "TokenRequest".into()),
    }
}

fn sub_verbs(s: Subresource) -> Vec<&'static str> {
    match s {
        Subresource::Status
        | Subresource::Scale
        | Subresource::EphemeralContainers
        | Subresource::Approval => vec!["get", "patch", "update"],
        Subresource::Binding | Subresource::Eviction | Subresource::Token => vec!["create"],
        Subresource::Log => vec!["get"],
    }
}

/// Legacy `/api`: `APIVersions`.
pub fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

/// Legacy `/apis`: `APIGroupList`, one entry per group, in discovery order.
pub fn api_group_list(registry: &Registry) -> Value {
    let mut names: Vec<String> = Vec::new();
    for (g, _) in registry.group_versions() {
        if !g.is_empty() && !names.contains(&g) {
            names.push(g);
        }
    }
    let groups: Vec<Value> = names.iter().filter_map(|g| api_group(registry, g)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// Legacy `/apis/<group>`: `APIGroup`, its versions by priority, the first
/// preferred; `None` when the group is not served.
pub fn api_group(registry: &Registry, group: &str) -> Option<Value> {
    let versions: Vec<Value> = registry
        .group_versions()
        .into_iter()
        .filter(|(g, _)| g == group)
        .map(|(_, v)| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    let preferred = versions.first()?.clone();
    Some(
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions, "preferredVersion": preferred}),
    )
}

/// Legacy `/api/v1` or `/apis/<group>/<version>`: `APIResourceList`, or
/// None when the group-version is not served.
pub fn api_resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let served: Vec<_> = registry
        .all()
        .into_iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    if served.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for r in &served {
        let mut v = json!({
            "name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
            "kind": r.kind, "verbs": r.verbs(),
        });
        if !r.short_names.is_empty() {
            v["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            v["categories"] = json!(r.categories);
        }
        resources.push(v);
        for s in &r.subresources {
            let (g, ver, kind) = sub_kind(r, *s);
            let mut sub = json!({
                "name": format!("{}/{}", r.plural, s.as_str()), "singularName": "",
                "namespaced": r.namespaced, "kind": kind, "verbs": sub_verbs(*s),
            });
            if g != group || ver != version {
                sub["group"] = json!(g);
                sub["version"] = json!(ver);
            }
            resources.push(sub);
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregated_apps_group_has_what_kubectl_needs() {
        let doc = aggregated(&Registry::new(), false, "v2");
        let apps = doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["metadata"]["name"] == "apps")
            .unwrap();
        let deploy = apps["versions"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "deployments")
            .unwrap();
        assert_eq!(deploy["responseKind"]["kind"], "Deployment");
        assert_eq!(deploy["scope"], "Namespaced");
        assert_eq!(deploy["shortNames"], json!(["deploy"]));
        assert_eq!(deploy["categories"], json!(["all"]));
    }

    #[test]
    fn core_group_is_alone_in_api() {
        let doc = aggregated(&Registry::new(), true, "v2beta1");
        assert_eq!(doc["items"].as_array().unwrap().len(), 1);
        assert_eq!(doc["items"][0]["metadata"]["name"], "");
        assert_eq!(doc["apiVersion"], "apidiscovery.k8s.io/v2beta1");
    }
}
