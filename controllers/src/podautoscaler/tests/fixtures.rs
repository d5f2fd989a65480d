//! Shared fixtures: a fixed `now`, and a fake metrics client answering what a case gives it
//! (upstream's fake metrics, custom-metrics and external-metrics clients).

use apiserver::labels::Selector;
use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::podautoscaler::metrics::{MetricsClient, PodMetricsInfo};

/// The tests' `now`: 2023-11-14T22:13:20Z.
pub(super) fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).expect("a valid instant")
}

/// Answers every query from its fields; `None` answers as an API with nothing to say.
#[derive(Clone, Debug, Default)]
pub(super) struct FakeMetrics {
    pub timestamp: Timestamp,
    pub resource: Option<PodMetricsInfo>,
    pub metric_name: String,
    pub pods: Option<PodMetricsInfo>,
    pub object: Option<i64>,
    pub external: Option<Vec<i64>>,
}

impl MetricsClient for FakeMetrics {
    fn get_resource_metric(
        &self,
        _resource: &str,
        _namespace: &str,
        _selector: &Selector,
    ) -> Result<(PodMetricsInfo, Timestamp), String> {
        match &self.resource {
            Some(m) if !m.is_empty() => Ok((m.clone(), self.timestamp)),
            _ => Err("no metrics returned from resource metrics API".to_string()),
        }
    }

    fn get_raw_metric(
        &self,
        metric_name: &str,
        _namespace: &str,
        _selector: &Selector,
        _metric_selector: Option<&LabelSelector>,
    ) -> Result<(PodMetricsInfo, Timestamp), String> {
        assert_eq!(metric_name, self.metric_name, "the metric asked for");
        match &self.pods {
            Some(m) if !m.is_empty() => Ok((m.clone(), self.timestamp)),
            _ => Err("no metrics returned from custom metrics API".to_string()),
        }
    }

    fn get_object_metric(
        &self,
        metric_name: &str,
        _namespace: &str,
        _object: &CrossVersionObjectReference,
        _metric_selector: Option<&LabelSelector>,
    ) -> Result<(i64, Timestamp), String> {
        assert_eq!(metric_name, self.metric_name, "the metric asked for");
        self.object
            .map(|v| (v, self.timestamp))
            .ok_or_else(|| "no metrics returned from custom metrics API".to_string())
    }

    fn get_external_metric(
        &self,
        metric_name: &str,
        _namespace: &str,
        _metric_selector: Option<&LabelSelector>,
    ) -> Result<(Vec<i64>, Timestamp), String> {
        assert_eq!(metric_name, self.metric_name, "the metric asked for");
        match &self.external {
            Some(v) if !v.is_empty() => Ok((v.clone(), self.timestamp)),
            _ => Err("no metrics returned from external metrics API".to_string()),
        }
    }
}
