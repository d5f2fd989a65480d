//! Decoding of the protobuf request bodies that kubectl 1.32 and later send.
//!
//! Since client-go 1.32 the typed clientset writes request bodies as
//! `application/vnd.kubernetes.protobuf`. kubectl uses it for the
//! `kubectl create <generator>` commands (configmap, secret generic|tls|
//! docker-registry, namespace, deployment, job, cronjob, service
//! clusterip|nodeport|loadbalancer|externalname, serviceaccount), for
//! `kubectl auth can-i`, `kubectl create token`, and for the `DeleteOptions`
//! body of the pod deletions that `kubectl drain --disable-eviction` makes.
//! The body is the four bytes `k8s\0` followed by a `runtime.Unknown`
//! message: `typeMeta {apiVersion, kind}`, then `raw`, the object encoded
//! with the upstream `k8s.io/api` `generated.proto` messages.
//!
//! [`decode`] turns such a body into the object's Kubernetes JSON, the same
//! JSON that kubectl 1.31 sends for the same command, without the
//! `creationTimestamp: null` and empty-struct noise Go adds. The messages
//! come from the `k8s-pb` crate (prost); they keep proto2 presence, and the
//! converters apply Go's JSON rules on top: a field that Go holds by pointer
//! is written whenever present, even as zero; a field Go holds by value is
//! always on the wire and is left out when zero, as `omitempty` does.
//!
//! Supported kinds: v1 ConfigMap, Secret, Namespace, Service, ServiceAccount,
//! Pod; apps/v1 Deployment; autoscaling/v1 HorizontalPodAutoscaler (`kubectl autoscale`); batch/v1 Job and CronJob; DeleteOptions under any
//! group version; authorization.k8s.io/v1 SelfSubjectAccessReview;
//! authentication.k8s.io/v1 TokenRequest and SelfSubjectReview;
//! certificates.k8s.io/v1 CertificateSigningRequest (with its status: the
//! conditions `kubectl certificate approve` PUTs to `approval`); rbac.authorization.k8s.io/v1
//! Role, ClusterRole, RoleBinding, ClusterRoleBinding (`kubectl create role` ...);
//! authorization.k8s.io/v1 SelfSubjectRulesReview (`kubectl auth can-i --list`); policy/v1 Eviction (`kubectl drain`). Any other kind is
//! [`DecodeError::Unsupported`]. `status` is skipped (a create discards it).
//!
//! Nothing is dropped silently. Every converter destructures its message
//! exhaustively, so each field of the schema is either converted or refused
//! with [`DecodeError::UnsupportedField`] when set (probes, affinity,
//! security contexts, uncommon volume sources, among others). Fields that are
//! not in the schema at all, which prost would skip, are caught by comparing
//! the body's length with the length of the decoded message re-encoded,
//! giving [`DecodeError::UnknownFields`]. Both map to HTTP 415, which tells
//! the user to send JSON instead (`kubectl create -f`, or `apply`).

mod autoscaling;
mod json;
mod kinds;
mod meta;
mod pod;
mod quota;
mod rbac;
#[cfg(test)]
mod tests;

use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::Value;

use json::{Conv, Obj, Problem, Res};

/// The media type of these bodies.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// Why a body could not be turned into JSON.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The body does not start with the `k8s\0` magic.
    #[error("the body is not a Kubernetes protobuf message: it lacks the k8s\\0 prefix")]
    NotProtobuf,
    /// The bytes are not valid protobuf for the message they claim to be.
    #[error("malformed protobuf body: {0}")]
    Malformed(String),
    /// A kind this server cannot read from protobuf.
    #[error(
        "this server cannot decode {kind} ({api_version}) from protobuf; send it as JSON, \
         e.g. with kubectl create -f or kubectl apply"
    )]
    Unsupported { api_version: String, kind: String },
    /// A supported kind with a field set that this server does not convert.
    #[error(
        "this server cannot decode field {field} of {kind} ({api_version}) from protobuf; \
         send the object as JSON, e.g. with kubectl create -f or kubectl apply"
    )]
    UnsupportedField {
        api_version: String,
        kind: String,
        field: String,
    },
    /// The message carries fields that are not in this server's schema.
    #[error(
        "the protobuf {kind} ({api_version}) has {extra_bytes} bytes of fields this server \
         does not know; send the object as JSON"
    )]
    UnknownFields {
        api_version: String,
        kind: String,
        extra_bytes: usize,
    },
}

impl DecodeError {
    /// The HTTP status to answer with: 415 for what this server cannot
    /// read, 400 for bodies that are broken.
    pub fn status_code(&self) -> u16 {
        match self {
            DecodeError::NotProtobuf | DecodeError::Malformed(_) => 400,
            DecodeError::Unsupported { .. }
            | DecodeError::UnsupportedField { .. }
            | DecodeError::UnknownFields { .. } => 415,
        }
    }
}

/// Whether a `Content-Type` header value names the protobuf media type.
pub fn is_protobuf(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case(CONTENT_TYPE)
}

/// Decodes a `k8s\0`-prefixed protobuf body into the object's Kubernetes
/// JSON, `apiVersion` and `kind` included.
pub fn decode(body: &[u8]) -> Result<Value, DecodeError> {
    let envelope = body.strip_prefix(MAGIC).ok_or(DecodeError::NotProtobuf)?;
    let (api_version, kind, raw) = unwrap_unknown(envelope)?;
    let fields = convert_kind(&api_version, &kind, &raw).map_err(|failure| match failure {
        Failure::Kind => DecodeError::Unsupported {
            api_version: api_version.clone(),
            kind: kind.clone(),
        },
        Failure::Decode(e) => DecodeError::Malformed(format!("{kind}: {e}")),
        Failure::Problem(Problem::Bad(why)) => DecodeError::Malformed(format!("{kind}: {why}")),
        Failure::Problem(Problem::Field(field)) => DecodeError::UnsupportedField {
            api_version: api_version.clone(),
            kind: kind.clone(),
            field,
        },
        Failure::Extra(extra_bytes) => DecodeError::UnknownFields {
            api_version: api_version.clone(),
            kind: kind.clone(),
            extra_bytes,
        },
    })?;
    let mut object = serde_json::Map::new();
    object.insert("apiVersion".to_owned(), Value::String(api_version));
    object.insert("kind".to_owned(), Value::String(kind));
    object.extend(fields.into_map());
    Ok(Value::Object(object))
}

/// Reads the `runtime.Unknown` envelope: (apiVersion, kind, raw).
fn unwrap_unknown(envelope: &[u8]) -> Result<(String, String, Vec<u8>), DecodeError> {
    let unknown = Unknown::decode(envelope).map_err(|e| DecodeError::Malformed(format!("envelope: {e}")))?;
    let encoding = unknown.content_encoding.unwrap_or_default();
    if !encoding.is_empty() {
        return Err(DecodeError::Malformed(format!(
            "content encoding {encoding:?} is not supported"
        )));
    }
    let content_type = unknown.content_type.unwrap_or_default();
    if !content_type.is_empty() && !is_protobuf(&content_type) {
        return Err(DecodeError::Malformed(format!(
            "embedded content type {content_type:?} is not protobuf"
        )));
    }
    let type_meta = unknown.type_meta.unwrap_or_default();
    let api_version = type_meta.api_version.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    if api_version.is_empty() || kind.is_empty() {
        return Err(DecodeError::Malformed(
            "envelope lacks apiVersion or kind".to_owned(),
        ));
    }
    Ok((api_version, kind, unknown.raw.unwrap_or_default()))
}

/// Why a supported-looking message did not convert.
enum Failure {
    Kind,
    Decode(prost::DecodeError),
    Problem(Problem),
    Extra(usize),
}

/// Picks the message type for (apiVersion, kind) and converts `raw`.
fn convert_kind(api_version: &str, kind: &str, raw: &[u8]) -> Result<Obj, Failure> {
    use k8s_pb::api::{apps::v1 as apps, batch::v1 as batch, core::v1 as core};
    use k8s_pb::api::{authentication::v1 as authn, authorization::v1 as authz};
    match (api_version, kind) {
        // DeleteOptions is registered in every group version.
        (_, "DeleteOptions") => convert(raw, |_, m| Ok(meta::delete_options(m))),
        ("v1", "ConfigMap") => convert::<core::ConfigMap>(raw, Conv::config_map),
        ("v1", "Secret") => convert::<core::Secret>(raw, Conv::secret),
        ("v1", "Namespace") => convert::<core::Namespace>(raw, Conv::namespace),
        ("v1", "Service") => convert::<core::Service>(raw, Conv::service),
        ("v1", "ServiceAccount") => convert::<core::ServiceAccount>(raw, Conv::service_account),
        ("v1", "Pod") => convert::<core::Pod>(raw, Conv::pod),
        ("v1", "ResourceQuota") => convert::<core::ResourceQuota>(raw, Conv::resource_quota),
        ("apps/v1", "Deployment") => convert::<apps::Deployment>(raw, Conv::deployment),
        ("autoscaling/v1", "HorizontalPodAutoscaler") => convert::<
            k8s_pb::api::autoscaling::v1::HorizontalPodAutoscaler,
        >(raw, Conv::horizontal_pod_autoscaler),
        ("batch/v1", "Job") => convert::<batch::Job>(raw, Conv::job),
        ("batch/v1", "CronJob") => convert::<batch::CronJob>(raw, Conv::cron_job),
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => {
            convert::<authz::SelfSubjectAccessReview>(raw, Conv::self_subject_access_review)
        }
        ("authentication.k8s.io/v1", "TokenRequest") => {
            convert::<authn::TokenRequest>(raw, Conv::token_request)
        }
        ("authentication.k8s.io/v1", "SelfSubjectReview") => {
            convert::<authn::SelfSubjectReview>(raw, Conv::self_subject_review)
        }
        ("certificates.k8s.io/v1", "CertificateSigningRequest") => convert::<
            k8s_pb::api::certificates::v1::CertificateSigningRequest,
        >(
            raw, Conv::certificate_signing_request
        ),
        ("policy/v1", "Eviction") => convert(raw, Conv::eviction),
        // rbac.authorization.k8s.io (protobuf/rbac.rs)
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => {
            convert::<authz::SelfSubjectRulesReview>(raw, Conv::self_subject_rules_review)
        }
        ("rbac.authorization.k8s.io/v1", "Role") => convert::<k8s_pb::api::rbac::v1::Role>(raw, Conv::role),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
            convert::<k8s_pb::api::rbac::v1::ClusterRole>(raw, Conv::cluster_role)
        }
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => {
            convert::<k8s_pb::api::rbac::v1::RoleBinding>(raw, Conv::role_binding)
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            convert::<k8s_pb::api::rbac::v1::ClusterRoleBinding>(raw, Conv::cluster_role_binding)
        }
        _ => Err(Failure::Kind),
    }
}

/// Decodes `raw` as `M`, converts it, and checks that nothing outside the
/// schema was skipped: the re-encoded message plus the bytes that prost
/// legitimately leaves out (empty map keys and values) must cover `raw`.
fn convert<M: Message + Default>(
    raw: &[u8],
    to_json: impl FnOnce(&mut Conv, M) -> Res<Obj>,
) -> Result<Obj, Failure> {
    let message = M::decode(raw).map_err(Failure::Decode)?;
    let known = message.encoded_len();
    let mut conv = Conv::default();
    let object = to_json(&mut conv, message).map_err(Failure::Problem)?;
    if raw.len() > known + conv.slack {
        return Err(Failure::Extra(raw.len() - known - conv.slack));
    }
    Ok(object)
}
