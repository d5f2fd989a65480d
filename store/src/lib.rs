//! A versioned object store on sled — the etcd of miniplane.
//!
//! The store knows nothing about Kubernetes: it maps string keys
//! (`/registry/deployments/default/web`) to opaque byte values, and gives
//! every write the next number of one global, strictly increasing
//! [`Revision`]. The API server turns that number into
//! `metadata.resourceVersion` when it reads an object back, exactly as the
//! upstream apiserver does with etcd's `mod_revision`.
//!
//! What it offers:
//! - [`Store::create`] (fails [`Error::AlreadyExists`]), [`Store::get`],
//!   [`Store::list`] (a consistent snapshot of a key prefix and the revision
//!   it is consistent at), [`Store::update`] and [`Store::delete`] with an
//!   optional revision precondition (fails [`Error::Conflict`]). Each is atomic.
//! - [`Store::watch`]: every change after a revision, in revision order,
//!   exactly once; DELETED events carry the last state. History is kept for a
//!   bounded window ([`Config::history_max_events`], [`Config::history_max_age`])
//!   and persisted, so a watch can resume across a restart; a revision older
//!   than the window fails [`Error::Expired`].
//! - Durability: in [`Durability::Flush`] mode a write returns only after it
//!   is flushed to disk. Concurrent writers share flushes (group commit).
//!
//! Start reading at [`Store::open`].

pub mod clock;

pub use clock::Clock;

/// The store's global logical clock: one number per write, never reused.
pub type Revision = u64;
