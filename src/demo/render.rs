//! The terminal view: one line per step that changed something.
//!
//! ```text
//!   2m30s  Progressing   weight  20%  primary 6.0.0 4/4  99.9%  58ms │ canary 6.1.0 1/1 100.0%  57ms  ← Advance podinfo.default canary weight 20
//! ```

use std::time::Duration;

use super::sample::{Sample, Version, tag};

/// `1m05s`, `45s`, `1h02m`: simulated time, short.
pub fn clock(t: Duration) -> String {
    let s = t.as_secs();
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m{sec:02}s"),
        (h, min, _) => format!("{h}h{min:02}m"),
    }
}

/// What must change for a new line: phase, weight, failed checks, each version's replicas
/// and image (the metrics move every step and are shown when something else changes, or
/// every so often).
pub fn key(s: &Sample) -> String {
    let versions: Vec<String> = s
        .versions
        .iter()
        .map(|v| format!("{}={}:{}/{}", v.name, v.image, v.ready, v.desired))
        .collect();
    format!(
        "{}|{}|{:?}|{:?}|{}|{}",
        s.phase,
        s.unserved >= 0.05,
        s.weight,
        s.failed_checks,
        versions.join(","),
        s.why.as_deref().unwrap_or("")
    )
}

/// One version's columns: `canary 6.1.0 1/1 100.0%  57ms`.
fn version(v: &Version) -> String {
    let image = tag(&v.image);
    let success = v.success.map_or("    -".to_string(), |p| format!("{p:5.1}%"));
    let p99 = v.p99_ms.map_or("    -".to_string(), |ms| format!("{:4.0}ms", ms));
    let name = match v.name.as_str() {
        "primary" | "canary" => format!("{} {image}", v.name),
        _ => image.to_string(),
    };
    format!("{name} {}/{} {success} {p99}", v.ready, v.desired)
}

/// The step's line.
pub fn line(s: &Sample) -> String {
    let mut out = format!("{:>7}  {:<14}", clock(s.t), s.phase);
    if let Some(w) = s.weight {
        out.push_str(&format!(" weight {w:>3}%"));
    }
    if let Some(f) = s.failed_checks.filter(|f| *f > 0) {
        out.push_str(&format!(" failed {f}"));
    }
    let versions: Vec<String> = s.versions.iter().map(version).collect();
    if versions.is_empty() {
        out.push_str("  (no pods)");
    } else {
        out.push_str("  ");
        out.push_str(&versions.join(" │ "));
    }
    if s.unserved >= 0.05 {
        out.push_str(&format!("  (unanswered {:.0} req/s)", s.unserved));
    }
    if let Some(why) = &s.why {
        out.push_str("  ← ");
        out.push_str(why);
    }
    out
}

/// The lines of the driver's Events a step saw besides its newest: `   2m05s  · message`.
pub fn earlier(s: &Sample) -> Vec<String> {
    s.earlier
        .iter()
        .map(|(t, message)| format!("{:>7}  · {message}", clock(*t)))
        .collect()
}

/// The header printed above the lines.
pub fn header(canary: bool) -> String {
    let weight = if canary { " WEIGHT     " } else { "" };
    format!(
        "{:>7}  {:<14}{weight}  VERSION READY SUCCESS P99 (per version)  ← WHY (newest event)",
        "TIME", "PHASE"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(name: &str, image: &str, ready: i32, success: Option<f64>, p99: Option<f64>) -> Version {
        Version {
            name: name.into(),
            image: image.into(),
            desired: 4,
            ready,
            rps: success.map(|_| 10.0),
            success,
            p99_ms: p99,
        }
    }

    #[test]
    fn a_line_shows_phase_weight_versions_and_why() {
        let s = Sample {
            t: Duration::from_secs(150),
            phase: "Progressing".into(),
            weight: Some(20),
            failed_checks: Some(1),
            iterations: Some(0),
            versions: vec![
                v("primary", "podinfo:6.0.0", 4, Some(99.94), Some(58.2)),
                v("canary", "podinfo:6.1.0", 1, None, None),
            ],
            unserved: 0.0,
            why: Some("Advance podinfo.default canary weight 20".into()),
            earlier: Vec::new(),
        };
        assert_eq!(
            line(&s),
            "  2m30s  Progressing    weight  20% failed 1  primary 6.0.0 4/4  99.9%   58ms │ canary 6.1.0 1/4     -     -  ← Advance podinfo.default canary weight 20"
        );
        let d = Sample {
            weight: None,
            failed_checks: None,
            why: None,
            versions: vec![],
            ..s.clone()
        };
        assert_eq!(line(&d), "  2m30s  Progressing     (no pods)");
    }

    #[test]
    fn the_key_ignores_metrics_and_time() {
        let a = Sample {
            t: Duration::from_secs(1),
            phase: "Complete".into(),
            weight: None,
            failed_checks: None,
            iterations: None,
            versions: vec![v("6.0.0", "podinfo:6.0.0", 4, Some(100.0), Some(50.0))],
            unserved: 0.0,
            why: None,
            earlier: Vec::new(),
        };
        let mut b = a.clone();
        b.t = Duration::from_secs(9);
        b.versions[0].success = Some(99.0);
        assert_eq!(key(&a), key(&b));
        b.versions[0].ready = 3;
        assert_ne!(key(&a), key(&b));
    }

    #[test]
    fn simulated_time_reads_short() {
        assert_eq!(clock(Duration::from_secs(45)), "45s");
        assert_eq!(clock(Duration::from_secs(65)), "1m05s");
        assert_eq!(clock(Duration::from_secs(3720)), "1h02m");
    }
}
