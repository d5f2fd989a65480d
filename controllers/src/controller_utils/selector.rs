//! A controller's `spec.selector` as the API server's [`Selector`].
//!
//! Upstream: apimachinery `pkg/apis/meta/v1/helpers.go` (`LabelSelectorAsSelector`), as the
//! controllers call it; the matching itself is `apiserver::labels` (upstream `pkg/labels`).
//!
//! Simplified: where upstream controllers log a conversion error and skip the object, an invalid
//! selector here selects nothing (the API server refuses such selectors on write, so only a
//! hand-built object can carry one).

use apiserver::labels::Selector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Upstream `LabelSelectorAsSelector` of a (present) `spec.selector`: `{}` selects everything,
/// an invalid selector nothing.
pub fn selector_of(selector: &LabelSelector) -> Selector {
    Selector::from_typed(Some(selector)).unwrap_or_else(|_| Selector::nothing())
}
