//! `/metrics` in the Prometheus text format.
//!
//! - `apiserver_request_total{verb,resource,code}` and
//!   `apiserver_request_duration_seconds{verb,resource}` (upstream's names);
//! - `apiserver_longrunning_requests` — open watches;
//! - `miniplane_store_revision`, `miniplane_store_objects`,
//!   `miniplane_store_flushes_total` — read from the store at scrape time.

use std::sync::Arc;
use std::sync::atomic::AtomicI64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    verb: String,
    resource: String,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    verb: String,
    resource: String,
}

/// The server's metrics. Cheap to clone; every clone updates the same series.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Family<LatencyLabels, Histogram>,
    watches: Gauge<i64, AtomicI64>,
    revision: Gauge<i64, AtomicI64>,
    objects: Gauge<i64, AtomicI64>,
    flushes: Gauge<i64, AtomicI64>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every series.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<LatencyLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.0001, 2.0, 18))
        });
        let watches = Gauge::<i64, AtomicI64>::default();
        let revision = Gauge::<i64, AtomicI64>::default();
        let objects = Gauge::<i64, AtomicI64>::default();
        let flushes = Gauge::<i64, AtomicI64>::default();
        registry.register(
            "apiserver_request",
            "Requests by verb, resource and HTTP code",
            requests.clone(),
        );
        registry.register(
            "apiserver_request_duration_seconds",
            "Request latency by verb and resource",
            latency.clone(),
        );
        registry.register(
            "apiserver_longrunning_requests",
            "Open watch requests",
            watches.clone(),
        );
        registry.register(
            "miniplane_store_revision",
            "The store's current revision",
            revision.clone(),
        );
        registry.register("miniplane_store_objects", "Objects in the store", objects.clone());
        registry.register(
            "miniplane_store_flushes",
            "Disk flushes done by the store since start",
            flushes.clone(),
        );
        Metrics {
            registry: Arc::new(registry),
            requests,
            latency,
            watches,
            revision,
            objects,
            flushes,
        }
    }

    /// Records one finished request.
    pub fn observe(&self, verb: &str, resource: &str, code: u16, seconds: f64) {
        let (verb, resource) = (verb.to_string(), resource.to_string());
        self.requests
            .get_or_create(&RequestLabels {
                verb: verb.clone(),
                resource: resource.clone(),
                code: code.to_string(),
            })
            .inc();
        self.latency
            .get_or_create(&LatencyLabels { verb, resource })
            .observe(seconds);
    }

    /// Counts a watch as open until the guard is dropped.
    pub fn watch_opened(&self) -> WatchGuard {
        self.watches.inc();
        WatchGuard {
            gauge: self.watches.clone(),
        }
    }

    /// The text exposition, with the store gauges refreshed.
    pub fn render(&self, stats: &store::Stats) -> String {
        self.revision.set(stats.revision as i64);
        self.objects.set(stats.object_count as i64);
        self.flushes.set(stats.flushes as i64);
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

/// Decrements the open-watches gauge when dropped (when the stream ends).
pub struct WatchGuard {
    gauge: Gauge<i64, AtomicI64>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// The request's verb and resource for the metric labels (upstream's
/// `RequestInfo`, roughly): `get`/`list`/`watch`/`create`/...
pub fn classify(method: &str, path: &str, query: &str) -> (String, String) {
    let info = request_info(method, path, query);
    (info.verb, info.resource)
}

/// What a request does, read from its method and URL alone (upstream's
/// `RequestInfo`, roughly; the in-flight limit and the metrics use it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestInfo {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`, `other`; for a non-resource path (`/healthz`,
    /// `/apis`) the method in lower case.
    pub verb: String,
    /// The resource (`pods`); empty for a non-resource path.
    pub resource: String,
    /// The subresource (`status`, `log`); empty for none.
    pub subresource: String,
}

/// Reads a [`RequestInfo`] off the method, path and raw query.
pub fn request_info(method: &str, path: &str, query: &str) -> RequestInfo {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest: &[&str] = match segs.as_slice() {
        ["api", _v, rest @ ..] => rest,
        ["apis", _g, _v, rest @ ..] => rest,
        _ => {
            return RequestInfo {
                verb: method.to_ascii_lowercase(),
                resource: String::new(),
                subresource: String::new(),
            };
        }
    };
    // The deprecated `/watch/` paths are watches, of a list or of one object.
    let (rest, watch_path) = match rest {
        ["watch", rest @ ..] => (rest, true),
        rest => (rest, false),
    };
    let rest = match rest {
        ["namespaces", _ns, r, tail @ ..] if !matches!(*r, "status" | "finalize") => {
            let mut v = vec![*r];
            v.extend_from_slice(tail);
            v
        }
        other => other.to_vec(),
    };
    let resource = rest.first().copied().unwrap_or("").to_string();
    let subresource = rest.get(2).copied().unwrap_or("").to_string();
    let has_name = rest.len() > 1;
    let watch = query.split('&').any(|kv| kv == "watch=true" || kv == "watch=1");
    let verb = match (method, has_name) {
        ("GET", _) if watch_path => "watch",
        ("GET", false) if watch => "watch",
        ("GET", false) => "list",
        ("GET", true) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", false) => "deletecollection",
        ("DELETE", true) => "delete",
        _ => "other",
    };
    RequestInfo {
        verb: verb.to_string(),
        resource,
        subresource,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_resource_requests() {
        assert_eq!(
            classify("GET", "/api/v1/namespaces/default/pods", "watch=true"),
            ("watch".into(), "pods".into())
        );
        assert_eq!(
            classify("GET", "/apis/apps/v1/namespaces/d/deployments/web", ""),
            ("get".into(), "deployments".into())
        );
        assert_eq!(
            classify("DELETE", "/api/v1/nodes/n1", ""),
            ("delete".into(), "nodes".into())
        );
        assert_eq!(
            classify("GET", "/api/v1/watch/namespaces/d/configmaps/a", ""),
            ("watch".into(), "configmaps".into())
        );
        assert_eq!(
            classify("GET", "/apis/apps/v1/watch/deployments", ""),
            ("watch".into(), "deployments".into())
        );
    }

    #[test]
    fn reads_subresources() {
        let sub = |path: &str| request_info("GET", path, "").subresource;
        assert_eq!(sub("/api/v1/namespaces/d/pods/web-1/log"), "log");
        assert_eq!(sub("/apis/apps/v1/namespaces/d/deployments/web/scale"), "scale");
        assert_eq!(sub("/api/v1/namespaces/d/status"), "status");
        assert_eq!(sub("/api/v1/nodes/n1/status"), "status");
        // A ConfigMap named `log` is no subresource.
        assert_eq!(sub("/api/v1/namespaces/d/configmaps/log"), "");
        assert_eq!(sub("/healthz"), "");
    }
}
