//! Converters for the `meta/v1` building blocks and the small apimachinery
//! types (`IntOrString`, `Quantity`, `Time`).

use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

use super::json::{Conv, Obj, Problem, Res, at, empty};

impl Conv {
    /// `ObjectMeta`: everything a client may send except `managedFields`.
    pub(super) fn object_meta(&mut self, m: meta::ObjectMeta) -> Res<Value> {
        let meta::ObjectMeta {
            name,
            generate_name,
            namespace,
            self_link,
            uid,
            resource_version,
            generation,
            creation_timestamp,
            deletion_timestamp,
            deletion_grace_period_seconds,
            labels,
            annotations,
            owner_references,
            finalizers,
            managed_fields,
        } = m;
        empty(managed_fields.len(), "managedFields")?;
        let owners: Vec<Value> = owner_references.into_iter().map(owner_reference).collect();
        Ok(Obj::new()
            .nz("name", name)
            .nz("generateName", generate_name)
            .nz("namespace", namespace)
            .nz("selfLink", self_link)
            .nz("uid", uid)
            .nz("resourceVersion", resource_version)
            .nz("generation", generation)
            .opt("creationTimestamp", time(creation_timestamp)?)
            .opt("deletionTimestamp", time(deletion_timestamp)?)
            .opt("deletionGracePeriodSeconds", deletion_grace_period_seconds)
            .map("labels", self.string_map(labels))
            .map("annotations", self.string_map(annotations))
            .list("ownerReferences", owners)
            .list("finalizers", finalizers)
            .done())
    }

    /// `ObjectMeta` that may be missing from the message altogether.
    pub(super) fn metadata(&mut self, m: Option<meta::ObjectMeta>) -> Res<Option<Value>> {
        m.map(|m| self.object_meta(m)).transpose().map_err(at("metadata"))
    }

    /// `LabelSelector`: `matchLabels` and `matchExpressions`.
    pub(super) fn label_selector(&mut self, s: meta::LabelSelector) -> Value {
        let meta::LabelSelector {
            match_labels,
            match_expressions,
        } = s;
        let expressions: Vec<Value> = match_expressions.into_iter().map(requirement).collect();
        Obj::new()
            .map("matchLabels", self.string_map(match_labels))
            .list("matchExpressions", expressions)
            .done()
    }
}

fn owner_reference(r: meta::OwnerReference) -> Value {
    let meta::OwnerReference {
        api_version,
        kind,
        name,
        uid,
        controller,
        block_owner_deletion,
    } = r;
    Obj::new()
        .opt("apiVersion", api_version)
        .opt("kind", kind)
        .opt("name", name)
        .opt("uid", uid)
        .opt("controller", controller)
        .opt("blockOwnerDeletion", block_owner_deletion)
        .done()
}

fn requirement(r: meta::LabelSelectorRequirement) -> Value {
    let meta::LabelSelectorRequirement {
        key,
        operator,
        values,
    } = r;
    Obj::new()
        .opt("key", key)
        .opt("operator", operator)
        .list("values", values)
        .done()
}

/// `Time` as RFC 3339 in UTC; the zero time (an empty message) is absent.
pub(super) fn time(t: Option<meta::Time>) -> Res<Option<String>> {
    let Some(meta::Time { seconds, nanos }) = t else {
        return Ok(None);
    };
    let (seconds, nanos) = (seconds.unwrap_or(0), nanos.unwrap_or(0));
    if seconds == 0 && nanos == 0 {
        return Ok(None);
    }
    let stamp = jiff::Timestamp::new(seconds, nanos)
        .map_err(|e| Problem::Bad(format!("timestamp out of range: {e}")))?;
    // metav1.Time has whole-second precision in JSON.
    Ok(Some(stamp.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()))
}

/// `IntOrString`: type 1 is a string, anything else the integer.
pub(super) fn int_or_string(v: IntOrString) -> Value {
    let IntOrString {
        r#type,
        int_val,
        str_val,
    } = v;
    if r#type == Some(1) {
        Value::String(str_val.unwrap_or_default())
    } else {
        Value::from(int_val.unwrap_or(0))
    }
}

/// An `IntOrString` held by value in Go: the zero value (integer 0) is unset.
pub(super) fn int_or_string_nz(v: Option<IntOrString>) -> Option<Value> {
    v.map(int_or_string).filter(|v| v.as_i64() != Some(0))
}

/// `Quantity` in its canonical string form.
pub(super) fn quantity(q: Quantity) -> Value {
    Value::String(q.string.unwrap_or_default())
}

/// A map of resource names to quantities (`limits`, `requests`).
pub(super) fn quantities(
    map: std::collections::BTreeMap<String, Quantity>,
) -> serde_json::Map<String, Value> {
    map.into_iter().map(|(k, q)| (k, quantity(q))).collect()
}

/// `DeleteOptions`, the body of a DELETE; every field is converted.
pub(super) fn delete_options(o: meta::DeleteOptions) -> Obj {
    let meta::DeleteOptions {
        grace_period_seconds,
        preconditions,
        orphan_dependents,
        propagation_policy,
        dry_run,
        ignore_store_read_error_with_cluster_breaking_potential,
    } = o;
    let preconditions = preconditions.map(|p| {
        let meta::Preconditions {
            uid,
            resource_version,
        } = p;
        Obj::new()
            .opt("uid", uid)
            .opt("resourceVersion", resource_version)
            .done()
    });
    Obj::new()
        .opt("gracePeriodSeconds", grace_period_seconds)
        .ptr("preconditions", preconditions)
        .opt("orphanDependents", orphan_dependents)
        .opt("propagationPolicy", propagation_policy)
        .list("dryRun", dry_run)
        .opt(
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            ignore_store_read_error_with_cluster_breaking_potential,
        )
}
