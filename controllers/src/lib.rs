//! The controllers of miniplane, and the client-side machinery they share.
//!
//! Every controller is an API client: it reads through an informer's cache,
//! is woken through a work queue, and writes through a [`runtime::Client`],
//! so each write passes the same validation, defaulting and resourceVersion
//! checks as one from kubectl. Start with [`runtime`], which is client-go in
//! miniature (reflector, shared informer, indexed cache, work queue,
//! expectations, the worker loop and the teaching trace); each controller
//! module names the upstream controller it follows.

pub mod canary;
pub mod certificates;
pub mod clusterroleaggregation;
pub mod controller_ref_manager;
pub mod controller_utils;
pub mod cronjob;
pub mod daemon;
pub mod deployment;
pub mod disruption;
pub mod endpoint;
pub mod endpointslice;
pub mod garbagecollector;
pub mod gateway;
pub mod history;
pub mod job;
pub mod nodelifecycle;
pub mod podautoscaler;
pub mod podgc;
pub mod replicaset;
pub mod resourcequota;
pub mod rootcacertpublisher;
pub mod runtime;
pub mod serviceaccount;
pub mod statefulset;
pub mod tainteviction;
#[cfg(test)]
pub(crate) mod testing;
pub mod ttlafterfinished;
pub mod volume;
