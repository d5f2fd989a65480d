//! Events expire `--event-ttl` after their last write, as on a real API
//! server, and kubectl sees them go.

use std::time::Duration;

use e2e::{Cluster, Config};

const EVENT: &str = r#"
apiVersion: v1
kind: Event
metadata:
  name: web.expiring
  namespace: default
involvedObject:
  apiVersion: apps/v1
  kind: Deployment
  name: web
  namespace: default
reason: ScalingReplicaSet
message: Scaled up replica set web-1 to 1
type: Normal
source:
  component: deployment-controller
"#;

#[tokio::test]
async fn an_event_disappears_after_the_event_ttl() {
    let cluster = Cluster::start_with(Config {
        event_ttl: Duration::from_secs(3),
        sim: None,
        ..Config::ephemeral()
    })
    .await;
    let file = cluster.file("event.yaml", EVENT);
    cluster.ok(&["create", "-f", file.to_str().unwrap()]).await;
    let listed = cluster.ok(&["get", "events", "-o", "name"]).await;
    assert!(listed.contains("event/web.expiring"), "{listed}");

    let clock = cluster.server().api().clock().clone();
    let mut gone = false;
    for _ in 0..80 {
        clock.sleep(Duration::from_millis(100)).await;
        let listed = cluster.ok(&["get", "events", "-o", "name"]).await;
        if !listed.contains("web.expiring") {
            gone = true;
            break;
        }
    }
    assert!(gone, "the Event outlived its TTL of 3 s by far");
    let missing = cluster.fails(&["get", "event", "web.expiring"]).await;
    assert!(
        missing.contains("NotFound") || missing.contains("not found"),
        "{missing}"
    );
}
