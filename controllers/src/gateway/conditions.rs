//! Status conditions as the Gateway API writes them (`metav1.Condition`),
//! and the condition types and reasons of the API.
//!
//! Upstream: the Gateway API's `apis/v1/gatewayclass_types.go`,
//! `gateway_types.go`, `shared_types.go` (the `*ConditionType` and
//! `*ConditionReason` constants), and apimachinery's `meta.SetStatusCondition`
//! (a condition's `lastTransitionTime` moves only when its status does).
//! Pure: `now` is a parameter.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// Condition `Accepted` (GatewayClass, Gateway, Listener, Route parent).
pub const ACCEPTED: &str = "Accepted";
/// Condition `Programmed` (Gateway, Listener).
pub const PROGRAMMED: &str = "Programmed";
/// Condition `ResolvedRefs` (Listener, Route parent).
pub const RESOLVED_REFS: &str = "ResolvedRefs";
/// Condition `Conflicted` (Listener).
pub const CONFLICTED: &str = "Conflicted";
/// Condition `SupportedVersion` (GatewayClass).
pub const SUPPORTED_VERSION: &str = "SupportedVersion";

/// Reason of a True `Accepted`.
pub const REASON_ACCEPTED: &str = "Accepted";
/// Reason of a True `Programmed`.
pub const REASON_PROGRAMMED: &str = "Programmed";
/// Reason of a False `Programmed`: the object is not valid.
pub const REASON_INVALID: &str = "Invalid";
/// Reason of a True `ResolvedRefs`.
pub const REASON_RESOLVED_REFS: &str = "ResolvedRefs";
/// Reason of a False `Conflicted`.
pub const REASON_NO_CONFLICTS: &str = "NoConflicts";
/// Reason of a True `Conflicted`: listeners share a port with different protocols.
pub const REASON_PROTOCOL_CONFLICT: &str = "ProtocolConflict";
/// Reason of a True `SupportedVersion`.
pub const REASON_SUPPORTED_VERSION: &str = "SupportedVersion";
/// Reason of a False listener `Accepted`: the protocol is not implemented.
pub const REASON_UNSUPPORTED_PROTOCOL: &str = "UnsupportedProtocol";
/// Reason of a False listener `ResolvedRefs`: `allowedRoutes.kinds` names a kind not supported.
pub const REASON_INVALID_ROUTE_KINDS: &str = "InvalidRouteKinds";
/// Reason of a Gateway `Accepted` when some (True) or all (False) listeners are not valid.
pub const REASON_LISTENERS_NOT_VALID: &str = "ListenersNotValid";
/// Reason of a False Gateway `Accepted`: a requested address type is not supported.
pub const REASON_UNSUPPORTED_ADDRESS: &str = "UnsupportedAddress";
/// Reason of a False route `Accepted`: no listener allows the route (kind, namespace).
pub const REASON_NOT_ALLOWED_BY_LISTENERS: &str = "NotAllowedByListeners";
/// Reason of a False route `Accepted`: `sectionName` / `port` match no listener.
pub const REASON_NO_MATCHING_PARENT: &str = "NoMatchingParent";
/// Reason of a False route `Accepted`: no listener hostname intersects the route's.
pub const REASON_NO_MATCHING_LISTENER_HOSTNAME: &str = "NoMatchingListenerHostname";
/// Reason of a False route `ResolvedRefs`: a backend Service does not exist.
pub const REASON_BACKEND_NOT_FOUND: &str = "BackendNotFound";
/// Reason of a False route `ResolvedRefs`: a backend is not a Service.
pub const REASON_INVALID_KIND: &str = "InvalidKind";
/// Reason of a False route `ResolvedRefs`: a cross-namespace backend without a ReferenceGrant.
pub const REASON_REF_NOT_PERMITTED: &str = "RefNotPermitted";

/// A condition as computed, before its `lastTransitionTime` is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cond {
    /// The condition type (`Accepted`, ...).
    pub type_: &'static str,
    /// True or False.
    pub status: bool,
    /// A CamelCase reason.
    pub reason: &'static str,
    /// A sentence for people.
    pub message: String,
}

impl Cond {
    /// A True condition.
    pub fn yes(type_: &'static str, reason: &'static str, message: impl Into<String>) -> Self {
        Cond {
            type_,
            status: true,
            reason,
            message: message.into(),
        }
    }

    /// A False condition.
    pub fn no(type_: &'static str, reason: &'static str, message: impl Into<String>) -> Self {
        Cond {
            type_,
            status: false,
            reason,
            message: message.into(),
        }
    }
}

/// The written conditions: `wanted` in order, each with `observedGeneration`
/// `generation`, keeping the `lastTransitionTime` of the `old` condition of
/// the same type when its status is unchanged, else `now` (upstream
/// `meta.SetStatusCondition`). Conditions of `old` that are not wanted are
/// dropped.
pub fn set_conditions(
    old: &[Condition],
    wanted: &[Cond],
    generation: Option<i64>,
    now: Timestamp,
) -> Vec<Condition> {
    wanted
        .iter()
        .map(|c| {
            let status = if c.status { "True" } else { "False" };
            let since = old
                .iter()
                .find(|o| o.type_ == c.type_ && o.status == status)
                .map_or(Time(now), |o| o.last_transition_time.clone());
            Condition {
                type_: c.type_.to_string(),
                status: status.to_string(),
                reason: c.reason.to_string(),
                message: c.message.clone(),
                observed_generation: generation,
                last_transition_time: since,
            }
        })
        .collect()
}

/// Whether `conditions` has `type_` with status True.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    conditions.iter().any(|c| c.type_ == type_ && c.status == "True")
}
