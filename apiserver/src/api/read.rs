//! Reads: get, list (with selectors and `limit`/`continue` paging) and watch.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go`,
//! `watch.go`, and the resourceVersion rules of
//! `staging/src/k8s.io/apiserver/pkg/storage/cacher`. A watch is a store
//! watch from a revision, with each event filtered through the selectors:
//! an object that starts matching is ADDED, one that stops matching is
//! DELETED, exactly as upstream's watch filtering does.
//!
//! Simplified: a `continue` token pages through the *current* state after the
//! last key returned, not through a snapshot at the first page's revision.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{Api, convert, decode_bytes, decode_record, store_error};
use crate::error::{ApiError, ApiResult, Reason};
use crate::fields::{FieldSelector, field_value};
use crate::kinds::{Kind, kind_of};
use crate::labels::Selector;
use crate::registry::ResourceInfo;

/// `?labelSelector=&fieldSelector=&limit=&continue=` of a list.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit` (0 or absent: everything).
    pub limit: Option<usize>,
    /// `continue`: an opaque token from a previous page.
    pub continue_token: Option<String>,
}

/// A page of a list.
#[derive(Clone, Debug)]
pub struct ObjectList {
    /// The matching objects, in key order.
    pub items: Vec<Value>,
    /// The revision the list is consistent at.
    pub resource_version: u64,
    /// Token for the next page, when there is one.
    pub continue_token: Option<String>,
    /// How many more items the store holds after this page (before filtering).
    pub remaining: Option<usize>,
}

impl ObjectList {
    /// The `<Kind>List` JSON, with top-level kind/apiVersion/resourceVersion.
    pub fn to_json(&self, info: &ResourceInfo) -> Value {
        let mut metadata = json!({"resourceVersion": self.resource_version.to_string()});
        if let Some(c) = &self.continue_token {
            metadata["continue"] = json!(c);
        }
        if let Some(n) = self.remaining.filter(|n| *n > 0) {
            metadata["remainingItemCount"] = json!(n);
        }
        json!({"kind": info.list_kind(), "apiVersion": info.api_version(), "metadata": metadata, "items": self.items})
    }
}

/// `?watch=true` options.
#[derive(Clone, Debug, Default)]
pub struct WatchOptions {
    /// `resourceVersion`: `None` or `Some(0)` = start with the current state
    /// as synthetic ADDED events; otherwise every change after it.
    pub resource_version: Option<u64>,
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
    /// `timeoutSeconds`: real (wall-clock) time, whatever the time scale —
    /// the client's own duration, not the simulated world's.
    pub timeout: Option<Duration>,
}

/// One event of a watch stream.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchEvent {
    /// An object appeared (or started matching).
    Added(Value),
    /// An object changed.
    Modified(Value),
    /// An object was deleted (or stopped matching); its last state.
    Deleted(Value),
    /// Progress: no change up to this resourceVersion.
    Bookmark(u64),
    /// The watch failed (e.g. 410 Expired) and ends.
    Error(ApiError),
}

impl WatchEvent {
    /// The `{"type": ..., "object": ...}` wire form; `kind`/`apiVersion`
    /// name the watched resource (for bookmarks).
    pub fn to_json(&self, info: &ResourceInfo) -> Value {
        let (t, object) = match self {
            WatchEvent::Added(o) => ("ADDED", o.clone()),
            WatchEvent::Modified(o) => ("MODIFIED", o.clone()),
            WatchEvent::Deleted(o) => ("DELETED", o.clone()),
            WatchEvent::Bookmark(rv) => (
                "BOOKMARK",
                json!({"kind": info.kind, "apiVersion": info.api_version(),
                       "metadata": {"resourceVersion": rv.to_string()}}),
            ),
            WatchEvent::Error(e) => ("ERROR", e.to_status()),
        };
        json!({"type": t, "object": object})
    }
}

/// The receiving end of a watch. Dropping it ends the watch task.
pub type WatchStream = mpsc::Receiver<WatchEvent>;

/// How often a watch that asked for bookmarks gets one, in real time
/// (upstream's cacher: `bookmarkFrequency`, a minute).
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);

/// How long before a watch's timeout its last bookmark is sent (upstream
/// sends one two seconds before the deadline, so that the client resumes
/// from the latest resourceVersion).
const BOOKMARK_BEFORE_DEADLINE: Duration = Duration::from_secs(2);

/// Real (wall-clock) time, for the durations a client sets on a request.
///
/// Only the simulated world follows `--time-scale` ([`store::Clock`]); a
/// watch's `timeoutSeconds` and the bookmark interval are the client's and
/// the API server's own durations, measured on the wall clock as upstream
/// measures them. On paused tokio time (tests) this is paused time too.
pub(crate) mod wall {
    use std::time::Duration;

    pub use tokio::time::Instant;

    /// Now, on the wall clock.
    pub fn now() -> Instant {
        Instant::now()
    }

    /// `now() + d`, saturating far in the future.
    pub fn after(d: Duration) -> Instant {
        let now = now();
        now.checked_add(d)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
    }

    /// Waits until `deadline` on the wall clock.
    pub async fn sleep_until(deadline: Instant) {
        tokio::time::sleep_until(deadline).await;
    }
}

/// When a watch with bookmarks gets its next one (upstream
/// `cacheWatcher.nextBookmarkTime`): a minute from `now`, or two seconds
/// before the watch's deadline if that comes first; none once that moment
/// has passed.
fn next_bookmark(now: wall::Instant, deadline: Option<wall::Instant>) -> Option<wall::Instant> {
    let heartbeat = now + BOOKMARK_EVERY;
    let Some(deadline) = deadline else {
        return Some(heartbeat);
    };
    let before_deadline = deadline.checked_sub(BOOKMARK_BEFORE_DEADLINE)?;
    let next = heartbeat.min(before_deadline);
    (next > now).then_some(next)
}

impl Api {
    /// Reads one object.
    pub fn get(&self, info: &ResourceInfo, namespace: Option<&str>, name: &str) -> ApiResult<Value> {
        let key = self.key(info, namespace, name)?;
        match self
            .inner
            .store
            .get(&key)
            .map_err(|e| store_error(info, name, e))?
        {
            Some(record) => convert::to_view(info, decode_record(&record)?),
            None => Err(ApiError::not_found(&info.group, &info.plural, name)),
        }
    }

    /// Lists objects, one namespace or all (`namespace = None`).
    pub fn list(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ObjectList> {
        let filter = Filter::new(
            info,
            opts.label_selector.as_deref(),
            opts.field_selector.as_deref(),
        )?;
        let prefix = info.prefix(namespace);
        let limit = opts.limit.filter(|l| *l > 0);
        let mut start_after = match &opts.continue_token {
            Some(token) => Some(decode_continue(token, &prefix)?),
            None => None,
        };
        let mut items = Vec::new();
        loop {
            // Page through the store until `limit` matching items are found.
            let want = limit.map(|l| l - items.len());
            let page = self
                .inner
                .store
                .list(&prefix, start_after.as_deref(), want)
                .map_err(|e| store_error(info, "", e))?;
            let last_key = page.records.last().map(|r| r.key.clone());
            for record in &page.records {
                let o = decode_record(record)?;
                if filter.matches(&o) {
                    items.push(convert::to_view(info, o)?);
                }
            }
            let full = limit.is_some_and(|l| items.len() >= l);
            if page.remaining == 0 || last_key.is_none() || full {
                let continue_token = if page.remaining > 0 {
                    last_key.map(|k| encode_continue(&k))
                } else {
                    None
                };
                let remaining = continue_token.as_ref().map(|_| page.remaining);
                return Ok(ObjectList {
                    items,
                    resource_version: page.revision,
                    continue_token,
                    remaining,
                });
            }
            start_after = last_key;
        }
    }

    /// Starts a watch. Events arrive on the returned channel until the
    /// receiver is dropped, the timeout passes, the store closes or an
    /// ERROR event ends it.
    pub fn watch(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        opts: &WatchOptions,
    ) -> ApiResult<WatchStream> {
        let filter = Filter::new(
            info,
            opts.label_selector.as_deref(),
            opts.field_selector.as_deref(),
        )?;
        let (tx, rx) = mpsc::channel(256);
        let (initial, from) = match opts.resource_version {
            None | Some(0) => {
                let list = self.list(
                    info,
                    namespace,
                    &ListOptions {
                        label_selector: opts.label_selector.clone(),
                        field_selector: opts.field_selector.clone(),
                        ..Default::default()
                    },
                )?;
                (list.items, list.resource_version)
            }
            Some(rv) => (Vec::new(), rv),
        };
        let prefix = info.prefix(namespace);
        let watch = match self.inner.store.watch(&prefix, from) {
            Ok(w) => w,
            Err(store::Error::Expired { requested, oldest }) => {
                // Upstream answers 200 and an ERROR event with the 410 Status.
                let _ = tx.try_send(WatchEvent::Error(ApiError::expired(requested, oldest)));
                return Ok(rx);
            }
            Err(e) => return Err(store_error(info, "", e)),
        };
        let task = WatchTask {
            info: info.clone(),
            tx,
            filter,
            allow_bookmarks: opts.allow_bookmarks,
            // The deadline runs from the request, not from the end of the
            // initial events.
            deadline: opts.timeout.map(wall::after),
            last_rv: from,
        };
        tokio::spawn(task.run(initial, watch));
        Ok(rx)
    }
}

/// The task that feeds one watch.
struct WatchTask {
    /// The watched row: events are converted to its version.
    info: ResourceInfo,
    /// To the client; when the client goes away, `closed()` resolves and the task ends.
    tx: mpsc::Sender<WatchEvent>,
    filter: Filter,
    allow_bookmarks: bool,
    /// When the watch ends (`timeoutSeconds`), on the wall clock.
    deadline: Option<wall::Instant>,
    last_rv: u64,
}

impl WatchTask {
    async fn run(mut self, initial: Vec<Value>, mut watch: store::Watch) {
        for o in initial {
            if self.tx.send(WatchEvent::Added(o)).await.is_err() {
                return;
            }
        }
        let deadline = self.deadline;
        let end = async move {
            match deadline {
                Some(d) => wall::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(end);
        let mut bookmark_at = if self.allow_bookmarks {
            next_bookmark(wall::now(), deadline)
        } else {
            None
        };
        loop {
            let bookmark = async move {
                match bookmark_at {
                    Some(at) => wall::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let event = tokio::select! {
                _ = self.tx.closed() => return,
                _ = &mut end => return,
                _ = bookmark => {
                    bookmark_at = next_bookmark(wall::now(), deadline);
                    Some(WatchEvent::Bookmark(self.last_rv))
                }
                next = watch.next() => match next {
                    None => return,
                    Some(Err(store::Error::Expired { requested, oldest })) => {
                        Some(WatchEvent::Error(ApiError::expired(requested, oldest)))
                    }
                    Some(Err(e)) => Some(WatchEvent::Error(ApiError::internal(e))),
                    Some(Ok(ev)) => self.translate(&ev),
                },
            };
            let Some(event) = event else { continue };
            let last = matches!(event, WatchEvent::Error(_));
            if self.tx.send(event).await.is_err() || last {
                return;
            }
        }
    }

    /// A store event as the client sees it through its selectors.
    fn translate(&mut self, ev: &store::Event) -> Option<WatchEvent> {
        self.last_rv = ev.revision;
        let decode = |bytes: &[u8]| decode_bytes(bytes, ev.revision).ok();
        let stored = decode(&ev.value)?;
        let new_matches = self.filter.matches(&stored);
        let new = match convert::to_view(&self.info, stored) {
            Ok(new) => new,
            Err(e) => return Some(WatchEvent::Error(e)),
        };
        let old_matches = || {
            ev.prev_value
                .as_deref()
                .and_then(decode)
                .is_some_and(|o| self.filter.matches(&o))
        };
        match ev.kind {
            store::EventKind::Added => new_matches.then_some(WatchEvent::Added(new)),
            store::EventKind::Deleted => new_matches.then_some(WatchEvent::Deleted(new)),
            store::EventKind::Modified => match (old_matches(), new_matches) {
                (true, true) => Some(WatchEvent::Modified(new)),
                (false, true) => Some(WatchEvent::Added(new)),
                (true, false) => Some(WatchEvent::Deleted(new)),
                (false, false) => None,
            },
        }
    }
}

/// Continue tokens: the last key returned, hex-encoded, so that they are
/// opaque and URL-safe.
fn encode_continue(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_continue(token: &str, prefix: &str) -> ApiResult<String> {
    let bad = || {
        ApiError::new(
            Reason::BadRequest,
            "continue key is not valid: invalid continue token",
        )
    };
    if !token.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes: Result<Vec<u8>, _> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&token[i..i + 2], 16))
        .collect();
    let key = String::from_utf8(bytes.map_err(|_| bad())?).map_err(|_| bad())?;
    if !key.starts_with(prefix) {
        return Err(bad());
    }
    Ok(key)
}

/// A compiled `labelSelector` + `fieldSelector` pair for lists and watches.
pub(crate) struct Filter {
    label: Option<Selector>,
    field: Option<FieldSelector>,
    kind: Kind,
    /// A custom resource version's `selectableFields` (`spec.mode`), beside
    /// `metadata.name` and `metadata.namespace`.
    custom_fields: Vec<String>,
}

/// The `selectableFields` of a custom resource version, as field names.
fn custom_fields(info: &ResourceInfo) -> Vec<String> {
    let fields = info
        .custom
        .as_ref()
        .and_then(|c| c.version.selectable_fields.as_ref());
    fields
        .into_iter()
        .flatten()
        .map(|f| f.json_path.trim_start_matches('.').to_string())
        .collect()
}

/// A selectable field's value as a field selector compares it: strings,
/// booleans and integers as text; other values never match.
fn custom_field_value(obj: &Value, name: &str) -> Option<String> {
    let value = name.split('.').try_fold(obj, |cur, key| cur.get(key))?;
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() => Some(n.to_string()),
        _ => None,
    }
}

impl Filter {
    /// Parses both selectors (400 on a syntax error or an unsupported field).
    pub fn new(info: &ResourceInfo, label: Option<&str>, field: Option<&str>) -> ApiResult<Filter> {
        let label = match label.filter(|s| !s.trim().is_empty()) {
            Some(s) => Some(
                // labels.Parse's own text, which names the requirement it could not parse.
                Selector::parse(s).map_err(ApiError::bad_request)?,
            ),
            None => None,
        };
        let kind = kind_of(info);
        let custom_fields = custom_fields(info);
        let field = match field.filter(|s| !s.trim().is_empty()) {
            Some(s) => {
                let f = FieldSelector::parse(s).map_err(ApiError::bad_request)?;
                for name in f
                    .fields()
                    .into_iter()
                    .filter(|n| !custom_fields.iter().any(|c| c == n))
                {
                    // Rejects fields the kind does not support, as upstream does.
                    let probe = serde_json::json!({});
                    field_value(kind, &probe, name).map_err(|e| match info.custom {
                        // A custom resource's field label conversion (upstream
                        // `customresource` `ConvertFieldLabel`) words it so.
                        Some(_) => ApiError::bad_request(format!("field label not supported: {name}")),
                        None => ApiError::bad_request(e),
                    })?;
                }
                Some(f)
            }
            None => None,
        };
        Ok(Filter {
            label,
            field,
            kind,
            custom_fields,
        })
    }

    /// Whether `obj` matches both selectors.
    pub fn matches(&self, obj: &Value) -> bool {
        if let Some(l) = &self.label
            && !l.matches(&crate::api::obj::labels(obj))
        {
            return false;
        }
        match &self.field {
            Some(f) => f.matches(|name| match self.custom_fields.iter().any(|c| c == name) {
                true => custom_field_value(obj, name),
                false => field_value(self.kind, obj, name).ok().flatten(),
            }),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookmarks_come_every_minute_and_two_seconds_before_the_deadline() {
        let now = wall::now();
        let s = Duration::from_secs;
        assert_eq!(next_bookmark(now, None), Some(now + s(60)));
        assert_eq!(next_bookmark(now, Some(now + s(600))), Some(now + s(60)));
        assert_eq!(next_bookmark(now, Some(now + s(30))), Some(now + s(28)));
        // At or past the last moment, no more bookmarks.
        assert_eq!(next_bookmark(now, Some(now + s(2))), None);
        assert_eq!(next_bookmark(now + s(28), Some(now + s(30))), None);
    }

    /// `timeoutSeconds` and bookmarks are wall-clock durations: at a time
    /// scale of 100 a 5 s watch still lasts 5 s, with its bookmark at 3 s.
    #[tokio::test(start_paused = true)]
    async fn watch_timeout_and_bookmarks_run_on_the_wall_clock_at_any_time_scale() {
        let api = crate::testkit::TestApi::builder()
            .clock(store::Clock::scaled(100.0))
            .open();
        let info = api.resource("", "v1", "configmaps").unwrap();
        let opts = WatchOptions {
            resource_version: Some(api.store().revision()),
            allow_bookmarks: true,
            timeout: Some(Duration::from_secs(5)),
            ..Default::default()
        };
        let start = wall::now();
        let mut rx = api.watch(&info, Some("default"), &opts).unwrap();
        let first = rx.recv().await;
        assert!(matches!(first, Some(WatchEvent::Bookmark(_))), "{first:?}");
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        assert_eq!(rx.recv().await, None);
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    }
}
