//! The RBAC authorizer: a request is allowed when a rule of a role bound to
//! its user allows it.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | `mod.rs` | [`RbacAuthorizer`]: `authorize`, `rules_for` | `plugin/pkg/auth/authorizer/rbac/rbac.go` |
//! | [`resolver`] | which rules apply to a user in a namespace, and from which binding | `pkg/registry/rbac/validation/rule.go` (`VisitRulesFor`, `appliesTo`, the describers) |
//! | [`evaluation`] | does one rule allow a request (pure) | `pkg/apis/rbac/v1/evaluation_helpers.go` |
//! | [`cache`] | the parsed RBAC objects, reparsed only when they change | the informers' listers |
//!
//! Authorization is calculated against the ClusterRoleBindings, then the
//! RoleBindings of the request's namespace; the first allowing rule wins,
//! and nothing allowing means no (RBAC never denies explicitly). Where to
//! start: [`RbacAuthorizer::authorize`].

pub mod cache;
pub mod evaluation;
pub mod resolver;

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::api::Api;
use crate::auth::UserInfo;
use crate::auth::authorizer::{Attributes, Authorization};

/// The RBAC authorizer over the objects in one API's store. Cheap to clone.
#[derive(Clone)]
pub struct RbacAuthorizer {
    cache: Arc<cache::Cache>,
}

/// The rules a user holds (upstream `RulesFor`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyRules {
    /// In the order they were found.
    pub rules: Vec<PolicyRule>,
}

impl PolicyRules {
    /// Everything: `*` on every resource of every group, and every path.
    pub fn everything() -> Self {
        let all = || Some(vec!["*".to_string()]);
        PolicyRules {
            rules: vec![
                PolicyRule {
                    verbs: vec!["*".into()],
                    api_groups: all(),
                    resources: all(),
                    ..PolicyRule::default()
                },
                PolicyRule {
                    verbs: vec!["*".into()],
                    non_resource_urls: all(),
                    ..PolicyRule::default()
                },
            ],
        }
    }

    /// `first`'s rules, then these.
    pub fn prepend(&mut self, first: PolicyRules) {
        let rest = std::mem::take(&mut self.rules);
        self.rules = first.rules.into_iter().chain(rest).collect();
    }
}

impl RbacAuthorizer {
    /// An authorizer reading the RBAC objects of `api`'s store.
    pub fn new(api: Api) -> Self {
        RbacAuthorizer {
            cache: Arc::new(cache::Cache::new(api.store().clone())),
        }
    }

    /// Upstream `RBACAuthorizer.Authorize`: allowed with the binding that
    /// allowed it as the reason, or not allowed with the errors met on
    /// the way (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`).
    pub fn authorize(&self, attrs: &Attributes) -> Authorization {
        let snapshot = self.cache.snapshot();
        let mut errors = Vec::new();
        let mut allowed_by = None;
        resolver::visit_rules_for(
            &snapshot,
            &attrs.user,
            &attrs.namespace,
            &mut |visit| match visit {
                resolver::Visit::Rule(source, rule) if evaluation::rule_allows(attrs, rule) => {
                    allowed_by = Some(source.to_string());
                    false
                }
                resolver::Visit::Rule(..) => true,
                resolver::Visit::Error(e) => {
                    errors.push(e);
                    true
                }
            },
        );
        match allowed_by {
            Some(source) => Authorization {
                allowed: true,
                reason: format!("RBAC: allowed by {source}"),
                evaluation_error: String::new(),
            },
            None => Authorization {
                allowed: false,
                reason: if errors.is_empty() {
                    String::new()
                } else {
                    format!("RBAC: {}", aggregate(&errors))
                },
                evaluation_error: String::new(),
            },
        }
    }

    /// Upstream `RulesFor`: every rule bound to `user` in `namespace`
    /// (cluster-wide bindings included), and the errors met, aggregated.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (PolicyRules, String) {
        let snapshot = self.cache.snapshot();
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        resolver::visit_rules_for(&snapshot, user, namespace, &mut |visit| {
            match visit {
                resolver::Visit::Rule(_, rule) => rules.push(rule.clone()),
                resolver::Visit::Error(e) => errors.push(e),
            }
            true
        });
        let error = if errors.is_empty() {
            String::new()
        } else {
            aggregate(&errors)
        };
        (PolicyRules { rules }, error)
    }
}

/// Upstream `utilerrors.NewAggregate(...).Error()`: one error as itself,
/// more as `[a, b]`.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}
