//! Subresources that are views of their parent: `scale`, `binding`, `log`,
//! and the Service cluster IP allocation.
//!
//! Upstream: `pkg/registry/apps/deployment/storage/storage.go` (ScaleREST),
//! `pkg/registry/core/pod/storage/storage.go` (BindingREST, LogREST),
//! `pkg/registry/core/service/ipallocator`. The status subresource needs no
//! view: it is the object itself, with the strategy keeping the spec.

use serde_json::{Value, json};

use super::ids::Ids;
use super::{Api, obj};
use crate::error::{ApiError, ApiResult, FieldError, Reason};
use crate::kinds::core::KUBERNETES_SERVICE_IP;
use crate::registry::{ResourceInfo, Subresource};

/// The `autoscaling/v1` Scale of a workload.
pub fn scale_of(info: &ResourceInfo, o: &Value) -> ApiResult<Value> {
    if !info.has(Subresource::Scale) {
        return Err(ApiError::new(
            Reason::NotFound,
            "the server could not find the requested resource",
        ));
    }
    let meta = o.get("metadata").cloned().unwrap_or_default();
    let (spec_replicas, status_replicas, selector) = match custom_scale(info) {
        Some(paths) => super::custom_writes::scale_fields(paths, o),
        None => (
            o.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1),
            o.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0),
            o.pointer("/spec/selector")
                .map(crate::labels::label_selector_string)
                .unwrap_or_default(),
        ),
    };
    Ok(json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
            "creationTimestamp": meta.get("creationTimestamp"),
        },
        "spec": {"replicas": spec_replicas},
        "status": {"replicas": status_replicas, "selector": selector},
    }))
}

/// The scale subresource a custom resource's version declares.
fn custom_scale(
    info: &ResourceInfo,
) -> Option<&k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceSubresourceScale>
{
    info.custom
        .as_ref()?
        .version
        .subresources
        .as_ref()?
        .scale
        .as_ref()
}

/// The parent object with `spec.replicas` taken from a (patched or sent) Scale.
pub fn with_scale(info: &ResourceInfo, parent: &Value, scale: &Value) -> ApiResult<Value> {
    let replicas = scale.pointer("/spec/replicas").cloned().unwrap_or(Value::Null);
    let Some(n) = replicas.as_i64() else {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            obj::name(parent),
            &[FieldError::invalid(
                "spec.replicas",
                replicas,
                "must be an integer",
            )],
        ));
    };
    if n < 0 {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            obj::name(parent),
            &[FieldError::invalid(
                "spec.replicas",
                json!(n),
                "must be greater than or equal to 0",
            )],
        ));
    }
    let mut new = parent.clone();
    match custom_scale(info) {
        Some(paths) => super::custom_writes::set_path(&mut new, &paths.spec_replicas_path, json!(n)),
        None => new["spec"]["replicas"] = json!(n),
    }
    if let Some(rv) = scale.pointer("/metadata/resourceVersion").and_then(Value::as_str) {
        obj::meta_mut(&mut new).insert("resourceVersion".into(), json!(rv));
    }
    Ok(new)
}

/// Gives a new Service a cluster IP from 10.96.0.0/12 unless it is headless
/// (`None`), an ExternalName, or already has one; the address is drawn from
/// `ids`, and never is the `default/kubernetes` Service's
/// ([`KUBERNETES_SERVICE_IP`], which that Service asks for by name).
pub(crate) fn allocate_cluster_ip(svc: &mut Value, ids: &Ids) {
    let kind = svc
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let given = svc
        .pointer("/spec/clusterIP")
        .and_then(Value::as_str)
        .unwrap_or("");
    if kind == "ExternalName" || !given.is_empty() {
        if !given.is_empty() && svc.pointer("/spec/clusterIPs").is_none() {
            svc["spec"]["clusterIPs"] = json!([given]);
        }
        return;
    }
    let ip = draw_cluster_ip(|| ids.bytes());
    if let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("clusterIP".into(), json!(ip));
        spec.insert("clusterIPs".into(), json!([ip]));
    }
}

/// A cluster IP from 10.96.0.0/12 made of random bytes from `next`, drawn
/// again while it is [`KUBERNETES_SERVICE_IP`].
fn draw_cluster_ip(mut next: impl FnMut() -> [u8; 3]) -> String {
    loop {
        let b = next();
        // The second octet is 96..=111; skip .0 and .255 hosts.
        let ip = format!("10.{}.{}.{}", 96 + (b[0] % 16), b[1], 1 + (b[2] % 254));
        if ip != KUBERNETES_SERVICE_IP {
            return ip;
        }
    }
}

impl Api {
    /// `GET .../scale`.
    pub fn get_scale(&self, info: &ResourceInfo, namespace: Option<&str>, name: &str) -> ApiResult<Value> {
        scale_of(info, &self.get(info, namespace, name)?)
    }

    /// `PUT .../scale`: writes `spec.replicas`; a resourceVersion in the Scale
    /// is a precondition.
    pub async fn update_scale(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        scale: &Value,
        opts: &super::WriteOptions,
    ) -> ApiResult<Value> {
        let parent = self.get(info, namespace, name)?;
        let new = with_scale(info, &parent, scale)?;
        let written = self
            .update(info, namespace, name, new, Some(Subresource::Scale), opts)
            .await?;
        scale_of(info, &written.object)
    }

    /// `POST pods/<name>/binding`: sets `spec.nodeName` once.
    pub async fn bind(
        &self,
        namespace: &str,
        pod: &str,
        binding: &Value,
        opts: &super::WriteOptions,
    ) -> ApiResult<()> {
        let info = self.resource("", "v1", "pods")?;
        let node = binding
            .pointer("/target/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if node.is_empty() {
            return Err(ApiError::invalid(
                "",
                "Binding",
                pod,
                &[FieldError::required("target.name", "")],
            ));
        }
        let live = self.get(&info, Some(namespace), pod)?;
        if let Some(current) = live
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            return Err(ApiError::conflict(
                "",
                "pods",
                pod,
                &format!("pod {pod} is already assigned to node \"{current}\""),
            ));
        }
        let mut new = live;
        new["spec"]["nodeName"] = json!(node);
        set_condition(
            &mut new,
            json!({
                "type": "PodScheduled", "status": "True", "lastProbeTime": null,
                "lastTransitionTime": self.now_rfc3339(),
            }),
        );
        self.update(&info, Some(namespace), pod, new, Some(Subresource::Binding), opts)
            .await?;
        Ok(())
    }
}

/// The log of a pod's container, as text. Until a kubelet writes real logs,
/// the lines are derived from the container's status.
pub fn synthetic_log(pod: &Value, container: &str) -> ApiResult<String> {
    let name = obj::name(pod);
    let containers = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(spec) = containers
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(container))
    else {
        return Err(ApiError::bad_request(format!(
            "container {container} is not valid for pod {name}"
        )));
    };
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    let status = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .and_then(|s| {
            s.iter()
                .find(|c| c.get("name").and_then(Value::as_str) == Some(container))
                .cloned()
        });
    let Some(started) = status
        .as_ref()
        .and_then(|s| s.pointer("/state/running/startedAt"))
        .and_then(Value::as_str)
    else {
        return Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: ContainerCreating"
        )));
    };
    let image = spec.get("image").and_then(Value::as_str).unwrap_or("");
    Ok(format!(
        "{started} container {container} started from image {image} on node {node}\n"
    ))
}

/// Adds or replaces a condition in `status.conditions` by type.
fn set_condition(o: &mut Value, condition: Value) {
    if !o.get("status").is_some_and(Value::is_object) {
        o["status"] = json!({});
    }
    let t = condition.get("type").cloned();
    let list = o["status"]
        .as_object_mut()
        .expect("status was just made an object")
        .entry("conditions")
        .or_insert_with(|| json!([]));
    if let Some(items) = list.as_array_mut() {
        items.retain(|c| c.get("type") != t.as_ref());
        items.push(condition);
    }
}

/// Options of `GET pods/NAME/log`.
#[derive(Clone, Debug, Default)]
pub struct LogOptions {
    /// `previous=true`: the last terminated instance.
    pub previous: bool,
    /// `tailLines=N`.
    pub tail_lines: Option<usize>,
    /// `timestamps=true`: each line starts with its RFC 3339 time.
    pub timestamps: bool,
}

impl Api {
    /// The log of one container as text: from the kubelet's log source when
    /// one is registered, else lines derived from the container's status.
    pub fn pod_log(&self, pod: &Value, container: &str, opts: &LogOptions) -> ApiResult<String> {
        let Some(source) = self.log_source() else {
            return synthetic_log(pod, container);
        };
        let containers = pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !containers
            .iter()
            .any(|c| c.get("name").and_then(Value::as_str) == Some(container))
        {
            let name = obj::name(pod);
            return Err(ApiError::bad_request(format!(
                "container {container} is not valid for pod {name}"
            )));
        }
        let lines = source(pod, container, opts.previous, self.clock().now());
        Ok(log_text(&lines, opts))
    }
}

/// Joins log lines as `kubectl logs` prints them.
pub fn log_text(lines: &[(String, String)], opts: &LogOptions) -> String {
    let skip = opts.tail_lines.map_or(0, |n| lines.len().saturating_sub(n));
    let mut out = String::new();
    for (time, line) in &lines[skip..] {
        if opts.timestamps {
            out.push_str(time);
            out.push(' ');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubernetes_service_ip_is_never_drawn() {
        // [0, 0, 0] makes 10.96.0.1: drawn again.
        let mut draws = vec![[1, 2, 3], [0, 0, 0]];
        assert_eq!(draw_cluster_ip(|| draws.pop().unwrap()), "10.97.2.4");
        assert!(draws.is_empty());
    }

    #[test]
    fn a_service_asking_for_no_ip_gets_one_and_others_keep_theirs() {
        let ids = Ids::new(7, 0);
        let mut svc = json!({"spec": {"type": "ClusterIP"}});
        allocate_cluster_ip(&mut svc, &ids);
        let ip = svc["spec"]["clusterIP"].as_str().unwrap().to_string();
        assert!(ip.starts_with("10.") && ip != KUBERNETES_SERVICE_IP, "{ip}");
        assert_eq!(svc["spec"]["clusterIPs"], json!([ip]));
        let mut given = json!({"spec": {"clusterIP": KUBERNETES_SERVICE_IP}});
        allocate_cluster_ip(&mut given, &ids);
        assert_eq!(given["spec"]["clusterIPs"], json!([KUBERNETES_SERVICE_IP]));
        let mut headless = json!({"spec": {"clusterIP": "None"}});
        allocate_cluster_ip(&mut headless, &ids);
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    }
}
