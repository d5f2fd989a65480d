//! The scenarios `miniplane demo` runs: what is applied, what is changed, and how the rollout
//! must end. The manifests are the files of `examples/demos/`, embedded in the binary so that an
//! installed `miniplane` runs them anywhere.

use std::time::Duration;

/// The namespace every scenario's objects live in.
pub const NAMESPACE: &str = "default";

/// The first version's image, in every scenario.
pub const OLD_IMAGE: &str = "ghcr.io/stefanprodan/podinfo:6.0.0";
/// The image the trigger rolls out.
pub const NEW_IMAGE: &str = "ghcr.io/stefanprodan/podinfo:6.1.0";

/// What drives the rollout: a Deployment's own strategy, or a Canary over it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    /// The Deployment controller (RollingUpdate or Recreate).
    Deployment,
    /// The Canary controller: the named Canary targets the Deployment.
    Canary {
        /// The Canary's name.
        canary: &'static str,
    },
}

/// How the scenario must end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The Deployment is rolled out on the new image (`kubectl rollout status` succeeds).
    RolledOut,
    /// The Canary is `Succeeded` and the primary runs the new image.
    Promoted,
    /// The Canary is `Failed` and the primary still runs the old image.
    RolledBack,
}

/// One scenario.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line on what it shows.
    pub about: &'static str,
    /// The manifests (YAML documents) applied first.
    pub manifests: &'static str,
    /// The Deployment whose pod template the trigger changes.
    pub deployment: &'static str,
    /// What rolls it out.
    pub driver: Driver,
    /// Pod-template annotations the trigger sets besides the new image (the
    /// new version's simulated behaviour).
    pub behaviour: &'static [(&'static str, &'static str)],
    /// How it must end.
    pub expect: Expect,
    /// Whether the canary must get no traffic while it is analysed (blue/green).
    pub zero_weight_during_analysis: bool,
    /// The longest the rollout may take, in simulated time, before the demo gives up.
    pub timeout: Duration,
}

impl Scenario {
    /// A Deployment rolled out by its own strategy to a good version.
    const fn deployment(name: &'static str, about: &'static str, manifests: &'static str) -> Self {
        Scenario {
            name,
            about,
            manifests,
            deployment: "podinfo",
            driver: Driver::Deployment,
            behaviour: &[],
            expect: Expect::RolledOut,
            zero_weight_during_analysis: false,
            timeout: Duration::from_secs(10 * 60),
        }
    }

    /// The Deployment `podinfo` rolled out by the Canary `podinfo`.
    const fn canary(
        name: &'static str,
        about: &'static str,
        manifests: &'static str,
        behaviour: &'static [(&'static str, &'static str)],
        expect: Expect,
    ) -> Self {
        Scenario {
            name,
            about,
            manifests,
            deployment: "podinfo",
            driver: Driver::Canary { canary: "podinfo" },
            behaviour,
            expect,
            zero_weight_during_analysis: false,
            timeout: Duration::from_secs(30 * 60),
        }
    }

    /// The same, the canary getting no traffic while analysed.
    const fn without_traffic_in_analysis(self) -> Self {
        Scenario {
            zero_weight_during_analysis: true,
            ..self
        }
    }
}

/// The canary scenarios' manifests.
const CANARY: &str = include_str!("../../examples/demos/canary.yaml");

/// Every scenario, in the order `miniplane demo --help` lists them.
pub const SCENARIOS: &[Scenario] = &[
    Scenario::deployment(
        "rolling-update",
        "a Deployment's RollingUpdate, one pod at a time, under traffic",
        include_str!("../../examples/demos/rolling-update.yaml"),
    ),
    Scenario::deployment(
        "recreate",
        "a Deployment's Recreate: every old pod gone before the new ones start",
        include_str!("../../examples/demos/recreate.yaml"),
    ),
    Scenario::canary(
        "canary",
        "a Canary shifts traffic step by step to a good version and promotes it",
        CANARY,
        &[],
        Expect::Promoted,
    ),
    Scenario::canary(
        "canary-bad",
        "a Canary of a version failing 20% of its requests: the success-rate check fails, rollback",
        CANARY,
        &[("sim.miniplane.dev/error-rate", "0.2")],
        Expect::RolledBack,
    ),
    Scenario::canary(
        "canary-slow",
        "a Canary of a version answering in ~800 ms: the latency check fails, rollback",
        CANARY,
        &[
            ("sim.miniplane.dev/latency-ms", "800"),
            ("sim.miniplane.dev/latency-p99-ms", "1500"),
        ],
        Expect::RolledBack,
    ),
    Scenario::canary(
        "blue-green",
        "blue/green: the new version is analysed with no user traffic, then takes it all",
        include_str!("../../examples/demos/blue-green.yaml"),
        &[],
        Expect::Promoted,
    )
    .without_traffic_in_analysis(),
    Scenario::canary(
        "ab-testing",
        "A/B testing: only requests with the header x-canary: insider reach the new version",
        include_str!("../../examples/demos/ab-testing.yaml"),
        &[],
        Expect::Promoted,
    ),
];

/// The scenario called `name`.
pub fn find(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}

/// The scenarios' names, for the command line's value parser.
pub fn names() -> Vec<&'static str> {
    SCENARIOS.iter().map(|s| s.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_has_a_unique_name_and_parses_as_yaml_naming_its_deployment() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SCENARIOS.len());
        for s in SCENARIOS {
            let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(s.manifests).unwrap();
            let deployment = docs
                .iter()
                .find(|d| d["kind"] == "Deployment" && d["metadata"]["name"] == s.deployment);
            assert!(deployment.is_some(), "{}: no Deployment {}", s.name, s.deployment);
            let image = &deployment.unwrap()["spec"]["template"]["spec"]["containers"][0]["image"];
            assert_eq!(image, OLD_IMAGE, "{}", s.name);
            if let Driver::Canary { canary } = s.driver {
                assert!(
                    docs.iter()
                        .any(|d| d["kind"] == "Canary" && d["metadata"]["name"] == canary),
                    "{}: no Canary {canary}",
                    s.name
                );
            }
        }
    }
}
