//! The client-side machinery every controller is built from: client-go in
//! miniature.
//!
//! ```text
//!            API server (apiserver::Api, in process or over HTTP)
//!               ▲ writes                       │ list + watch
//!               │                              ▼
//!   Reconciler::reconcile ◀── WorkQueue ◀── Informer (reflector → cache + indexes)
//!      reads the cache ─────────────────────────┘     │ Change<K> to every subscriber
//!                                                     ▼
//!                                       event handler: object → key → queue.add
//! ```
//!
//! | module | client-go / kubernetes file | what it is |
//! | --- | --- | --- |
//! | [`client`] | `dynamic/simple.go`, `api/errors/errors.go` | the [`Client`] trait, the in-process client, typed calls |
//! | [`http_client`] | `rest/request.go` | the same trait over plain HTTP |
//! | [`meta`] | `tools/cache/store.go` (keys), apimachinery `meta/v1/controller_ref.go` | an object's key, name and controller reference; `clock_now` |
//! | [`informer`] | `tools/cache/reflector.go`, `shared_informer.go`, `thread_safe_store.go` | list + watch into an indexed cache shared by every controller |
//! | [`workqueue`] | `util/workqueue/queue.go`, `delaying_queue.go`, `rate_limiting_queue.go`, `default_rate_limiters.go` | the deduplicating queue of keys |
//! | [`expectations`] | `pkg/controller/controller_utils.go` | "I created 3 pods; wait until the cache has seen them" |
//! | [`feed`] | `shared_informer.go` (`AddEventHandler`, `WaitForNamedCacheSync`), the controllers' `Run` | informer changes → handler → queue keys; a controller's `run` |
//! | [`controller`] | sample-controller `controller.go` (`processNextWorkItem`) | the worker loop and the reconcile outcome |
//! | [`events`] | `tools/record/event.go`, `events_cache.go` | Events with aggregated counts |
//! | [`decision`] | (none; upstream logs at `-v=4`) | a plan decision and its sentence, recorded in the causal journal |
//! | [`trace`] | (none) | `--trace controllers`: event → enqueue → sync → writes → result |
//! | [`wrap`] | (`rest.Config.WrapTransport`) | [`WrapClient`]: a client around another, writing only what it adds |
//! | [`lessons`] | (none) | `--disable expectations` and the other switches that break one mechanism on purpose |
//! | [`fault`] | (client-go `testing/fixture.go` reactors) | a client whose writes fail now and then, for the reliability suite |
//!
//! Start reading at [`controller::run_workers`]: it is the whole loop.

pub mod client;
pub mod controller;
pub mod decision;
pub mod events;
pub mod expectations;
pub mod fault;
pub mod feed;
pub mod http_client;
pub mod informer;
pub mod lessons;
pub mod meta;
pub mod reflector;
pub mod trace;
pub mod workqueue;
pub mod wrap;

pub use client::{
    BoxFuture, Client, ClientError, ClientResult, DeleteParams, InProcessClient, ListParams, PatchType,
    ResourceRef, Typed, WatchEvent,
};
pub use controller::{Action, ReconcileError, Reconciler, run_workers};
pub use decision::{Decision, decision, journal_ref};
pub use events::{EventType, ObjectRef, Recorder};
pub use expectations::{ControllerExpectations, UidTrackingControllerExpectations};
pub use fault::{FaultCounts, Faults, FaultyClient};
pub use feed::Feeds;
pub use http_client::HttpClient;
pub use informer::{Change, Informer, Store};
pub use meta::{
    clock_now, controller_uid, get_controller_of, is_controlled_by, key_of, name_of, new_controller_ref,
    object_key, split_key,
};
pub use trace::TracingClient;
pub use workqueue::WorkQueue;
pub use wrap::{Call, Verb, WrapClient, Written};
