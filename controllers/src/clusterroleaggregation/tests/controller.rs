//! The aggregation controller against an in-process API with the default
//! roles, on paused tokio time.

use std::sync::Arc;

use apiserver::testkit::{Tasks, TestApi};
use k8s_openapi::api::rbac::v1::ClusterRole;
use serde_json::json;
use store::Clock;

use crate::clusterroleaggregation::controller::ClusterRoleAggregationController;
use crate::runtime::{Client, InProcessClient, Informer, Typed};
use crate::testing::{eventually, stop_tasks, test_clock};

/// Polls until `role` has a rule on `resource`, for up to 60 s of simulated time.
async fn wait_for_rule(clock: &Clock, roles: &Typed<ClusterRole>, role: &str, resource: &str) -> ClusterRole {
    let what = format!("a rule on {resource} in {role}");
    eventually(clock, &what, async || {
        let r = roles.get(None, role).await.unwrap();
        let has = r
            .rules
            .iter()
            .flatten()
            .any(|rule| rule.resources.iter().flatten().any(|x| x == resource));
        has.then_some(r)
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn admin_edit_and_view_aggregate_and_follow_new_roles() {
    let clock = test_clock();
    let api = TestApi::builder().clock(clock.clone()).build().await;
    apiserver::auth::bootstrap_policy::ensure(&api).await.unwrap();
    let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
    let roles = Typed::<ClusterRole>::new(client.clone());
    let mut tasks = Tasks::new();
    let informer = Informer::<ClusterRole>::new(client.clone(), clock.clone(), None);
    let controller = ClusterRoleAggregationController::new(client, clock.clone(), &informer);
    tasks.push(informer.run(tasks.shutdown()));
    tasks.spawn(|stop| controller.run(1, stop));

    // view has the aggregate-to-view rules; edit has view's and its own;
    // admin has edit's (so view's) and its own.
    wait_for_rule(&clock, &roles, "view", "pods").await;
    wait_for_rule(&clock, &roles, "edit", "pods/exec").await;
    let edit = wait_for_rule(&clock, &roles, "edit", "configmaps").await;
    assert!(
        !edit
            .rules
            .iter()
            .flatten()
            .any(|r| r.resources.iter().flatten().any(|x| x == "roles"))
    );
    wait_for_rule(&clock, &roles, "admin", "rolebindings").await;
    wait_for_rule(&clock, &roles, "admin", "pods/exec").await;

    // A CRD's role labelled aggregate-to-view reaches view, edit and admin.
    let widgets: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "widgets-view", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [{"verbs": ["get"], "apiGroups": ["example.com"], "resources": ["widgets"]}],
    }))
    .unwrap();
    roles.create(None, &widgets).await.unwrap();
    for role in ["view", "edit", "admin"] {
        wait_for_rule(&clock, &roles, role, "widgets").await;
    }
    stop_tasks(tasks).await;
}
