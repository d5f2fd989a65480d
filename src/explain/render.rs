//! The story as text: one block per group, newest first, with the simulated time relative to the
//! oldest step shown (`+12.3s`), repeated identical groups and lines folded into one with a count.
//!
//! ```text
//! pod default/web-6d4f-x2: how it got here, newest first (+seconds of simulated time)
//!
//!   +4.1s  replicaset: synced replicaset default/web-6d4f, after replicaset default/web-6d4f MODIFIED
//!            manageReplicas: diff +1 (2 active pods, spec.replicas 3): creating 1 ...
//!            created pod default/web-6d4f-x2
//!   +0.0s  you (kubectl-set) updated deployment default/web: ...
//! ```

use jiff::Timestamp;

use super::story::{Group, Story};
use super::target::Target;

/// How to print.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// At most this many groups, the newest (0: all).
    pub max_steps: usize,
    /// Writes to the object's status are seeds too (see [`super::story::build`]).
    pub status_writes: bool,
    /// How many entries the journal keeps, for the hint when nothing is found (0: unknown).
    pub journal_capacity: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            max_steps: 40,
            status_writes: false,
            journal_capacity: 0,
        }
    }
}

/// The printed explanation of `target`.
pub fn render(story: &Story, target: &Target, options: &RenderOptions) -> String {
    if story.groups.is_empty() {
        return nothing_found(target, options);
    }
    let folded = fold_groups(&story.groups);
    let shown = match options.max_steps {
        0 => folded.len(),
        n => n.min(folded.len()),
    };
    let base = folded[..shown]
        .iter()
        .filter_map(|(g, _)| parse_time(&g.time))
        .min();
    let mut out = format!("{target}: how it got here, newest first (+seconds of simulated time)\n\n");
    for (group, times) in &folded[..shown] {
        let at = relative(parse_time(&group.time), base);
        let count = match times {
            1 => String::new(),
            n => format!(" (×{n})"),
        };
        out.push_str(&format!("  {at:>7}  {}{count}\n", group.header));
        for line in fold_lines(&group.lines) {
            out.push_str(&format!("           {line}\n"));
        }
    }
    if shown < folded.len() {
        let more = folded.len() - shown;
        out.push_str(&format!(
            "  ... {more} older steps not shown (--max-steps 0 shows them all)\n"
        ));
    }
    out
}

/// The line printed when the journal holds nothing about `target`.
fn nothing_found(target: &Target, options: &RenderOptions) -> String {
    let ring = match options.journal_capacity {
        0 => "the journal's ring".to_string(),
        n => format!("the last {n} entries the journal keeps"),
    };
    format!(
        "No journal entries about {target}: is the name right? The journal may be off (`miniplane up --journal-size 0`), \
         or the object's history is older than {ring}.\n"
    )
}

/// Consecutive groups with the same header and lines, as (the newest of them, how many).
fn fold_groups(groups: &[Group]) -> Vec<(Group, usize)> {
    let mut out: Vec<(Group, usize)> = Vec::new();
    for g in groups {
        match out.last_mut() {
            Some((last, n)) if last.header == g.header && last.lines == g.lines => *n += 1,
            _ => out.push((g.clone(), 1)),
        }
    }
    out
}

/// Consecutive identical lines as one, with ` (×n)`.
fn fold_lines(lines: &[String]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for l in lines {
        match out.last_mut() {
            Some((last, n)) if last == l => *n += 1,
            _ => out.push((l.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(l, n)| if n == 1 { l } else { format!("{l} (×{n})") })
        .collect()
}

fn parse_time(s: &str) -> Option<Timestamp> {
    s.parse().ok()
}

/// `+12.3s` after `base`.
fn relative(at: Option<Timestamp>, base: Option<Timestamp>) -> String {
    match (at, base) {
        (Some(at), Some(base)) => {
            let secs = at.duration_since(base).as_secs_f64();
            format!("+{secs:.1}s")
        }
        _ => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::story::tests::rollout;
    use crate::explain::{build, parse_target};

    #[test]
    fn the_story_prints_newest_first_with_relative_times() {
        let target = parse_target(&["po/web-2-a".to_string()], "default").unwrap();
        let text = render(
            &build(&rollout(), &target, false),
            &target,
            &RenderOptions::default(),
        );
        assert_eq!(
            text,
            "pod default/web-2-a: how it got here, newest first (+seconds of simulated time)\n\
             \n\
             \x20   +9.0s  replicaset: synced replicaset default/web-2, after replicaset default/web-2 ADDED\n\
             \x20          manageReplicas: diff +1, creating 1\n\
             \x20          created pod default/web-2-a\n\
             \x20   +3.0s  deployment: synced deployment default/web, after deployment default/web MODIFIED\n\
             \x20          getNewReplicaSet: creating web-2 with replicas 1\n\
             \x20          created replicaset default/web-2\n\
             \x20   +0.0s  you (kubectl-set) updated deployment default/web: image nginx:1.25→nginx:1.26\n"
        );
    }

    #[test]
    fn repeats_fold_into_one_with_a_count() {
        let g = |time: &str| Group {
            time: time.into(),
            header: "kubelet: synced pod default/p".into(),
            lines: vec!["updated pod default/p (status)".into(); 2],
        };
        let story = Story {
            groups: vec![
                g("2026-12-02T15:00:03Z"),
                g("2026-12-02T15:00:02Z"),
                g("2026-12-02T15:00:01Z"),
            ],
        };
        let target = parse_target(&["po/p".to_string()], "default").unwrap();
        let text = render(&story, &target, &RenderOptions::default());
        assert!(
            text.contains("+0.0s  kubelet: synced pod default/p (×3)\n"),
            "{text}"
        );
        assert!(text.contains("updated pod default/p (status) (×2)\n"), "{text}");
    }

    #[test]
    fn nothing_found_says_why_it_may_be() {
        let target = parse_target(&["deploy/gone".to_string()], "default").unwrap();
        let options = RenderOptions {
            journal_capacity: 20_000,
            ..RenderOptions::default()
        };
        let text = render(&Story::default(), &target, &options);
        assert!(text.contains("--journal-size 0"), "{text}");
        assert!(text.contains("the last 20000 entries"), "{text}");
    }

    #[test]
    fn only_the_newest_steps_are_shown_when_there_are_many() {
        let target = parse_target(&["po/web-2-a".to_string()], "default").unwrap();
        let options = RenderOptions {
            max_steps: 1,
            ..RenderOptions::default()
        };
        let text = render(&build(&rollout(), &target, false), &target, &options);
        assert!(text.contains("... 2 older steps not shown"), "{text}");
        assert!(!text.contains("you (kubectl-set)"), "{text}");
    }
}
