//! The traffic annotations: how much traffic a route or Service receives,
//! and how each pod answers it. Every value is optional; an invalid one
//! yields a warning and the default, never an error.
//!
//! | annotation | on | value | default |
//! |---|---|---|---|
//! | [`REQUESTS_PER_SECOND`] | HTTPRoute | requests per simulated second the route receives | [`DEFAULT_ROUTE_RPS`] (10) |
//! | [`REQUESTS_PER_SECOND`] | Service | requests per second sent straight to the Service's ready endpoints | none (no direct traffic) |
//! | [`HEADER_SHARE`] | HTTPRoute | share (0–1) of the requests carrying the headers a rule matches on | [`DEFAULT_HEADER_SHARE`] (0.1) |
//! | [`ERROR_RATE`] | Pod | share (0–1) of its answers that are `500` | `0` |
//! | [`LATENCY_MS`] | Pod | median latency, milliseconds | [`DEFAULT_LATENCY_MS`] (20) |
//! | [`LATENCY_P99_MS`] | Pod | 99th percentile latency, milliseconds (at least the median) | 2.5 × the median |
//! | [`CPU_MILLICORES`] | Pod | CPU used with no traffic, millicores | `0` |
//! | [`CPU_MILLICORES_PER_REQUEST`] | Pod | CPU per request/s served, millicores (10 = 10 ms of CPU per request) | [`DEFAULT_CPU_MILLICORES_PER_REQUEST`] (10) |
//!
//! Rates are capped at [`MAX_RPS`] per route or Service: every request is
//! sampled one by one.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use rand::{Rng, RngExt};

/// Annotation (HTTPRoute or Service): requests per simulated second.
pub const REQUESTS_PER_SECOND: &str = "sim.miniplane.dev/requests-per-second";
/// Annotation (HTTPRoute): the share of requests carrying the matched headers.
pub const HEADER_SHARE: &str = "sim.miniplane.dev/header-share";
/// Annotation (Pod): the share of `500` answers.
pub const ERROR_RATE: &str = "sim.miniplane.dev/error-rate";
/// Annotation (Pod): the median latency in milliseconds.
pub const LATENCY_MS: &str = "sim.miniplane.dev/latency-ms";
/// Annotation (Pod): the 99th percentile latency in milliseconds.
pub const LATENCY_P99_MS: &str = "sim.miniplane.dev/latency-p99-ms";
/// Annotation (Pod): the CPU a pod uses with no traffic, in millicores.
pub const CPU_MILLICORES: &str = "sim.miniplane.dev/cpu-millicores";
/// Annotation (Pod): the CPU per request/s served, in millicores.
pub const CPU_MILLICORES_PER_REQUEST: &str = "sim.miniplane.dev/cpu-millicores-per-request";

/// Requests per second of an HTTPRoute without [`REQUESTS_PER_SECOND`].
pub const DEFAULT_ROUTE_RPS: f64 = 10.0;
/// The share of requests carrying matched headers, without [`HEADER_SHARE`].
pub const DEFAULT_HEADER_SHARE: f64 = 0.1;
/// Median latency without [`LATENCY_MS`].
pub const DEFAULT_LATENCY_MS: f64 = 20.0;
/// The p99 latency without [`LATENCY_P99_MS`], as a multiple of the median.
pub const DEFAULT_P99_FACTOR: f64 = 2.5;
/// Millicores per request/s without [`CPU_MILLICORES_PER_REQUEST`].
pub const DEFAULT_CPU_MILLICORES_PER_REQUEST: f64 = 10.0;
/// The highest rate a route or Service receives (higher values are capped).
pub const MAX_RPS: f64 = 10_000.0;
/// The standard normal distribution's 99th percentile.
const Z_P99: f64 = 2.326_347_874;

/// A log-normal latency distribution, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// ln(median).
    pub mu: f64,
    /// ln(p99 / median) / z(0.99).
    pub sigma: f64,
}

impl Latency {
    /// The log-normal with this median and 99th percentile (`p99 >= median > 0`).
    pub fn new(median_ms: f64, p99_ms: f64) -> Latency {
        Latency {
            mu: median_ms.ln(),
            sigma: (p99_ms / median_ms).ln().max(0.0) / Z_P99,
        }
    }

    /// One latency, in seconds.
    pub fn sample_seconds(&self, rng: &mut impl Rng) -> f64 {
        (self.mu + self.sigma * standard_normal(rng)).exp() / 1000.0
    }
}

/// One draw of N(0, 1) (Box–Muller).
pub fn standard_normal(rng: &mut impl Rng) -> f64 {
    // 1 - [0, 1) is (0, 1]: ln never sees 0.
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// How one pod answers, from its annotations.
#[derive(Debug, Clone, PartialEq)]
pub struct PodTraffic {
    /// The share of `500` answers.
    pub error_rate: f64,
    /// The latency distribution.
    pub latency: Latency,
    /// CPU used with no traffic, millicores.
    pub cpu_millicores: f64,
    /// CPU per request/s served, millicores.
    pub cpu_millicores_per_request: f64,
    /// Invalid annotations (their defaults were used).
    pub warnings: Vec<String>,
}

impl Default for PodTraffic {
    fn default() -> Self {
        PodTraffic {
            error_rate: 0.0,
            latency: Latency::new(DEFAULT_LATENCY_MS, DEFAULT_LATENCY_MS * DEFAULT_P99_FACTOR),
            cpu_millicores: 0.0,
            cpu_millicores_per_request: DEFAULT_CPU_MILLICORES_PER_REQUEST,
            warnings: Vec::new(),
        }
    }
}

impl PodTraffic {
    /// The behaviour `pod`'s annotations ask for.
    pub fn for_pod(pod: &Pod) -> PodTraffic {
        PodTraffic::from_annotations(pod.metadata.annotations.as_ref())
    }

    /// The behaviour these annotations ask for (`None`: all defaults).
    pub fn from_annotations(annotations: Option<&BTreeMap<String, String>>) -> PodTraffic {
        let empty = BTreeMap::new();
        let a = annotations.unwrap_or(&empty);
        let mut warnings = Vec::new();
        let error_rate = number(a, ERROR_RATE, 0.0, |v| (0.0..=1.0).contains(&v), &mut warnings);
        let median = number(a, LATENCY_MS, DEFAULT_LATENCY_MS, |v| v > 0.0, &mut warnings);
        let p99 = number(
            a,
            LATENCY_P99_MS,
            median * DEFAULT_P99_FACTOR,
            |v| v >= median,
            &mut warnings,
        );
        let cpu_millicores = number(a, CPU_MILLICORES, 0.0, |v| v >= 0.0, &mut warnings);
        let cpu_millicores_per_request = number(
            a,
            CPU_MILLICORES_PER_REQUEST,
            DEFAULT_CPU_MILLICORES_PER_REQUEST,
            |v| v >= 0.0,
            &mut warnings,
        );
        PodTraffic {
            error_rate,
            latency: Latency::new(median, p99),
            cpu_millicores,
            cpu_millicores_per_request,
            warnings,
        }
    }
}

/// The rate an HTTPRoute receives ([`DEFAULT_ROUTE_RPS`] when not annotated).
pub fn route_rps(meta: &ObjectMeta, warnings: &mut Vec<String>) -> f64 {
    let empty = BTreeMap::new();
    let a = meta.annotations.as_ref().unwrap_or(&empty);
    number(a, REQUESTS_PER_SECOND, DEFAULT_ROUTE_RPS, |v| v >= 0.0, warnings).min(MAX_RPS)
}

/// The rate sent straight to a Service, when it is annotated.
pub fn service_rps(meta: &ObjectMeta, warnings: &mut Vec<String>) -> Option<f64> {
    let a = meta.annotations.as_ref()?;
    a.get(REQUESTS_PER_SECOND)?;
    let rps = number(a, REQUESTS_PER_SECOND, 0.0, |v| v >= 0.0, warnings);
    (rps > 0.0).then_some(rps.min(MAX_RPS))
}

/// The share of an HTTPRoute's requests carrying matched headers.
pub fn header_share(meta: &ObjectMeta, warnings: &mut Vec<String>) -> f64 {
    let empty = BTreeMap::new();
    let a = meta.annotations.as_ref().unwrap_or(&empty);
    number(
        a,
        HEADER_SHARE,
        DEFAULT_HEADER_SHARE,
        |v| (0.0..=1.0).contains(&v),
        warnings,
    )
}

/// The annotation `key` as a finite number accepted by `valid`, else `default`
/// (with a warning when it was set).
fn number(
    annotations: &BTreeMap<String, String>,
    key: &str,
    default: f64,
    valid: impl Fn(f64) -> bool,
    warnings: &mut Vec<String>,
) -> f64 {
    let Some(value) = annotations.get(key) else {
        return default;
    };
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && valid(v) => v,
        _ => {
            warnings.push(format!("invalid {key} {value:?}, using {default}"));
            default
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
    }

    #[test]
    fn defaults_without_annotations() {
        let t = PodTraffic::from_annotations(None);
        assert_eq!(t, PodTraffic::default());
        assert_eq!(t.latency.mu, 20f64.ln());
        assert!((t.latency.sigma - 2.5f64.ln() / Z_P99).abs() < 1e-12);
    }

    #[test]
    fn annotations_are_read() {
        let a = annotations(&[
            (ERROR_RATE, "0.2"),
            (LATENCY_MS, "40"),
            (LATENCY_P99_MS, "300"),
            (CPU_MILLICORES, "50"),
            (CPU_MILLICORES_PER_REQUEST, "4"),
        ]);
        let t = PodTraffic::from_annotations(Some(&a));
        assert_eq!(t.error_rate, 0.2);
        assert_eq!(t.latency, Latency::new(40.0, 300.0));
        assert_eq!((t.cpu_millicores, t.cpu_millicores_per_request), (50.0, 4.0));
        assert!(t.warnings.is_empty());
    }

    #[test]
    fn invalid_values_warn_and_default() {
        let a = annotations(&[
            (ERROR_RATE, "1.5"),
            (LATENCY_MS, "fast"),
            (LATENCY_P99_MS, "5"),
            (CPU_MILLICORES, "-1"),
            (CPU_MILLICORES_PER_REQUEST, "NaN"),
        ]);
        let t = PodTraffic::from_annotations(Some(&a));
        assert_eq!(t.error_rate, 0.0);
        // p99 5 < median 20: the default p99, 2.5 × the median.
        assert_eq!(t.latency, Latency::new(20.0, 50.0));
        assert_eq!(t.cpu_millicores, 0.0);
        assert_eq!(t.cpu_millicores_per_request, DEFAULT_CPU_MILLICORES_PER_REQUEST);
        assert_eq!(t.warnings.len(), 5, "{:?}", t.warnings);
    }

    #[test]
    fn route_and_service_rates() {
        let mut w = Vec::new();
        let meta = |pairs: &[(&str, &str)]| ObjectMeta {
            annotations: Some(annotations(pairs)),
            ..ObjectMeta::default()
        };
        assert_eq!(route_rps(&ObjectMeta::default(), &mut w), DEFAULT_ROUTE_RPS);
        assert_eq!(route_rps(&meta(&[(REQUESTS_PER_SECOND, "50")]), &mut w), 50.0);
        assert_eq!(route_rps(&meta(&[(REQUESTS_PER_SECOND, "1e9")]), &mut w), MAX_RPS);
        assert_eq!(service_rps(&ObjectMeta::default(), &mut w), None);
        assert_eq!(
            service_rps(&meta(&[(REQUESTS_PER_SECOND, "2.5")]), &mut w),
            Some(2.5)
        );
        assert_eq!(service_rps(&meta(&[(REQUESTS_PER_SECOND, "0")]), &mut w), None);
        assert!(w.is_empty());
        assert_eq!(service_rps(&meta(&[(REQUESTS_PER_SECOND, "lots")]), &mut w), None);
        assert_eq!(header_share(&meta(&[(HEADER_SHARE, "0.25")]), &mut w), 0.25);
        assert_eq!(
            header_share(&meta(&[(HEADER_SHARE, "2")]), &mut w),
            DEFAULT_HEADER_SHARE
        );
        assert_eq!(w.len(), 2);
    }

    /// The sampler's median and 99th percentile are the configured ones.
    #[test]
    fn latency_quantiles_match_the_annotations() {
        let latency = Latency::new(40.0, 300.0);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut samples: Vec<f64> = (0..100_000).map(|_| latency.sample_seconds(&mut rng)).collect();
        samples.sort_by(f64::total_cmp);
        let median = samples[50_000] * 1000.0;
        let p99 = samples[99_000] * 1000.0;
        assert!((median - 40.0).abs() < 1.0, "median {median}");
        assert!((p99 - 300.0).abs() < 15.0, "p99 {p99}");
    }

    #[test]
    fn equal_median_and_p99_is_constant() {
        let latency = Latency::new(30.0, 30.0);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..100 {
            assert!((latency.sample_seconds(&mut rng) - 0.030).abs() < 1e-12);
        }
    }
}
