//! The cluster's certificates and credentials, made on first start and
//! kept in `<data-dir>/pki/`, as kubeadm, kind and k3s keep theirs:
//!
//! | file | what |
//! | --- | --- |
//! | `ca.crt`, `ca.key` | the cluster CA (signs the two certificates below) |
//! | `apiserver.crt`, `apiserver.key` | the serving certificate: `kube-apiserver`, SANs for localhost, the loopback addresses, the `kubernetes` Service names and IP, and every listen address |
//! | `apiserver.sans` | the SANs the serving certificate was made for (one a line) |
//! | `admin.crt`, `admin.key` | a client certificate: CN `admin`, O `system:masters` |
//! | `token` | the admin's bearer token |
//! | `sa.key`, `sa.pub` | the key pair that signs service-account tokens (ES256), as kubeadm's `sa.key` / `sa.pub` |
//!
//! A restart reuses them all (so a kubeconfig written earlier keeps
//! working); only the serving certificate is made again, signed by the same
//! CA, when a new listen address needs a SAN it lacks. Keys are ECDSA P-256
//! (rcgen's default), written with mode 0600.
//!
//! [`generate`] makes the same set in memory only (`miniplane up
//! --in-memory`, the test harness): nothing is read or written.

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// The ClusterIP of `default/kubernetes`: the first address of the service range.
const KUBERNETES_SERVICE_IP: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 96, 0, 1));

/// The DNS names every serving certificate carries (upstream's defaults).
const DNS_NAMES: [&str; 5] = [
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
];

/// What the server and the kubeconfig need, as PEM text.
#[derive(Clone, Debug)]
pub struct Pki {
    /// The CA certificate clients trust.
    pub ca_cert: String,
    /// The serving certificate.
    pub server_cert: String,
    /// The serving key.
    pub server_key: String,
    /// The admin client certificate.
    pub admin_cert: String,
    /// The admin client key.
    pub admin_key: String,
    /// The admin bearer token.
    pub token: String,
    /// The CA's private key (the CSR signer issues certificates with it).
    pub ca_key: String,
    /// The private key that signs service-account tokens (PKCS#8 PEM).
    pub service_account_key: String,
    /// Its public key (SPKI PEM), which verifies them.
    pub service_account_public_key: String,
}

impl Pki {
    /// What the secure port serves with.
    pub fn tls_files(&self) -> apiserver::http::tls::TlsFiles {
        apiserver::http::tls::TlsFiles {
            cert_chain: self.server_cert.clone(),
            key: self.server_key.clone(),
            client_ca: self.ca_cert.clone(),
        }
    }

    /// A rustls client configuration that trusts the cluster CA (and sends
    /// no client certificate): for probes, tests and benchmarks.
    pub fn client_config(&self) -> std::sync::Arc<rustls::ClientConfig> {
        client_config(&self.ca_cert)
    }
}

/// A rustls client configuration trusting the CA certificates in `ca_pem`.
pub fn client_config(ca_pem: &str) -> std::sync::Arc<rustls::ClientConfig> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()).flatten() {
        // A certificate rustls cannot use is left out; the handshake then fails.
        let _ = roots.add(cert);
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| b.with_root_certificates(roots).with_no_client_auth());
    // ring supports the safe default protocol versions.
    std::sync::Arc::new(config.expect("ring supports TLS 1.2 and 1.3"))
}

/// Why the certificates could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Key generation or signing failed, or a stored key is unreadable.
    #[error("certificates: {0}")]
    Rcgen(#[from] rcgen::Error),
}

/// Loads the cluster's certificates from `dir`, making what is missing,
/// with a serving certificate valid for every address in `listen`.
pub fn load_or_create(dir: &Path, listen: &[IpAddr]) -> Result<Pki, PkiError> {
    make(&Files(Some(dir.to_path_buf())), listen)
}

/// A fresh set of certificates and credentials, in memory only: no file is
/// read or written (a few milliseconds: four P-256 keys).
pub fn generate(listen: &[IpAddr]) -> Result<Pki, PkiError> {
    make(&Files(None), listen)
}

/// [`load_or_create`] over `files`, which may be no files at all.
fn make(files: &Files, listen: &[IpAddr]) -> Result<Pki, PkiError> {
    files.create_dir()?;
    let (ca_key, ca_cert) = match (files.read("ca.key")?, files.read("ca.crt")?) {
        (Some(key), Some(cert)) => (KeyPair::from_pem(&key)?, cert),
        _ => {
            let key = KeyPair::generate()?;
            let cert = ca_params()?.self_signed(&key)?.pem();
            files.write("ca.key", &key.serialize_pem())?;
            files.write("ca.crt", &cert)?;
            (key, cert)
        }
    };
    let ca_key_pem = ca_key.serialize_pem();
    // The stored CA's subject and key are all a signer needs: its
    // parameters are rebuilt the same way they were first made.
    let ca = Issuer::new(ca_params()?, ca_key);
    let sans = subject_alt_names(listen);
    let (server_cert, server_key) = match files.read("apiserver.sans")? {
        Some(stored) if covers(&stored, &sans) => (
            files.must_read("apiserver.crt")?,
            files.must_read("apiserver.key")?,
        ),
        _ => {
            let (cert, key) = issue(
                &ca,
                "kube-apiserver",
                None,
                &sans,
                ExtendedKeyUsagePurpose::ServerAuth,
            )?;
            files.write("apiserver.crt", &cert)?;
            files.write("apiserver.key", &key)?;
            files.write("apiserver.sans", &(sans.join("\n") + "\n"))?;
            (cert, key)
        }
    };
    let (admin_cert, admin_key) = match (files.read("admin.crt")?, files.read("admin.key")?) {
        (Some(cert), Some(key)) => (cert, key),
        _ => {
            let (cert, key) = issue(
                &ca,
                "admin",
                Some("system:masters"),
                &[],
                ExtendedKeyUsagePurpose::ClientAuth,
            )?;
            files.write("admin.crt", &cert)?;
            files.write("admin.key", &key)?;
            (cert, key)
        }
    };
    let token = match files.read("token")? {
        Some(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => {
            let t = new_token();
            files.write("token", &t)?;
            t
        }
    };
    let (service_account_key, service_account_public_key) =
        match (files.read("sa.key")?, files.read("sa.pub")?) {
            (Some(key), Some(public)) => (key, public),
            _ => {
                let key = KeyPair::generate()?;
                files.write("sa.key", &key.serialize_pem())?;
                files.write("sa.pub", &key.public_key_pem())?;
                (key.serialize_pem(), key.public_key_pem())
            }
        };
    Ok(Pki {
        ca_cert,
        server_cert,
        server_key,
        admin_cert,
        admin_key,
        token,
        ca_key: ca_key_pem,
        service_account_key,
        service_account_public_key,
    })
}

/// The cluster CA's parameters (rcgen's default validity, far in the future).
fn ca_params() -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name.push(DnType::CommonName, "miniplane-ca");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

/// A certificate for `common_name` (and `organization`), signed by `ca`:
/// `(certificate PEM, key PEM)`.
fn issue(
    ca: &Issuer<'_, KeyPair>,
    common_name: &str,
    organization: Option<&str>,
    sans: &[String],
    usage: ExtendedKeyUsagePurpose,
) -> Result<(String, String), rcgen::Error> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(sans.to_vec())?;
    params.distinguished_name.push(DnType::CommonName, common_name);
    if let Some(o) = organization {
        params.distinguished_name.push(DnType::OrganizationName, o);
    }
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![usage];
    params.use_authority_key_identifier_extension = true;
    let cert = params.signed_by(&key, ca)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// DNS names and IP addresses the serving certificate must carry.
fn subject_alt_names(listen: &[IpAddr]) -> Vec<String> {
    let mut ips: Vec<IpAddr> = vec![
        IpAddr::from([127, 0, 0, 1]),
        IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
        KUBERNETES_SERVICE_IP,
    ];
    ips.extend(listen.iter().filter(|ip| !ip.is_unspecified()));
    let mut sans: Vec<String> = DNS_NAMES.iter().map(|s| s.to_string()).collect();
    for ip in ips {
        let text = ip.to_string();
        if !sans.contains(&text) {
            sans.push(text);
        }
    }
    sans
}

/// Whether a stored SAN list (one a line) has every SAN wanted.
fn covers(stored: &str, wanted: &[String]) -> bool {
    let have: Vec<&str> = stored.lines().map(str::trim).collect();
    wanted.iter().all(|w| have.contains(&w.as_str()))
}

/// 32 random bytes from the operating system, as hex: the bearer token
/// (never from `--seed`, which makes runs repeatable, not secret).
fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The pki directory; `None` in memory, where nothing is ever found and
/// writes go nowhere.
struct Files(Option<PathBuf>);

impl Files {
    fn io(&self, name: &str) -> impl FnOnce(std::io::Error) -> PkiError {
        let path = self.0.as_deref().unwrap_or(Path::new("")).join(name);
        move |source| PkiError::Io { path, source }
    }

    fn create_dir(&self) -> Result<(), PkiError> {
        let Some(dir) = &self.0 else { return Ok(()) };
        std::fs::create_dir_all(dir).map_err(self.io(""))
    }

    fn read(&self, name: &str) -> Result<Option<String>, PkiError> {
        let Some(dir) = &self.0 else { return Ok(None) };
        match std::fs::read_to_string(dir.join(name)) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.io(name)(e)),
        }
    }

    fn must_read(&self, name: &str) -> Result<String, PkiError> {
        match self.read(name)? {
            Some(text) => Ok(text),
            None => Err(self.io(name)(std::io::ErrorKind::NotFound.into())),
        }
    }

    /// Writes through a temporary file and a rename, readable by the owner only.
    fn write(&self, name: &str, contents: &str) -> Result<(), PkiError> {
        let Some(dir) = &self.0 else { return Ok(()) };
        let tmp = dir.join(format!("{name}.tmp"));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(&tmp).map_err(self.io(name))?;
        f.write_all(contents.as_bytes()).map_err(self.io(name))?;
        f.sync_all().map_err(self.io(name))?;
        std::fs::rename(&tmp, dir.join(name)).map_err(self.io(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path(), &[IpAddr::from([127, 0, 0, 1])]).unwrap();
        let again = load_or_create(dir.path(), &[IpAddr::from([127, 0, 0, 1])]).unwrap();
        assert_eq!(first.ca_cert, again.ca_cert);
        assert_eq!(first.server_cert, again.server_cert);
        assert_eq!(first.admin_cert, again.admin_cert);
        assert_eq!(first.token, again.token);
        assert_eq!(first.token.len(), 64);
        assert_eq!(first.service_account_key, again.service_account_key);
        assert_eq!(first.service_account_public_key, again.service_account_public_key);
        assert!(
            first
                .service_account_key
                .starts_with("-----BEGIN PRIVATE KEY-----")
        );
        assert!(
            first
                .service_account_public_key
                .starts_with("-----BEGIN PUBLIC KEY-----")
        );
    }

    #[test]
    fn a_new_listen_address_gets_a_new_serving_certificate_from_the_same_ca() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path(), &[]).unwrap();
        let moved = load_or_create(dir.path(), &[IpAddr::from([127, 0, 0, 2])]).unwrap();
        assert_eq!(first.ca_cert, moved.ca_cert);
        assert_ne!(first.server_cert, moved.server_cert);
        let sans = std::fs::read_to_string(dir.path().join("apiserver.sans")).unwrap();
        assert!(sans.lines().any(|l| l == "127.0.0.2"), "{sans}");
    }

    #[test]
    fn generated_in_memory_is_a_fresh_set_each_time() {
        let first = generate(&[]).unwrap();
        let second = generate(&[]).unwrap();
        assert_ne!(first.ca_cert, second.ca_cert);
        assert_ne!(first.token, second.token);
        assert!(first.admin_cert.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(
            first
                .service_account_key
                .starts_with("-----BEGIN PRIVATE KEY-----")
        );
    }

    #[test]
    fn sans_cover_loopback_names_and_the_kubernetes_service() {
        let sans = subject_alt_names(&[IpAddr::from([0, 0, 0, 0]), IpAddr::from([192, 0, 2, 7])]);
        for want in [
            "localhost",
            "kubernetes.default.svc",
            "127.0.0.1",
            "::1",
            "10.96.0.1",
            "192.0.2.7",
        ] {
            assert!(sans.iter().any(|s| s == want), "{want} in {sans:?}");
        }
        assert!(!sans.iter().any(|s| s == "0.0.0.0"));
    }
}
