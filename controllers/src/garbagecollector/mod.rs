//! The garbage collector: deletes objects whose owners are gone, and carries
//! out the `orphan` and `foregroundDeletion` finalizers the API server sets
//! when an owner is deleted with `propagationPolicy: Orphan` or `Foreground`.
//!
//! Upstream: `pkg/controller/garbagecollector/` — `garbagecollector.go`
//! (the workers), `graph.go` (the node), `graph_builder.go` (the monitors
//! and `processGraphChanges`), `operations.go` and `patch.go` (the API
//! calls). The API server's part — setting `deletionTimestamp` and the two
//! finalizers, and removing an object once its last finalizer is gone — is
//! in `apiserver/src/api/delete.rs`.
//!
//! ```text
//! monitors (list + watch every deletable resource, metadata only)
//!   └─▶ Graph: uid → node { identity, owners, dependents, being deleted, ... }
//!         │ owner removed        → its dependents         ─┐
//!         │ owner starts Foreground → it and its dependents ├─▶ attemptToDelete ─▶ delete / drop refs /
//!         │ dependent unblocks a waiting owner → the owner  ─┘                      remove foregroundDeletion
//!         │ owner starts Orphan  ─────────────────────────────▶ attemptToOrphan ─▶ drop refs, remove orphan
//!         │ owner named but never seen (virtual) → verify it exists ─▶ attemptToDelete
//! ```
//!
//! Where to start reading: [`plan::attempt_to_delete_item`] (what happens to
//! an object, given its owners), then [`graph::Graph::upsert`] (what each
//! change queues), then [`controller`] (the workers' live lookups and writes).
//!
//! Only [`graph`] and [`plan`] are pure; [`graph_builder`], [`operations`]
//! and [`controller`] perform IO.
//!
//! Not built on [`crate::runtime::Feeds`] like the other controllers: its monitors watch every
//! resource untyped (metadata only) and feed a graph, not a queue of keys; the graph decides what
//! goes on its two queues (attemptToDelete, attemptToOrphan), and the workers start after at most
//! 30 s even if a monitor has not synced, as upstream.
//!
//! The monitored resources follow the API server's registry when the
//! collector is built [`following`](controller::GarbageCollector::following) it
//! ([`monitors`]): a CRD's resources get a monitor once served.
//!
//! Simplified against upstream: no `absentOwnerCache` (every owner check
//! is a live GET); a virtual node keeps the coordinates of the first
//! dependent that named it; no events, no metrics, no debug graph endpoint.

pub mod controller;
pub mod graph;
pub mod graph_builder;
pub mod monitors;
pub mod operations;
pub mod plan;

#[cfg(test)]
mod tests;
