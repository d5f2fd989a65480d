//! The end-to-end tests, one module per area, in one test binary.
//!
//! One binary rather than one per file: each test binary links the whole
//! control plane (apiserver, controllers, kubelet-sim, kube-rs), so forty
//! binaries took forty links and several gigabytes of disk. `cargo test
//! --test e2e canary::` runs one area.

mod admission_apis;
mod bad_input;
mod canary;
mod client_paths;
mod clients;
mod crd_openapi;
mod crds;
mod cronjobs;
mod daemonsets;
mod decisions;
mod endpoints;
mod event_ttl;
mod explain;
mod gateway;
mod hardening;
mod hpa;
mod https;
mod identity;
mod jobs;
mod journal;
mod kubectl_matrix;
mod kubernetes_service;
mod limits;
mod namespaces;
mod node_lifecycle;
mod operator_bundles;
mod podgc;
mod policy;
mod promql;
mod quota;
mod rbac;
mod restart;
mod rollouts;
mod server_side_apply;
mod statefulsets;
mod storage;
mod time_machine;
mod traffic;
mod ui;
mod watch;
mod watch_protocol;
