//! The series the simulation writes, and their labels. Queries (the Canary's
//! built-in metrics, the HPA's resource metrics, users' own) name these.

/// Counter: requests answered, by `namespace`, `service` (the backend
/// Service the request was routed to), `pod`, `code` (HTTP status, `200`,
/// `503` ...) and `route` (the HTTPRoute, `namespace/name`).
pub const HTTP_REQUESTS_TOTAL: &str = "http_requests_total";

/// Histogram (`_bucket{le}`, `_sum`, `_count`): request durations in
/// seconds, by `namespace`, `service`, `pod` and `route`.
pub const HTTP_REQUEST_DURATION_SECONDS: &str = "http_request_duration_seconds";

/// The bucket bounds of [`HTTP_REQUEST_DURATION_SECONDS`] (`+Inf` implied).
pub const DURATION_BUCKETS: [f64; 19] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0,
];

/// Counter: CPU seconds used, by `namespace`, `pod`, `container` (cAdvisor's
/// name, so a rate over it reads as cores in use).
pub const CONTAINER_CPU_USAGE_SECONDS_TOTAL: &str = "container_cpu_usage_seconds_total";
