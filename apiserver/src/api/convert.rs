//! The conversion hook: objects are stored in their resource's storage
//! version and served in the version of the request.
//!
//! Upstream the codec does this (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go`
//! decodes into the request's version and converts to internal; the storage
//! codec encodes the storage version). Here the [`Api`] calls these
//! functions at its edges:
//!
//! - on the way in, [`to_storage`] after a body was decoded, checked and
//!   defaulted in the request's version (`admit_body`), for create, update
//!   and patch alike; a patch is applied to the [`viewed`] live object;
//! - on the way out, [`to_view`] on every object a get, list, watch event,
//!   write or delete returns.
//!
//! For a built-in row that is its own storage version all of these are a
//! string comparison and nothing else; a custom resource's view also gets
//! its schema's defaults (upstream defaults on read). Label and field selectors are matched
//! against the stored object: the fields they read (metadata, and the
//! fields each kind makes selectable) are the same in every view.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::Api;
use crate::conversion::convert;
use crate::error::ApiResult;
use crate::registry::ResourceInfo;

impl Api {
    /// The row objects of `info` are stored as, when that is another row
    /// (`autoscaling/v1` HorizontalPodAutoscalers → the `autoscaling/v2` row).
    pub(crate) fn storage_of(&self, info: &ResourceInfo) -> Option<Arc<ResourceInfo>> {
        if info.storage_version == info.version {
            return None;
        }
        self.registry()
            .get(&info.group, &info.storage_version, &info.plural)
    }
}

/// A request body of the `info` row, in its storage version.
pub(crate) fn to_storage(info: &ResourceInfo, obj: Value) -> ApiResult<Value> {
    if info.storage_version == info.version {
        return Ok(obj);
    }
    convert(info, obj, &info.storage_version)
}

/// A stored object as the `info` row serves it. A custom resource also
/// gets its schema's defaults, as upstream's codec fills them on every
/// read from storage.
pub(crate) fn to_view(info: &ResourceInfo, obj: Value) -> ApiResult<Value> {
    let mut obj = match info.storage_version == info.version {
        true => obj,
        false => convert(info, obj, &info.version)?,
    };
    if let Some(custom) = &info.custom {
        crate::kinds::custom::default_object(custom, &mut obj);
    }
    Ok(obj)
}

/// [`to_view`] of a borrowed object, copying it only when it must change.
pub(crate) fn viewed<'a>(info: &ResourceInfo, obj: &'a Value) -> ApiResult<Cow<'a, Value>> {
    if info.storage_version == info.version && info.custom.is_none() {
        return Ok(Cow::Borrowed(obj));
    }
    to_view(info, obj.clone()).map(Cow::Owned)
}

/// A write's result, its object as the `info` row serves it.
pub(crate) fn written_view(info: &ResourceInfo, mut written: super::Written) -> ApiResult<super::Written> {
    written.object = to_view(info, written.object)?;
    Ok(written)
}

impl super::DeleteOutcome {
    /// The outcome, its object as the `info` row serves it.
    pub(crate) fn viewed_as(self, info: &ResourceInfo) -> ApiResult<Self> {
        Ok(match self {
            Self::Deleted(o) => Self::Deleted(to_view(info, o)?),
            Self::Pending(o) => Self::Pending(to_view(info, o)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::api::{PatchType, WatchEvent, WatchOptions, WriteOptions};
    use crate::testkit::TestApi;

    fn hpa_v1() -> serde_json::Value {
        json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 4, "targetCPUUtilizationPercentage": 60}})
    }

    #[tokio::test(start_paused = true)]
    async fn an_hpa_written_as_v1_is_stored_as_v2_and_served_in_both() {
        let api = TestApi::builder().build().await;
        let v1 = api
            .resource("autoscaling", "v1", "horizontalpodautoscalers")
            .unwrap();
        let v2 = api
            .resource("autoscaling", "v2", "horizontalpodautoscalers")
            .unwrap();
        let opts = WriteOptions::default();
        let created = api.create(&v1, Some("default"), hpa_v1(), &opts).await.unwrap();
        assert_eq!(created.object["apiVersion"], "autoscaling/v1");
        assert_eq!(created.object["spec"]["minReplicas"], 1);

        // Stored once, as v2.
        let raw = api.store().get(&v2.key(Some("default"), "web")).unwrap().unwrap();
        let stored: serde_json::Value = serde_json::from_slice(&raw.value).unwrap();
        assert_eq!(stored["apiVersion"], "autoscaling/v2");
        assert_eq!(
            stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            60
        );

        // A v1 watch sees a change made through v2 as v1.
        let from = api.store().revision();
        let watch = WatchOptions {
            resource_version: Some(from),
            ..Default::default()
        };
        let mut events = api.watch(&v1, Some("default"), &watch).unwrap();
        let patch = json!({"spec": {"maxReplicas": 7}});
        let patched = api
            .patch(&v2, Some("default"), "web", PatchType::Merge, &patch, None, &opts)
            .await
            .unwrap();
        assert_eq!(patched.object["apiVersion"], "autoscaling/v2");
        let Some(WatchEvent::Modified(seen)) = events.recv().await else {
            panic!("the patch is seen");
        };
        assert_eq!(seen["apiVersion"], "autoscaling/v1");
        assert_eq!(seen["spec"]["maxReplicas"], 7);
        assert_eq!(seen["spec"]["targetCPUUtilizationPercentage"], 60);

        // Lists and gets of either version; a delete answers in the version asked.
        let list = api.list(&v1, Some("default"), &Default::default()).unwrap();
        assert_eq!(list.items[0]["apiVersion"], "autoscaling/v1");
        assert_eq!(
            api.get(&v2, Some("default"), "web").unwrap()["spec"]["maxReplicas"],
            7
        );
        let gone = api
            .delete(&v1, Some("default"), "web", &Default::default())
            .await
            .unwrap();
        let (crate::api::DeleteOutcome::Deleted(last) | crate::api::DeleteOutcome::Pending(last)) = gone;
        assert_eq!(last["apiVersion"], "autoscaling/v1");
    }

    #[tokio::test(start_paused = true)]
    async fn a_v1_update_keeps_what_only_v2_holds() {
        let api = TestApi::builder().build().await;
        let v1 = api
            .resource("autoscaling", "v1", "horizontalpodautoscalers")
            .unwrap();
        let v2 = api
            .resource("autoscaling", "v2", "horizontalpodautoscalers")
            .unwrap();
        let opts = WriteOptions::default();
        let mut hpa = hpa_v1();
        hpa["apiVersion"] = json!("autoscaling/v2");
        hpa["spec"] = json!({"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 4,
            "metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"},
                "target": {"type": "AverageValue", "averageValue": "10"}}}]});
        api.create(&v2, Some("default"), hpa, &opts).await.unwrap();
        // Read as v1, change, write back as v1 (what `kubectl edit` of the v1 view does).
        let mut as_v1 = api.get(&v1, Some("default"), "web").unwrap();
        as_v1["spec"]["maxReplicas"] = json!(9);
        api.update(&v1, Some("default"), "web", as_v1, None, &opts)
            .await
            .unwrap();
        let back = api.get(&v2, Some("default"), "web").unwrap();
        assert_eq!(back["spec"]["maxReplicas"], 9);
        assert_eq!(back["spec"]["metrics"][0]["pods"]["metric"]["name"], "qps");
        assert!(back["metadata"].get("annotations").is_none(), "{back}");
    }
}
