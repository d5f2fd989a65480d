//! rbac.authorization.k8s.io/v1 bodies in protobuf: what `kubectl create
//! role|clusterrole|rolebinding|clusterrolebinding` sends; and the
//! SelfSubjectRulesReview of `kubectl auth can-i --list`.
//!
//! Upstream: `staging/src/k8s.io/api/rbac/v1/generated.proto` and the JSON
//! tags of `types.go` (`verbs`, `rules` and the `roleRef` fields are
//! written even when empty; the rest is `omitempty`);
//! `staging/src/k8s.io/api/authorization/v1/generated.proto`.

use k8s_pb::api::authorization::v1 as authz;
use k8s_pb::api::rbac::v1 as rbac;
use serde_json::Value;

use super::json::{Conv, Obj, Res};

impl Conv {
    /// `kubectl auth can-i --list` (the status is the server's to fill).
    pub(super) fn self_subject_rules_review(&mut self, m: authz::SelfSubjectRulesReview) -> Res<Obj> {
        let authz::SelfSubjectRulesReview {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec.map(|s| Obj::new().nz("namespace", s.namespace).done());
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .opt("spec", spec))
    }

    /// `kubectl create role`.
    pub(super) fn role(&mut self, m: rbac::Role) -> Res<Obj> {
        let rbac::Role { metadata, rules } = m;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .list("rules", rules.into_iter().map(policy_rule).collect()))
    }

    /// `kubectl create clusterrole` (with `--aggregation-rule`, the selectors).
    pub(super) fn cluster_role(&mut self, m: rbac::ClusterRole) -> Res<Obj> {
        let rbac::ClusterRole {
            metadata,
            rules,
            aggregation_rule,
        } = m;
        let aggregation = aggregation_rule.map(|a| {
            let selectors: Vec<Value> = a
                .cluster_role_selectors
                .into_iter()
                .map(|s| self.label_selector(s))
                .collect();
            Obj::new().list("clusterRoleSelectors", selectors).done()
        });
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .list("rules", rules.into_iter().map(policy_rule).collect())
            .ptr("aggregationRule", aggregation))
    }

    /// `kubectl create rolebinding`.
    pub(super) fn role_binding(&mut self, m: rbac::RoleBinding) -> Res<Obj> {
        let rbac::RoleBinding {
            metadata,
            subjects,
            role_ref,
        } = m;
        self.binding(metadata, subjects, role_ref)
    }

    /// `kubectl create clusterrolebinding`.
    pub(super) fn cluster_role_binding(&mut self, m: rbac::ClusterRoleBinding) -> Res<Obj> {
        let rbac::ClusterRoleBinding {
            metadata,
            subjects,
            role_ref,
        } = m;
        self.binding(metadata, subjects, role_ref)
    }

    fn binding(
        &mut self,
        metadata: Option<k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta>,
        subjects: Vec<rbac::Subject>,
        role_ref: Option<rbac::RoleRef>,
    ) -> Res<Obj> {
        let role_ref = role_ref.unwrap_or_default();
        let role_ref = Obj::new()
            .opt("apiGroup", Some(role_ref.api_group.unwrap_or_default()))
            .opt("kind", Some(role_ref.kind.unwrap_or_default()))
            .opt("name", Some(role_ref.name.unwrap_or_default()))
            .done();
        let subjects: Vec<Value> = subjects
            .into_iter()
            .map(|s| {
                Obj::new()
                    .opt("kind", Some(s.kind.unwrap_or_default()))
                    .nz("apiGroup", s.api_group)
                    .opt("name", Some(s.name.unwrap_or_default()))
                    .nz("namespace", s.namespace)
                    .done()
            })
            .collect();
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .list("subjects", subjects)
            .opt("roleRef", Some(role_ref)))
    }
}

fn policy_rule(r: rbac::PolicyRule) -> Value {
    let rbac::PolicyRule {
        verbs,
        api_groups,
        resources,
        resource_names,
        non_resource_ur_ls,
    } = r;
    Obj::new()
        .opt("verbs", Some(Value::from(verbs)))
        .list("apiGroups", api_groups)
        .list("resources", resources)
        .list("resourceNames", resource_names)
        .list("nonResourceURLs", non_resource_ur_ls)
        .done()
}
