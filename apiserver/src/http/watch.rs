//! Watch responses: a chunked stream of `{"type": ..., "object": ...}` JSON
//! events, one per line.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go`.
//! With a Table `Accept` (`kubectl get -w`), each object is sent as a Table
//! of one row; with `as=PartialObjectMetadata` (metadata informers), as its
//! PartialObjectMetadata, bookmarks included. `as=PartialObjectMetadataList`
//! names no form of a single object: upstream then sends the objects
//! unconverted, and so does miniplane. The stream ends when the client goes away (axum drops the
//! body, which drops the receiver, which ends the watch task), when the
//! watch times out, or when the server shuts down.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use super::AppState;
use super::metadata;
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
        Wanted::MetadataList(_) => Wanted::Object.content_type(),
        other => other.content_type(),
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
    let is_object = matches!(
        event,
        WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Deleted(_)
    );
    let version = match wanted {
        Wanted::Object | Wanted::MetadataList(_) => return wire,
        Wanted::Metadata(version) => {
            if !matches!(event, WatchEvent::Error(_)) {
                wire["object"] = metadata::partial(&wire["object"], version);
            }
            return wire;
        }
        Wanted::Table(version) => version,
    };
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
