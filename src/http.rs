//! HTTPS for everything code-intel fetches: ONNX Runtime from PyPI
//! (`runtime`), the model from the Hugging Face Hub (`model`), and an
//! OpenAI-compatible embeddings endpoint (`embed::endpoint`).
//!
//! One trust store for all of them: Mozilla's roots, the set ureq trusts by
//! default (`webpki-root-certs`), **plus** the operating system's
//! certificates (`rustls-native-certs`: the files `SSL_CERT_FILE` /
//! `SSL_CERT_DIR` name when set, else the distribution's bundle such as
//! `/etc/ssl/certs/ca-certificates.crt`). A TLS-intercepting corporate proxy
//! re-signs every certificate with its own CA, which the machine trusts but
//! Mozilla's list does not: with the bundled roots alone every download
//! failed there with `invalid peer certificate: UnknownIssuer` while `pip`
//! and `curl` worked (`tests/e2e/test_model_download.py` serves both
//! downloads over HTTPS with a CA of its own to prove the fix). Proxies come
//! from `HTTPS_PROXY` / `ALL_PROXY` / `NO_PROXY`, as ureq reads them.

use std::sync::{Arc, OnceLock};

use ureq::tls::{Certificate, RootCerts, TlsConfig};

/// Mozilla's roots and the system's, read once per process (the system
/// store is a few hundred certificates; reading it takes milliseconds).
/// A system store that cannot be read adds nothing: the bundled roots
/// still work where no proxy intercepts.
fn roots() -> Arc<Vec<Certificate<'static>>> {
    static ROOTS: OnceLock<Arc<Vec<Certificate<'static>>>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let mut certs: Vec<Certificate<'static>> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
                .iter()
                .map(|c| Certificate::from_der(c.as_ref()))
                .collect();
            let system = rustls_native_certs::load_native_certs();
            certs.extend(
                system
                    .certs
                    .iter()
                    .map(|c| Certificate::from_der(c.as_ref()).to_owned()),
            );
            Arc::new(certs)
        })
        .clone()
}

/// The TLS settings every agent of code-intel uses (see the module docs).
pub(crate) fn tls_config() -> TlsConfig {
    TlsConfig::builder()
        .root_certs(RootCerts::Specific(roots()))
        .build()
}

/// An agent with [`tls_config`] and ureq's other defaults (redirects
/// followed, proxies from the environment, 4xx/5xx as errors).
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .tls_config(tls_config())
        .build()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_store_has_the_bundled_roots_and_the_system_ones() {
        let bundled = webpki_root_certs::TLS_SERVER_ROOT_CERTS.len();
        let system = rustls_native_certs::load_native_certs().certs.len();
        assert!(bundled > 100, "{bundled} bundled roots");
        assert_eq!(roots().len(), bundled + system);
    }
}
