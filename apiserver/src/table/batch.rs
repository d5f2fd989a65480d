//! Tables of batch/v1: Job and CronJob.
//!
//! Upstream: `jobColumnDefinitions`, `cronJobColumnDefinitions`, `printJob`
//! and `printCronJob` of `pkg/printers/internalversion/printers.go`.

use serde_json::{Value, json};

use super::helpers::{
    array_len, has_condition, human_duration_between, is_deleting, parse_time, selector_at,
};
use super::{Row, TablePrinter, col};
use crate::jsonpath::{at, int_at, str_at};

pub(super) static JOB: TablePrinter = TablePrinter::workload(
    &[
        col("Status", "string", "Status of the job."),
        col("Completions", "string", D_JOB_COMPLETIONS),
        col("Duration", "string", "Time required to complete the job."),
    ],
    Some(D_JOB_SELECTOR),
    print_job,
);
const D_JOB_COMPLETIONS: &str = "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.";
const D_JOB_SELECTOR: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

fn print_job(r: &Row) -> Vec<Value> {
    let own = [
        json!(job_status(r.obj)),
        json!(job_completions(r.obj)),
        json!(job_duration(r)),
    ];
    r.workload(
        own,
        &["spec", "template"],
        Some(selector_at(r.obj, &["spec", "selector"])),
    )
}

/// The first of Complete, Failed, Terminating (being deleted), Suspended,
/// FailureTarget, SuccessCriteriaMet that holds, else Running.
fn job_status(obj: &Value) -> &'static str {
    if has_condition(obj, "Complete") {
        "Complete"
    } else if has_condition(obj, "Failed") {
        "Failed"
    } else if is_deleting(obj) {
        "Terminating"
    } else if has_condition(obj, "Suspended") {
        "Suspended"
    } else if has_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(obj, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    }
}

fn job_completions(obj: &Value) -> String {
    let succeeded = int_at(obj, &["status", "succeeded"]);
    if let Some(completions) = at(obj, &["spec", "completions"]).and_then(Value::as_i64) {
        return format!("{succeeded}/{completions}");
    }
    let parallelism = int_at(obj, &["spec", "parallelism"]);
    if parallelism > 1 {
        format!("{succeeded}/1 of {parallelism}")
    } else {
        format!("{succeeded}/1")
    }
}

/// From `status.startTime` to `status.completionTime` (or now); empty before the start.
fn job_duration(r: &Row) -> String {
    let Some(start) = r.obj.pointer("/status/startTime").and_then(parse_time) else {
        return String::new();
    };
    let end = r.obj.pointer("/status/completionTime").and_then(parse_time);
    human_duration_between(start, end.unwrap_or(r.now))
}

pub(super) static CRON_JOB: TablePrinter = TablePrinter::workload(
    &[
        col("Schedule", "string", D_CJ_SCHEDULE),
        col("Timezone", "string", D_CJ_TIMEZONE),
        col("Suspend", "boolean", D_CJ_SUSPEND),
        col("Active", "integer", D_CJ_ACTIVE),
        col("Last Schedule", "string", D_CJ_LAST),
    ],
    Some(D_JOB_SELECTOR),
    print_cron_job,
);
fn print_cron_job(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let last = match obj.pointer("/status/lastScheduleTime") {
        Some(v) if !v.is_null() => r.since(Some(v)),
        _ => "<none>".to_string(),
    };
    let time_zone = at(obj, &["spec", "timeZone"])
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let suspend = match at(obj, &["spec", "suspend"]).and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let own = [
        json!(str_at(obj, &["spec", "schedule"])),
        json!(time_zone),
        json!(suspend),
        json!(array_len(obj.pointer("/status/active"))),
        json!(last),
    ];
    let template = ["spec", "jobTemplate", "spec", "template"];
    let selector = selector_at(obj, &["spec", "jobTemplate", "spec", "selector"]);
    r.workload(own, &template, Some(selector))
}

const D_CJ_SCHEDULE: &str = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.";
const D_CJ_TIMEZONE: &str = "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";
const D_CJ_SUSPEND: &str = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.";
const D_CJ_ACTIVE: &str = "A list of pointers to currently running jobs.";
const D_CJ_LAST: &str = "Information when was the last time the job was successfully scheduled.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells};

    #[test]
    fn job_rows() {
        let complete = json!({
            "metadata": {"name": "pi", "creationTimestamp": ago(400)},
            "spec": {"completions": 1, "parallelism": 1, "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "abc"}},
                     "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}},
            "status": {"succeeded": 1, "startTime": ago(400), "completionTime": ago(300),
                       "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}
        });
        assert_eq!(
            cells(&JOB, &complete),
            json!([
                "pi",
                "Complete",
                "1/1",
                "100s",
                "6m40s",
                "pi",
                "perl",
                "batch.kubernetes.io/controller-uid=abc"
            ])
        );
        let running =
            json!({"metadata": {"name": "r"}, "spec": {"parallelism": 3}, "status": {"startTime": ago(30)}});
        let c = cells(&JOB, &running);
        assert_eq!(
            (c[1].clone(), c[2].clone(), c[3].clone()),
            (json!("Running"), json!("0/1 of 3"), json!("30s"))
        );
        let fresh = json!({"metadata": {"name": "f"}, "spec": {}});
        let c = cells(&JOB, &fresh);
        assert_eq!((c[2].clone(), c[3].clone()), (json!("0/1"), json!("")));
        let failed = json!({"metadata": {"name": "x", "deletionTimestamp": ago(1)}, "status": {"conditions": [{"type": "Failed", "status": "True"}]}});
        assert_eq!(cells(&JOB, &failed)[1], json!("Failed"));
        let deleting = json!({"metadata": {"name": "x", "deletionTimestamp": ago(1)}, "status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
        assert_eq!(cells(&JOB, &deleting)[1], json!("Terminating"));
        let suspended = json!({"metadata": {"name": "x"}, "status": {"conditions": [{"type": "Suspended", "status": "True"}, {"type": "Complete", "status": "False"}]}});
        assert_eq!(cells(&JOB, &suspended)[1], json!("Suspended"));
    }

    #[test]
    fn cron_job_rows() {
        let cj = json!({
            "metadata": {"name": "hello", "creationTimestamp": ago(3600 * 5)},
            "spec": {"schedule": "*/1 * * * *", "suspend": false,
                     "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "hello", "image": "busybox"}]}}}}},
            "status": {"active": [{"name": "hello-1"}], "lastScheduleTime": ago(42)}
        });
        assert_eq!(
            cells(&CRON_JOB, &cj),
            json!([
                "hello",
                "*/1 * * * *",
                "<none>",
                "False",
                1,
                "42s",
                "5h",
                "hello",
                "busybox",
                "<none>"
            ])
        );
        let bare = json!({"metadata": {"name": "c"}, "spec": {"schedule": "@daily", "timeZone": "Etc/UTC"}});
        let c = cells(&CRON_JOB, &bare);
        assert_eq!(
            (c[2].clone(), c[3].clone(), c[4].clone(), c[5].clone()),
            (json!("Etc/UTC"), json!("<unset>"), json!(0), json!("<none>"))
        );
    }
}
