//! ONNX Runtime on first use: when no library is found (docs/install.md
//! lists where we look), the shared library is taken from the onnxruntime
//! wheel for this platform on PyPI (the source scripts/setup.sh and
//! scripts/fetch-ort.sh use), checked against PyPI's SHA-256 and unpacked
//! into the user cache. Installers that place only the binary (the shell
//! and PowerShell installers, `cargo binstall`, `cargo install`) get a
//! working server this way.

use std::io::{Read, Write};
use std::path::PathBuf;

use sha2::{Digest, Sha256};

/// The ONNX Runtime release fetched: the one scripts/setup.sh installs; the
/// `ort` crate's `api-24` feature needs >= 1.24.
pub const ORT_VERSION: &str = "1.31.1";

const DEFAULT_PYPI: &str = "https://pypi.org";

/// Failures of the runtime download; each names the fix.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeFetchError {
    #[error(
        "no onnxruntime {ORT_VERSION} wheel for this platform ({platform}); install ONNX Runtime >= 1.24 yourself and set ORT_DYLIB_PATH"
    )]
    Unsupported { platform: String },
    #[error(
        "could not download ONNX Runtime {ORT_VERSION} from {url}: {message}; check the network (HTTPS_PROXY is honoured; a TLS-intercepting proxy's CA must be in the system's certificate store or SSL_CERT_FILE), set CODE_INTEL_PYPI_URL to a PyPI mirror, or install it (`pip install onnxruntime`) and set ORT_DYLIB_PATH"
    )]
    Fetch { url: String, message: String },
    #[error(
        "{file} from {url} is corrupt: sha256 {found}, PyPI says {expected}; nothing was installed; try again, and if it repeats the mirror serves a damaged file"
    )]
    Corrupt {
        file: String,
        url: String,
        expected: String,
        found: String,
    },
    #[error("ONNX Runtime cache {path}: {message}")]
    Io { path: PathBuf, message: String },
}

/// Where a downloaded runtime lives: `<user cache>/onnxruntime/<version>/`.
pub fn runtime_dir() -> PathBuf {
    crate::config::user_cache_dir()
        .join("onnxruntime")
        .join(ORT_VERSION)
}

/// The library's file name in the wheel (`onnxruntime/capi/…`) and the
/// wheel file-name markers of this platform; `None` where PyPI has no
/// onnxruntime >= 1.24 wheel (Intel macOS: the last is 1.23.2).
fn platform() -> Option<(String, [&'static str; 2])> {
    let v = ORT_VERSION;
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some((
            format!("libonnxruntime.so.{v}"),
            ["manylinux", "_x86_64.whl"],
        )),
        ("linux", "aarch64") => Some((
            format!("libonnxruntime.so.{v}"),
            ["manylinux", "_aarch64.whl"],
        )),
        ("macos", "aarch64") => Some((
            format!("libonnxruntime.{v}.dylib"),
            ["macosx", "_arm64.whl"],
        )),
        ("windows", "x86_64") => Some(("onnxruntime.dll".to_string(), ["win", "_amd64.whl"])),
        _ => None,
    }
}

/// The library this platform would download, when it was downloaded.
pub fn downloaded() -> Option<PathBuf> {
    let (lib, _) = platform()?;
    let path = runtime_dir().join(lib);
    path.is_file().then_some(path)
}

/// True when [`pull`] can get a runtime for this platform.
pub fn supported() -> bool {
    platform().is_some()
}

/// Downloads the onnxruntime [`ORT_VERSION`] wheel for this platform from
/// PyPI (`CODE_INTEL_PYPI_URL` names a mirror serving PyPI's JSON API),
/// checks its SHA-256 against PyPI's, and unpacks the shared library into
/// [`runtime_dir`]. Prints one line on stderr. Returns the library's path;
/// an already downloaded library is returned without a request.
///
/// # Errors
/// [`RuntimeFetchError`]: no wheel for this platform, network failures,
/// a checksum mismatch (nothing is installed then), an unwritable cache.
pub fn pull() -> Result<PathBuf, RuntimeFetchError> {
    let platform_name = format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH);
    let (lib, markers) = platform().ok_or(RuntimeFetchError::Unsupported {
        platform: platform_name.clone(),
    })?;
    if let Some(path) = downloaded() {
        return Ok(path);
    }
    let base = std::env::var("CODE_INTEL_PYPI_URL")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_PYPI.to_string());
    let index = format!(
        "{}/pypi/onnxruntime/{ORT_VERSION}/json",
        base.trim_end_matches('/')
    );
    let fetch_err = |url: &str, message: String| RuntimeFetchError::Fetch {
        url: url.to_string(),
        message,
    };
    let (wheel, url, sha256) =
        wheel_of(&index, markers)?.ok_or(RuntimeFetchError::Unsupported {
            platform: platform_name,
        })?;
    let (wheel, url, sha256) = (wheel.as_str(), url.as_str(), sha256.as_str());
    let dir = runtime_dir();
    let io_err = |message: String| RuntimeFetchError::Io {
        path: dir.clone(),
        message,
    };
    std::fs::create_dir_all(&dir).map_err(|e| io_err(e.to_string()))?;
    let mut response = crate::http::agent()
        .get(url)
        .call()
        .map_err(|e| fetch_err(url, e.to_string()))?;
    let size = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    eprintln!(
        "code-intel: downloading ONNX Runtime {ORT_VERSION} ({}) to {} from {url}",
        size.map_or_else(
            || "size unknown".into(),
            |s| format!("{} MB", s.div_ceil(1_000_000))
        ),
        dir.display()
    );
    let mut reader = response.body_mut().as_reader();
    let wheel_path = dir.join(format!("{wheel}.part"));
    let mut file = std::fs::File::create(&wheel_path).map_err(|e| io_err(e.to_string()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| fetch_err(url, e.to_string()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        file.write_all(&buf[..n])
            .map_err(|e| io_err(e.to_string()))?;
    }
    drop(file);
    let found = crate::util::hex(&hasher.finalize());
    if found != sha256.to_ascii_lowercase() {
        let _ = std::fs::remove_file(&wheel_path);
        return Err(RuntimeFetchError::Corrupt {
            file: wheel.to_string(),
            url: url.to_string(),
            expected: sha256.to_string(),
            found,
        });
    }
    let unpacked = unpack(
        &wheel_path,
        &format!("onnxruntime/capi/{lib}"),
        &dir.join(&lib),
    );
    let _ = std::fs::remove_file(&wheel_path);
    unpacked.map_err(io_err)?;
    Ok(dir.join(lib))
}

/// The onnxruntime wheel for this platform in a PyPI JSON `index`:
/// (file name, URL, SHA-256), the first by name whose name has
/// `markers[0]` and ends with `markers[1]`; `None` when none does.
///
/// # Errors
/// The index cannot be fetched or parsed.
fn wheel_of(
    index: &str,
    markers: [&str; 2],
) -> Result<Option<(String, String, String)>, RuntimeFetchError> {
    let fetch_err = |message: String| RuntimeFetchError::Fetch {
        url: index.to_string(),
        message,
    };
    let meta: serde_json::Value = crate::http::agent()
        .get(index)
        .call()
        .map_err(|e| fetch_err(e.to_string()))?
        .body_mut()
        .read_json()
        .map_err(|e| fetch_err(e.to_string()))?;
    let mut wheels: Vec<(String, String, String)> = meta["urls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|u| {
            Some((
                u["filename"].as_str()?.to_string(),
                u["url"].as_str()?.to_string(),
                u["digests"]["sha256"].as_str()?.to_string(),
            ))
        })
        .filter(|(name, _, _)| name.contains(markers[0]) && name.ends_with(markers[1]))
        .collect();
    wheels.sort_unstable();
    Ok(wheels.into_iter().next())
}

/// Copies one member of a zip archive to `dest` (through a temp file and a
/// rename, so a half-written library is never found).
fn unpack(archive: &std::path::Path, member: &str, dest: &std::path::Path) -> Result<(), String> {
    let file = std::fs::File::open(archive).map_err(|e| e.to_string())?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| e.to_string())?;
    let mut entry = zip
        .by_name(member)
        .map_err(|e| format!("{member} not in the wheel: {e}"))?;
    let tmp = dest.with_extension("tmp");
    let mut out = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
    std::io::copy(&mut entry, &mut out).map_err(|e| e.to_string())?;
    drop(out);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755));
    }
    std::fs::rename(&tmp, dest).map_err(|e| e.to_string())
}
