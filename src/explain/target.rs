//! Which object to explain: `KIND/NAME` or `KIND NAME` with `-n NAMESPACE`, read as kubectl reads
//! them (plural, singular or short names, any case, an optional `.group` suffix).

use std::fmt;

/// The object to explain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The kind as the API names it (`Deployment`).
    pub kind: String,
    /// The resource as kubectl prints it (`deployment`).
    pub resource: String,
    /// Empty for a cluster-scoped kind.
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.namespace.as_str() {
            "" => write!(f, "{} {}", self.resource, self.name),
            ns => write!(f, "{} {ns}/{}", self.resource, self.name),
        }
    }
}

/// One kind kubectl knows by several names: (kind, namespaced, names: singular first).
const KINDS: &[(&str, bool, &[&str])] = &[
    ("Pod", true, &["pod", "pods", "po"]),
    ("Deployment", true, &["deployment", "deployments", "deploy"]),
    ("ReplicaSet", true, &["replicaset", "replicasets", "rs"]),
    ("StatefulSet", true, &["statefulset", "statefulsets", "sts"]),
    ("DaemonSet", true, &["daemonset", "daemonsets", "ds"]),
    ("Job", true, &["job", "jobs"]),
    ("CronJob", true, &["cronjob", "cronjobs", "cj"]),
    ("Service", true, &["service", "services", "svc"]),
    ("Endpoints", true, &["endpoints", "ep"]),
    ("EndpointSlice", true, &["endpointslice", "endpointslices"]),
    ("ConfigMap", true, &["configmap", "configmaps", "cm"]),
    ("Secret", true, &["secret", "secrets"]),
    (
        "ServiceAccount",
        true,
        &["serviceaccount", "serviceaccounts", "sa"],
    ),
    (
        "PersistentVolumeClaim",
        true,
        &["persistentvolumeclaim", "persistentvolumeclaims", "pvc"],
    ),
    (
        "PersistentVolume",
        false,
        &["persistentvolume", "persistentvolumes", "pv"],
    ),
    (
        "ControllerRevision",
        true,
        &["controllerrevision", "controllerrevisions"],
    ),
    (
        "HorizontalPodAutoscaler",
        true,
        &["horizontalpodautoscaler", "horizontalpodautoscalers", "hpa"],
    ),
    (
        "PodDisruptionBudget",
        true,
        &["poddisruptionbudget", "poddisruptionbudgets", "pdb"],
    ),
    (
        "ResourceQuota",
        true,
        &["resourcequota", "resourcequotas", "quota"],
    ),
    ("Event", true, &["event", "events", "ev"]),
    ("Canary", true, &["canary", "canaries"]),
    ("Node", false, &["node", "nodes", "no"]),
    ("Namespace", false, &["namespace", "namespaces", "ns"]),
    ("Lease", true, &["lease", "leases"]),
];

/// Reads `args` (`["deploy/web"]` or `["deploy", "web"]`) in `namespace` (kubectl's default:
/// `default`; ignored for cluster-scoped kinds). The error is worded as kubectl's.
pub fn parse_target(args: &[String], namespace: &str) -> Result<Target, String> {
    let (kind, name) = match args {
        [one] => match one.split_once('/') {
            Some((kind, name)) => (kind, name),
            None => {
                return Err(format!(
                    "error: you must specify the name of the object to explain: {one}/NAME or {one} NAME"
                ));
            }
        },
        [kind, name] => (kind.as_str(), name.as_str()),
        [] => return Err("error: you must specify the object to explain: KIND/NAME or KIND NAME".into()),
        _ => return Err("error: explain takes one object: KIND/NAME or KIND NAME".into()),
    };
    if name.is_empty() || name.contains('/') {
        return Err(format!(
            "error: arguments in resource/name form must have a single resource and name: {kind}/{name}"
        ));
    }
    let wanted = kind.split('.').next().unwrap_or(kind).to_ascii_lowercase();
    let Some((kind, namespaced, names)) = KINDS
        .iter()
        .find(|(_, _, names)| names.contains(&wanted.as_str()))
    else {
        return Err(format!(
            "error: the server doesn't have a resource type \"{kind}\""
        ));
    };
    Ok(Target {
        kind: kind.to_string(),
        resource: names[0].to_string(),
        namespace: if *namespaced {
            namespace.to_string()
        } else {
            String::new()
        },
        name: name.to_string(),
    })
}

/// `deployment` for `Deployment`, the kind lowercased for kinds not in the table.
pub fn resource_of(kind: &str) -> String {
    KINDS
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map_or_else(|| kind.to_ascii_lowercase(), |(_, _, names)| names[0].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str], ns: &str) -> Result<Target, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse_target(&args, ns)
    }

    #[test]
    fn kinds_read_as_kubectl_reads_them() {
        let t = parse(&["deploy/web"], "default").unwrap();
        assert_eq!(
            (t.kind.as_str(), t.namespace.as_str(), t.name.as_str()),
            ("Deployment", "default", "web")
        );
        assert_eq!(parse(&["RS", "web-6d4f"], "prod").unwrap().kind, "ReplicaSet");
        assert_eq!(
            parse(&["pods/web-x"], "default").unwrap().to_string(),
            "pod default/web-x"
        );
        assert_eq!(
            parse(&["deployments.apps/web"], "default").unwrap().kind,
            "Deployment"
        );
        let node = parse(&["no", "miniplane-worker-1"], "default").unwrap();
        assert_eq!(node.to_string(), "node miniplane-worker-1");
    }

    #[test]
    fn bad_input_gets_kubectls_words() {
        assert_eq!(
            parse(&["widgets/x"], "default").unwrap_err(),
            "error: the server doesn't have a resource type \"widgets\""
        );
        assert!(parse(&["deploy"], "default").unwrap_err().contains("deploy/NAME"));
        assert!(parse(&[], "default").is_err());
        assert!(parse(&["a", "b", "c"], "default").is_err());
    }
}
