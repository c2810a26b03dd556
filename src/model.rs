//! The default embedding model's files: found in the Hugging Face hub cache
//! fastembed loads from, or downloaded into it from the Hub (or the mirror
//! `HF_ENDPOINT` names) with hf-hub, resumed after an interruption, and
//! checked against the Hub's checksums before anything loads them.
//!
//! `code-intel model pull` runs [`pull`] ahead of time; the first
//! [`crate::embed::FastEmbedder::load`] without `model_dir` runs it too.

use std::io::Read;
use std::path::{Path, PathBuf};

use hf_hub::api::sync::{ApiBuilder, ApiRepo, Metadata};
use hf_hub::{Cache, Repo};
use sha2::{Digest, Sha256};

use crate::config::Config;

/// Hub repository of the default model (fastembed 7.5's
/// `EmbeddingModel::MultilingualE5Small`).
pub const MODEL_REPO: &str = "intfloat/multilingual-e5-small";

/// The files fastembed 7.5 reads for that model, as paths in the Hub
/// repository: the tokenizer files of `load_tokenizer_hf_hub` and the
/// model's `model_file`.
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
        "could not download {file} of {MODEL_REPO} from {endpoint}: {message}; check the network (HTTPS_PROXY / NO_PROXY are honoured), set HF_ENDPOINT to a reachable mirror, or set model_dir to a directory that already holds the model; an interrupted download resumes on the next try"
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
/// fastembed 7.5's `pull_from_hf` applies: the directory itself, no `hub/`
/// below it), else [`Config::resolved_model_cache_dir`].
pub fn hub_cache_dir(config: &Config) -> PathBuf {
    hf_home().unwrap_or_else(|| config.resolved_model_cache_dir())
}

/// `HF_HOME` when set and not empty: fastembed then loads from it whatever
/// cache directory it is given.
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
    let api = ApiBuilder::from_cache(Cache::new(cache_dir.clone()))
        .with_endpoint(endpoint.clone())
        .with_token(token)
        .with_progress(false)
        .with_retries(RETRIES)
        .build()
        .map_err(|e| fetch_err(missing[0], e.to_string()))?;
    let repo = api.model(MODEL_REPO.to_string());
    let mut wanted: Vec<(&str, Metadata)> = Vec::new();
    for file in missing {
        let meta = api
            .metadata(&repo.url(file))
            .map_err(|e| fetch_err(file, e.to_string()))?;
        wanted.push((file, meta));
    }
    let total: u64 = wanted.iter().map(|(_, m)| m.size() as u64).sum();
    eprintln!(
        "code-intel: downloading {MODEL_REPO} ({} MB) to {} from {endpoint}",
        total.div_ceil(1_000_000),
        cache_dir.display()
    );
    for (file, meta) in wanted {
        let path = download(&repo, file, progress).map_err(|e| fetch_err(file, e))?;
        if let Err((expected, found)) = verify(&path, meta.size() as u64, meta.etag()) {
            remove_download(&cache_dir, &path, &meta);
            return Err(ModelError::Corrupt {
                file: file.to_string(),
                endpoint: endpoint.clone(),
                expected,
                found,
            });
        }
        pulled.downloaded.push(file.to_string());
        pulled.bytes += meta.size() as u64;
    }
    Ok(pulled)
}

fn download(repo: &ApiRepo, file: &str, progress: bool) -> Result<PathBuf, String> {
    let result = if progress {
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        repo.download_with_progress(file, bar)
    } else {
        repo.download_with_progress(file, ())
    };
    result.map_err(|e| e.to_string())
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

/// Removes a rejected download: the snapshot's link (what `missing_files`
/// looks at), the blob it points to and hf-hub's lock file beside it, so
/// the next pull starts afresh.
fn remove_download(cache_dir: &Path, pointer: &Path, meta: &Metadata) {
    let repo = Cache::new(cache_dir.to_path_buf()).repo(Repo::model(MODEL_REPO.to_string()));
    let blob = repo.blob_path(meta.etag());
    let _ = std::fs::remove_file(blob.with_extension("lock"));
    let _ = std::fs::remove_file(blob);
    let _ = std::fs::remove_file(pointer);
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
