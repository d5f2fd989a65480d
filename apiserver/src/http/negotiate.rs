//! Content negotiation: request bodies in, JSON and Tables out.
//!
//! Request bodies are JSON (also when no Content-Type is sent, as
//! `kubectl scale --current-replicas` does), YAML, or — from kubectl 1.32+
//! typed clients — Kubernetes protobuf. Responses are always JSON, in the
//! representation `Accept` asks for: the object itself, a Table
//! (`as=Table;g=meta.k8s.io;v=v1`, what `kubectl get` asks for), or only the
//! metadata (`as=PartialObjectMetadata` / `PartialObjectMetadataList`, what
//! metadata-only clients and informers ask for).
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go`.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::error::{ApiError, Reason};

/// Request bodies above this size get 413 (upstream's limit is 3 MiB).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// The base media type of the request's Content-Type ("" when absent).
pub fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Decodes an object body by its Content-Type.
pub fn decode_body(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    if body.len() > MAX_BODY {
        return Err(too_large());
    }
    match content_type(headers).as_str() {
        "" | "application/json" | "*/*" => decode_json(body),
        "application/yaml" | "application/x-yaml" | "text/yaml" => decode_yaml(body),
        "application/vnd.kubernetes.protobuf" => decode_protobuf(body),
        other => Err(ApiError::new(
            Reason::UnsupportedMediaType,
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got {other:?})"
            ),
        )),
    }
}

/// Decodes a Kubernetes protobuf request body into JSON.
fn decode_protobuf(body: &[u8]) -> Result<Value, ApiError> {
    crate::protobuf::decode(body).map_err(|e| {
        let reason = if e.status_code() == 415 {
            Reason::UnsupportedMediaType
        } else {
            Reason::BadRequest
        };
        ApiError::new(reason, e.to_string())
    })
}

/// 413 with upstream's message.
pub fn too_large() -> ApiError {
    ApiError::new(
        Reason::RequestEntityTooLarge,
        format!("Request entity too large: limit is {MAX_BODY}"),
    )
}

/// Parses JSON; a syntax error is 400 with the position.
pub fn decode_json(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the body of the request is empty"));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}")))
}

/// Parses YAML (one document).
pub fn decode_yaml(body: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("the body of the request is not valid UTF-8"))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))
}

/// What the client asked for in `Accept`: which representation of the
/// result. Every representation is JSON on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// The object (or `<Kind>List`) itself.
    Object,
    /// A `meta.k8s.io` Table (`v1` or `v1beta1`).
    Table(&'static str),
    /// `as=PartialObjectMetadata`: an object's metadata only (`meta.k8s.io`
    /// `v1` or `v1beta1`).
    Metadata(&'static str),
    /// `as=PartialObjectMetadataList`: a list of PartialObjectMetadata.
    MetadataList(&'static str),
}

impl Wanted {
    /// The `as=` kind, for conversions.
    fn kind(self) -> Option<(&'static str, &'static str)> {
        match self {
            Wanted::Object => None,
            Wanted::Table(v) => Some(("Table", v)),
            Wanted::Metadata(v) => Some(("PartialObjectMetadata", v)),
            Wanted::MetadataList(v) => Some(("PartialObjectMetadataList", v)),
        }
    }

    /// The response's Content-Type: `application/json`, naming the `as=`
    /// kind when the result was converted.
    pub fn content_type(self) -> String {
        match self.kind() {
            None => "application/json".to_string(),
            Some((kind, v)) => format!("application/json;as={kind};v={v};g=meta.k8s.io"),
        }
    }
}

/// The media types responses can be asked for (upstream's serializers, in
/// upstream's order; miniplane answers each of them in JSON).
const SERVED: [&str; 3] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// One alternative of an `Accept` header.
struct Clause<'a> {
    media: String,
    params: Vec<(&'a str, &'a str)>,
    q: f64,
}

impl<'a> Clause<'a> {
    fn parse(alternative: &'a str) -> Clause<'a> {
        let mut parts = alternative.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let params: Vec<(&str, &str)> = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim().trim_matches('"')))
            .collect();
        let q = params
            .iter()
            .find(|(k, _)| *k == "q")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(1.0);
        Clause { media, params, q }
    }

    fn param(&self, key: &str) -> Option<&'a str> {
        self.params.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The served media type this clause matches first (`*/*` and
    /// `application/*` match JSON).
    fn served(&self) -> Option<&'static str> {
        match self.media.as_str() {
            "*/*" | "application/*" => Some(SERVED[0]),
            m => SERVED.iter().copied().find(|s| *s == m),
        }
    }

    /// What this clause asks for, when the server can give it
    /// (upstream `acceptMediaTypeOptions` + `AllowsMediaTypeTransform`).
    fn wanted(&self) -> Option<Wanted> {
        let media = self.served()?;
        if self
            .param("stream")
            .is_some_and(|s| !s.is_empty() && s != "watch")
        {
            return None;
        }
        let (kind, group, version) = (self.param("as"), self.param("g"), self.param("v"));
        if kind.is_none() && group.is_none() && version.is_none() {
            return Some(Wanted::Object);
        }
        let version = match (group, version) {
            (Some("meta.k8s.io"), Some("v1")) => "v1",
            (Some("meta.k8s.io"), Some("v1beta1")) => "v1beta1",
            _ => return None,
        };
        match kind {
            // Tables are JSON or YAML only, as upstream.
            Some("Table") if media != "application/vnd.kubernetes.protobuf" => Some(Wanted::Table(version)),
            Some("PartialObjectMetadata") => Some(Wanted::Metadata(version)),
            Some("PartialObjectMetadataList") => Some(Wanted::MetadataList(version)),
            _ => None,
        }
    }
}

/// Picks the first representation in `Accept` the server can produce, by
/// `q` and then in the client's order (upstream `NegotiateMediaTypeOptions`:
/// no `Accept` means the object; an `Accept` with nothing acceptable is 406).
pub fn wanted(headers: &HeaderMap) -> Result<Wanted, ApiError> {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.trim().is_empty() {
        return Ok(Wanted::Object);
    }
    let mut clauses: Vec<Clause> = accept
        .split(',')
        .filter(|a| !a.trim().is_empty())
        .map(Clause::parse)
        .collect();
    // Higher q first, then concrete types before wildcards; otherwise the
    // client's order (a stable sort).
    clauses.sort_by(|a, b| {
        let wild = |c: &Clause| (c.media.starts_with('*'), c.media.ends_with("/*"));
        b.q.total_cmp(&a.q).then(wild(a).cmp(&wild(b)))
    });
    clauses.iter().find_map(Clause::wanted).ok_or_else(not_acceptable)
}

/// 406 with upstream's message (`errNotAcceptable`).
pub fn not_acceptable() -> ApiError {
    ApiError::new(
        Reason::NotAcceptable,
        format!(
            "only the following media types are accepted: {}",
            SERVED.join(", ")
        ),
    )
}

/// A JSON response with status and `Warning` headers.
pub fn json_response(status: StatusCode, body: &Value, warnings: &[String]) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response();
    add_warnings(resp.headers_mut(), warnings);
    resp
}

/// A response in the representation `wanted` names (its Content-Type says
/// which), with status and `Warning` headers.
pub fn converted_response(wanted: Wanted, status: StatusCode, body: &Value, warnings: &[String]) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = (status, [(header::CONTENT_TYPE, wanted.content_type())], bytes).into_response();
    add_warnings(resp.headers_mut(), warnings);
    resp
}

/// `Warning: 299 - "text"` headers.
pub fn add_warnings(headers: &mut HeaderMap, warnings: &[String]) {
    for w in warnings {
        let text = format!("299 - {:?}", w);
        if let Ok(v) = HeaderValue::from_str(&text) {
            headers.append(header::WARNING, v);
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.reason.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        json_response(status, &self.to_status(), &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(s: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(s).unwrap());
        h
    }

    #[test]
    fn kubectl_get_asks_for_a_v1_table() {
        let h = accept(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
        );
        assert_eq!(wanted(&h).unwrap(), Wanted::Table("v1"));
    }

    #[test]
    fn plain_json_and_protobuf_first_accepts_get_objects() {
        assert_eq!(wanted(&accept("application/json, */*")).unwrap(), Wanted::Object);
        assert_eq!(
            wanted(&accept("application/vnd.kubernetes.protobuf,application/json")).unwrap(),
            Wanted::Object
        );
    }

    #[test]
    fn a_table_of_another_group_is_not_acceptable() {
        let e = wanted(&accept("application/json;as=Table;v=v2;g=example.com")).unwrap_err();
        assert_eq!(e.reason, Reason::NotAcceptable);
        assert_eq!(
            e.message,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
        // ... but a later alternative can still be served.
        let h = accept("application/json;as=Table;v=v2;g=example.com, application/json");
        assert_eq!(wanted(&h).unwrap(), Wanted::Object);
    }

    #[test]
    fn metadata_only_as_kube_rs_and_client_go_ask_for_it() {
        let h = accept("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
        assert_eq!(wanted(&h).unwrap(), Wanted::Metadata("v1"));
        let h = accept("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
        assert_eq!(wanted(&h).unwrap(), Wanted::MetadataList("v1"));
        let h = accept("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1");
        assert_eq!(wanted(&h).unwrap(), Wanted::Metadata("v1beta1"));
        // client-go's metadata client: protobuf first, then JSON, then the object.
        let h = accept(
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        );
        assert_eq!(wanted(&h).unwrap(), Wanted::MetadataList("v1"));
    }

    #[test]
    fn the_first_acceptable_alternative_wins_by_q_then_order() {
        let h = accept("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json");
        assert_eq!(wanted(&h).unwrap(), Wanted::MetadataList("v1"));
        let h = accept(
            "application/json;as=Table;g=meta.k8s.io;v=v1;q=0.5, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        );
        assert_eq!(wanted(&h).unwrap(), Wanted::Metadata("v1"));
        let h = accept("*/*, application/json;as=Table;g=meta.k8s.io;v=v1");
        assert_eq!(
            wanted(&h).unwrap(),
            Wanted::Table("v1"),
            "concrete types before wildcards"
        );
        // Unknown kinds and metadata of another group are skipped.
        let h = accept(
            "application/json;as=Secret;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=example.com;v=v1,application/yaml",
        );
        assert_eq!(wanted(&h).unwrap(), Wanted::Object);
        // Tables are JSON or YAML; parameters like charset are ignored.
        let h = accept(
            "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json;charset=utf-8",
        );
        assert_eq!(wanted(&h).unwrap(), Wanted::Object);
    }

    #[test]
    fn nothing_acceptable_is_406_and_no_accept_is_the_object() {
        assert_eq!(wanted(&HeaderMap::new()).unwrap(), Wanted::Object);
        for a in [
            "text/html",
            "application/xml, text/plain",
            "application/json;stream=chunks",
        ] {
            let e = wanted(&accept(a)).unwrap_err();
            assert_eq!((e.reason, e.reason.code()), (Reason::NotAcceptable, 406), "{a}");
        }
        assert_eq!(
            wanted(&accept("application/json;stream=watch")).unwrap(),
            Wanted::Object
        );
    }

    #[test]
    fn content_types_name_the_conversion() {
        assert_eq!(Wanted::Object.content_type(), "application/json");
        assert_eq!(
            Wanted::Table("v1").content_type(),
            "application/json;as=Table;v=v1;g=meta.k8s.io"
        );
        assert_eq!(
            Wanted::MetadataList("v1beta1").content_type(),
            "application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io"
        );
    }
}
