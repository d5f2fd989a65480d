//! The in-memory time-series store: one current value per series (what
//! `/metrics` shows), and the samples [`Tsdb::scrape`] took of it, kept for
//! a retention window of simulated time.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// A series' labels, sorted by name (the metric name is not among them).
pub type Labels = BTreeMap<String, String>;

/// What a metric family is, for `# TYPE` and for `rate`'s counter resets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// Only goes up (or resets to 0).
    Counter,
    /// Any value.
    Gauge,
    /// `_bucket{le}`, `_sum` and `_count` counters.
    Histogram,
}

/// One series: its current value and its scraped samples (ms since the epoch, value).
#[derive(Debug, Default)]
pub(crate) struct Series {
    pub(crate) current: f64,
    pub(crate) samples: VecDeque<(i64, f64)>,
}

impl Series {
    /// Adds to a counter; a forgotten series (a pod of the same name again,
    /// e.g. a StatefulSet's) starts again from 0, which reads as a reset.
    fn add(&mut self, delta: f64) {
        if self.current.is_nan() {
            self.current = 0.0;
        }
        self.current += delta;
    }
}

#[derive(Debug)]
pub(crate) struct Family {
    pub(crate) kind: MetricKind,
    pub(crate) help: String,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) retention: Duration,
    pub(crate) families: BTreeMap<String, Family>,
    /// Series by metric name (with `_bucket` / `_sum` / `_count` for histograms), then labels.
    pub(crate) series: BTreeMap<String, BTreeMap<Labels, Series>>,
}

/// The store. Cheap to clone; every clone is the same store.
#[derive(Clone, Debug)]
pub struct Tsdb {
    inner: Arc<Mutex<Inner>>,
}

impl Default for Tsdb {
    fn default() -> Self {
        Tsdb::new()
    }
}

/// Milliseconds since the Unix epoch (0 before it).
pub(crate) fn millis(at: SystemTime) -> i64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

impl Tsdb {
    /// An empty store keeping 30 minutes of simulated time.
    pub fn new() -> Self {
        Tsdb::with_retention(Duration::from_secs(30 * 60))
    }

    /// An empty store keeping `retention` of samples.
    pub fn with_retention(retention: Duration) -> Self {
        Tsdb {
            inner: Arc::new(Mutex::new(Inner {
                retention,
                families: BTreeMap::new(),
                series: BTreeMap::new(),
            })),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Declares a metric family (its `# HELP` and `# TYPE`).
    pub fn describe(&self, name: &str, kind: MetricKind, help: &str) {
        self.lock().families.insert(
            name.to_string(),
            Family {
                kind,
                help: help.to_string(),
            },
        );
    }

    /// Adds `delta` to a counter series.
    pub fn counter_add(&self, name: &str, labels_: &[(&str, &str)], delta: f64) {
        let mut inner = self.lock();
        let series = inner.series.entry(name.to_string()).or_default();
        series.entry(labels(labels_)).or_default().add(delta);
    }

    /// Sets a gauge series.
    pub fn gauge_set(&self, name: &str, labels_: &[(&str, &str)], value: f64) {
        let mut inner = self.lock();
        let series = inner.series.entry(name.to_string()).or_default();
        series.entry(labels(labels_)).or_default().current = value;
    }

    /// Observes `count` values all equal to `value` in a histogram with
    /// bucket bounds `buckets` (ascending, `+Inf` implied).
    pub fn histogram_observe(
        &self,
        name: &str,
        labels_: &[(&str, &str)],
        buckets: &[f64],
        value: f64,
        count: u64,
    ) {
        let base = labels(labels_);
        let n = count as f64;
        let mut inner = self.lock();
        for bound in buckets
            .iter()
            .map(|b| format_bound(*b))
            .chain(["+Inf".to_string()])
        {
            let within = bound == "+Inf" || value <= bound.parse::<f64>().unwrap_or(f64::INFINITY);
            let mut l = base.clone();
            l.insert("le".into(), bound);
            let s = inner.series.entry(format!("{name}_bucket")).or_default();
            let series = s.entry(l).or_default();
            series.add(if within { n } else { 0.0 });
        }
        let s = inner.series.entry(format!("{name}_sum")).or_default();
        s.entry(base.clone()).or_default().add(value * n);
        let s = inner.series.entry(format!("{name}_count")).or_default();
        s.entry(base).or_default().add(n);
    }

    /// Stops sampling every series with `label` = `value` (a deleted pod);
    /// its samples stay until they age out.
    pub fn forget(&self, label: &str, value: &str) {
        let mut inner = self.lock();
        for by_labels in inner.series.values_mut() {
            by_labels.retain(|l, s| l.get(label).map(String::as_str) != Some(value) || !s.samples.is_empty());
            for (l, s) in by_labels.iter_mut() {
                if l.get(label).map(String::as_str) == Some(value) {
                    s.current = f64::NAN;
                }
            }
        }
    }

    /// Takes a sample of every live series at `at` (not of a series whose
    /// latest sample is as recent), and drops samples older than the
    /// retention window (and series left with none).
    pub fn scrape(&self, at: SystemTime) {
        let t = millis(at);
        let mut inner = self.lock();
        let horizon = t - i64::try_from(inner.retention.as_millis()).unwrap_or(i64::MAX);
        for by_labels in inner.series.values_mut() {
            for s in by_labels.values_mut() {
                // Samples stay in time order: a scrape at or before a
                // series' latest sample adds nothing to it (as Prometheus
                // refuses out-of-order samples).
                if !s.current.is_nan() && s.samples.back().is_none_or(|(last, _)| *last < t) {
                    s.samples.push_back((t, s.current));
                }
                while s.samples.front().is_some_and(|(ts, _)| *ts < horizon) {
                    s.samples.pop_front();
                }
            }
            by_labels.retain(|_, s| !s.current.is_nan() || !s.samples.is_empty());
        }
    }

    /// Calls `f` with every series named `name` (every series when `None`):
    /// its metric name, labels and samples, oldest first. Holds the lock
    /// throughout, so `f` should only pick out what it needs.
    pub(crate) fn visit(&self, name: Option<&str>, mut f: impl FnMut(&str, &Labels, &VecDeque<(i64, f64)>)) {
        let inner = self.lock();
        let mut each = |n: &str, by_labels: &BTreeMap<Labels, Series>| {
            for (l, s) in by_labels {
                f(n, l, &s.samples);
            }
        };
        match name {
            Some(n) => {
                if let Some(by_labels) = inner.series.get(n) {
                    each(n, by_labels);
                }
            }
            None => {
                for (n, by_labels) in &inner.series {
                    each(n, by_labels);
                }
            }
        }
    }

    /// Every label name of every series with samples, sorted (`__name__` among them).
    pub fn label_names(&self) -> Vec<String> {
        let inner = self.lock();
        let mut names: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for by_labels in inner.series.values() {
            if by_labels.values().any(|s| !s.samples.is_empty()) {
                names.insert("__name__".to_string());
            }
            for (l, s) in by_labels {
                if !s.samples.is_empty() {
                    names.extend(l.keys().cloned());
                }
            }
        }
        names.into_iter().collect()
    }

    /// Every value of label `label` (`__name__`: every metric name) among
    /// series with samples, sorted.
    pub fn label_values(&self, label: &str) -> Vec<String> {
        let inner = self.lock();
        let mut values: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for (name, by_labels) in &inner.series {
            for (l, s) in by_labels {
                if s.samples.is_empty() {
                    continue;
                }
                if label == "__name__" {
                    values.insert(name.clone());
                } else if let Some(v) = l.get(label) {
                    values.insert(v.clone());
                }
            }
        }
        values.into_iter().collect()
    }

    /// Every live series' current value in the Prometheus text format (0.0.4).
    pub fn exposition(&self) -> String {
        crate::api::exposition(&self.lock())
    }
}

/// A bucket bound as Prometheus writes it (`0.5`, `1`, `10`).
pub(crate) fn format_bound(b: f64) -> String {
    format!("{b}")
}
