//! Tables of the core/v1 kinds other than Pod and Event: Node, Namespace,
//! Service, Endpoints, ConfigMap, Secret, ServiceAccount.
//!
//! Upstream: the `*ColumnDefinitions` and `printNode`, `printNamespace`,
//! `printService`, `printEndpoints`, `printConfigMap`, `printSecret`,
//! `printServiceAccount` of `pkg/printers/internalversion/printers.go`.
//! Simplified: the v1 -> internal conversions these printers depend on are
//! done by hand (a service's `clusterIPs[0]` falls back to `clusterIP`; a
//! secret's `stringData` keys join its `data` keys).

use serde_json::{Value, json};

use super::helpers::{array, array_len, conditions, map_len, or_none, strings};
use super::{Column, Row, TablePrinter, col, wide};
use crate::jsonpath::{at, bool_at, int_at, str_at};
use crate::labels::format_labels;

// ---------------------------------------------------------------------------
// Node
// ---------------------------------------------------------------------------

pub(super) static NODE: TablePrinter = TablePrinter::named(
    &[
        col("Status", "string", "The status of the node"),
        col("Roles", "string", "The roles of the node"),
    ],
    &[
        col("Version", "string", "Kubelet Version reported by the node."),
        ADDRESSES[0].0,
        ADDRESSES[1].0,
        NODE_INFO[0].0,
        NODE_INFO[1].0,
        NODE_INFO[2].0,
    ],
    print_node,
);

/// The wide address columns and the address type each shows.
const ADDRESSES: [(Column, &str); 2] = [
    (wide("Internal-IP", "string", D_ADDRESSES), "InternalIP"),
    (wide("External-IP", "string", D_ADDRESSES), "ExternalIP"),
];

/// The wide `status.nodeInfo` columns and the field each shows.
const NODE_INFO: [(Column, &str); 3] = [
    (wide("OS-Image", "string", D_OS_IMAGE), "osImage"),
    (wide("Kernel-Version", "string", D_KERNEL), "kernelVersion"),
    (
        wide("Container-Runtime", "string", D_RUNTIME),
        "containerRuntimeVersion",
    ),
];

const D_ADDRESSES: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";
const D_OS_IMAGE: &str =
    "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).";
const D_KERNEL: &str = "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).";
const D_RUNTIME: &str =
    "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).";

fn print_node(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let kubelet = json!(str_at(obj, &["status", "nodeInfo", "kubeletVersion"]));
    let addresses = ADDRESSES.map(|(_, ty)| json!(node_address(obj, ty)));
    let info = NODE_INFO.map(|(_, field)| {
        let v = str_at(obj, &["status", "nodeInfo", field]);
        json!(if v.is_empty() { "<unknown>" } else { v })
    });
    let after_age = [kubelet].into_iter().chain(addresses).chain(info);
    r.named([json!(node_status(obj)), json!(node_roles(obj))], after_age)
}

fn node_status(obj: &Value) -> String {
    // The last Ready condition wins, as upstream builds a map by type.
    let ready = conditions(obj)
        .iter()
        .rev()
        .find(|c| str_at(c, &["type"]) == "Ready");
    let mut status = match ready {
        Some(c) if str_at(c, &["status"]) == "True" => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if bool_at(obj, &["spec", "unschedulable"]) {
        status.push_str(",SchedulingDisabled");
    }
    status
}

fn node_roles(obj: &Value) -> String {
    let mut roles: Vec<&str> = Vec::new();
    for (key, value) in obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let role = if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
            role
        } else if key == "kubernetes.io/role" {
            value.as_str().unwrap_or_default()
        } else {
            continue;
        };
        if !role.is_empty() && !roles.contains(&role) {
            roles.push(role);
        }
    }
    roles.sort_unstable();
    if roles.is_empty() {
        "<none>".to_string()
    } else {
        roles.join(",")
    }
}

fn node_address(obj: &Value, ty: &str) -> String {
    array(obj.pointer("/status/addresses"))
        .iter()
        .find(|a| str_at(a, &["type"]) == ty)
        .map(|a| str_at(a, &["address"]).to_string())
        .unwrap_or_else(|| "<none>".to_string())
}

// ---------------------------------------------------------------------------
// Namespace, ConfigMap, Secret, ServiceAccount
// ---------------------------------------------------------------------------

pub(super) static NAMESPACE: TablePrinter = TablePrinter::named(
    &[col("Status", "string", "The status of the namespace")],
    &[],
    |r| r.named([json!(str_at(r.obj, &["status", "phase"]))], []),
);

pub(super) static CONFIG_MAP: TablePrinter =
    TablePrinter::named(&[col("Data", "string", D_CM_DATA)], &[], |r| {
        r.named(
            [json!(
                map_len(r.obj.get("data")) + map_len(r.obj.get("binaryData"))
            )],
            [],
        )
    });
const D_CM_DATA: &str = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";

pub(super) static SECRET: TablePrinter = TablePrinter::named(
    &[
        col("Type", "string", D_SECRET_TYPE),
        col("Data", "string", D_SECRET_DATA),
    ],
    &[],
    print_secret,
);
const D_SECRET_TYPE: &str = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
const D_SECRET_DATA: &str = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";

fn print_secret(r: &Row) -> Vec<Value> {
    // stringData is merged into data by the v1 -> internal conversion.
    let mut keys: Vec<&String> = Vec::new();
    for field in ["data", "stringData"] {
        for k in r
            .obj
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    r.named([json!(str_at(r.obj, &["type"])), json!(keys.len())], [])
}

pub(super) static SERVICE_ACCOUNT: TablePrinter =
    TablePrinter::named(&[col("Secrets", "string", D_SA_SECRETS)], &[], |r| {
        r.named([json!(array_len(r.obj.get("secrets")))], [])
    });
const D_SA_SECRETS: &str = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret";

// ---------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------

pub(super) static SERVICE: TablePrinter = TablePrinter::named(
    &[
        col("Type", "string", D_SVC_TYPE),
        col("Cluster-IP", "string", D_SVC_CLUSTER_IP),
        col("External-IP", "string", D_SVC_EXTERNAL_IPS),
        col("Port(s)", "string", D_SVC_PORTS),
    ],
    &[wide("Selector", "string", D_SVC_SELECTOR)],
    print_service,
);
const D_SVC_TYPE: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const D_SVC_CLUSTER_IP: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_EXTERNAL_IPS: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const D_SVC_PORTS: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_SELECTOR: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";

fn print_service(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let ports: Vec<String> = array(obj.pointer("/spec/ports"))
        .iter()
        .map(service_port)
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    let selector = at(obj, &["spec", "selector"]).and_then(Value::as_object);
    r.named(
        [
            json!(str_at(obj, &["spec", "type"])),
            json!(service_cluster_ip(obj)),
            json!(service_external_ip(obj)),
            json!(ports),
        ],
        [json!(format_labels(selector))],
    )
}

fn service_port(port: &Value) -> String {
    let number = int_at(port, &["port"]);
    let protocol = str_at(port, &["protocol"]);
    match int_at(port, &["nodePort"]) {
        n if n > 0 => format!("{number}:{n}/{protocol}"),
        _ => format!("{number}/{protocol}"),
    }
}

/// `spec.clusterIPs[0]`, falling back to `spec.clusterIP` as the v1 conversion does.
fn service_cluster_ip(obj: &Value) -> String {
    let first = obj
        .pointer("/spec/clusterIPs/0")
        .and_then(Value::as_str)
        .unwrap_or("");
    let ip = if first.is_empty() {
        str_at(obj, &["spec", "clusterIP"])
    } else {
        first
    };
    or_none(ip.to_string())
}

fn service_external_ip(obj: &Value) -> String {
    let external: Vec<&str> = strings(obj.pointer("/spec/externalIPs"));
    match str_at(obj, &["spec", "type"]) {
        "ClusterIP" | "NodePort" if !external.is_empty() => external.join(","),
        "ClusterIP" | "NodePort" => "<none>".to_string(),
        "LoadBalancer" => {
            let mut all = load_balancer_ingress(obj);
            all.extend(external.iter().map(|s| s.to_string()));
            if all.is_empty() {
                "<pending>".to_string()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => str_at(obj, &["spec", "externalName"]).to_string(),
        _ => "<unknown>".to_string(),
    }
}

/// Ingress IPs (or hostnames when the IP is empty), deduplicated and sorted.
fn load_balancer_ingress(obj: &Value) -> Vec<String> {
    let mut out: Vec<String> = array(obj.pointer("/status/loadBalancer/ingress"))
        .iter()
        .map(|i| {
            let ip = str_at(i, &["ip"]);
            if ip.is_empty() {
                str_at(i, &["hostname"])
            } else {
                ip
            }
        })
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

// ---------------------------------------------------------------------------
// Endpoints
// ---------------------------------------------------------------------------

pub(super) static ENDPOINTS: TablePrinter =
    TablePrinter::named(&[col("Endpoints", "string", D_EP_SUBSETS)], &[], |r| {
        r.named([json!(format_endpoints(r.obj))], [])
    });
const D_EP_SUBSETS: &str = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.";

/// `formatEndpoints`: the first three `ip:port` pairs and `+ N more...`.
fn format_endpoints(obj: &Value) -> String {
    const MAX: usize = 3;
    let subsets = array(obj.get("subsets"));
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    let mut list: Vec<String> = Vec::new();
    let mut count = 0;
    for subset in subsets {
        let ips: Vec<&str> = array(subset.get("addresses"))
            .iter()
            .map(|a| str_at(a, &["ip"]))
            .collect();
        let ports = array(subset.get("ports"));
        let entries: Vec<String> = if ports.is_empty() {
            ips.iter().map(|ip| ip.to_string()).collect()
        } else {
            ports
                .iter()
                .flat_map(|p| ips.iter().map(move |ip| join_host_port(ip, int_at(p, &["port"]))))
                .collect()
        };
        count += entries.len();
        list.extend(entries.into_iter().take(MAX.saturating_sub(list.len())));
    }
    let joined = list.join(",");
    if count > MAX {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells};

    #[test]
    fn node_rows() {
        let node = json!({
            "metadata": {"name": "node-1", "creationTimestamp": ago(86400 * 3),
                "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x",
                           "kubernetes.io/role": "worker", "kubernetes.io/hostname": "node-1"}},
            "spec": {"unschedulable": true},
            "status": {
                "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}, {"type": "Hostname", "address": "node-1"}],
                "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian", "kernelVersion": "",
                             "containerRuntimeVersion": "containerd://2.0"}
            }
        });
        assert_eq!(
            cells(&NODE, &node),
            json!([
                "node-1",
                "Ready,SchedulingDisabled",
                "control-plane,worker",
                "3d",
                "v1.33.0",
                "172.18.0.2",
                "<none>",
                "Debian",
                "<unknown>",
                "containerd://2.0"
            ])
        );
        let bare = json!({"metadata": {"name": "n"}, "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}});
        let c = cells(&NODE, &bare);
        assert_eq!(c[1], json!("NotReady"));
        assert_eq!(c[2], json!("<none>"));
        assert_eq!(
            cells(&NODE, &json!({"metadata": {"name": "n"}}))[1],
            json!("Unknown")
        );
    }

    #[test]
    fn namespace_configmap_secret_sa() {
        let ns = json!({"metadata": {"name": "default", "creationTimestamp": ago(30)}, "status": {"phase": "Active"}});
        assert_eq!(cells(&NAMESPACE, &ns), json!(["default", "Active", "30s"]));
        let cm =
            json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
        assert_eq!(cells(&CONFIG_MAP, &cm)[1], json!(3));
        let secret = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "eA=="}, "stringData": {"a": "x", "b": "y"}});
        assert_eq!(cells(&SECRET, &secret), json!(["s", "Opaque", 2, "<unknown>"]));
        let sa = json!({"metadata": {"name": "default"}});
        assert_eq!(cells(&SERVICE_ACCOUNT, &sa)[1], json!(0));
    }

    #[test]
    fn service_rows() {
        let svc = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(10)},
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                     "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
                     "selector": {"app": "web"}}
        });
        assert_eq!(
            cells(&SERVICE, &svc),
            json!([
                "web",
                "ClusterIP",
                "10.96.0.10",
                "<none>",
                "80/TCP,53/UDP",
                "10s",
                "app=web"
            ])
        );
        let np = json!({"metadata": {"name": "np"}, "spec": {"type": "NodePort", "clusterIP": "10.96.0.11",
            "externalIPs": ["1.2.3.4"], "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}});
        let c = cells(&SERVICE, &np);
        assert_eq!(
            (c[2].clone(), c[3].clone(), c[4].clone()),
            (json!("10.96.0.11"), json!("1.2.3.4"), json!("80:30080/TCP"))
        );
        assert_eq!(c[6], json!("<none>"));
        let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "clusterIPs": ["10.96.0.12"]},
            "status": {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "a.example.com"}, {"ip": "1.1.1.1"}, {"ip": "5.6.7.8"}]}}});
        let c = cells(&SERVICE, &lb);
        assert_eq!(c[3], json!("1.1.1.1,5.6.7.8,a.example.com"));
        assert_eq!(c[4], json!("<none>"));
        let pending =
            json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "externalIPs": []}});
        assert_eq!(cells(&SERVICE, &pending)[3], json!("<pending>"));
        let headless = json!({"metadata": {"name": "h"}, "spec": {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}});
        assert_eq!(cells(&SERVICE, &headless)[2], json!("None"));
        let ext = json!({"metadata": {"name": "e"}, "spec": {"type": "ExternalName", "externalName": "example.com"}});
        let c = cells(&SERVICE, &ext);
        assert_eq!(
            (c[2].clone(), c[3].clone()),
            (json!("<none>"), json!("example.com"))
        );
    }

    #[test]
    fn endpoints_rows() {
        let ep = |subsets: Value| json!({"metadata": {"name": "web"}, "subsets": subsets});
        assert_eq!(
            cells(&ENDPOINTS, &json!({"metadata": {"name": "x"}}))[1],
            json!("<none>")
        );
        let one =
            ep(json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}], "ports": [{"port": 80}]}]));
        assert_eq!(cells(&ENDPOINTS, &one)[1], json!("10.0.0.1:80,[fd00::1]:80"));
        let many = ep(
            json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]}]),
        );
        assert_eq!(
            cells(&ENDPOINTS, &many)[1],
            json!("10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...")
        );
        let no_ports = ep(json!([{"addresses": [{"ip": "10.0.0.1"}]}]));
        assert_eq!(cells(&ENDPOINTS, &no_ports)[1], json!("10.0.0.1"));
        let not_ready = ep(json!([{"notReadyAddresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]));
        assert_eq!(cells(&ENDPOINTS, &not_ready)[1], json!(""));
    }
}
