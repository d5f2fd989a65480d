//! The HTML timeline of a demo run (`miniplane demo ... --html FILE`): one self-contained page
//! (inline CSS and SVG, no script, no external asset) with charts over simulated time — the
//! canary weight, the ready replicas, requests per second, success rate and p99 latency per
//! version — then the table of steps and the Events, for slides and docs.

use std::fmt::Write as _;

use super::render::clock;
use super::sample::{EventRow, Sample, tag};

/// The series' colours, in order of appearance.
const PALETTE: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];

/// Chart width in SVG units.
const W: f64 = 760.0;
/// Chart height.
const H: f64 = 220.0;
/// Left margin (the y labels).
const ML: f64 = 56.0;
/// Right margin (the legend).
const MR: f64 = 190.0;
/// Top margin.
const MT: f64 = 24.0;
/// Bottom margin (the x labels).
const MB: f64 = 28.0;

/// One series: its name and its points (simulated seconds, value); `None` is a gap.
pub struct Series {
    /// Shown in the legend.
    pub name: String,
    /// The points.
    pub points: Vec<(f64, Option<f64>)>,
}

/// What the page says of the run.
pub struct Run<'a> {
    /// The scenario's name.
    pub scenario: &'a str,
    /// What it shows.
    pub about: &'a str,
    /// How it ended (`ok: ...` or `FAILED: ...`).
    pub outcome: &'a str,
    /// Every step.
    pub samples: &'a [Sample],
    /// Every Event.
    pub events: &'a [EventRow],
    /// When the new version was triggered (simulated time since the start).
    pub trigger: Option<std::time::Duration>,
}

/// The whole page.
pub fn html(run: &Run) -> String {
    let mut page = String::new();
    let title = format!("miniplane demo {}", run.scenario);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{}</style>\n</head>\n<body>\n<h1>{}</h1>\n<p>{}</p>\n<p class=\"outcome\">{}</p>\n",
        escape(&title),
        CSS,
        escape(&title),
        escape(run.about),
        escape(run.outcome)
    );
    for (title, unit, series) in charts(run.samples) {
        if series.iter().all(|s| s.points.iter().all(|(_, v)| v.is_none())) {
            continue;
        }
        let _ = write!(
            page,
            "<h2>{}</h2>\n{}\n",
            escape(title),
            chart(title, unit, &series, run.trigger.map(|t| t.as_secs_f64()))
        );
    }
    page.push_str(&steps_table(run.samples));
    page.push_str(&events_table(run.events));
    page.push_str("</body>\n</html>\n");
    page
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}
h2{font-size:1.1em;margin-top:1.5em}
.outcome{font-weight:bold}
table{border-collapse:collapse;font-size:.85em}
td,th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}
svg text{font-size:11px;fill:#444}
";

/// The charts: (title, unit, series).
fn charts(samples: &[Sample]) -> Vec<(&'static str, &'static str, Vec<Series>)> {
    let t = |s: &Sample| s.t.as_secs_f64();
    let mut names: Vec<String> = Vec::new();
    for s in samples {
        for v in &s.versions {
            if !names.contains(&v.name) {
                names.push(v.name.clone());
            }
        }
    }
    let per_version = |suffix: &str, value: &dyn Fn(&super::sample::Version) -> Option<f64>| -> Vec<Series> {
        names
            .iter()
            .map(|name| Series {
                name: format!("{name} {suffix}"),
                points: samples
                    .iter()
                    .map(|s| (t(s), s.versions.iter().find(|v| &v.name == name).and_then(value)))
                    .collect(),
            })
            .collect()
    };
    let mut weight_and_replicas = Vec::new();
    if samples.iter().any(|s| s.weight.is_some()) {
        weight_and_replicas.push((
            "Canary weight",
            "%",
            vec![Series {
                name: "canary weight".into(),
                points: samples.iter().map(|s| (t(s), s.weight.map(f64::from))).collect(),
            }],
        ));
    }
    weight_and_replicas.push((
        "Ready replicas per version",
        "pods",
        per_version("ready replicas", &|v| Some(f64::from(v.ready))),
    ));
    let mut rates = per_version("requests/s", &|v| v.rps);
    rates.push(Series {
        name: "unanswered requests/s".into(),
        points: samples.iter().map(|s| (t(s), Some(s.unserved))).collect(),
    });
    weight_and_replicas.push(("Requests per second", "/s", rates));
    weight_and_replicas.push((
        "Success rate per version",
        "%",
        per_version("success rate", &|v| v.success),
    ));
    weight_and_replicas.push((
        "p99 latency per version",
        "ms",
        per_version("p99 latency", &|v| v.p99_ms),
    ));
    weight_and_replicas
}

/// One chart as inline SVG; `trigger` (seconds) is marked with a dashed line.
pub fn chart(title: &str, unit: &str, series: &[Series], trigger: Option<f64>) -> String {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|(x, _)| *x));
    let x_max = xs.fold(1.0_f64, f64::max);
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|(_, y)| *y));
    let y_top = ys.fold(0.0_f64, f64::max);
    let y_max = match unit {
        "%" => 100.0,
        _ => nice(y_top),
    };
    let (pw, ph) = (W - ML - MR, H - MT - MB);
    let px = |x: f64| ML + pw * x / x_max;
    let py = |y: f64| MT + ph * (1.0 - (y / y_max).clamp(0.0, 1.0));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">\n",
        escape(title)
    );
    // Axes, with four y ticks and five x ticks.
    let _ = writeln!(
        svg,
        "<rect x=\"{ML}\" y=\"{MT}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#bbb\"/>"
    );
    for i in 0..=4 {
        let y = y_max * f64::from(i) / 4.0;
        let _ = writeln!(
            svg,
            "<line x1=\"{ML}\" x2=\"{}\" y1=\"{y1:.1}\" y2=\"{y1:.1}\" stroke=\"#eee\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}{unit}</text>",
            ML + pw,
            ML - 4.0,
            py(y) + 4.0,
            short(y),
            y1 = py(y)
        );
    }
    let every = x_tick(x_max);
    let mut x = 0.0;
    while x <= x_max {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            px(x),
            H - 8.0,
            clock(std::time::Duration::from_secs_f64(x))
        );
        x += every;
    }
    if let Some(t) = trigger.filter(|t| *t <= x_max) {
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{MT}\" y2=\"{}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{}\">new version</text>",
            MT + ph,
            px(t) + 3.0,
            MT + 10.0,
            x = px(t)
        );
    }
    for (i, s) in series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        // A polyline per run of points without gaps.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (x, y) in &s.points {
            match (y, runs.last_mut()) {
                (Some(y), Some(run)) => run.push((*x, *y)),
                _ => runs.push(Vec::new()),
            }
        }
        for run in runs.iter().filter(|r| !r.is_empty()) {
            let points: Vec<String> = run
                .iter()
                .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
                .collect();
            let _ = writeln!(
                svg,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>",
                points.join(" "),
                escape(&s.name)
            );
        }
        let ly = MT + 14.0 * i as f64 + 8.0;
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{:.1}\" width=\"12\" height=\"3\" fill=\"{colour}\"/><text x=\"{}\" y=\"{:.1}\" class=\"series\">{}</text>",
            W - MR + 10.0,
            ly - 3.0,
            W - MR + 26.0,
            ly + 1.0,
            escape(&s.name)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The x ticks' spacing in seconds: a round duration giving at most eight ticks.
fn x_tick(x_max: f64) -> f64 {
    [10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0]
        .into_iter()
        .find(|step| x_max / step <= 8.0)
        .unwrap_or(7200.0)
}

/// A round upper bound above `y` (1, 2, 5 × 10ⁿ).
fn nice(y: f64) -> f64 {
    if y <= 0.0 || !y.is_finite() {
        return 1.0;
    }
    let exp = 10_f64.powf(y.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * exp)
        .find(|b| *b >= y)
        .unwrap_or(10.0 * exp)
}

/// A tick label: no decimals past 10.
fn short(y: f64) -> String {
    if y >= 10.0 || y.fract() == 0.0 {
        format!("{y:.0}")
    } else {
        format!("{y:.1}")
    }
}

/// The table of steps.
fn steps_table(samples: &[Sample]) -> String {
    let mut out = String::from(
        "<h2>Steps</h2>\n<table>\n<tr><th>time</th><th>phase</th><th>weight</th><th>versions (ready/desired, success, p99)</th><th>why</th></tr>\n",
    );
    let mut last = String::new();
    for s in samples {
        let key = super::render::key(s);
        if key == last {
            continue;
        }
        last = key;
        let versions: Vec<String> = s
            .versions
            .iter()
            .map(|v| {
                format!(
                    "{} {} {}/{} {} {}",
                    v.name,
                    tag(&v.image),
                    v.ready,
                    v.desired,
                    v.success.map_or("-".into(), |p| format!("{p:.1}%")),
                    v.p99_ms.map_or("-".into(), |ms| format!("{ms:.0}ms"))
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            clock(s.t),
            escape(&s.phase),
            s.weight.map_or(String::new(), |w| format!("{w}%")),
            escape(&versions.join(" | ")),
            escape(s.why.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</table>\n");
    out
}

/// The table of Events.
fn events_table(events: &[EventRow]) -> String {
    let mut out = String::from(
        "<h2>Events</h2>\n<table>\n<tr><th>time</th><th>object</th><th>type</th><th>reason</th><th>message</th></tr>\n",
    );
    for e in events {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            clock(e.t),
            escape(&e.object),
            escape(&e.type_),
            escape(&e.reason),
            escape(&e.message)
        );
    }
    out.push_str("</table>\n");
    out
}

/// Text made safe inside HTML.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::sample::Version;
    use std::time::Duration;

    fn sample(t: u64, weight: i32, canary_ready: i32) -> Sample {
        let v = |name: &str, ready: i32, success: f64| Version {
            name: name.into(),
            image: format!("podinfo:{name}"),
            desired: 2,
            ready,
            rps: Some(10.0),
            success: Some(success),
            p99_ms: Some(55.0),
        };
        Sample {
            t: Duration::from_secs(t),
            phase: "Progressing".into(),
            weight: Some(weight),
            failed_checks: Some(0),
            iterations: Some(0),
            versions: vec![v("primary", 2, 100.0), v("canary", canary_ready, 80.0)],
            unserved: 0.0,
            why: Some("Advance <weight>".into()),
            earlier: Vec::new(),
        }
    }

    #[test]
    fn the_page_is_self_contained_with_a_chart_per_series_kind() {
        let samples = [sample(0, 0, 0), sample(30, 10, 2), sample(60, 20, 2)];
        let events = [EventRow {
            t: Duration::from_secs(30),
            object: "canary/podinfo".into(),
            type_: "Normal".into(),
            reason: "Synced".into(),
            message: "Advance podinfo.default canary weight 10".into(),
        }];
        let page = html(&Run {
            scenario: "canary",
            about: "a & b",
            outcome: "ok",
            samples: &samples,
            events: &events,
            trigger: Some(Duration::from_secs(20)),
        });
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert_eq!(page.matches("<svg").count(), 5, "{page}");
        for name in [
            "canary weight",
            "primary ready replicas",
            "canary ready replicas",
            "primary success rate",
            "canary success rate",
            "primary p99 latency",
            "canary p99 latency",
            "canary requests/s",
            "unanswered requests/s",
        ] {
            assert!(page.contains(&format!(">{name}</text>")), "{name}");
        }
        assert!(page.contains("Advance &lt;weight&gt;"));
        assert!(page.contains("a &amp; b"));
        assert!(page.contains("Advance podinfo.default canary weight 10"));
        assert_eq!(page.matches(">new version</text>").count(), 5);
        assert!(
            !page.contains("http://") || !page.contains("src="),
            "no external asset"
        );
        assert!(!page.contains("<script"));
    }

    #[test]
    fn bounds_round_up() {
        assert_eq!(x_tick(60.0), 10.0);
        assert_eq!(x_tick(311.0), 60.0);
        assert_eq!(nice(0.0), 1.0);
        assert_eq!(nice(3.0), 5.0);
        assert_eq!(nice(120.0), 200.0);
        assert_eq!(nice(1000.0), 1000.0);
    }
}
