//! One sync of the CSR signer: sign an approved request, or mark it Failed.
//!
//! Upstream: `handle` of `pkg/controller/certificates/signer/signer.go`.
//!
//! ```text
//! sync_csr(name)
//!   not in cache                       → Done
//!   request does not parse             → Err (terminal: validation let it in, so it cannot improve)
//!   plan_csr: Skip                     → Done
//!             Fail(why)                → status: + Failed (SignerValidationFailure, why)
//!             Sign(duration)           → status.certificate = sign(...)
//!   status write conflicts             → Err (retried: the next sync reads the newer object)
//! ```

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use store::Clock;

use super::plan::{Plan, plan_csr};
use super::sign::{CertificateAuthority, request_subject, sign};
use crate::runtime::client::{Client, Typed};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError, clock_now};

/// What one sync reads and writes.
pub struct CsrSigningSync {
    csrs_api: Typed<CertificateSigningRequest>,
    clock: Clock,
    ca: CertificateAuthority,
    cert_ttl: Duration,
    csrs: Store<CertificateSigningRequest>,
}

impl CsrSigningSync {
    /// A syncer reading the CSR cache and writing statuses through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        ca: CertificateAuthority,
        cert_ttl: Duration,
        csrs: Store<CertificateSigningRequest>,
    ) -> Self {
        CsrSigningSync {
            csrs_api: Typed::new(client),
            clock,
            ca,
            cert_ttl,
            csrs,
        }
    }

    /// Upstream `handle`: signs or fails CSR `name` once it is approved.
    pub async fn sync_csr(&self, name: &str) -> Result<Action, ReconcileError> {
        let Some(csr) = self.csrs.get(None, name) else {
            return Ok(Action::Done);
        };
        let request = String::from_utf8_lossy(&csr.spec.request.0).into_owned();
        let subject = request_subject(&request)
            .map_err(|e| ReconcileError::terminal(format!("unable to parse csr {name:?}: {e}")))?;
        let now = clock_now(&self.clock)?;
        let mut updated = (*csr).clone();
        let status = updated
            .status
            .get_or_insert_with(CertificateSigningRequestStatus::default);
        match plan_csr(&csr, &subject, self.cert_ttl) {
            Plan::Skip => return Ok(Action::Done),
            Plan::Fail(why) => {
                status
                    .conditions
                    .get_or_insert_with(Vec::new)
                    .push(CertificateSigningRequestCondition {
                        type_: "Failed".into(),
                        status: "True".into(),
                        reason: Some("SignerValidationFailure".into()),
                        message: Some(why),
                        last_update_time: Some(Time(now)),
                        last_transition_time: Some(Time(now)),
                    })
            }
            Plan::Sign(duration) => {
                let usages = csr.spec.usages.clone().unwrap_or_default();
                let cert = sign(&request, &usages, duration, self.clock.now(), &self.ca)
                    .map_err(|e| ReconcileError::retryable(format!("error auto signing csr: {e}")))?;
                status.certificate = Some(ByteString(cert.into_bytes()));
            }
        }
        self.csrs_api.update_status(&updated).await?;
        Ok(Action::Done)
    }
}
