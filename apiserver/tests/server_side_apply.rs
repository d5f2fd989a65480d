//! Server-side apply through the API's write path, as a sequence of
//! requests: what `metadata.managedFields` holds after each one.
//!
//! Regression (issue 7 §1): a second apply by the same manager used to be
//! recorded twice — as the manager's `Apply` entry by the apply function,
//! then again as an `Update` entry by the write path's bookkeeping for
//! ordinary writes, which took the applied fields away from the `Apply`
//! entry. Fields the manager stopped applying were then never pruned, and
//! a third apply conflicted with the manager's own `Update` entry. The
//! apply function's table tests could not see it: only the request path
//! ran both.

use apiserver::Api;
use apiserver::api::{PatchType, WriteOptions};
use apiserver::error::{ApiError, Reason};
use apiserver::testkit::{TestApi, by};
use serde_json::{Value, json};

async fn api() -> (Api, std::sync::Arc<apiserver::registry::ResourceInfo>) {
    let api = TestApi::builder().build().await;
    let info = api
        .resource("", "v1", "configmaps")
        .expect("configmaps are served");
    (api, info)
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": data})
}

fn forced(manager: &str) -> WriteOptions {
    WriteOptions {
        force: true,
        ..by(manager)
    }
}

async fn apply(
    api: &Api,
    info: &apiserver::registry::ResourceInfo,
    data: Value,
    opts: &WriteOptions,
) -> Result<Value, ApiError> {
    api.patch(
        info,
        Some("default"),
        "cm",
        PatchType::Apply,
        &cm(data),
        None,
        opts,
    )
    .await
    .map(|w| w.object)
}

/// `(manager, operation, fieldsV1)` of every managedFields entry, sorted by
/// manager (the stored order also depends on the entries' times, to the
/// second; the managers module tests it).
fn entries(obj: &Value) -> Vec<(String, String, Value)> {
    let mut all: Vec<_> = obj["metadata"]["managedFields"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or("").to_string(),
                        e["operation"].as_str().unwrap_or("").to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

fn owns(keys: &[&str]) -> Value {
    let fields: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| match *k {
            "." => (".".to_string(), json!({})),
            k => (format!("f:{k}"), json!({})),
        })
        .collect();
    json!({"f:data": fields})
}

#[tokio::test]
async fn repeated_applies_by_one_manager_keep_one_apply_entry_and_prune_what_it_dropped() {
    let (api, info) = api().await;
    let first = apply(&api, &info, json!({"k": "1", "j": "1"}), &by("kubectl"))
        .await
        .unwrap();
    assert_eq!(
        entries(&first),
        vec![("kubectl".into(), "Apply".into(), owns(&["j", "k"]))]
    );

    let second = apply(&api, &info, json!({"k": "2"}), &by("kubectl"))
        .await
        .unwrap();
    assert_eq!(
        second["data"],
        json!({"k": "2"}),
        "j is pruned: nobody else owns it"
    );
    assert_eq!(
        entries(&second),
        vec![("kubectl".into(), "Apply".into(), owns(&["k"]))]
    );

    let third = apply(&api, &info, json!({"k": "3"}), &by("kubectl"))
        .await
        .unwrap();
    assert_eq!(third["data"], json!({"k": "3"}));
    assert_eq!(
        entries(&third),
        vec![("kubectl".into(), "Apply".into(), owns(&["k"]))]
    );
}

#[tokio::test]
async fn apply_after_create_shares_equal_values_and_conflicts_on_changed_ones() {
    let (api, info) = api().await;
    api.create(
        &info,
        Some("default"),
        cm(json!({"k": "1", "j": "1"})),
        &by("creator"),
    )
    .await
    .unwrap();
    // Applying the values the object already has takes no field away.
    let same = apply(&api, &info, json!({"k": "1"}), &by("applier"))
        .await
        .unwrap();
    assert_eq!(
        entries(&same),
        vec![
            ("applier".into(), "Apply".into(), owns(&["k"])),
            ("creator".into(), "Update".into(), owns(&[".", "j", "k"])),
        ]
    );
    // The applier's own edits of fields only it applies go through, again and again.
    apply(&api, &info, json!({"k": "1", "x": "1"}), &by("applier"))
        .await
        .unwrap();
    let more = apply(&api, &info, json!({"k": "1", "x": "2"}), &by("applier"))
        .await
        .unwrap();
    assert_eq!(
        entries(&more),
        vec![
            ("applier".into(), "Apply".into(), owns(&["k", "x"])),
            ("creator".into(), "Update".into(), owns(&[".", "j", "k"])),
        ]
    );
    // Changing a value the creator still owns is a conflict named after it.
    let err = apply(&api, &info, json!({"k": "2", "x": "2"}), &by("applier"))
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::Conflict);
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"creator\" using v1: .data.k"
    );
    // Forced, the applier takes it.
    let taken = apply(&api, &info, json!({"k": "2", "x": "2"}), &forced("applier"))
        .await
        .unwrap();
    assert_eq!(taken["data"], json!({"j": "1", "k": "2", "x": "2"}));
    assert_eq!(
        entries(&taken),
        vec![
            ("applier".into(), "Apply".into(), owns(&["k", "x"])),
            ("creator".into(), "Update".into(), owns(&[".", "j"])),
        ]
    );
}

#[tokio::test]
async fn apply_after_an_update_by_another_manager() {
    let (api, info) = api().await;
    apply(&api, &info, json!({"k": "1", "j": "1"}), &by("applier"))
        .await
        .unwrap();
    let patch = json!({"data": {"k": "edited"}});
    let edited = api
        .patch(
            &info,
            Some("default"),
            "cm",
            PatchType::Merge,
            &patch,
            None,
            &by("editor"),
        )
        .await
        .unwrap()
        .object;
    assert_eq!(
        entries(&edited),
        vec![
            ("applier".into(), "Apply".into(), owns(&["j"])),
            ("editor".into(), "Update".into(), owns(&["k"])),
        ]
    );
    // Re-applying the old value of k conflicts with the editor ...
    let err = apply(&api, &info, json!({"k": "1", "j": "1"}), &by("applier"))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.k"
    );
    // ... and dropping j while keeping the editor's value prunes j only.
    let pruned = apply(&api, &info, json!({"k": "edited"}), &by("applier"))
        .await
        .unwrap();
    assert_eq!(pruned["data"], json!({"k": "edited"}));
    // --force-conflicts takes k back; the editor's entry goes when it owns nothing.
    let forced = apply(&api, &info, json!({"k": "1"}), &forced("applier"))
        .await
        .unwrap();
    assert_eq!(forced["data"], json!({"k": "1"}));
    assert_eq!(
        entries(&forced),
        vec![("applier".into(), "Apply".into(), owns(&["k"]))]
    );
}

#[tokio::test]
async fn a_field_another_manager_also_applies_survives_its_removal_by_one() {
    let (api, info) = api().await;
    apply(&api, &info, json!({"k": "1", "j": "1"}), &by("a"))
        .await
        .unwrap();
    apply(&api, &info, json!({"j": "1"}), &by("b")).await.unwrap();
    let after = apply(&api, &info, json!({"k": "1"}), &by("a")).await.unwrap();
    assert_eq!(after["data"], json!({"j": "1", "k": "1"}), "b still applies j");
    assert_eq!(
        entries(&after),
        vec![
            ("a".into(), "Apply".into(), owns(&["k"])),
            ("b".into(), "Apply".into(), owns(&["j"])),
        ]
    );
}
