//! One converter per supported kind. Each returns the object's fields
//! without `apiVersion`/`kind`, which the caller adds from the envelope.
//!
//! `status` is never converted: kubectl's generators send an empty one, and
//! kube-apiserver discards whatever status a create carries, so it is
//! skipped here rather than refused.

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::authentication::v1 as authn;
use k8s_pb::api::authorization::v1 as authz;
use k8s_pb::api::batch::v1 as batch;
use k8s_pb::api::certificates::v1 as certs;
use k8s_pb::api::core::v1 as core;
use serde_json::Value;

use super::json::{Conv, Obj, Res, absent, at};
use super::meta::{int_or_string, int_or_string_nz};
use super::pod::local_refs;

impl Conv {
    pub(super) fn config_map(&mut self, m: core::ConfigMap) -> Res<Obj> {
        let core::ConfigMap {
            metadata,
            immutable,
            data,
            binary_data,
        } = m;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .opt("immutable", immutable)
            .map("data", self.string_map(data))
            .map("binaryData", self.bytes_map(binary_data)))
    }

    pub(super) fn secret(&mut self, m: core::Secret) -> Res<Obj> {
        let core::Secret {
            metadata,
            immutable,
            data,
            string_data,
            r#type,
        } = m;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .opt("immutable", immutable)
            .map("data", self.bytes_map(data))
            .map("stringData", self.string_map(string_data))
            .nz("type", r#type))
    }

    pub(super) fn namespace(&mut self, m: core::Namespace) -> Res<Obj> {
        let core::Namespace {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec.map(|s| Obj::new().list("finalizers", s.finalizers).done());
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }

    pub(super) fn service_account(&mut self, m: core::ServiceAccount) -> Res<Obj> {
        let core::ServiceAccount {
            metadata,
            secrets,
            image_pull_secrets,
            automount_service_account_token,
        } = m;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .list("secrets", secrets.into_iter().map(object_reference).collect())
            .list("imagePullSecrets", local_refs(image_pull_secrets))
            .opt("automountServiceAccountToken", automount_service_account_token))
    }

    pub(super) fn service(&mut self, m: core::Service) -> Res<Obj> {
        let core::Service {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec.map(|s| self.service_spec(s));
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }

    fn service_spec(&mut self, s: core::ServiceSpec) -> Value {
        let core::ServiceSpec {
            ports,
            selector,
            cluster_ip,
            cluster_ips,
            r#type,
            external_ips,
            session_affinity,
            load_balancer_ip,
            load_balancer_source_ranges,
            external_name,
            external_traffic_policy,
            health_check_node_port,
            publish_not_ready_addresses,
            session_affinity_config,
            ip_families,
            ip_family_policy,
            allocate_load_balancer_node_ports,
            load_balancer_class,
            internal_traffic_policy,
            traffic_distribution,
        } = s;
        let affinity = session_affinity_config.map(|c| {
            let client_ip = c
                .client_ip
                .map(|ip| Obj::new().opt("timeoutSeconds", ip.timeout_seconds).done());
            Obj::new().ptr("clientIP", client_ip).done()
        });
        Obj::new()
            .list("ports", ports.into_iter().map(service_port).collect())
            .map("selector", self.string_map(selector))
            .nz("clusterIP", cluster_ip)
            .list("clusterIPs", cluster_ips)
            .nz("type", r#type)
            .list("externalIPs", external_ips)
            .nz("sessionAffinity", session_affinity)
            .nz("loadBalancerIP", load_balancer_ip)
            .list("loadBalancerSourceRanges", load_balancer_source_ranges)
            .nz("externalName", external_name)
            .nz("externalTrafficPolicy", external_traffic_policy)
            .nz("healthCheckNodePort", health_check_node_port)
            .nz("publishNotReadyAddresses", publish_not_ready_addresses)
            .ptr("sessionAffinityConfig", affinity)
            .list("ipFamilies", ip_families)
            .opt("ipFamilyPolicy", ip_family_policy)
            .opt("allocateLoadBalancerNodePorts", allocate_load_balancer_node_ports)
            .opt("loadBalancerClass", load_balancer_class)
            .opt("internalTrafficPolicy", internal_traffic_policy)
            .opt("trafficDistribution", traffic_distribution)
            .done()
    }

    pub(super) fn pod(&mut self, m: core::Pod) -> Res<Obj> {
        let core::Pod {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec.map(|s| self.pod_spec(s)).transpose().map_err(at("spec"))?;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }

    pub(super) fn deployment(&mut self, m: apps::Deployment) -> Res<Obj> {
        let apps::Deployment {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec
            .map(|s| self.deployment_spec(s))
            .transpose()
            .map_err(at("spec"))?;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }

    fn deployment_spec(&mut self, s: apps::DeploymentSpec) -> Res<Value> {
        let apps::DeploymentSpec {
            replicas,
            selector,
            template,
            strategy,
            min_ready_seconds,
            revision_history_limit,
            paused,
            progress_deadline_seconds,
        } = s;
        let selector = selector.map(|s| self.label_selector(s));
        let template = template
            .map(|t| self.pod_template(t))
            .transpose()
            .map_err(at("template"))?;
        Ok(Obj::new()
            .opt("replicas", replicas)
            .ptr("selector", selector)
            .inner("template", template)
            .inner("strategy", strategy.map(deployment_strategy))
            .nz("minReadySeconds", min_ready_seconds)
            .opt("revisionHistoryLimit", revision_history_limit)
            .nz("paused", paused)
            .opt("progressDeadlineSeconds", progress_deadline_seconds)
            .done())
    }

    pub(super) fn job(&mut self, m: batch::Job) -> Res<Obj> {
        let batch::Job {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec.map(|s| self.job_spec(s)).transpose().map_err(at("spec"))?;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }

    fn job_spec(&mut self, s: batch::JobSpec) -> Res<Value> {
        let batch::JobSpec {
            parallelism,
            completions,
            active_deadline_seconds,
            pod_failure_policy,
            success_policy,
            backoff_limit,
            backoff_limit_per_index,
            max_failed_indexes,
            selector,
            manual_selector,
            template,
            ttl_seconds_after_finished,
            completion_mode,
            suspend,
            pod_replacement_policy,
            managed_by,
        } = s;
        absent(&pod_failure_policy, "podFailurePolicy")?;
        absent(&success_policy, "successPolicy")?;
        let selector = selector.map(|s| self.label_selector(s));
        let template = template
            .map(|t| self.pod_template(t))
            .transpose()
            .map_err(at("template"))?;
        Ok(Obj::new()
            .opt("parallelism", parallelism)
            .opt("completions", completions)
            .opt("activeDeadlineSeconds", active_deadline_seconds)
            .opt("backoffLimit", backoff_limit)
            .opt("backoffLimitPerIndex", backoff_limit_per_index)
            .opt("maxFailedIndexes", max_failed_indexes)
            .ptr("selector", selector)
            .opt("manualSelector", manual_selector)
            .inner("template", template)
            .opt("ttlSecondsAfterFinished", ttl_seconds_after_finished)
            .opt("completionMode", completion_mode)
            .opt("suspend", suspend)
            .opt("podReplacementPolicy", pod_replacement_policy)
            .opt("managedBy", managed_by)
            .done())
    }

    pub(super) fn cron_job(&mut self, m: batch::CronJob) -> Res<Obj> {
        let batch::CronJob {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec
            .map(|s| self.cron_job_spec(s))
            .transpose()
            .map_err(at("spec"))?;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }

    fn cron_job_spec(&mut self, s: batch::CronJobSpec) -> Res<Value> {
        let batch::CronJobSpec {
            schedule,
            time_zone,
            starting_deadline_seconds,
            concurrency_policy,
            suspend,
            job_template,
            successful_jobs_history_limit,
            failed_jobs_history_limit,
        } = s;
        let job_template = job_template
            .map(|t| self.job_template(t))
            .transpose()
            .map_err(at("jobTemplate"))?;
        Ok(Obj::new()
            .opt("schedule", schedule)
            .opt("timeZone", time_zone)
            .opt("startingDeadlineSeconds", starting_deadline_seconds)
            .nz("concurrencyPolicy", concurrency_policy)
            .opt("suspend", suspend)
            .inner("jobTemplate", job_template)
            .opt("successfulJobsHistoryLimit", successful_jobs_history_limit)
            .opt("failedJobsHistoryLimit", failed_jobs_history_limit)
            .done())
    }

    fn job_template(&mut self, t: batch::JobTemplateSpec) -> Res<Value> {
        let batch::JobTemplateSpec { metadata, spec } = t;
        let metadata = self.metadata(metadata)?;
        let spec = spec.map(|s| self.job_spec(s)).transpose().map_err(at("spec"))?;
        Ok(Obj::new().inner("metadata", metadata).inner("spec", spec).done())
    }

    /// `kubectl auth can-i` sends this.
    pub(super) fn self_subject_access_review(&mut self, m: authz::SelfSubjectAccessReview) -> Res<Obj> {
        let authz::SelfSubjectAccessReview {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec.map(access_review_spec).transpose().map_err(at("spec"))?;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }

    // -- identity: `kubectl auth whoami`, `kubectl certificate approve|deny` --

    /// `kubectl auth whoami` sends this (metadata only; the server fills the status).
    pub(super) fn self_subject_review(&mut self, m: authn::SelfSubjectReview) -> Res<Obj> {
        let authn::SelfSubjectReview { metadata, status: _ } = m;
        Ok(Obj::new().inner("metadata", self.metadata(metadata)?))
    }

    /// `kubectl certificate approve|deny` PUTs the whole CSR to `approval`:
    /// unlike a create, its status (the conditions) is the point.
    pub(super) fn certificate_signing_request(&mut self, m: certs::CertificateSigningRequest) -> Res<Obj> {
        let certs::CertificateSigningRequest {
            metadata,
            spec,
            status,
        } = m;
        // kubectl sends back the managedFields it read; an update without
        // them keeps the stored ones, which is what sending them back means.
        let metadata = metadata.map(|mut m| {
            m.managed_fields.clear();
            m
        });
        let spec = spec.map(|s| {
            let certs::CertificateSigningRequestSpec {
                request,
                signer_name,
                expiration_seconds,
                usages,
                username,
                uid,
                groups,
                extra,
            } = s;
            let extra = extra
                .into_iter()
                .map(|(k, v)| (k, Value::from(v.items)))
                .collect();
            Obj::new()
                .opt("request", request.map(|r| super::json::base64(&r)))
                .nz("signerName", signer_name)
                .opt("expirationSeconds", expiration_seconds)
                .list("usages", usages)
                .nz("username", username)
                .nz("uid", uid)
                .list("groups", groups)
                .map("extra", extra)
                .done()
        });
        let status = status
            .map(|s| -> Res<Value> {
                let certs::CertificateSigningRequestStatus {
                    conditions,
                    certificate,
                } = s;
                let conditions = super::json::each("conditions", conditions, |c| {
                    let certs::CertificateSigningRequestCondition {
                        r#type,
                        status,
                        reason,
                        message,
                        last_update_time,
                        last_transition_time,
                    } = c;
                    Ok(Obj::new()
                        .nz("type", r#type)
                        .nz("status", status)
                        .nz("reason", reason)
                        .nz("message", message)
                        .opt("lastUpdateTime", super::meta::time(last_update_time)?)
                        .opt("lastTransitionTime", super::meta::time(last_transition_time)?)
                        .done())
                })?;
                Ok(Obj::new()
                    .list("conditions", conditions)
                    .opt("certificate", certificate.map(|c| super::json::base64(&c)))
                    .done())
            })
            .transpose()
            .map_err(at("status"))?;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec)
            .inner("status", status))
    }

    /// `kubectl create token` sends this.
    pub(super) fn token_request(&mut self, m: authn::TokenRequest) -> Res<Obj> {
        let authn::TokenRequest {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec.map(|s| {
            let bound = s.bound_object_ref.map(|r| {
                Obj::new()
                    .nz("kind", r.kind)
                    .nz("apiVersion", r.api_version)
                    .nz("name", r.name)
                    .nz("uid", r.u_id)
                    .done()
            });
            Obj::new()
                .list("audiences", s.audiences)
                .opt("expirationSeconds", s.expiration_seconds)
                .ptr("boundObjectRef", bound)
                .done()
        });
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }

    /// policy/v1 `Eviction`: the body `kubectl drain` POSTs to `pods/NAME/eviction`.
    pub(super) fn eviction(&mut self, m: k8s_pb::api::policy::v1::Eviction) -> Res<Obj> {
        let k8s_pb::api::policy::v1::Eviction {
            metadata,
            delete_options,
        } = m;
        let options = delete_options.map(|o| super::meta::delete_options(o).done());
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .ptr("deleteOptions", options))
    }
}

fn object_reference(r: core::ObjectReference) -> Value {
    let core::ObjectReference {
        kind,
        namespace,
        name,
        uid,
        api_version,
        resource_version,
        field_path,
    } = r;
    Obj::new()
        .nz("kind", kind)
        .nz("namespace", namespace)
        .nz("name", name)
        .nz("uid", uid)
        .nz("apiVersion", api_version)
        .nz("resourceVersion", resource_version)
        .nz("fieldPath", field_path)
        .done()
}

fn service_port(p: core::ServicePort) -> Value {
    let core::ServicePort {
        name,
        protocol,
        app_protocol,
        port,
        target_port,
        node_port,
    } = p;
    Obj::new()
        .nz("name", name)
        .nz("protocol", protocol)
        .opt("appProtocol", app_protocol)
        .opt("port", port)
        .opt("targetPort", int_or_string_nz(target_port))
        .nz("nodePort", node_port)
        .done()
}

fn deployment_strategy(s: apps::DeploymentStrategy) -> Value {
    let apps::DeploymentStrategy {
        r#type,
        rolling_update,
    } = s;
    let rolling_update = rolling_update.map(|r| {
        Obj::new()
            .opt("maxUnavailable", r.max_unavailable.map(int_or_string))
            .opt("maxSurge", r.max_surge.map(int_or_string))
            .done()
    });
    Obj::new()
        .nz("type", r#type)
        .ptr("rollingUpdate", rolling_update)
        .done()
}

fn access_review_spec(s: authz::SelfSubjectAccessReviewSpec) -> Res<Value> {
    let authz::SelfSubjectAccessReviewSpec {
        resource_attributes,
        non_resource_attributes,
    } = s;
    let resource = resource_attributes
        .map(resource_attributes_json)
        .transpose()
        .map_err(at("resourceAttributes"))?;
    let non_resource =
        non_resource_attributes.map(|n| Obj::new().nz("path", n.path).nz("verb", n.verb).done());
    Ok(Obj::new()
        .ptr("resourceAttributes", resource)
        .ptr("nonResourceAttributes", non_resource)
        .done())
}

fn resource_attributes_json(a: authz::ResourceAttributes) -> Res<Value> {
    let authz::ResourceAttributes {
        namespace,
        verb,
        group,
        version,
        resource,
        subresource,
        name,
        field_selector,
        label_selector,
    } = a;
    absent(&field_selector, "fieldSelector")?;
    absent(&label_selector, "labelSelector")?;
    Ok(Obj::new()
        .nz("namespace", namespace)
        .nz("verb", verb)
        .nz("group", group)
        .nz("version", version)
        .nz("resource", resource)
        .nz("subresource", subresource)
        .nz("name", name)
        .done())
}
