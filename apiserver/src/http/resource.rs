//! The handler of every resource URL: one `match` over (method, URL shape)
//! that calls the [`Api`](crate::api::Api).
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/installer.go` and
//! `handlers/*.go`. Each arm parses what the verb needs from the query and
//! the body, calls one API method, and encodes the result.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use super::negotiate::{self, Wanted, converted_response, json_response};
use super::params::{self, flag};
use super::route::Route;
use super::tables::{self, IncludeObject};
use super::{AppState, metadata, reviews, watch};
use crate::api::{
    DeleteOptions, DeleteOutcome, FieldValidation, ListOptions, PatchType, WatchOptions, WriteOptions,
};
use crate::auth::UserInfo;
use crate::error::{ApiError, ApiResult, Reason};
use crate::fields::FieldSelector;
use crate::registry::{ResourceInfo, Subresource};

pub use super::params::Query;

/// Serves one resource request for `user`.
pub async fn serve(
    state: &AppState,
    method: &Method,
    route: Route,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
    user: &UserInfo,
) -> Response {
    let deprecated = crate::api::deprecation_warning(state.api.registry(), &route.info);
    let mut resp = match dispatch(state, method, route, query, headers, body, user).await {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    };
    // A deprecated custom resource version warns on every request (a
    // write's warnings carry it already).
    if let Some(text) = deprecated {
        let quoted = format!("299 - {text:?}");
        if !resp
            .headers()
            .get_all(header::WARNING)
            .iter()
            .any(|v| v == quoted.as_str())
        {
            negotiate::add_warnings(resp.headers_mut(), &[text]);
        }
    }
    resp
}

#[allow(clippy::too_many_arguments)] // the parts of one request
async fn dispatch(
    state: &AppState,
    method: &Method,
    route: Route,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
    user: &UserInfo,
) -> ApiResult<Response> {
    let api = &state.api;
    let info = route.info.clone();
    let ns = route.namespace.as_deref();
    if route.sub == Some(Subresource::Log) && *method == Method::GET {
        return log(state, ns, route.name.as_deref().unwrap_or(""), query).await;
    }
    // Negotiated before anything is done, so that a 406 changes nothing.
    let wanted = negotiate::wanted(headers)?;
    let out = Output {
        state,
        info: &info,
        query,
        wanted,
    };
    if route.watch {
        // The deprecated `/watch/` paths: GET only; a name watches one object.
        if *method != Method::GET {
            return Err(method_not_allowed(method));
        }
        let mut opts = watch_options(query, &info)?;
        if let Some(name) = route.name.as_deref() {
            opts.field_selector = Some(name_selector(opts.field_selector.as_deref(), name)?);
        }
        return watch(&out, ns, &opts);
    }
    // The review kinds serve only a POST to their collection (upstream
    // registers no other route for them: 405).
    if info.create_only && !(*method == Method::POST && route.name.is_none()) {
        return Err(method_not_allowed(method));
    }
    match (method.clone(), route.name.as_deref(), route.sub) {
        (Method::GET, None, _) if flag(query, "watch") => watch(&out, ns, &watch_options(query, &info)?),
        (Method::GET, None, _) => {
            let list = api.list(&info, ns, &list_options(query, &info)?)?;
            out.list(&list)
        }
        (Method::POST, None, _) if info.create_only => {
            let review = negotiate::decode_body(headers, body)?;
            let answer = reviews::answer(state, &info, review, user)?;
            out.object(StatusCode::CREATED, answer, &[])
        }
        (Method::POST, None, _) => {
            let mut obj = negotiate::decode_body(headers, body)?;
            if info.kind == "CertificateSigningRequest" {
                crate::kinds::certificates::set_requestor(&mut obj, user);
            }
            let opts = write_options(query, headers)?;
            let written = api.create(&info, ns, obj, &opts).await?;
            out.object(StatusCode::CREATED, written.object, &written.warnings)
        }
        (Method::DELETE, None, _) => {
            let opts = delete_options(query, headers, body)?;
            let deleted = api
                .delete_collection(&info, ns, &list_options(query, &info)?, &opts)
                .await?;
            let list = crate::api::ObjectList {
                items: deleted,
                resource_version: api.store().revision(),
                continue_token: None,
                remaining: None,
            };
            out.list(&list)
        }
        (Method::GET, Some(name), Some(Subresource::Scale)) => {
            out.scale(StatusCode::OK, api.get_scale(&info, ns, name)?)
        }
        (Method::GET, Some(name), _) => out.object(StatusCode::OK, api.get(&info, ns, name)?, &[]),
        (Method::PUT, Some(name), Some(Subresource::Scale)) => {
            let scale = negotiate::decode_body(headers, body)?;
            let opts = write_options(query, headers)?;
            out.scale(
                StatusCode::OK,
                api.update_scale(&info, ns, name, &scale, &opts).await?,
            )
        }
        (Method::POST, Some(name), Some(Subresource::Token)) => {
            let request = negotiate::decode_body(headers, body)?;
            let answer = reviews::token_request(state, ns.unwrap_or("default"), name, request)?;
            out.object(StatusCode::CREATED, answer, &[])
        }
        (
            Method::PUT,
            Some(name),
            sub @ (None
            | Some(Subresource::Status)
            | Some(Subresource::Approval)
            | Some(Subresource::EphemeralContainers)),
        ) => {
            let obj = negotiate::decode_body(headers, body)?;
            let opts = write_options(query, headers)?;
            let written = api.update(&info, ns, name, obj, sub, &opts).await?;
            out.object(StatusCode::OK, written.object, &written.warnings)
        }
        (
            Method::PATCH,
            Some(name),
            sub @ (None
            | Some(Subresource::Status)
            | Some(Subresource::Scale)
            | Some(Subresource::Approval)
            | Some(Subresource::EphemeralContainers)),
        ) => patch(&out, &route, name, sub, headers, body).await,
        (Method::DELETE, Some(name), None) => {
            let opts = delete_options(query, headers, body)?;
            match api.delete(&info, ns, name, &opts).await? {
                DeleteOutcome::Pending(obj) => out.object(StatusCode::OK, obj, &[]),
                DeleteOutcome::Deleted(obj) if info.kind == "Pod" => out.object(StatusCode::OK, obj, &[]),
                // A Status is never converted (upstream `doTransformObject`).
                DeleteOutcome::Deleted(obj) => {
                    Ok(json_response(StatusCode::OK, &success_status(&info, &obj), &[]))
                }
            }
        }
        (Method::POST, Some(name), Some(Subresource::Eviction)) => {
            let eviction = negotiate::decode_body(headers, body)?;
            let status = api
                .evict(ns.unwrap_or("default"), name, &eviction, dry_run(query)?)
                .await?;
            let code = status.get("code").and_then(Value::as_u64).unwrap_or(201);
            let code = StatusCode::from_u16(u16::try_from(code).unwrap_or(500))
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            Ok(json_response(code, &status, &[]))
        }
        (Method::POST, Some(name), Some(Subresource::Binding)) => {
            let binding = negotiate::decode_body(headers, body)?;
            let opts = write_options(query, headers)?;
            api.bind(ns.unwrap_or("default"), name, &binding, &opts).await?;
            let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
            Ok(json_response(StatusCode::CREATED, &status, &[]))
        }
        (m, _, _) => Err(method_not_allowed(&m)),
    }
}

/// 405 with upstream's message.
pub fn method_not_allowed(m: &Method) -> ApiError {
    ApiError::new(
        Reason::MethodNotAllowed,
        format!("the server does not allow this method on the requested resource ({m})"),
    )
}

/// Starts a watch and streams it in the representation asked for.
fn watch(out: &Output<'_>, ns: Option<&str>, opts: &WatchOptions) -> ApiResult<Response> {
    let include = IncludeObject::parse(out.query.get("includeObject").map(String::as_str))?;
    let events = out.state.api.watch(out.info, ns, opts)?;
    Ok(watch::stream(
        out.state,
        out.info.clone(),
        events,
        out.wanted,
        include,
    ))
}

/// The field selector of a watch of one object by its path (upstream
/// `ListResource`): `metadata.name=NAME`, or the client's own selector when
/// it asks for that same name.
fn name_selector(given: Option<&str>, name: &str) -> ApiResult<String> {
    let given = given.filter(|s| !s.trim().is_empty());
    let Some(given) = given else {
        return Ok(format!("metadata.name={name}"));
    };
    let parsed = FieldSelector::parse(given).map_err(ApiError::bad_request)?;
    if parsed.requires_exact_match("metadata.name") != Some(name) {
        return Err(ApiError::bad_request(
            "fieldSelector metadata.name doesn't match requested name",
        ));
    }
    Ok(given.to_string())
}

/// How results go back to the client: in the representation `Accept` asked
/// for (upstream `transformResponseObject`).
struct Output<'a> {
    state: &'a AppState,
    info: &'a Arc<ResourceInfo>,
    query: &'a Query,
    wanted: Wanted,
}

impl Output<'_> {
    fn include(&self) -> ApiResult<IncludeObject> {
        IncludeObject::parse(self.query.get("includeObject").map(String::as_str))
    }

    /// One object: itself, a Table of one row, or its metadata.
    fn object(&self, status: StatusCode, obj: Value, warnings: &[String]) -> ApiResult<Response> {
        let body = match self.wanted {
            Wanted::Object => return Ok(json_response(status, &obj, warnings)),
            Wanted::Table(version) => {
                let meta = json!({"resourceVersion": obj.pointer("/metadata/resourceVersion")});
                tables::table(
                    self.info,
                    std::slice::from_ref(&obj),
                    meta,
                    self.include()?,
                    version,
                    self.state.now(),
                )
            }
            Wanted::Metadata(version) => metadata::partial(&obj, version),
            Wanted::MetadataList(_) => return Err(metadata::object_is_not_a_list(self.info)),
        };
        Ok(converted_response(self.wanted, status, &body, warnings))
    }

    /// A list: itself, a Table, or the list of the items' metadata.
    fn list(&self, list: &crate::api::ObjectList) -> ApiResult<Response> {
        let whole = list.to_json(self.info);
        let body = match self.wanted {
            Wanted::Object => return Ok(json_response(StatusCode::OK, &whole, &[])),
            Wanted::Table(version) => tables::table(
                self.info,
                &list.items,
                whole["metadata"].clone(),
                self.include()?,
                version,
                self.state.now(),
            ),
            Wanted::MetadataList(version) => {
                metadata::partial_list(&list.items, whole["metadata"].clone(), version)
            }
            Wanted::Metadata(_) => return Err(metadata::list_is_not_an_object(self.info)),
        };
        Ok(converted_response(self.wanted, StatusCode::OK, &body, &[]))
    }

    /// An `autoscaling/v1` Scale: itself (there is no Table of it), or its metadata.
    fn scale(&self, status: StatusCode, scale: Value) -> ApiResult<Response> {
        match self.wanted {
            Wanted::Metadata(_) | Wanted::MetadataList(_) => self.object(status, scale, &[]),
            Wanted::Object | Wanted::Table(_) => Ok(json_response(status, &scale, &[])),
        }
    }
}

#[allow(clippy::too_many_arguments)] // the parts of one PATCH request
async fn patch(
    out: &Output<'_>,
    route: &Route,
    name: &str,
    sub: Option<Subresource>,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    let query = out.query;
    if body.len() > negotiate::MAX_BODY {
        return Err(negotiate::too_large());
    }
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let patch_type = PatchType::from_content_type(ct)?;
    // Apply bodies are YAML (kubectl sends JSON, which is YAML too).
    let patch = match patch_type {
        PatchType::Apply => negotiate::decode_yaml(body)?,
        _ => negotiate::decode_json(body)?,
    };
    let mut opts = write_options(query, headers)?;
    if patch_type == PatchType::Apply {
        opts.field_manager = query.get("fieldManager").cloned();
        opts.force = flag(query, "force");
    } else if query.contains_key("force") {
        return Err(ApiError::bad_request("force is only valid for apply patches"));
    }
    let info = &route.info;
    let written = out
        .state
        .api
        .patch(
            info,
            route.namespace.as_deref(),
            name,
            patch_type,
            &patch,
            sub,
            &opts,
        )
        .await?;
    let status = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    match sub {
        Some(Subresource::Scale) => out.scale(status, crate::api::scale_of(info, &written.object)?),
        _ => out.object(status, written.object, &written.warnings),
    }
}

async fn log(state: &AppState, ns: Option<&str>, name: &str, query: &Query) -> ApiResult<Response> {
    let info = state.api.resource("", "v1", "pods")?;
    let pod = state.api.get(&info, ns, name)?;
    let container = match query.get("container") {
        Some(c) => c.clone(),
        None => pod
            .pointer("/spec/containers/0/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    };
    let opts = crate::api::LogOptions {
        previous: flag(query, "previous"),
        tail_lines: tail_lines(query)?,
        timestamps: flag(query, "timestamps"),
    };
    let text = state.api.pod_log(&pod, &container, &opts)?;
    if flag(query, "follow") {
        return Ok(follow_log(state, ns, name, container, opts, text));
    }
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain")],
        Body::from(text),
    )
        .into_response())
}

/// `logs -f`: the lines so far, then new lines as the container writes
/// them (polled every simulated second), until the pod goes away, the
/// client disconnects or the server stops.
fn follow_log(
    state: &AppState,
    ns: Option<&str>,
    name: &str,
    container: String,
    opts: crate::api::LogOptions,
    first: String,
) -> Response {
    let (tx, rx) = tokio::sync::mpsc::channel::<String>(16);
    let (api, shutdown) = (state.api.clone(), state.shutdown.clone());
    let (ns, name) = (ns.map(str::to_string), name.to_string());
    tokio::spawn(async move {
        let all = crate::api::LogOptions {
            tail_lines: None,
            ..opts
        };
        let mut seen = match api.resource("", "v1", "pods").and_then(|info| {
            let pod = api.get(&info, ns.as_deref(), &name)?;
            api.pod_log(&pod, &container, &all)
        }) {
            Ok(text) => text.len(),
            Err(_) => return,
        };
        if tx.send(first).await.is_err() {
            return;
        }
        loop {
            tokio::select! {
                _ = tx.closed() => return,
                _ = shutdown.cancelled() => return,
                _ = api.clock().sleep(Duration::from_secs(1)) => {}
            }
            let Ok(info) = api.resource("", "v1", "pods") else {
                return;
            };
            let Ok(pod) = api.get(&info, ns.as_deref(), &name) else {
                return;
            };
            let Ok(text) = api.pod_log(&pod, &container, &all) else {
                return;
            };
            if text.len() < seen || !text.is_char_boundary(seen) {
                seen = text.len(); // the log was cut at its line cap
            } else if text.len() > seen {
                let new = text[seen..].to_string();
                seen = text.len();
                if tx.send(new).await.is_err() {
                    return;
                }
            }
        }
    });
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx)
        .map(|chunk| Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(chunk)));
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain")],
        Body::from_stream(stream),
    )
        .into_response()
}

/// The Status a delete answers with when the object is gone.
fn success_status(info: &crate::registry::ResourceInfo, obj: &Value) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {
            "name": obj.pointer("/metadata/name"),
            "group": info.group,
            "kind": info.plural,
            "uid": obj.pointer("/metadata/uid"),
        },
    })
}

/// `tailLines`: zero or more (upstream `ValidatePodLogOptions`).
fn tail_lines(query: &Query) -> ApiResult<Option<usize>> {
    match params::int64(query, "tailLines")? {
        Some(n) if n < 0 => Err(ApiError::invalid(
            "",
            "PodLogOptions",
            "",
            &[crate::error::FieldError::invalid(
                "tailLines",
                n.into(),
                "must be greater than or equal to 0",
            )],
        )),
        n => Ok(n.and_then(|n| usize::try_from(n).ok())),
    }
}

fn list_options(query: &Query, info: &ResourceInfo) -> ApiResult<ListOptions> {
    // Lists always read the latest state; the resourceVersion is still
    // checked, as upstream checks it.
    params::resource_version(query, &info.group, &info.plural)?;
    Ok(ListOptions {
        label_selector: query.get("labelSelector").cloned(),
        field_selector: query.get("fieldSelector").cloned(),
        limit: params::positive(query, "limit")?.and_then(|n| usize::try_from(n).ok()),
        continue_token: query.get("continue").filter(|c| !c.is_empty()).cloned(),
    })
}

fn watch_options(query: &Query, info: &ResourceInfo) -> ApiResult<WatchOptions> {
    Ok(WatchOptions {
        resource_version: params::resource_version(query, &info.group, &info.plural)?,
        label_selector: query.get("labelSelector").cloned(),
        field_selector: query.get("fieldSelector").cloned(),
        allow_bookmarks: flag(query, "allowWatchBookmarks"),
        // Zero or below: the server's default.
        timeout: params::positive(query, "timeoutSeconds")?.map(Duration::from_secs),
    })
}

fn dry_run(query: &Query) -> ApiResult<bool> {
    match query.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "Invalid dry run value: {other}: supported values: \"All\""
        ))),
    }
}

fn write_options(query: &Query, headers: &HeaderMap) -> ApiResult<WriteOptions> {
    let field_validation = match query.get("fieldValidation") {
        Some(v) => FieldValidation::parse(v)?,
        None => FieldValidation::Warn,
    };
    let field_manager = query
        .get("fieldManager")
        .filter(|m| !m.is_empty())
        .cloned()
        .or_else(|| manager_from_user_agent(headers));
    Ok(WriteOptions {
        dry_run: dry_run(query)?,
        field_manager,
        field_validation,
        force: false,
    })
}

/// The User-Agent up to its first `/`, printable characters only, at most
/// 128 bytes (upstream `prefixFromUserAgent`).
fn manager_from_user_agent(headers: &HeaderMap) -> Option<String> {
    let ua = headers.get(header::USER_AGENT)?.to_str().ok()?;
    let prefix: String = ua
        .split('/')
        .next()?
        .chars()
        .filter(|c| !c.is_control())
        .take(128)
        .collect();
    (!prefix.is_empty()).then_some(prefix)
}

fn delete_options(query: &Query, headers: &HeaderMap, body: &[u8]) -> ApiResult<DeleteOptions> {
    let mut opts = if body.iter().all(u8::is_ascii_whitespace) {
        DeleteOptions::default()
    } else {
        DeleteOptions::from_json(&negotiate::decode_body(headers, body)?)?
    };
    if let Some(g) = params::int64(query, "gracePeriodSeconds")? {
        opts.grace_period = Some(g);
    }
    if let Some(p) = query.get("propagationPolicy") {
        opts.propagation = Some(crate::api::Propagation::parse(p)?);
    }
    opts.dry_run |= dry_run(query)?;
    opts.actor = manager_from_user_agent(headers);
    Ok(opts)
}
