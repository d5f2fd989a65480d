//! The APIServices of the server's own group-versions (`v1.`, `v1.apps`,
//! `v2.autoscaling`, ...), made at start-up and kept in step with the
//! registry.
//!
//! Upstream: kube-apiserver registers one APIService per group-version it
//! serves (`apiServicesToRegister` in `pkg/controlplane/apiserver/aggregator.go`,
//! label `kube-aggregator.kubernetes.io/automanaged: onstart`), and the
//! `crdregistration` controller one per CustomResourceDefinition version
//! (priority 1000/100, label `automanaged: "true"`); the autoregister
//! controller creates the missing ones and removes those no longer served.
//! Here [`Api::sync_api_services`] does that in one pass; [`Api::keep_api_services`]
//! runs it again whenever the registry gains or loses a row.
//!
//! Simplified: an existing automanaged APIService is left as it is (upstream
//! overwrites a changed spec of an `onstart` one).

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Api, ListOptions, WriteOptions, obj};
use crate::error::{ApiResult, Reason};
use crate::kinds::apiregistration::{AUTOMANAGED_LABEL, local_api_service};

/// Priorities of a custom group-version's APIService (upstream `crdregistration`).
const CUSTOM_PRIORITY: (i64, i64) = (1000, 100);

impl Api {
    /// Creates the APIService of every served group-version that has none,
    /// and deletes the automanaged ones whose group-version is gone.
    pub async fn sync_api_services(&self) -> ApiResult<()> {
        let info = self.resource("apiregistration.k8s.io", "v1", "apiservices")?;
        let served = self.registry().group_versions();
        let wanted: Vec<Value> = served.iter().map(|(g, v)| api_service(g, v)).collect();
        let existing = self.list(&info, None, &ListOptions::default())?.items;
        let names =
            |list: &[Value]| -> Vec<String> { list.iter().map(|o| obj::name(o).to_string()).collect() };
        let have = names(&existing);
        let opts = WriteOptions {
            field_manager: Some("kube-apiserver".into()),
            ..Default::default()
        };
        // All at once, so that they share their flushes.
        let creates = wanted
            .iter()
            .filter(|s| !have.contains(&obj::name(s).to_string()))
            .map(|service| async {
                match self.create(&info, None, service.clone(), &opts).await {
                    Err(e) if e.reason != Reason::AlreadyExists => Err(e),
                    _ => Ok(()),
                }
            });
        futures::future::try_join_all(creates).await?;
        let want = names(&wanted);
        for stale in existing
            .iter()
            .filter(|o| is_automanaged(o) && !want.contains(&obj::name(o).to_string()))
        {
            match self
                .delete(&info, None, obj::name(stale), &Default::default())
                .await
            {
                Err(e) if e.reason != Reason::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Runs [`Api::sync_api_services`] whenever the registry changes, until
    /// `shutdown`.
    pub async fn keep_api_services(self, shutdown: CancellationToken) {
        let mut changes = self.registry().subscribe();
        loop {
            if let Err(e) = self.sync_api_services().await {
                tracing::warn!("could not update the APIServices: {e}");
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                changed = changes.changed() => if changed.is_err() { return },
            }
        }
    }
}

/// The APIService of one served group-version: upstream's priorities for a
/// built-in one, the custom-resource defaults otherwise.
fn api_service(group: &str, version: &str) -> Value {
    local_api_service(group, version).unwrap_or_else(|| {
        let (group_priority, version_priority) = CUSTOM_PRIORITY;
        json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": format!("{version}.{group}"), "labels": {AUTOMANAGED_LABEL: "true"}},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": group_priority,
                     "versionPriority": version_priority, "service": null},
        })
    })
}

fn is_automanaged(o: &Value) -> bool {
    obj::labels(o).is_some_and(|l| l.contains_key(AUTOMANAGED_LABEL))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::ResourceInfo;
    use crate::testkit::TestApi;

    fn names(api: &Api) -> Vec<String> {
        let info = api
            .resource("apiregistration.k8s.io", "v1", "apiservices")
            .unwrap();
        let list = api.list(&info, None, &ListOptions::default()).unwrap().items;
        list.iter().map(|o| obj::name(o).to_string()).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn every_served_group_version_gets_an_available_api_service() {
        let api = TestApi::builder().build().await;
        api.sync_api_services().await.unwrap();
        let names = names(&api);
        for name in [
            "v1.",
            "v1.apps",
            "v1.autoscaling",
            "v2.autoscaling",
            "v1.apiregistration.k8s.io",
        ] {
            assert!(names.contains(&name.to_string()), "{name} in {names:?}");
        }
        assert_eq!(names.len(), api.registry().group_versions().len());
        let info = api
            .resource("apiregistration.k8s.io", "v1", "apiservices")
            .unwrap();
        let apps = api.get(&info, None, "v1.apps").unwrap();
        assert_eq!(apps["spec"]["groupPriorityMinimum"], 17800);
        assert_eq!(apps["status"]["conditions"][0]["status"], "True");
        assert_eq!(apps["metadata"]["labels"][AUTOMANAGED_LABEL], "onstart");
        // A second pass changes nothing.
        let rv = api.store().revision();
        api.sync_api_services().await.unwrap();
        assert_eq!(api.store().revision(), rv);
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_registry_row_gets_its_api_service() {
        let api = TestApi::builder().build().await;
        let info = api
            .resource("apiregistration.k8s.io", "v1", "apiservices")
            .unwrap();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(api.clone().keep_api_services(shutdown.clone()));
        let opts = crate::api::WatchOptions {
            field_selector: Some("metadata.name=v1alpha1.example.com".into()),
            ..Default::default()
        };
        let mut events = api.watch(&info, None, &opts).unwrap();
        let mut row: ResourceInfo = (*api.resource("", "v1", "configmaps").unwrap()).clone();
        (row.group, row.version, row.kind, row.plural) = (
            "example.com".into(),
            "v1alpha1".into(),
            "Widget".into(),
            "widgets".into(),
        );
        row.storage_version = "v1alpha1".into();
        api.registry().insert(row);
        let Some(crate::api::WatchEvent::Added(custom)) = events.recv().await else {
            panic!("the APIService of example.com/v1alpha1 is created");
        };
        assert_eq!(custom["spec"]["groupPriorityMinimum"], 1000);
        assert_eq!(custom["metadata"]["labels"][AUTOMANAGED_LABEL], "true");
        shutdown.cancel();
        task.await.unwrap();
    }
}
