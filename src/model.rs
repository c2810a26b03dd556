//! The default embedding model's files: found in the Hugging Face hub cache
//! the model is loaded from, or downloaded into it from the Hub (or the mirror
//! `HF_ENDPOINT` names) over [`crate::http`]'s agent, in hf-hub's cache
//! layout, resumed after an interruption, and checked against the Hub's
//! checksums before anything loads them.
//!
//! `code-intel model pull` runs [`pull`] ahead of time; the first
//! [`crate::embed::LocalEmbedder::load`] without `model_dir` runs it too.

use std::io::Read;
use std::path::{Path, PathBuf};

use hf_hub::{Cache, Repo};
use sha2::{Digest, Sha256};

use crate::config::Config;

/// Hub repository of the default model.
pub const MODEL_REPO: &str = "intfloat/multilingual-e5-small";

/// The files [`crate::embed::onnx`] reads, as paths in the Hub repository:
/// the tokenizer files and the model (the files fastembed 7.5 read).
pub const MODEL_REPO_FILES: [&str; 5] = [
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "onnx/model.onnx",
];

/// Attempts per file after the first one fails mid-transfer (hf-hub resumes
/// each from the bytes already on disk, backing off 300 ms … 10 s).
const RETRIES: usize = 3;

const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// A download that did not complete; each names the fix.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(
        "could not download {file} of {MODEL_REPO} from {endpoint}: {message}; check the network (HTTPS_PROXY / NO_PROXY are honoured; a TLS-intercepting proxy's CA must be in the system's certificate store or SSL_CERT_FILE), set HF_ENDPOINT to a reachable mirror, or set model_dir to a directory that already holds the model; an interrupted download resumes on the next try"
    )]
    Fetch {
        file: String,
        endpoint: String,
        message: String,
    },
    #[error(
        "{file} of {MODEL_REPO} from {endpoint} is corrupt: {found}, the Hub says {expected}; the file was removed; run `code-intel model pull` again (if it repeats, the mirror serves a damaged file)"
    )]
    Corrupt {
        file: String,
        endpoint: String,
        expected: String,
        found: String,
    },
    #[error(
        "{missing} of {MODEL_REPO}'s files are not in {cache} and downloads are off (HF_HUB_OFFLINE / CODE_INTEL_OFFLINE): unset it to download them, or set model_dir to a directory that holds the model"
    )]
    Offline { missing: usize, cache: PathBuf },
    #[error("model cache {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The hub cache the default model lives in: `HF_HOME` when set (the rule
/// fastembed 7.5's `pull_from_hf` applied, kept so existing caches stay found: the directory itself, no `hub/`
/// below it), else [`Config::resolved_model_cache_dir`].
pub fn hub_cache_dir(config: &Config) -> PathBuf {
    hf_home().unwrap_or_else(|| config.resolved_model_cache_dir())
}

/// `HF_HOME` when set and not empty: the hub cache then, whatever
/// `model_cache_dir` says.
pub fn hf_home() -> Option<PathBuf> {
    std::env::var_os("HF_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// True when downloads are off: `HF_HUB_OFFLINE` or `CODE_INTEL_OFFLINE`
/// is `1` or `true`.
pub fn offline() -> bool {
    ["HF_HUB_OFFLINE", "CODE_INTEL_OFFLINE"]
        .iter()
        .any(|k| std::env::var(k).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true")))
}

/// `HF_ENDPOINT` when set (a mirror, e.g. `https://hf-mirror.com`), else
/// `https://huggingface.co`.
pub fn endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|v| !v.is_empty())
        .map_or_else(
            || DEFAULT_ENDPOINT.to_string(),
            |v| v.trim_end_matches('/').to_string(),
        )
}

/// The files of [`MODEL_REPO_FILES`] not in the hub cache yet.
pub fn missing_files(config: &Config) -> Vec<&'static str> {
    let cache = Cache::new(hub_cache_dir(config)).repo(Repo::model(MODEL_REPO.to_string()));
    MODEL_REPO_FILES
        .into_iter()
        .filter(|f| cache.get(f).is_none())
        .collect()
}

/// Every file of [`MODEL_REPO_FILES`] in the hub cache, as (path in the
/// repository, file in the cache's snapshot); `None` when one is missing.
pub fn cached_files(config: &Config) -> Option<Vec<(String, PathBuf)>> {
    let cache = Cache::new(hub_cache_dir(config)).repo(Repo::model(MODEL_REPO.to_string()));
    MODEL_REPO_FILES
        .into_iter()
        .map(|f| cache.get(f).map(|p| (f.to_string(), p)))
        .collect()
}

/// Bytes of the model files in the cache (0 when none); follows the
/// snapshot's links to the blobs.
pub fn cached_bytes(config: &Config) -> u64 {
    let cache = Cache::new(hub_cache_dir(config)).repo(Repo::model(MODEL_REPO.to_string()));
    MODEL_REPO_FILES
        .into_iter()
        .filter_map(|f| cache.get(f))
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// What [`pull`] did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pulled {
    /// Hub cache directory the files are in.
    pub cache: PathBuf,
    /// Files downloaded by this call (repository paths).
    pub downloaded: Vec<String>,
    /// Bytes the Hub reported for those files.
    pub bytes: u64,
}

/// Downloads the files of [`MODEL_REPO_FILES`] missing from the hub cache,
/// from [`endpoint`], with `HF_TOKEN` when set. Prints one line
/// ("downloading 470 MB to …") and, when `progress` and stderr is a
/// terminal, a progress bar per file on stderr. Each file is checked after
/// its download: its size, and its SHA-256 (large files, the Hub's
/// `X-Linked-Etag`) or git blob SHA-1 (small files, the `ETag`); a file
/// that does not match is removed. A download cut off (process killed,
/// connection lost) leaves a `<blob>.part` file the next call resumes from
/// with an HTTP range request.
///
/// # Errors
/// [`ModelError::Offline`] when files are missing and `HF_HUB_OFFLINE` is
/// set, [`ModelError::Fetch`] when the Hub or mirror cannot be reached or a
/// transfer fails [`RETRIES`] + 1 times, [`ModelError::Corrupt`] when a
/// checksum does not match, [`ModelError::Io`] when the cache cannot be
/// written.
pub fn pull(config: &Config, progress: bool) -> Result<Pulled, ModelError> {
    let cache_dir = hub_cache_dir(config);
    let endpoint = endpoint();
    let missing = missing_files(config);
    let mut pulled = Pulled {
        cache: cache_dir.clone(),
        downloaded: Vec::new(),
        bytes: 0,
    };
    if missing.is_empty() {
        return Ok(pulled);
    }
    if offline() {
        return Err(ModelError::Offline {
            missing: missing.len(),
            cache: cache_dir,
        });
    }
    std::fs::create_dir_all(&cache_dir).map_err(|source| ModelError::Io {
        path: cache_dir.clone(),
        source,
    })?;
    let fetch_err = |file: &str, message: String| ModelError::Fetch {
        file: file.to_string(),
        endpoint: endpoint.clone(),
        message,
    };
    let token = std::env::var("HF_TOKEN")
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let hub = Hub::new(&endpoint, token);
    let cache = Cache::new(cache_dir.clone()).repo(Repo::model(MODEL_REPO.to_string()));
    let mut wanted: Vec<(&str, Remote)> = Vec::new();
    for file in missing {
        let remote = hub.metadata(file).map_err(|e| fetch_err(file, e))?;
        wanted.push((file, remote));
    }
    let total: u64 = wanted.iter().map(|(_, m)| m.size).sum();
    eprintln!(
        "code-intel: downloading {MODEL_REPO} ({} MB) to {} from {endpoint}",
        total.div_ceil(1_000_000),
        cache_dir.display()
    );
    for (file, remote) in wanted {
        let blob = cache.blob_path(&remote.etag);
        hub.download(file, &remote, &blob, progress)
            .map_err(|e| fetch_err(file, e))?;
        if let Err((expected, found)) = verify(&blob, remote.size, &remote.etag) {
            let _ = std::fs::remove_file(blob.with_extension("lock"));
            let _ = std::fs::remove_file(&blob);
            return Err(ModelError::Corrupt {
                file: file.to_string(),
                endpoint: endpoint.clone(),
                expected,
                found,
            });
        }
        let io_err = |source| ModelError::Io {
            path: cache_dir.clone(),
            source,
        };
        link_snapshot(&cache, file, &remote).map_err(io_err)?;
        pulled.downloaded.push(file.to_string());
        pulled.bytes += remote.size;
    }
    Ok(pulled)
}

/// What the Hub says of a file before its download, from the headers of a
/// one-byte range request (what hf-hub 0.5's `metadata` reads): the commit
/// (`X-Repo-Commit`), the checksum ETag without quotes (`X-Linked-Etag` for
/// large files, else `ETag`) and the size in bytes (`X-Linked-Size`, else
/// the total of `Content-Range`).
#[derive(Debug, Clone, PartialEq)]
struct Remote {
    commit: String,
    etag: String,
    size: u64,
}

/// The Hub (or a mirror) over [`crate::http`]'s agent. hf-hub 0.5 builds
/// its own ureq agent with the bundled roots only and no way to pass
/// another, so behind a TLS-intercepting proxy it could not download; the
/// cache layout stays hf-hub's ([`Cache`]: `blobs/<etag>`,
/// `snapshots/<commit>/<file>`, `refs/main`), the one [`cached_files`] reads.
struct Hub {
    endpoint: String,
    token: Option<String>,
    /// Follows no redirect, so that the Hub's headers are read from its own
    /// answer, not from the CDN's.
    direct: ureq::Agent,
    /// Follows redirects (the Hub sends large files' bytes from a CDN).
    follow: ureq::Agent,
}

impl Hub {
    fn new(endpoint: &str, token: Option<String>) -> Self {
        let direct = ureq::Agent::config_builder()
            .tls_config(crate::http::tls_config())
            .max_redirects(0)
            .build()
            .into();
        Hub {
            endpoint: endpoint.to_string(),
            token,
            direct,
            follow: crate::http::agent(),
        }
    }

    fn url(&self, file: &str) -> String {
        format!("{}/{MODEL_REPO}/resolve/main/{file}", self.endpoint)
    }

    fn get(
        &self,
        agent: &ureq::Agent,
        url: &str,
        range: &str,
    ) -> Result<ureq::http::Response<ureq::Body>, String> {
        let mut request = agent.get(url).header("Range", range);
        if let Some(t) = &self.token {
            request = request.header("Authorization", format!("Bearer {t}"));
        }
        request.call().map_err(|e| e.to_string())
    }

    /// [`Remote`] of `file`: relative redirects (a renamed repository) are
    /// followed on the Hub; the size of a file the Hub redirects to a CDN
    /// without `X-Linked-Size` is read from the CDN's answer.
    fn metadata(&self, file: &str) -> Result<Remote, String> {
        let mut url = self.url(file);
        let mut response = self.get(&self.direct, &url, "bytes=0-0")?;
        for _ in 0..5 {
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .filter(|l| l.starts_with('/'))
                .map(str::to_string);
            let Some(path) = location.filter(|_| response.status().is_redirection()) else {
                break;
            };
            url = format!("{}{path}", origin(&url));
            response = self.get(&self.direct, &url, "bytes=0-0")?;
        }
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim().trim_matches('"').to_string())
        };
        let missing = |name: &str| format!("the answer has no {name} header");
        let etag = header("x-linked-etag")
            .or_else(|| header("etag"))
            .ok_or_else(|| missing("ETag"))?;
        let commit = header("x-repo-commit").ok_or_else(|| missing("X-Repo-Commit"))?;
        let size = match header("x-linked-size") {
            Some(s) => s.parse().ok(),
            None if response.status().is_redirection() => {
                let cdn = header("location").ok_or_else(|| missing("Location"))?;
                let answer = self.get(&self.follow, &cdn, "bytes=0-0")?;
                content_range_total(answer.headers().get("content-range"))
            }
            None => content_range_total(response.headers().get("content-range")),
        }
        .ok_or_else(|| missing("size (X-Linked-Size or Content-Range)"))?;
        Ok(Remote { commit, etag, size })
    }

    /// Downloads `file` into `blob` through `<blob>.part`, resuming from the
    /// bytes a killed or failed transfer left there with a range request,
    /// [`RETRIES`] more times after a failure (backing off 300 ms … 10 s).
    /// `<blob>.lock` keeps two processes from writing the same part.
    fn download(
        &self,
        file: &str,
        remote: &Remote,
        blob: &Path,
        progress: bool,
    ) -> Result<(), String> {
        let parent = blob.parent().unwrap_or(blob);
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        let lock = std::fs::File::create(blob.with_extension("lock")).map_err(|e| e.to_string())?;
        lock.lock().map_err(|e| e.to_string())?;
        if std::fs::metadata(blob).is_ok_and(|m| m.len() == remote.size) {
            return Ok(()); // another process finished it meanwhile
        }
        let part = blob.with_extension("part");
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&part)
            .map_err(|e| e.to_string())?;
        let bar = if progress {
            indicatif::ProgressBar::with_draw_target(
                Some(remote.size),
                indicatif::ProgressDrawTarget::stderr(),
            )
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.set_message(file.to_string());
        let mut attempt = 0;
        loop {
            let mut have = out.metadata().map_err(|e| e.to_string())?.len();
            if have > remote.size {
                out.set_len(0).map_err(|e| e.to_string())?;
                have = 0;
            }
            bar.set_position(have);
            let result = if have < remote.size {
                self.get(&self.follow, &self.url(file), &format!("bytes={have}-"))
                    .and_then(|mut response| {
                        if response.status() != 206 && have > 0 {
                            // the server ignored the range: start over
                            out.set_len(0).map_err(|e| e.to_string())?;
                            bar.set_position(0);
                        }
                        let mut reader = response.body_mut().as_reader();
                        std::io::copy(&mut reader, &mut bar.wrap_write(&mut out))
                            .map(|_| ())
                            .map_err(|e| e.to_string())
                    })
            } else {
                Ok(())
            };
            let have = out.metadata().map_err(|e| e.to_string())?.len();
            let result = result.and_then(|()| match have.cmp(&remote.size) {
                std::cmp::Ordering::Less => Err(format!(
                    "{file}: the transfer ended after {have} of {} bytes",
                    remote.size
                )),
                std::cmp::Ordering::Equal => Ok(()),
                std::cmp::Ordering::Greater => Err(format!(
                    "{file}: received {have} bytes, the hub announced {}",
                    remote.size
                )),
            });
            match result {
                Ok(()) => break,
                Err(e) if attempt >= RETRIES => return Err(e),
                Err(_) => {
                    let wait = (300u64 << attempt).min(10_000);
                    std::thread::sleep(std::time::Duration::from_millis(wait));
                    attempt += 1;
                }
            }
        }
        bar.finish_and_clear();
        drop(out);
        std::fs::rename(&part, blob).map_err(|e| e.to_string())
    }
}

/// `scheme://host[:port]` of an absolute URL.
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..]
        .find('/')
        .map_or(url, |i| &url[..after_scheme + i])
}

/// The total of a `Content-Range: bytes a-b/TOTAL` header.
fn content_range_total(value: Option<&ureq::http::HeaderValue>) -> Option<u64> {
    value?
        .to_str()
        .ok()?
        .rsplit('/')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// Points `snapshots/<commit>/<file>` at `blobs/<etag>` with a relative
/// link (hf-hub's layout) and records the commit in `refs/main`.
fn link_snapshot(cache: &hf_hub::CacheRepo, file: &str, remote: &Remote) -> std::io::Result<()> {
    let pointer = cache.pointer_path(&remote.commit).join(file);
    if let Some(dir) = pointer.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if std::fs::symlink_metadata(&pointer).is_err() {
        let up = "../".repeat(1 + Path::new(file).components().count());
        let target = PathBuf::from(format!("{up}blobs/{}", remote.etag));
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, &pointer)?;
        #[cfg(not(unix))]
        std::fs::copy(cache.blob_path(&remote.etag), &pointer).map(|_| ())?;
    }
    cache.create_ref(&remote.commit)
}

/// Checks a downloaded file against the Hub's metadata (`expected_size` in
/// bytes, the ETag without quotes): size, then the
/// checksum the ETag carries (64 hex digits: SHA-256 of the content, what
/// the Hub sends for LFS files; 40: git blob SHA-1). `Err((expected,
/// found))` on a mismatch.
fn verify(path: &Path, expected_size: u64, etag: &str) -> Result<(), (String, String)> {
    let unreadable = |e: std::io::Error| (format!("{expected_size} bytes"), e.to_string());
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size != expected_size {
        return Err((format!("{expected_size} bytes"), format!("{size} bytes")));
    }
    let etag = etag.to_ascii_lowercase();
    let is_hex = |n: usize| etag.len() == n && etag.bytes().all(|b| b.is_ascii_hexdigit());
    let found = if is_hex(64) {
        let mut h = Sha256::new();
        stream(path, |b| h.update(b)).map_err(unreadable)?;
        crate::util::hex(&h.finalize())
    } else if is_hex(40) {
        let mut h = sha1_smol::Sha1::new();
        h.update(format!("blob {size}\0").as_bytes());
        stream(path, |b| h.update(b)).map_err(unreadable)?;
        h.digest().to_string()
    } else {
        // An ETag that is no content hash (a mirror's own): size only.
        return Ok(());
    };
    if found == etag {
        Ok(())
    } else {
        let kind = if etag.len() == 64 {
            "sha256"
        } else {
            "git sha1"
        };
        Err((format!("{kind} {etag}"), format!("{kind} {found}")))
    }
}

fn stream(path: &Path, mut update: impl FnMut(&[u8])) -> std::io::Result<()> {
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        update(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(content: &[u8]) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), content).unwrap();
        f
    }

    #[test]
    fn urls_and_ranges_are_read_as_the_hub_sends_them() {
        assert_eq!(
            origin("https://huggingface.co/a/b/resolve/main/x"),
            "https://huggingface.co"
        );
        assert_eq!(origin("http://127.0.0.1:8080/x"), "http://127.0.0.1:8080");
        assert_eq!(origin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        let range = |v: &'static str| ureq::http::HeaderValue::from_static(v);
        assert_eq!(
            content_range_total(Some(&range("bytes 0-0/470637416"))),
            Some(470_637_416)
        );
        assert_eq!(content_range_total(Some(&range("bytes */12"))), Some(12));
        assert_eq!(content_range_total(Some(&range("bytes 0-0/*"))), None);
        assert_eq!(content_range_total(None), None);
    }

    #[test]
    fn verify_checks_size_sha256_and_git_blob_sha1() {
        let f = file_with(b"hello\n");
        // `printf 'hello\n' | sha256sum` and `git hash-object`.
        let sha256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
        let git_sha1 = "ce013625030ba8dba906f756967f9e9ca394464a";
        assert_eq!(verify(f.path(), 6, sha256), Ok(()));
        assert_eq!(verify(f.path(), 6, git_sha1), Ok(()));
        assert_eq!(verify(f.path(), 6, "W/\"mirror-etag\""), Ok(()));
        let (expected, found) = verify(f.path(), 7, sha256).unwrap_err();
        assert_eq!((expected.as_str(), found.as_str()), ("7 bytes", "6 bytes"));
        let other = file_with(b"hellO\n");
        let (expected, found) = verify(other.path(), 6, sha256).unwrap_err();
        assert_eq!(expected, format!("sha256 {sha256}"));
        assert!(found.starts_with("sha256 ") && !found.ends_with(sha256));
        assert!(verify(other.path(), 6, git_sha1).is_err());
    }
}
