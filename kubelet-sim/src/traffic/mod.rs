//! Simulated traffic: requests routed by HTTPRoutes to Services' ready
//! endpoints, answered by each pod according to its `sim.miniplane.dev/`
//! annotations, counted into the metrics store as a Prometheus scraping the
//! pods and the gateway would see them.
//!
//! | file | role | upstream |
//! |---|---|---|
//! | [`annotations`] | the traffic annotations, their defaults, the latency sampler | — |
//! | [`model`] | pure: objects → [`model::Topology`]; one tick of requests → [`model::Tally`] | Gateway API `apis/v1/httproute_types.go` |
//! | [`run`] | the loop: informers → rebuild, a tick every simulated second (every 10 ms of real time above `--time-scale 100`), a scrape every 5 s | — |
//!
//! # What receives traffic
//!
//! * An **HTTPRoute** is live when one of its `parentRefs` names an existing
//!   Gateway (same namespace unless the ref says otherwise), unless the
//!   simulated gateway controller (`sim.miniplane.dev/gateway-controller`)
//!   wrote `Accepted=False` in its status. A live route receives
//!   `sim.miniplane.dev/requests-per-second` requests per simulated second
//!   (default 10), once however many Gateways it is attached to.
//! * A **Service** annotated `sim.miniplane.dev/requests-per-second`
//!   receives that rate straight to its ready endpoints (label `route=""`),
//!   on top of any route's traffic: load for an HPA, or analysis traffic
//!   for a preview Service. Like a load generator waiting for its target,
//!   it sends nothing while the Service has no ready endpoint.
//!
//! Requests per tick are the rate × the simulated time since the last tick;
//! the fraction left over is carried to the next tick, so the long-run rate
//! is exact.
//!
//! # How a route's requests are split
//!
//! 1. **Rule.** A share `sim.miniplane.dev/header-share` (default 0.1) of
//!    the requests carries the headers a rule matches on; such a request
//!    goes to the rule with the most header matches (the first in order on
//!    a tie), as Gateway API precedence says. The other requests are split
//!    evenly across the rules with a match without headers (no `matches`
//!    means match everything; paths are not simulated). A route whose rules
//!    all match on headers receives only the header-carrying share; a route
//!    without header rules receives its whole rate on its other rules. A
//!    route with no rules answers 500 (the API's default rule has no backends).
//! 2. **Backend.** Drawn by `weight` (default 1; weight 0 gets nothing).
//!    No backend with weight (or no backendRefs): the gateway answers
//!    `500` (`service=""`, `pod=""`). A backendRef that is not a Service or
//!    names none: `500` (`service=<name>`, `pod=""`). Cross-namespace refs
//!    are followed without a ReferenceGrant.
//! 3. **Endpoint.** Drawn uniformly among the Service's ready endpoints
//!    (EndpointSlices labelled `kubernetes.io/service-name`,
//!    `conditions.ready` not false, `targetRef` a Pod). None ready: the
//!    gateway answers `503` (`pod=""`).
//! 4. **Answer.** The pod answers `500` for a share
//!    `sim.miniplane.dev/error-rate` of its requests, else `200`. Errors
//!    are spread evenly (each answer adds the error rate to the pod's debt;
//!    an answer is an error when the debt reaches 1, the debt starting at an
//!    offset drawn from the seed and the pod's name), so any window of a
//!    few dozen answers shows the configured rate. The duration is drawn
//!    from a log-normal with median `sim.miniplane.dev/latency-ms`
//!    (default 20) and 99th percentile `sim.miniplane.dev/latency-p99-ms`
//!    (default 2.5 × the median): σ = ln(p99 / median) / 2.3263.
//!    Answers the gateway gives (500/503 with `pod=""`) are counted but
//!    have no duration.
//!
//! # CPU
//!
//! Every Running pod's first container uses, per simulated second,
//! `sim.miniplane.dev/cpu-millicores` (default 0) plus
//! `sim.miniplane.dev/cpu-millicores-per-request` (default 10, i.e. 10 ms of
//! CPU per request) × the requests per second it served, written as
//! `container_cpu_usage_seconds_total{namespace,pod,container}`. A pod's
//! utilisation (what the HorizontalPodAutoscaler reads) is
//! `rate(container_cpu_usage_seconds_total[1m])` over the container's CPU
//! request.
//!
//! # Series
//!
//! `http_requests_total{namespace,service,pod,code,route}`,
//! `http_request_duration_seconds{namespace,service,pod,route}` (buckets
//! [`sim_metrics::names::DURATION_BUCKETS`]) and
//! `container_cpu_usage_seconds_total{namespace,pod,container}`, where
//! `route` is `<namespace>/<name>` of the HTTPRoute and `namespace` the
//! backend Service's. They reach the store just before every scrape (every
//! 5 simulated seconds). When a pod leaves the cache its series are
//! forgotten (by pod name, once no namespace has a pod of that name); their
//! samples age out with the store's retention.
//!
//! # Determinism
//!
//! One ChaCha8 generator seeded from the simulation's seed draws every
//! header, backend, endpoint and latency, over objects in key order: under
//! one seed, the same objects and the same ticks give the same series.

pub mod annotations;
pub mod model;
pub mod run;

#[cfg(test)]
mod tests;
