//! Watch responses: a chunked stream of `{"type": ..., "object": ...}` JSON
//! events, one per line.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go`.
//! With a Table `Accept` (`kubectl get -w`), each object is sent as a Table
//! of one row. The stream ends when the client goes away (axum drops the
//! body, which drops the receiver, which ends the watch task), when the
//! watch times out, or when the server shuts down.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use super::AppState;
use super::negotiate::Wanted;
use super::tables::{self, IncludeObject};
use crate::api::{WatchEvent, WatchStream};
use crate::registry::ResourceInfo;

/// Turns a watch into a streaming HTTP response.
pub fn stream(
    state: &AppState,
    info: Arc<ResourceInfo>,
    events: WatchStream,
    wanted: Wanted,
    include: IncludeObject,
) -> Response {
    let state = state.clone();
    let guard = state.metrics.watch_opened();
    let shutdown = state.shutdown.clone();
    let stream = tokio_stream::wrappers::ReceiverStream::new(events)
        .take_until(async move { shutdown.cancelled().await })
        .map(move |event| {
            let _open = &guard; // counts this watch as open until the stream is dropped
            let mut line =
                serde_json::to_vec(&encode(&state, &info, &event, wanted, include)).unwrap_or_default();
            line.push(b'\n');
            Ok::<_, std::convert::Infallible>(Bytes::from(line))
        });
    let content_type = match wanted {
        Wanted::Object => "application/json".to_string(),
        Wanted::Table(v) => format!("application/json;as=Table;v={v};g=meta.k8s.io"),
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, content_type)],
        Body::from_stream(stream),
    )
        .into_response()
}

fn encode(
    state: &AppState,
    info: &ResourceInfo,
    event: &WatchEvent,
    wanted: Wanted,
    include: IncludeObject,
) -> Value {
    let mut wire = event.to_json(info);
    let Wanted::Table(version) = wanted else {
        return wire;
    };
    let is_object = matches!(
        event,
        WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Deleted(_)
    );
    if is_object {
        let object = wire["object"].take();
        let meta = json!({"resourceVersion": object.pointer("/metadata/resourceVersion")});
        wire["object"] = tables::table(
            info,
            std::slice::from_ref(&object),
            meta,
            include,
            version,
            state.now(),
        );
    }
    wire
}
