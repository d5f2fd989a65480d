//! Converters for `PodTemplateSpec`, `PodSpec` and `Container`: the part of
//! a workload that `kubectl create deployment|job|cronjob` fills in, and that
//! `kubectl create job --from=cronjob/NAME` copies from a stored CronJob.

use k8s_pb::api::core::v1 as core;
use serde_json::Value;

use super::json::{Conv, Obj, Problem, Res, absent, at, each, empty};
use super::meta::{quantities, quantity};

impl Conv {
    /// `PodTemplateSpec`: metadata plus spec.
    pub(super) fn pod_template(&mut self, t: core::PodTemplateSpec) -> Res<Value> {
        let core::PodTemplateSpec { metadata, spec } = t;
        let metadata = self.metadata(metadata)?;
        let spec = spec.map(|s| self.pod_spec(s)).transpose().map_err(at("spec"))?;
        Ok(Obj::new().inner("metadata", metadata).inner("spec", spec).done())
    }

    /// `PodSpec`. Scheduling constraints beyond `nodeSelector`/`tolerations`,
    /// security contexts and DNS tweaks are refused.
    pub(super) fn pod_spec(&mut self, s: core::PodSpec) -> Res<Value> {
        let core::PodSpec {
            volumes,
            init_containers,
            containers,
            ephemeral_containers,
            restart_policy,
            termination_grace_period_seconds,
            active_deadline_seconds,
            dns_policy,
            node_selector,
            service_account_name,
            service_account,
            automount_service_account_token,
            node_name,
            host_network,
            host_pid,
            host_ipc,
            share_process_namespace,
            security_context,
            image_pull_secrets,
            hostname,
            subdomain,
            affinity,
            scheduler_name,
            tolerations,
            host_aliases,
            priority_class_name,
            priority,
            dns_config,
            readiness_gates,
            runtime_class_name,
            enable_service_links,
            preemption_policy,
            overhead,
            topology_spread_constraints,
            set_hostname_as_fqdn,
            os,
            host_users,
            scheduling_gates,
            resource_claims,
            resources,
            hostname_override,
            workload_ref,
        } = s;
        empty(ephemeral_containers.len(), "ephemeralContainers")?;
        // An empty one is what the server's defaulting writes into every stored template, so
        // `kubectl create job --from=cronjob/x` copies it back: nothing is lost by taking it.
        absent(
            &security_context.filter(|c| *c != Default::default()),
            "securityContext",
        )?;
        absent(&affinity, "affinity")?;
        empty(host_aliases.len(), "hostAliases")?;
        absent(&dns_config, "dnsConfig")?;
        empty(readiness_gates.len(), "readinessGates")?;
        empty(overhead.len(), "overhead")?;
        empty(topology_spread_constraints.len(), "topologySpreadConstraints")?;
        absent(&os, "os")?;
        empty(scheduling_gates.len(), "schedulingGates")?;
        empty(resource_claims.len(), "resourceClaims")?;
        absent(&resources, "resources")?;
        absent(&hostname_override, "hostnameOverride")?;
        absent(&workload_ref, "workloadRef")?;
        Ok(Obj::new()
            .list("volumes", each("volumes", volumes, volume)?)
            .list(
                "initContainers",
                each("initContainers", init_containers, container)?,
            )
            .list("containers", each("containers", containers, container)?)
            .nz("restartPolicy", restart_policy)
            .opt("terminationGracePeriodSeconds", termination_grace_period_seconds)
            .opt("activeDeadlineSeconds", active_deadline_seconds)
            .nz("dnsPolicy", dns_policy)
            .map("nodeSelector", self.string_map(node_selector))
            .nz("serviceAccountName", service_account_name)
            .nz("serviceAccount", service_account)
            .opt("automountServiceAccountToken", automount_service_account_token)
            .nz("nodeName", node_name)
            .nz("hostNetwork", host_network)
            .nz("hostPID", host_pid)
            .nz("hostIPC", host_ipc)
            .opt("shareProcessNamespace", share_process_namespace)
            .list("imagePullSecrets", local_refs(image_pull_secrets))
            .nz("hostname", hostname)
            .nz("subdomain", subdomain)
            .nz("schedulerName", scheduler_name)
            .list("tolerations", tolerations.into_iter().map(toleration).collect())
            .nz("priorityClassName", priority_class_name)
            .opt("priority", priority)
            .opt("runtimeClassName", runtime_class_name)
            .opt("enableServiceLinks", enable_service_links)
            .opt("preemptionPolicy", preemption_policy)
            .opt("setHostnameAsFQDN", set_hostname_as_fqdn)
            .opt("hostUsers", host_users)
            .done())
    }
}

/// `LocalObjectReference` lists such as `imagePullSecrets`.
pub(super) fn local_refs(refs: Vec<core::LocalObjectReference>) -> Vec<Value> {
    refs.into_iter()
        .map(|r| Obj::new().nz("name", r.name).done())
        .collect()
}

/// `Container`: image, command, ports, env, resources and mounts. Probes,
/// lifecycle hooks and security contexts are refused.
fn container(c: core::Container) -> Res<Value> {
    let core::Container {
        name,
        image,
        command,
        args,
        working_dir,
        ports,
        env_from,
        env,
        resources,
        resize_policy,
        restart_policy,
        restart_policy_rules,
        volume_mounts,
        volume_devices,
        liveness_probe,
        readiness_probe,
        startup_probe,
        lifecycle,
        termination_message_path,
        termination_message_policy,
        image_pull_policy,
        security_context,
        stdin,
        stdin_once,
        tty,
    } = c;
    empty(resize_policy.len(), "resizePolicy")?;
    empty(restart_policy_rules.len(), "restartPolicyRules")?;
    empty(volume_devices.len(), "volumeDevices")?;
    absent(&liveness_probe, "livenessProbe")?;
    absent(&readiness_probe, "readinessProbe")?;
    absent(&startup_probe, "startupProbe")?;
    absent(&lifecycle, "lifecycle")?;
    absent(&security_context, "securityContext")?;
    let resources = resources
        .map(resource_requirements)
        .transpose()
        .map_err(at("resources"))?;
    Ok(Obj::new()
        .opt("name", name)
        .nz("image", image)
        .list("command", command)
        .list("args", args)
        .nz("workingDir", working_dir)
        .list("ports", ports.into_iter().map(container_port).collect())
        .list("envFrom", env_from.into_iter().map(env_from_source).collect())
        .list("env", each("env", env, env_var)?)
        .inner("resources", resources)
        .opt("restartPolicy", restart_policy)
        .list("volumeMounts", volume_mounts.into_iter().map(mount).collect())
        .nz("terminationMessagePath", termination_message_path)
        .nz("terminationMessagePolicy", termination_message_policy)
        .nz("imagePullPolicy", image_pull_policy)
        .nz("stdin", stdin)
        .nz("stdinOnce", stdin_once)
        .nz("tty", tty)
        .done())
}

fn container_port(p: core::ContainerPort) -> Value {
    let core::ContainerPort {
        name,
        host_port,
        container_port,
        protocol,
        host_ip,
    } = p;
    Obj::new()
        .nz("name", name)
        .nz("hostPort", host_port)
        .opt("containerPort", container_port)
        .nz("protocol", protocol)
        .nz("hostIP", host_ip)
        .done()
}

fn resource_requirements(r: core::ResourceRequirements) -> Res<Value> {
    let core::ResourceRequirements {
        limits,
        requests,
        claims,
    } = r;
    empty(claims.len(), "claims")?;
    Ok(Obj::new()
        .map("limits", quantities(limits))
        .map("requests", quantities(requests))
        .done())
}

fn env_var(e: core::EnvVar) -> Res<Value> {
    let core::EnvVar {
        name,
        value,
        value_from,
    } = e;
    let value_from = value_from
        .map(env_var_source)
        .transpose()
        .map_err(at("valueFrom"))?;
    Ok(Obj::new()
        .opt("name", name)
        .nz("value", value)
        .ptr("valueFrom", value_from)
        .done())
}

fn env_var_source(s: core::EnvVarSource) -> Res<Value> {
    let core::EnvVarSource {
        field_ref,
        resource_field_ref,
        config_map_key_ref,
        secret_key_ref,
        file_key_ref,
    } = s;
    absent(&file_key_ref, "fileKeyRef")?;
    let field_ref = field_ref.map(|f| {
        Obj::new()
            .nz("apiVersion", f.api_version)
            .opt("fieldPath", f.field_path)
            .done()
    });
    let resource_field_ref = resource_field_ref.map(|r| {
        Obj::new()
            .nz("containerName", r.container_name)
            .opt("resource", r.resource)
            .opt("divisor", r.divisor.map(quantity).filter(non_zero_quantity))
            .done()
    });
    let config_map_key_ref =
        config_map_key_ref.map(|k| key_selector(k.local_object_reference, k.key, k.optional));
    let secret_key_ref = secret_key_ref.map(|k| key_selector(k.local_object_reference, k.key, k.optional));
    Ok(Obj::new()
        .ptr("fieldRef", field_ref)
        .ptr("resourceFieldRef", resource_field_ref)
        .ptr("configMapKeyRef", config_map_key_ref)
        .ptr("secretKeyRef", secret_key_ref)
        .done())
}

fn non_zero_quantity(q: &Value) -> bool {
    !matches!(q.as_str(), Some("" | "0"))
}

fn key_selector(
    reference: Option<core::LocalObjectReference>,
    key: Option<String>,
    optional: Option<bool>,
) -> Value {
    Obj::new()
        .nz("name", reference.and_then(|r| r.name))
        .opt("key", key)
        .opt("optional", optional)
        .done()
}

fn env_from_source(s: core::EnvFromSource) -> Value {
    let core::EnvFromSource {
        prefix,
        config_map_ref,
        secret_ref,
    } = s;
    let source = |reference: Option<core::LocalObjectReference>, optional: Option<bool>| {
        Obj::new()
            .nz("name", reference.and_then(|r| r.name))
            .opt("optional", optional)
            .done()
    };
    Obj::new()
        .nz("prefix", prefix)
        .ptr(
            "configMapRef",
            config_map_ref.map(|r| source(r.local_object_reference, r.optional)),
        )
        .ptr(
            "secretRef",
            secret_ref.map(|r| source(r.local_object_reference, r.optional)),
        )
        .done()
}

fn mount(m: core::VolumeMount) -> Value {
    let core::VolumeMount {
        name,
        read_only,
        recursive_read_only,
        mount_path,
        sub_path,
        mount_propagation,
        sub_path_expr,
    } = m;
    Obj::new()
        .opt("name", name)
        .nz("readOnly", read_only)
        .opt("recursiveReadOnly", recursive_read_only)
        .opt("mountPath", mount_path)
        .nz("subPath", sub_path)
        .opt("mountPropagation", mount_propagation)
        .nz("subPathExpr", sub_path_expr)
        .done()
}

fn toleration(t: core::Toleration) -> Value {
    let core::Toleration {
        key,
        operator,
        value,
        effect,
        toleration_seconds,
    } = t;
    Obj::new()
        .nz("key", key)
        .nz("operator", operator)
        .nz("value", value)
        .nz("effect", effect)
        .opt("tolerationSeconds", toleration_seconds)
        .done()
}

/// `Volume`: the emptyDir, hostPath, configMap, secret and
/// persistentVolumeClaim sources; any other source is refused.
fn volume(v: core::Volume) -> Res<Value> {
    let core::Volume { name, volume_source } = v;
    let mut source = volume_source.unwrap_or_default();
    let mut out = Obj::new().opt("name", name).into_map();
    let known = [
        ("emptyDir", source.empty_dir.take().map(empty_dir)),
        ("hostPath", source.host_path.take().map(host_path)),
        ("configMap", source.config_map.take().map(config_map_volume)),
        ("secret", source.secret.take().map(secret_volume)),
        (
            "persistentVolumeClaim",
            source.persistent_volume_claim.take().map(claim_volume),
        ),
    ];
    for (key, value) in known {
        if let Some(value) = value {
            out.insert(key.to_owned(), value);
        }
    }
    // Every volume source is a Go pointer, so anything left is a source
    // that this module does not convert.
    if source != core::VolumeSource::default() {
        return Err(Problem::Field(
            "(a volume source other than emptyDir, hostPath, configMap, secret, persistentVolumeClaim)"
                .to_owned(),
        ));
    }
    Ok(Value::Object(out))
}

fn empty_dir(e: core::EmptyDirVolumeSource) -> Value {
    Obj::new()
        .nz("medium", e.medium)
        .opt("sizeLimit", e.size_limit.map(quantity))
        .done()
}

fn host_path(h: core::HostPathVolumeSource) -> Value {
    Obj::new().opt("path", h.path).opt("type", h.r#type).done()
}

fn key_to_paths(items: Vec<core::KeyToPath>) -> Vec<Value> {
    items
        .into_iter()
        .map(|k| {
            Obj::new()
                .opt("key", k.key)
                .opt("path", k.path)
                .opt("mode", k.mode)
                .done()
        })
        .collect()
}

fn config_map_volume(c: core::ConfigMapVolumeSource) -> Value {
    Obj::new()
        .nz("name", c.local_object_reference.and_then(|r| r.name))
        .list("items", key_to_paths(c.items))
        .opt("defaultMode", c.default_mode)
        .opt("optional", c.optional)
        .done()
}

fn secret_volume(s: core::SecretVolumeSource) -> Value {
    Obj::new()
        .nz("secretName", s.secret_name)
        .list("items", key_to_paths(s.items))
        .opt("defaultMode", s.default_mode)
        .opt("optional", s.optional)
        .done()
}

fn claim_volume(c: core::PersistentVolumeClaimVolumeSource) -> Value {
    Obj::new()
        .opt("claimName", c.claim_name)
        .nz("readOnly", c.read_only)
        .done()
}
