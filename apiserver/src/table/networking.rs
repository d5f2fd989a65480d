//! The tables of networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy.
//!
//! Upstream: `ingressColumnDefinitions` / `printIngress` (with `formatHosts`,
//! `formatPorts`, `ingressLoadBalancerStatusStringer`),
//! `ingressClassColumnDefinitions` / `printIngressClass` and
//! `networkPolicyColumnDefinitioins` / `printNetworkPolicy` of
//! `pkg/printers/internalversion/printers.go`.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::helpers::{array, selector_at};
use super::{Row, TablePrinter, col};
use crate::jsonpath::str_at;

pub(super) static INGRESS: TablePrinter = TablePrinter::named(
    &[
        col("Class", "string", D_CLASS),
        col("Hosts", "string", D_HOSTS),
        col("Address", "string", D_ADDRESS),
        col("Ports", "string", D_PORTS),
    ],
    &[],
    print_ingress,
);
const D_CLASS: &str =
    "The name of the IngressClass resource that should be used for additional configuration";
const D_HOSTS: &str = "Hosts that incoming requests are matched against before the ingress rule";
const D_ADDRESS: &str = "Address is a list containing ingress points for the load-balancer";
const D_PORTS: &str = "Ports of TLS configurations that open";

pub(super) static INGRESS_CLASS: TablePrinter = TablePrinter::named(
    &[
        col("Controller", "string", D_CONTROLLER),
        col("Parameters", "string", D_PARAMETERS),
    ],
    &[],
    print_ingress_class,
);
const D_CONTROLLER: &str = "Controller that is responsible for handling this class";
const D_PARAMETERS: &str = "A reference to a resource with additional parameters";

pub(super) static NETWORK_POLICY: TablePrinter =
    TablePrinter::named(&[col("Pod-Selector", "string", D_POD_SELECTOR)], &[], |r| {
        r.named([selector_at(r.obj, &["spec", "podSelector"])], [])
    });
const D_POD_SELECTOR: &str = "podSelector selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.";

/// The widest Address cell before it is clipped (upstream `loadBalancerWidth`).
const LOAD_BALANCER_WIDTH: usize = 16;

fn print_ingress(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let class = obj
        .pointer("/spec/ingressClassName")
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let ports = if array(obj.pointer("/spec/tls")).is_empty() {
        "80"
    } else {
        "80, 443"
    };
    r.named(
        [
            json!(class),
            json!(format_hosts(array(obj.pointer("/spec/rules")))),
            json!(load_balancer_address(obj)),
            json!(ports),
        ],
        [],
    )
}

/// `formatHosts`: the hosts of the rules until three are listed, `*` when
/// no rule names one, and `+ N more...` (N counts rules, not hosts) when a
/// rule comes after the third host.
fn format_hosts(rules: &[Value]) -> String {
    const MAX: usize = 3;
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == MAX {
            more = true;
            break;
        }
        let host = str_at(rule, &["host"]);
        if !host.is_empty() {
            hosts.push(host);
        }
    }
    if hosts.is_empty() {
        return "*".to_string();
    }
    let shown = hosts.join(",");
    if more {
        format!("{shown} + {} more...", rules.len() - MAX)
    } else {
        shown
    }
}

/// `ingressLoadBalancerStatusStringer` (not wide): the IPs or hostnames,
/// sorted and unique, clipped to 16 bytes.
fn load_balancer_address(obj: &Value) -> String {
    let addresses: BTreeSet<&str> = array(obj.pointer("/status/loadBalancer/ingress"))
        .iter()
        .filter_map(|i| {
            let ip = str_at(i, &["ip"]);
            let host = str_at(i, &["hostname"]);
            [ip, host].into_iter().find(|s| !s.is_empty())
        })
        .collect();
    let joined = addresses.into_iter().collect::<Vec<_>>().join(",");
    if joined.len() > LOAD_BALANCER_WIDTH {
        format!("{}...", &joined[..LOAD_BALANCER_WIDTH - 3])
    } else {
        joined
    }
}

fn print_ingress_class(r: &Row) -> Vec<Value> {
    let spec = r.obj.get("spec").unwrap_or(&Value::Null);
    let parameters = match spec.get("parameters").filter(|p| p.is_object()) {
        None => "<none>".to_string(),
        Some(p) => {
            let kind = str_at(p, &["kind"]);
            let group = p.get("apiGroup").and_then(Value::as_str);
            let kind = group.map_or_else(|| kind.to_string(), |g| format!("{kind}.{g}"));
            format!("{kind}/{}", str_at(p, &["name"]))
        }
    };
    r.named([json!(str_at(spec, &["controller"])), json!(parameters)], [])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells, names};

    #[test]
    fn ingress_rows() {
        assert_eq!(
            names(&INGRESS),
            ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
        );
        let ing = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(60)},
            "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.example.com"]}],
                "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}, {}, {"host": "d.example.com"}, {"host": "e.example.com"}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"}, {"ip": "10.0.0.1"}]}},
        });
        assert_eq!(
            cells(&INGRESS, &ing),
            json!([
                "web",
                "nginx",
                "a.example.com,b.example.com,d.example.com + 2 more...",
                "10.0.0.1,10.0...",
                "80, 443",
                "60s"
            ])
        );
        let bare = json!({"metadata": {"name": "b"}, "spec": {"defaultBackend": {}}});
        let c = cells(&INGRESS, &bare);
        assert_eq!(
            (c[1].clone(), c[2].clone(), c[3].clone(), c[4].clone()),
            (json!("<none>"), json!("*"), json!(""), json!("80"))
        );
    }

    #[test]
    fn ingress_class_rows() {
        assert_eq!(names(&INGRESS_CLASS), ["Name", "Controller", "Parameters", "Age"]);
        let ic = json!({"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}});
        let c = cells(&INGRESS_CLASS, &ic);
        assert_eq!(c[1], json!("k8s.io/ingress-nginx"));
        assert_eq!(c[2], json!("IngressParameters.k8s.example.com/external-lb"));
        let plain = json!({"metadata": {"name": "x"}, "spec": {"controller": "a.io/b"}});
        assert_eq!(cells(&INGRESS_CLASS, &plain)[2], json!("<none>"));
    }

    #[test]
    fn network_policy_rows() {
        assert_eq!(names(&NETWORK_POLICY), ["Name", "Pod-Selector", "Age"]);
        let np =
            json!({"metadata": {"name": "deny"}, "spec": {"podSelector": {"matchLabels": {"app": "web"}}}});
        assert_eq!(cells(&NETWORK_POLICY, &np)[1], json!("app=web"));
        let all = json!({"metadata": {"name": "all"}, "spec": {"podSelector": {}}});
        assert_eq!(cells(&NETWORK_POLICY, &all)[1], json!("<none>"));
    }
}
