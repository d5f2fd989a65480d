//! The time machine over HTTP: `/debug/time`, what `miniplane time` calls.
//!
//! ```text
//! GET  /debug/time                                  the state (below)
//! POST /debug/time/pause                            stop simulated time
//! POST /debug/time/resume                           let it run again
//! POST /debug/time/scale?factor=10                  10 simulated seconds per real second
//! POST /debug/time/step?duration=10s                move a paused clock 10 s, settling on the way
//! POST /debug/time/break-on?kind=Deployment&namespace=default&name=web
//! POST /debug/time/release?kind=Deployment&namespace=default&name=web
//! ```
//!
//! Every answer is the state:
//! `{"now": "2026-12-02T15:04:05Z", "paused": true, "scale": 1.0,
//! "breakpoints": ["Deployment/default/web"], "held": ["deployment default/web"]}`;
//! a step answers once it is done. Bad input is a 400 `Status`, a step of a
//! running clock a 409, a release of a breakpoint that is not set a 404.
//! `namespace` defaults to `default`; `namespace=` (empty) names a
//! cluster-scoped object. The machinery is [`store::time`].
//!
//! No upstream counterpart. These paths are no resources: authorization
//! sees them as non-resource URLs (`/debug/...`), like `/metrics`.

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use store::Clock;
use store::time::{Breakpoint, StepError, parse_duration, rfc3339};

use super::AppState;
use super::negotiate::json_response;
use crate::error::{ApiError, Reason};

/// The routes served here.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/debug/time", get(status))
        .route("/debug/time/pause", post(pause))
        .route("/debug/time/resume", post(resume))
        .route("/debug/time/scale", post(scale))
        .route("/debug/time/step", post(step))
        .route("/debug/time/break-on", post(break_on))
        .route("/debug/time/release", post(release))
}

/// The state, as every answer carries it.
fn state_json(clock: &Clock) -> Value {
    let s = clock.time_status();
    json!({
        "now": rfc3339(s.now),
        "paused": s.paused,
        "scale": s.scale,
        "breakpoints": s.breakpoints,
        "held": s.held,
    })
}

fn ok(clock: &Clock) -> Response {
    json_response(StatusCode::OK, &state_json(clock), &[])
}

/// `GET /debug/time`.
async fn status(State(state): State<AppState>) -> Response {
    ok(state.api.clock())
}

/// `POST /debug/time/pause`.
async fn pause(State(state): State<AppState>) -> Response {
    let clock = state.api.clock();
    clock.pause_recorded();
    ok(clock)
}

/// `POST /debug/time/resume`.
async fn resume(State(state): State<AppState>) -> Response {
    let clock = state.api.clock();
    clock.resume_recorded();
    ok(clock)
}

/// `POST /debug/time/scale?factor=F`.
async fn scale(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let clock = state.api.clock();
    let Some(factor) = param(&query, "factor") else {
        return bad(
            "give the new scale as ?factor=F, e.g. factor=10 for ten simulated seconds per real second",
        );
    };
    let parsed = factor.trim().parse::<f64>().ok();
    match parsed.map(|f| clock.set_scale_recorded(f)) {
        Some(Ok(_)) => ok(clock),
        _ => bad(&format!(
            "factor {factor:?} is not a number greater than 0 (1 is real time, 10 ten times faster)"
        )),
    }
}

/// `POST /debug/time/step?duration=D`: answers when the step is done.
async fn step(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let clock = state.api.clock();
    let Some(text) = param(&query, "duration") else {
        return bad("give the step as ?duration=D, e.g. duration=10s, 1m30s or 500ms");
    };
    let by = match parse_duration(&text) {
        Ok(d) => d,
        Err(e) => return bad(&e),
    };
    match clock.step(by).await {
        Ok(_) => ok(clock),
        Err(e) => {
            let reason = match e {
                StepError::NotSettled { .. } => Reason::ServiceUnavailable,
                StepError::NotPaused | StepError::AlreadyStepping | StepError::Resumed { .. } => {
                    Reason::Conflict
                }
            };
            ApiError::new(reason, e.to_string()).into_response()
        }
    }
}

/// `POST /debug/time/break-on?kind=K&namespace=NS&name=N`.
async fn break_on(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let clock = state.api.clock();
    match breakpoint(&query) {
        Ok(b) => {
            clock.time_machine().break_on(b);
            ok(clock)
        }
        Err(e) => bad(&e),
    }
}

/// `POST /debug/time/release?kind=K&namespace=NS&name=N`.
async fn release(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let clock = state.api.clock();
    let b = match breakpoint(&query) {
        Ok(b) => b,
        Err(e) => return bad(&e),
    };
    match clock.time_machine().release(&b) {
        Ok(_) => ok(clock),
        Err(e) => ApiError::new(Reason::NotFound, e.to_string()).into_response(),
    }
}

/// The breakpoint a query names; `namespace` defaults to `default`.
fn breakpoint(query: &Option<String>) -> Result<Breakpoint, String> {
    let kind = param(query, "kind").unwrap_or_default();
    let name = param(query, "name").unwrap_or_default();
    let namespace = param(query, "namespace").unwrap_or_else(|| "default".to_string());
    Breakpoint::new(&kind, &namespace, &name)
        .map_err(|e| format!("{e} (?kind=Deployment&namespace=default&name=web)"))
}

/// The first value of `name` in the query string.
fn param(query: &Option<String>, name: &str) -> Option<String> {
    let query = query.as_deref().unwrap_or("");
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn bad(message: &str) -> Response {
    ApiError::bad_request(message).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, to_bytes};
    use axum::http::Request;
    use std::time::{Duration, SystemTime};
    use tower::ServiceExt;

    async fn app() -> (Router, Clock) {
        let api = crate::testkit::TestApi::builder()
            .clock(Clock::starting_at(
                SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
                1.0,
            ))
            .build()
            .await;
        let clock = api.clock().clone();
        let state = AppState::new(api, "127.0.0.1:6443".into(), Default::default());
        (Router::new().merge(routes()).with_state(state), clock)
    }

    async fn call(app: &Router, method: &str, uri: &str) -> (u16, Value) {
        let req = Request::builder()
            .method(method)
            .uri(uri)
            .body(Body::empty())
            .unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let status = resp.status().as_u16();
        let bytes = to_bytes(resp.into_body(), 1 << 20).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn pause_step_and_resume() {
        let (app, clock) = app().await;
        let (code, paused) = call(&app, "POST", "/debug/time/pause").await;
        assert_eq!((code, &paused["paused"]), (200, &json!(true)));
        let (code, stepped) = call(&app, "POST", "/debug/time/step?duration=1m30s").await;
        assert_eq!(code, 200, "{stepped}");
        assert_eq!(stepped["now"], "2027-01-15T08:01:30Z");
        assert_eq!(
            clock.now(),
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_090)
        );
        let (_, resumed) = call(&app, "POST", "/debug/time/resume").await;
        assert_eq!(resumed["paused"], json!(false));
    }

    #[tokio::test(start_paused = true)]
    async fn bad_input_is_a_status_a_person_can_act_on() {
        let (app, _clock) = app().await;
        let (code, s) = call(&app, "POST", "/debug/time/step?duration=10s").await;
        assert_eq!(code, 409);
        assert!(s["message"].as_str().unwrap().contains("pause it first"), "{s}");
        let (code, s) = call(&app, "POST", "/debug/time/step?duration=soon").await;
        assert_eq!((code, s["reason"].as_str()), (400, Some("BadRequest")));
        let (code, s) = call(&app, "POST", "/debug/time/scale?factor=0").await;
        assert_eq!(code, 400);
        assert!(s["message"].as_str().unwrap().contains("greater than 0"), "{s}");
        let (code, _) = call(&app, "POST", "/debug/time/break-on?kind=Deployment").await;
        assert_eq!(code, 400);
        let (code, s) = call(&app, "POST", "/debug/time/release?kind=deploy&name=web").await;
        assert_eq!(code, 404);
        assert_eq!(
            s["message"],
            "no breakpoint on Deployment/default/web (set: none)"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn breakpoints_are_listed() {
        let (app, _clock) = app().await;
        let (code, s) = call(&app, "POST", "/debug/time/break-on?kind=deployments&name=web").await;
        assert_eq!(code, 200);
        assert_eq!(s["breakpoints"], json!(["Deployment/default/web"]));
        let (_, s) = call(&app, "GET", "/debug/time").await;
        assert_eq!(s["held"], json!([]));
        let (code, s) = call(
            &app,
            "POST",
            "/debug/time/release?kind=Deployment&namespace=default&name=web",
        )
        .await;
        assert_eq!((code, s["breakpoints"].clone()), (200, json!([])));
    }
}
