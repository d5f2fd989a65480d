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
//! For a row that is its own storage version all of these are a string
//! comparison and nothing else. Label and field selectors are matched
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

/// A stored object as the `info` row serves it.
pub(crate) fn to_view(info: &ResourceInfo, obj: Value) -> ApiResult<Value> {
    if info.storage_version == info.version {
        return Ok(obj);
    }
    convert(info, obj, &info.version)
}

/// [`to_view`] of a borrowed object, copying it only when it must change.
pub(crate) fn viewed<'a>(info: &ResourceInfo, obj: &'a Value) -> ApiResult<Cow<'a, Value>> {
    if info.storage_version == info.version {
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
