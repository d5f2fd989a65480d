//! Content negotiation: request bodies in, JSON and Tables out.
//!
//! Request bodies are JSON (also when no Content-Type is sent, as
//! `kubectl scale --current-replicas` does), YAML, or — from kubectl 1.32+
//! typed clients — Kubernetes protobuf. Responses are always JSON; a
//! `kubectl get` asking for `as=Table;g=meta.k8s.io;v=v1` gets a Table.

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

/// What the client asked for in `Accept`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// The object (or `<Kind>List`) as JSON.
    Object,
    /// A `meta.k8s.io` Table (`v1` or `v1beta1`).
    Table(&'static str),
}

/// Picks the first acceptable representation from `Accept`.
pub fn wanted(headers: &HeaderMap) -> Result<Wanted, ApiError> {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.trim().is_empty() {
        return Ok(Wanted::Object);
    }
    let mut table_error = None;
    for alternative in accept.split(',') {
        let mut parts = alternative.split(';').map(str::trim);
        let media = parts.next().unwrap_or("");
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |k: &str| params.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        match param("as") {
            Some("Table") => match (param("g"), param("v")) {
                (Some("meta.k8s.io"), Some("v1")) => return Ok(Wanted::Table("v1")),
                (Some("meta.k8s.io"), Some("v1beta1")) => return Ok(Wanted::Table("v1beta1")),
                (g, v) => {
                    table_error = Some(format!(
                        "no Table exists in group version {}/{}",
                        g.unwrap_or(""),
                        v.unwrap_or("")
                    ));
                }
            },
            Some(_) => {}
            None => {
                if matches!(
                    media,
                    "application/json"
                        | "*/*"
                        | "application/*"
                        | "application/vnd.kubernetes.protobuf"
                        | "application/yaml"
                ) {
                    return Ok(Wanted::Object);
                }
            }
        }
    }
    match table_error {
        Some(msg) => Err(ApiError::new(Reason::NotAcceptable, msg)),
        None => Ok(Wanted::Object),
    }
}

/// A JSON response with status and `Warning` headers.
pub fn json_response(status: StatusCode, body: &Value, warnings: &[String]) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response();
    add_warnings(resp.headers_mut(), warnings);
    resp
}

/// A Table response.
pub fn table_response(version: &str, body: &Value) -> Response {
    let ct = format!("application/json;as=Table;v={version};g=meta.k8s.io");
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    (StatusCode::OK, [(header::CONTENT_TYPE, ct)], bytes).into_response()
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
    }
}
