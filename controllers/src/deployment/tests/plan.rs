//! Table tests driven by the upstream cases in `controllers/testdata/deployment_*.json` (format:
//! `controllers/testdata/README.md`), plus a few plan-level scenarios.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentSpec, DeploymentStatus, DeploymentStrategy, ReplicaSet,
    ReplicaSetSpec, ReplicaSetStatus, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

use crate::deployment::plan::{Step, plan_rollout};
use crate::deployment::rolling::{
    ScaleChange, cleanup_unhealthy_replicas, reconcile_new_replica_set, reconcile_old_replica_sets,
    scale_down_old_replica_sets_for_rolling_update,
};
use crate::deployment::scale::{cleanup_deployment, scale};
use crate::deployment::util::*;
use crate::runtime::name_of;

// ---------------------------------------------------------------------------------------------
// JSON helpers and fixtures
// ---------------------------------------------------------------------------------------------

fn int(v: &Value) -> i32 {
    v.as_i64().map_or(0, |n| n as i32)
}

fn opt_int(v: &Value) -> Option<i32> {
    v.as_i64().map(|n| n as i32)
}

fn int_or_string(v: &Value) -> Option<IntOrString> {
    match v {
        Value::Number(n) => Some(IntOrString::Int(n.as_i64().unwrap_or(0) as i32)),
        Value::String(s) => Some(IntOrString::String(s.clone())),
        _ => None,
    }
}

fn string_map(v: &Value) -> Option<BTreeMap<String, String>> {
    let obj = v.as_object()?;
    Some(
        obj.iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
    )
}

fn time(v: &Value) -> Option<Time> {
    v.as_str()
        .map(|s| Time(s.parse::<Timestamp>().expect("RFC3339 time")))
}

fn deployment(replicas: i32, strategy: &str, surge: &Value, unavailable: &Value) -> Deployment {
    let rolling = (strategy == "RollingUpdate").then(|| RollingUpdateDeployment {
        max_surge: int_or_string(surge),
        max_unavailable: int_or_string(unavailable),
    });
    Deployment {
        metadata: ObjectMeta {
            name: Some("foo".into()),
            ..Default::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(replicas),
            strategy: Some(DeploymentStrategy {
                type_: Some(strategy.into()),
                rolling_update: rolling,
            }),
            ..Default::default()
        }),
        status: None,
    }
}

fn rolling_deployment(input: &Value, replicas_key: &str) -> Deployment {
    deployment(
        int(&input[replicas_key]),
        "RollingUpdate",
        &input["maxSurge"],
        &input["maxUnavailable"],
    )
}

fn rs(name: &str, replicas: i32, available: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(ReplicaSetSpec {
            replicas: Some(replicas),
            ..Default::default()
        }),
        status: Some(ReplicaSetStatus {
            available_replicas: Some(available),
            ..Default::default()
        }),
    }
}

fn rs_from_json(v: &Value) -> ReplicaSet {
    let mut out = rs(
        v["name"].as_str().unwrap_or_default(),
        int(&v["replicas"]),
        int(&v["availableReplicas"]),
    );
    out.metadata.creation_timestamp = time(&v["creationTimestamp"]);
    out.metadata.annotations = string_map(&v["annotations"]);
    out
}

fn status_from_json(v: &Value) -> DeploymentStatus {
    DeploymentStatus {
        replicas: opt_int(&v["replicas"]),
        updated_replicas: opt_int(&v["updatedReplicas"]),
        ready_replicas: opt_int(&v["readyReplicas"]),
        available_replicas: opt_int(&v["availableReplicas"]),
        observed_generation: v["observedGeneration"].as_i64(),
        ..Default::default()
    }
}

fn check<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

/// Runs every case of a file; panics listing the failures after printing passed/total.
fn run_file(file: &str, json: &str, run: fn(&str, &Value, &Value) -> Result<(), String>) {
    let cases: Vec<Value> = serde_json::from_str(json).expect("valid case file");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let name = c["name"].as_str().unwrap_or_default();
            let function = c["function"].as_str().unwrap_or_default();
            run(function, &c["input"], &c["expected"])
                .err()
                .map(|e| format!("{name} [{function}]: {e}"))
        })
        .collect();
    println!("{file}: {}/{} passed", cases.len() - failures.len(), cases.len());
    assert!(failures.is_empty(), "{file} failures:\n{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// deployment_fenceposts.json
// ---------------------------------------------------------------------------------------------

fn fencepost_case(function: &str, input: &Value, want: &Value) -> Result<(), String> {
    match function {
        "deployment.ResolveFenceposts" => {
            let (surge, unavailable) = (
                int_or_string(&input["maxSurge"]),
                int_or_string(&input["maxUnavailable"]),
            );
            let got = resolve_fenceposts(surge.as_ref(), unavailable.as_ref(), int(&input["desired"]));
            if want["error"].as_bool() == Some(true) {
                return check("error", got.is_err(), true);
            }
            check(
                "fenceposts",
                got,
                Ok((int(&want["surge"]), int(&want["unavailable"]))),
            )
        }
        "deployment.MaxUnavailable" => {
            let d = deployment(
                int(&input["replicas"]),
                input["strategy"].as_str().unwrap_or_default(),
                &input["maxSurge"],
                &input["maxUnavailable"],
            );
            check(
                "maxUnavailable",
                max_unavailable(&d),
                int(&want["maxUnavailable"]),
            )
        }
        "deployment.MinAvailable" => {
            let d = deployment(
                int(&input["replicas"]),
                input["strategy"].as_str().unwrap_or_default(),
                &input["maxSurge"],
                &input["maxUnavailable"],
            );
            check("minAvailable", min_available(&d), int(&want["minAvailable"]))
        }
        "deployment.NewRSNewReplicas" => {
            let d = deployment(
                int(&input["deploymentReplicas"]),
                input["strategy"].as_str().unwrap_or_default(),
                &input["maxSurge"],
                &input["maxUnavailable"],
            );
            let new_rs = rs("new", int(&input["newRSReplicas"]), 0);
            let others: Vec<ReplicaSet> = input["allRSsReplicas"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, n)| rs(&format!("rs-{i}"), int(n), 0))
                .collect();
            check(
                "newRSReplicas",
                new_rs_new_replicas(&d, &others, &new_rs),
                Ok(int(&want["newRSReplicas"])),
            )
        }
        other => Err(format!("unknown function {other}")),
    }
}

#[test]
fn upstream_fenceposts() {
    run_file(
        "deployment_fenceposts.json",
        include_str!("../../../testdata/deployment_fenceposts.json"),
        fencepost_case,
    );
}

// ---------------------------------------------------------------------------------------------
// deployment_status.json
// ---------------------------------------------------------------------------------------------

fn status_case(function: &str, input: &Value, want: &Value) -> Result<(), String> {
    match function {
        "deployment.DeploymentComplete" => {
            let mut d = deployment(
                int(&input["specReplicas"]),
                "RollingUpdate",
                &input["maxSurge"],
                &input["maxUnavailable"],
            );
            d.metadata.generation = input["generation"].as_i64();
            check(
                "complete",
                deployment_complete(&d, &status_from_json(&input["status"])),
                want["complete"].as_bool() == Some(true),
            )
        }
        "deployment.DeploymentProgressing" => {
            let mut d = deployment(1, "RollingUpdate", &Value::Null, &Value::Null);
            d.status = Some(status_from_json(&input["currentStatus"]));
            let got = deployment_progressing(&d, &status_from_json(&input["newStatus"]));
            check("progressing", got, want["progressing"].as_bool() == Some(true))
        }
        "deployment.DeploymentTimedOut" => timed_out_case(input, want),
        f if f.starts_with("deployment.GetReplicaCountForReplicaSets") => replica_sums_case(input, want),
        other => Err(format!("unknown function {other}")),
    }
}

fn timed_out_case(input: &Value, want: &Value) -> Result<(), String> {
    let mut d = deployment(1, "RollingUpdate", &Value::Null, &Value::Null);
    d.spec.as_mut().unwrap().progress_deadline_seconds = opt_int(&input["progressDeadlineSeconds"]);
    let c = &input["progressingCondition"];
    let cond = DeploymentCondition {
        type_: c["type"].as_str().unwrap_or_default().into(),
        status: c["status"].as_str().unwrap_or_default().into(),
        reason: c["reason"].as_str().map(String::from),
        last_update_time: time(&c["lastUpdateTime"]),
        ..Default::default()
    };
    let status = DeploymentStatus {
        conditions: Some(vec![cond]),
        ..Default::default()
    };
    let now = time(&input["now"]).expect("now").0;
    check(
        "timedOut",
        deployment_timed_out(&d, &status, now),
        want["timedOut"].as_bool() == Some(true),
    )
}

fn replica_sums_case(input: &Value, want: &Value) -> Result<(), String> {
    let rss: Vec<ReplicaSet> = input["replicaSets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| ReplicaSet {
            metadata: ObjectMeta {
                name: v["name"].as_str().map(String::from),
                ..Default::default()
            },
            spec: Some(ReplicaSetSpec {
                replicas: opt_int(&v["specReplicas"]),
                ..Default::default()
            }),
            status: Some(ReplicaSetStatus {
                replicas: int(&v["statusReplicas"]),
                terminating_replicas: opt_int(&v["terminatingReplicas"]),
                observed_generation: v["observedGeneration"].as_i64(),
                ..Default::default()
            }),
        })
        .collect();
    check(
        "spec sum",
        get_replica_count_for_replica_sets(&rss),
        int(&want["specReplicasSum"]),
    )?;
    check(
        "status sum",
        get_actual_replica_count_for_replica_sets(&rss),
        int(&want["statusReplicasSum"]),
    )?;
    check(
        "terminating sum",
        get_terminating_replica_count_for_replica_sets(&rss),
        opt_int(&want["terminatingReplicasSum"]),
    )
}

#[test]
fn upstream_status() {
    run_file(
        "deployment_status.json",
        include_str!("../../../testdata/deployment_status.json"),
        status_case,
    );
}

// ---------------------------------------------------------------------------------------------
// deployment_annotations.json
// ---------------------------------------------------------------------------------------------

fn annotation_case(function: &str, input: &Value, want: &Value) -> Result<(), String> {
    match function {
        "deployment.getNonNegativeInt32FromAnnotation" => non_negative_case(input, want),
        "deployment.ReplicasAnnotationsNeedUpdate" => {
            let mut set = rs("rs", 1, 0);
            set.metadata.annotations = string_map(&input["rsAnnotations"]);
            let got = replicas_annotations_need_update(
                &set,
                int(&input["desiredReplicas"]),
                int(&input["maxReplicas"]),
            );
            check("needUpdate", got, want["needUpdate"].as_bool() == Some(true))
        }
        "deployment.SetNewReplicaSetAnnotations" => set_new_annotations_case(input, want),
        "deployment.getReplicaSetFraction" => {
            let mut d = rolling_deployment(input, "deploymentReplicas");
            d.status = Some(DeploymentStatus {
                replicas: opt_int(&input["deploymentStatusReplicas"]),
                ..Default::default()
            });
            let mut set = rs("rs", int(&input["rsReplicas"]), 0);
            set.metadata.annotations = string_map(&input["rsAnnotations"]);
            check(
                "fraction",
                get_replica_set_fraction(&set, &d),
                int(&want["fraction"]),
            )
        }
        other => Err(format!("unknown function {other}")),
    }
}

fn non_negative_case(input: &Value, want: &Value) -> Result<(), String> {
    let annotations = string_map(&input["annotations"]);
    let got = get_non_negative_int32_from_annotation(
        annotations.as_ref(),
        input["key"].as_str().unwrap_or_default(),
    );
    let error_contains = want["errorContains"].as_str().unwrap_or_default();
    match (&got, want["valid"].as_bool() == Some(true)) {
        (Ok(Some(v)), true) => check("value", *v, int(&want["value"])),
        (Ok(None), false) if error_contains.is_empty() => Ok(()),
        (Err(e), false) if !error_contains.is_empty() && e.0.contains(error_contains) => Ok(()),
        _ => Err(format!("got {got:?}, want {want}")),
    }
}

fn set_new_annotations_case(input: &Value, want: &Value) -> Result<(), String> {
    let mut d = deployment(1, "RollingUpdate", &Value::Null, &Value::Null);
    d.metadata.annotations = string_map(&input["deploymentAnnotations"]);
    let mut set = rs("rs", 1, 0);
    set.metadata.annotations = string_map(&input["rsAnnotationsBefore"]);
    let limit = input["revHistoryLimitInChars"].as_u64().unwrap_or(0) as usize;
    let exists = input["exists"].as_bool() == Some(true);
    set_new_replica_set_annotations(
        &d,
        &mut set,
        input["newRevision"].as_str().unwrap_or_default(),
        exists,
        limit,
    );
    let annotations = set.metadata.annotations.unwrap_or_default();
    check(
        "revision",
        annotations.get(REVISION_ANNOTATION).map(String::as_str),
        want["revision"].as_str(),
    )?;
    check(
        "history",
        annotations.get(REVISION_HISTORY_ANNOTATION).map(String::as_str),
        want["revisionHistory"].as_str(),
    )
}

#[test]
fn upstream_annotations() {
    run_file(
        "deployment_annotations.json",
        include_str!("../../../testdata/deployment_annotations.json"),
        annotation_case,
    );
}

// ---------------------------------------------------------------------------------------------
// deployment_rolling.json
// ---------------------------------------------------------------------------------------------

fn scaled_down(changes: &[ScaleChange]) -> i32 {
    changes.iter().map(|c| c.from - c.to).sum()
}

fn rolling_case(function: &str, input: &Value, want: &Value) -> Result<(), String> {
    let d = rolling_deployment(input, "deploymentReplicas");
    let mut old = rs(
        "foo-old",
        int(&input["oldRSReplicas"]),
        int(&input["oldRSAvailable"]),
    );
    match function {
        "deployment.reconcileNewReplicaSet" => {
            let mut new_rs = rs("foo-new", int(&input["newRSReplicas"]), 0);
            let change = reconcile_new_replica_set(&d, std::slice::from_ref(&old), &mut new_rs)
                .map_err(|e| e.to_string())?;
            check("scaled", change.is_some(), want["scaled"].as_bool() == Some(true))?;
            match want.get("newRSReplicas") {
                Some(n) => check("newRSReplicas", rs_replicas(&new_rs), int(n)),
                None => Ok(()),
            }
        }
        "deployment.reconcileOldReplicaSets" => {
            let new_rs = rs(
                "foo-new",
                int(&input["newRSReplicas"]),
                int(&input["newRSAvailable"]),
            );
            let mut olds = vec![old];
            let outcome = reconcile_old_replica_sets(&d, &mut olds, &new_rs);
            check("scaled", outcome.scaled, want["scaled"].as_bool() == Some(true))?;
            check(
                "oldRSReplicasAfter",
                rs_replicas(&olds[0]),
                opt_int(&want["oldRSReplicasAfter"]).unwrap_or(int(&input["oldRSReplicas"])),
            )
        }
        "deployment.cleanupUnhealthyReplicas" => {
            let (_, count) = cleanup_unhealthy_replicas(&mut [&mut old], int(&input["maxCleanupCount"]))
                .map_err(|e| e.message)?;
            check("cleanupCount", count, int(&want["cleanupCount"]))
        }
        "deployment.scaleDownOldReplicaSetsForRollingUpdate" => {
            let changes = scale_down_old_replica_sets_for_rolling_update(&d, &mut [&mut old], None);
            check(
                "scaledDownCount",
                scaled_down(&changes),
                int(&want["scaledDownCount"]),
            )?;
            match want.get("oldRSReplicasAfter") {
                Some(n) => check("oldRSReplicasAfter", rs_replicas(&old), int(n)),
                None => Ok(()),
            }
        }
        other => Err(format!("unknown function {other}")),
    }
}

#[test]
fn upstream_rolling() {
    run_file(
        "deployment_rolling.json",
        include_str!("../../../testdata/deployment_rolling.json"),
        rolling_case,
    );
}

// ---------------------------------------------------------------------------------------------
// deployment_scale.json
// ---------------------------------------------------------------------------------------------

fn scale_case(function: &str, input: &Value, want: &Value) -> Result<(), String> {
    match function {
        f if f.starts_with("deployment.scale") => proportional_case(input, want),
        "deployment.cleanupDeployment" => cleanup_case(input, want),
        other => Err(format!("unknown function {other}")),
    }
}

fn proportional_case(input: &Value, want: &Value) -> Result<(), String> {
    let dj = &input["deployment"];
    let mut d = deployment(
        int(&dj["replicas"]),
        dj["strategy"].as_str().unwrap_or_default(),
        &dj["maxSurge"],
        &dj["maxUnavailable"],
    );
    d.status = Some(DeploymentStatus {
        replicas: opt_int(&dj["statusReplicas"]),
        ..Default::default()
    });
    let mut new_rs = (!input["newRS"].is_null()).then(|| rs_from_json(&input["newRS"]));
    let mut olds: Vec<ReplicaSet> = input["oldRSs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(rs_from_json)
        .collect();
    scale(&d, new_rs.as_mut(), &mut olds);
    let got: BTreeMap<String, i32> = olds
        .iter()
        .chain(new_rs.as_ref())
        .map(|rs| (name_of(&rs.metadata).to_string(), rs_replicas(rs)))
        .collect();
    let want: BTreeMap<String, i32> = want["replicasAfter"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), int(v)))
        .collect();
    check("replicasAfter", got, want)
}

fn cleanup_case(input: &Value, want: &Value) -> Result<(), String> {
    let mut d = deployment(1, "RollingUpdate", &Value::Null, &Value::Null);
    d.spec.as_mut().unwrap().revision_history_limit = opt_int(&input["revisionHistoryLimit"]);
    let olds: Vec<ReplicaSet> = input["oldRSs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let mut set = rs(v["name"].as_str().unwrap_or_default(), int(&v["specReplicas"]), 0);
            set.metadata.generation = v["generation"].as_i64();
            let status = set.status.as_mut().unwrap();
            status.replicas = int(&v["statusReplicas"]);
            status.observed_generation = v["observedGeneration"].as_i64();
            if v["deletionTimestampSet"].as_bool() == Some(true) {
                set.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
            }
            set
        })
        .collect();
    check(
        "deletions",
        cleanup_deployment(&d, &olds).len(),
        int(&want["deletions"]) as usize,
    )
}

#[test]
fn upstream_scale() {
    run_file(
        "deployment_scale.json",
        include_str!("../../../testdata/deployment_scale.json"),
        scale_case,
    );
}

// ---------------------------------------------------------------------------------------------
// Hash and plan-level scenarios
// ---------------------------------------------------------------------------------------------

#[test]
fn safe_encode_maps_digits_like_upstream() {
    assert_eq!(safe_encode_string("0123456789"), "456789bcdf");
}

#[test]
fn compute_hash_is_deterministic_and_sensitive_to_collisions() {
    let t = template("nginx:1");
    let h = compute_hash(&t, None);
    assert_eq!(h, compute_hash(&t, None));
    assert_ne!(h, compute_hash(&t, Some(1)));
    assert_ne!(h, compute_hash(&template("nginx:2"), None));
    assert!(h.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
}

fn template(image: &str) -> PodTemplateSpec {
    serde_json::from_value(serde_json::json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": image}]}
    }))
    .expect("template")
}

fn web_deployment(replicas: i32, image: &str) -> Deployment {
    let mut d = deployment(
        replicas,
        "RollingUpdate",
        &Value::from("25%"),
        &Value::from("25%"),
    );
    d.metadata.uid = Some("uid-web".into());
    d.metadata.namespace = Some("default".into());
    d.metadata.generation = Some(1);
    let spec = d.spec.as_mut().unwrap();
    spec.template = template(image);
    spec.selector = LabelSelector {
        match_labels: Some([("app".into(), "web".into())].into()),
        ..Default::default()
    };
    spec.progress_deadline_seconds = Some(600);
    spec.revision_history_limit = Some(10);
    d
}

fn now() -> Timestamp {
    "2024-01-01T00:00:00Z".parse().unwrap()
}

#[test]
fn first_sync_creates_new_replica_set_at_full_size() {
    let d = web_deployment(3, "nginx:1");
    let plan = plan_rollout(&d, &[], &[], now()).expect("plan");
    let Some(Step::CreateNewReplicaSet(rs)) = plan.steps.first() else {
        panic!("{plan:?}")
    };
    assert_eq!(rs_replicas(rs), 3);
    let annotations = rs.metadata.annotations.clone().unwrap();
    assert_eq!(annotations[REVISION_ANNOTATION], "1");
    assert_eq!(annotations[DESIRED_REPLICAS_ANNOTATION], "3");
    assert_eq!(annotations[MAX_REPLICAS_ANNOTATION], "4");
    let hash = rs.metadata.labels.as_ref().unwrap()[DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY].clone();
    assert_eq!(rs.metadata.name.as_deref(), Some(format!("foo-{hash}").as_str()));
    assert!(
        plan.steps
            .contains(&Step::SetDeploymentRevision { revision: "1".into() })
    );
    let Some(Step::UpdateStatus(status)) = plan.steps.last() else {
        panic!("{plan:?}")
    };
    let cond = get_deployment_condition(status, DEPLOYMENT_PROGRESSING).unwrap();
    assert_eq!(cond.reason.as_deref(), Some(NEW_REPLICA_SET_REASON));
}

#[test]
fn template_change_surges_new_replica_set() {
    let d1 = web_deployment(4, "nginx:1");
    let first = plan_rollout(&d1, &[], &[], now()).unwrap();
    let Some(Step::CreateNewReplicaSet(old)) = first.steps.first().cloned() else {
        panic!()
    };
    let mut old = *old;
    old.metadata.uid = Some("uid-old".into());
    old.metadata.creation_timestamp = Some(Time(now()));
    old.status = Some(ReplicaSetStatus {
        replicas: 4,
        available_replicas: Some(4),
        ready_replicas: Some(4),
        ..Default::default()
    });
    let mut d2 = web_deployment(4, "nginx:2");
    d2.metadata.annotations = Some([(REVISION_ANNOTATION.to_string(), "1".to_string())].into());
    let plan = plan_rollout(&d2, &[old], &[], now()).unwrap();
    let Some(Step::CreateNewReplicaSet(new_rs)) = plan.steps.first() else {
        panic!("{plan:?}")
    };
    // 25% of 4 → surge 1: one new pod while the old four keep running.
    assert_eq!(rs_replicas(new_rs), 1);
    assert_eq!(
        new_rs.metadata.annotations.as_ref().unwrap()[REVISION_ANNOTATION],
        "2"
    );
}

#[test]
fn unchanged_rollout_requeues_for_deadline_check() {
    let mut d = web_deployment(2, "nginx:1");
    let created = plan_rollout(&d, &[], &[], now()).unwrap();
    let Some(Step::CreateNewReplicaSet(rs)) = created.steps.first().cloned() else {
        panic!()
    };
    let Some(Step::UpdateStatus(status)) = created.steps.last().cloned() else {
        panic!()
    };
    d.status = Some(status);
    d.metadata.annotations = Some([(REVISION_ANNOTATION.to_string(), "1".to_string())].into());
    let later = now().checked_add(jiff::SignedDuration::from_secs(100)).unwrap();
    let plan = plan_rollout(&d, &[*rs], &[], later).unwrap();
    assert_eq!(
        plan.steps,
        vec![Step::RequeueAfter(std::time::Duration::from_secs(501))]
    );
}

/// The ReplicaSet the first sync of `d` would create, with the given status counts.
fn created_rs(d: &Deployment, replicas: i32, available: i32, created_at: i64) -> ReplicaSet {
    let plan = plan_rollout(d, &[], &[], now()).unwrap();
    let Some(Step::CreateNewReplicaSet(rs)) = plan.steps.first().cloned() else {
        panic!("{plan:?}")
    };
    let mut rs = *rs;
    set_rs_replicas(&mut rs, replicas);
    rs.metadata.uid = Some(format!("uid-{}", name_of(&rs.metadata)));
    rs.metadata.creation_timestamp = Some(Time(Timestamp::from_second(created_at).unwrap()));
    rs.status = Some(ReplicaSetStatus {
        replicas,
        available_replicas: Some(available),
        ready_replicas: Some(available),
        ..Default::default()
    });
    rs
}

fn with_revision(mut d: Deployment, revision: &str) -> Deployment {
    d.metadata.annotations = Some([(REVISION_ANNOTATION.to_string(), revision.to_string())].into());
    d
}

fn scales(plan: &crate::deployment::plan::Plan) -> Vec<(String, i32)> {
    let scaled = plan.steps.iter().filter_map(|a| match a {
        Step::ScaleReplicaSet { name, replicas, .. } => Some((name.clone(), *replicas)),
        _ => None,
    });
    scaled.collect()
}

#[test]
fn recreate_scales_old_down_before_creating_new() {
    let mut old_d = web_deployment(3, "nginx:1");
    old_d.spec.as_mut().unwrap().strategy = Some(DeploymentStrategy {
        type_: Some("Recreate".into()),
        rolling_update: None,
    });
    let old = created_rs(&old_d, 3, 3, 1000);
    let mut d = old_d.clone();
    d.spec.as_mut().unwrap().template = template("nginx:2");
    let d = with_revision(d, "1");

    let plan = plan_rollout(&d, std::slice::from_ref(&old), &[], now()).unwrap();
    assert_eq!(scales(&plan), vec![(name_of(&old.metadata).to_string(), 0)]);
    assert!(
        !plan
            .steps
            .iter()
            .any(|a| matches!(a, Step::CreateNewReplicaSet(_)))
    );

    // Scaled to 0 but its pods have not gone yet: wait.
    let mut draining = old.clone();
    set_rs_replicas(&mut draining, 0);
    let plan = plan_rollout(&d, std::slice::from_ref(&draining), &[], now()).unwrap();
    assert!(
        !plan
            .steps
            .iter()
            .any(|a| matches!(a, Step::CreateNewReplicaSet(_))),
        "{plan:?}"
    );

    // All old pods gone: create the new ReplicaSet at full size.
    draining.status = Some(ReplicaSetStatus::default());
    let plan = plan_rollout(&d, &[draining], &[], now()).unwrap();
    let Some(Step::CreateNewReplicaSet(new_rs)) = plan.steps.first() else {
        panic!("{plan:?}")
    };
    assert_eq!(rs_replicas(new_rs), 3);
}

#[test]
fn scaling_event_is_proportional() {
    let d1 = web_deployment(10, "nginx:1");
    let mut old = created_rs(&d1, 6, 6, 1000);
    let d2 = web_deployment(10, "nginx:2");
    let mut new_rs = created_rs(&d2, 6, 0, 2000);
    // Both were last scaled when the Deployment had 10 replicas (max 13 with 25% surge).
    for rs in [&mut old, &mut new_rs] {
        set_replicas_annotations(rs, 10, 13);
    }
    let d = with_revision(web_deployment(20, "nginx:2"), "2");
    let plan = plan_rollout(&d, &[old.clone(), new_rs.clone()], &[], now()).unwrap();
    // allowed 20 + 5 = 25, 12 present → +13: round(6*25/13)=12 each (+6), leftover 1 to the newer one.
    let got: BTreeMap<String, i32> = scales(&plan).into_iter().collect();
    assert_eq!(got[name_of(&new_rs.metadata)], 13);
    assert_eq!(got[name_of(&old.metadata)], 12);
}

#[test]
fn pausing_sets_unknown_progressing_condition() {
    let mut d = with_revision(web_deployment(2, "nginx:1"), "1");
    let rs = created_rs(&d, 2, 2, 1000);
    d.spec.as_mut().unwrap().paused = Some(true);
    let plan = plan_rollout(&d, &[rs], &[], now()).unwrap();
    let Some(Step::UpdateStatus(status)) = plan.steps.last() else {
        panic!("{plan:?}")
    };
    let cond = get_deployment_condition(status, DEPLOYMENT_PROGRESSING).unwrap();
    assert_eq!(
        (cond.status.as_str(), cond.reason.as_deref()),
        ("Unknown", Some(PAUSED_DEPLOY_REASON))
    );
}

#[test]
fn completed_rollout_reports_available_and_cleans_up() {
    let old = created_rs(&web_deployment(2, "nginx:1"), 0, 0, 1000);
    let mut d = with_revision(web_deployment(2, "nginx:2"), "2");
    let mut new_rs = created_rs(&d, 2, 2, 2000);
    new_rs
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(REVISION_ANNOTATION.into(), "2".into());
    let spec = d.spec.as_mut().unwrap();
    spec.revision_history_limit = Some(0);
    d.status = Some(DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(2),
        updated_replicas: Some(2),
        available_replicas: Some(2),
        ready_replicas: Some(2),
        ..Default::default()
    });
    let plan = plan_rollout(&d, &[old.clone(), new_rs], &[], now()).unwrap();
    assert!(plan.steps.contains(&Step::DeleteReplicaSet {
        name: name_of(&old.metadata).to_string()
    }));
    let Some(Step::UpdateStatus(status)) = plan.steps.last() else {
        panic!("{plan:?}")
    };
    let progressing = get_deployment_condition(status, DEPLOYMENT_PROGRESSING).unwrap();
    assert_eq!(progressing.reason.as_deref(), Some(NEW_RS_AVAILABLE_REASON));
    let available = get_deployment_condition(status, DEPLOYMENT_AVAILABLE).unwrap();
    assert_eq!(available.reason.as_deref(), Some(MINIMUM_REPLICAS_AVAILABLE));
}
