//! The CustomResourceDefinitions every miniplane serves from its start, as a
//! real cluster with these add-ons installed would: the Gateway API
//! (gateway.networking.k8s.io, the objects the simulated gateway implements
//! and the traffic simulation follows) and the Canary
//! (rollouts.miniplane.dev). They are ordinary CRDs, in crds/ at the
//! repository root: `kubectl get crds` lists them, and their objects go
//! through the same custom-resource path as any CRD's.
//!
//! Each is created when absent (a restarted data dir keeps its own), then
//! waited for until Established, so the components that read them start on
//! a served API.

use std::sync::LazyLock;
use std::time::Duration;

use apiserver::api::WriteOptions;
use apiserver::error::Reason;
use apiserver::{Api, ApiError};
use serde_json::Value;

/// The CRD manifests, embedded in the binary.
pub const CRDS: [(&str, &str); 4] = [
    (
        "gatewayclasses.gateway.networking.k8s.io",
        include_str!("../crds/gateway.networking.k8s.io_gatewayclasses.yaml"),
    ),
    (
        "gateways.gateway.networking.k8s.io",
        include_str!("../crds/gateway.networking.k8s.io_gateways.yaml"),
    ),
    (
        "httproutes.gateway.networking.k8s.io",
        include_str!("../crds/gateway.networking.k8s.io_httproutes.yaml"),
    ),
    (
        "canaries.rollouts.miniplane.dev",
        include_str!("../crds/rollouts.miniplane.dev_canaries.yaml"),
    ),
];

/// The field manager of the CRDs' creation.
const FIELD_MANAGER: &str = "miniplane";

/// How long to wait for each CRD to be Established (real time).
const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(30);

/// The manifests, parsed once per process (a harness starts many clusters).
fn parsed() -> &'static [Value] {
    static PARSED: LazyLock<Vec<Value>> = LazyLock::new(|| {
        CRDS.iter()
            // The manifests are ours and parsed by a test: a failure here is a build defect.
            .map(|(_, yaml)| serde_saphyr::from_str(yaml).expect("a built-in CRD manifest parses"))
            .collect()
    });
    &PARSED
}

/// Parses the manifests and compiles their schemas now, if no server in
/// this process has yet: the creation (or, on a kept data dir, the
/// restoration) then finds each schema compiled.
pub fn prepare() {
    let schemas = parsed()
        .iter()
        .flat_map(|crd| crd.pointer("/spec/versions").and_then(Value::as_array))
        .flatten()
        .filter_map(|version| version.pointer("/schema/openAPIV3Schema"));
    for schema in schemas {
        // The manifests are ours and compile (a test checks): nothing to report.
        let _ = apiserver::crd::schema::Structural::compile(schema, "");
    }
}

/// Creates every built-in CRD that is absent, then waits until each is Established.
pub async fn install(api: &Api) -> Result<(), ApiError> {
    let resource = api.resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")?;
    let opts = WriteOptions {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    };
    // All at once, so that their writes share flushes.
    let creates = CRDS
        .iter()
        .zip(parsed())
        .filter(|((name, _), _)| api.get(&resource, None, name).is_err())
        .map(|(_, body)| async {
            match api.create(&resource, None, body.clone(), &opts).await {
                Err(e) if e.reason != Reason::AlreadyExists => Err(e),
                _ => Ok(()),
            }
        });
    futures::future::try_join_all(creates).await?;
    for (name, _) in CRDS {
        let clock = api.clock().clone();
        let wait = async {
            loop {
                if let Ok(crd) = api.get(&resource, None, name)
                    && crate::harness::established(&crd)
                {
                    return;
                }
                // 2 ms of real time, whatever the clock's scale.
                clock.sleep(Duration::from_millis(2).mul_f64(clock.scale())).await;
            }
        };
        if tokio::time::timeout(ESTABLISHED_TIMEOUT, wait).await.is_err() {
            tracing::warn!(crd = name, "a built-in CRD is not Established");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_manifest_is_a_crd_named_as_listed() {
        for (name, yaml) in super::CRDS {
            let body: serde_json::Value = serde_saphyr::from_str(yaml).unwrap();
            assert_eq!(body["kind"], "CustomResourceDefinition", "{name}");
            assert_eq!(body["metadata"]["name"], name);
            for version in body["spec"]["versions"].as_array().unwrap() {
                let schema = &version["schema"]["openAPIV3Schema"];
                let compiled = apiserver::crd::schema::Structural::compile(schema, "");
                assert!(
                    compiled.is_ok(),
                    "{name} {}: {:?}",
                    version["name"],
                    compiled.err()
                );
            }
        }
    }
}
