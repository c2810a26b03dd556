//! Embeddings: the [`Embedder`] trait, its ONNX Runtime implementation with
//! multilingual-e5-small and a remote one ([`endpoint`]), plus ONNX Runtime
//! discovery.

pub mod endpoint;
pub mod onnx;
#[cfg(unix)]
mod passages;
#[cfg(unix)]
pub mod service;
#[cfg(test)]
pub(crate) mod testing;
pub mod unigram;
pub mod weights;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::config::{CHARS_PER_TOKEN, Config};

/// Output dimension of multilingual-e5-small.
pub const E5_DIM: usize = 384;
/// Tokens the model reads at most (XLM-R position limit used by E5).
pub const E5_MAX_TOKENS: usize = 512;
/// E5 prefixes (Wang et al. 2022, "Text Embeddings by Weakly-Supervised
/// Contrastive Pre-training", §4.2): queries and passages are marked.
pub const QUERY_PREFIX: &str = "query: ";
pub const PASSAGE_PREFIX: &str = "passage: ";

/// Errors of loading or running the model; each names the fix.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(
        "ONNX Runtime library not found (tried {tried}); install it with `pip install onnxruntime` (>= 1.24) or set ORT_DYLIB_PATH to libonnxruntime.so"
    )]
    RuntimeMissing { tried: String },
    #[error("ONNX Runtime not found ({tried}) and not downloaded: {message}")]
    RuntimeDownload { tried: String, message: String },
    #[error(
        "ONNX Runtime at {path} could not be loaded: {message}; set ORT_DYLIB_PATH to an ONNX Runtime >= 1.24 library"
    )]
    RuntimeLoad { path: PathBuf, message: String },
    #[error(
        "embedding model not available: {message}; set `model_dir` in .code-intel/config.json (or CODE_INTEL_MODEL_DIR) to a directory with model.onnx and tokenizer files, or run `code-intel model pull` (downloads intfloat/multilingual-e5-small into {cache})"
    )]
    Model { message: String, cache: PathBuf },
    #[error("embedding failed: {0}")]
    Inference(String),
    #[error("embedding endpoint {url}: {message}")]
    Endpoint { url: String, message: String },
}

/// The configured embedder: the remote endpoint when `embedding_endpoint`
/// is set (no model or ONNX Runtime is loaded then), else the local model.
/// Blocking (seconds for the local model): call it off the async runtime.
///
/// # Errors
/// As [`LocalEmbedder::load`] and [`endpoint::EndpointEmbedder::new`].
pub fn load(config: &Config) -> Result<std::sync::Arc<dyn Embedder>, EmbedError> {
    #[cfg(unix)]
    if config.embedding_endpoint.is_none() && service::enabled(config) {
        // Downloads happen here, where the user sees them (and their
        // errors), not in the service's log.
        ensure_downloaded(config)?;
        match service::ServiceEmbedder::connect(config) {
            Ok(e) => return Ok(std::sync::Arc::new(e)),
            Err(e) => tracing::warn!(
                "shared embedding service unavailable ({e}); loading the model in this process"
            ),
        }
    }
    Ok(match &config.embedding_endpoint {
        Some(e) => std::sync::Arc::new(endpoint::EndpointEmbedder::new(e)?),
        None => std::sync::Arc::new(LocalEmbedder::load(config)?),
    })
}

/// Turns texts into unit-length vectors. Implementations add the E5
/// prefixes themselves.
pub trait Embedder: Send + Sync {
    /// Vector length.
    fn dim(&self) -> usize;
    /// Identifies model and weights; stored with the index so that a model
    /// change re-embeds everything.
    fn model_id(&self) -> String;
    /// Embeds passages (chunks), in input order.
    ///
    /// # Errors
    /// [`EmbedError::Inference`].
    fn embed_passages(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Embeds texts as E5 queries (`query: ` prefix), in input order; also
    /// the symmetric form used to compare two short texts.
    ///
    /// # Errors
    /// [`EmbedError::Inference`].
    fn embed_queries(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Embeds one search query.
    ///
    /// # Errors
    /// [`EmbedError::Inference`].
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_queries(&[text.to_string()])?
            .pop()
            .ok_or_else(|| EmbedError::Inference("no vector returned".into()))
    }

    /// How long passage requests since the last call waited for other
    /// clients of a shared embedding service (zero for an embedder of this
    /// process alone), and resets it.
    fn take_wait(&self) -> EmbedWait {
        EmbedWait::default()
    }
}

/// Time passage requests spent queued behind other clients' texts in the
/// shared embedding service (`service`), and the most texts of other
/// requests queued when one of them arrived.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EmbedWait {
    pub waited: std::time::Duration,
    pub texts_ahead: usize,
}

/// Where the ONNX Runtime library was found, and its version when the file
/// name tells it (`libonnxruntime.so.1.31.1`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RuntimeInfo {
    pub path: PathBuf,
    pub version: Option<String>,
}

/// Finds `libonnxruntime`: `ORT_DYLIB_PATH`, then `ort_dylib_path` from the
/// config, then next to the executable (and in `lib/`, `../lib`), then one
/// downloaded by [`crate::runtime::pull`], then a pip-installed
/// `onnxruntime` package (docs/install.md § Where ONNX Runtime is found documents this order).
///
/// # Errors
/// [`EmbedError::RuntimeMissing`] listing every place tried.
pub fn find_runtime(config: &Config) -> Result<RuntimeInfo, EmbedError> {
    let mut tried = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        candidates.push(p.into());
    }
    candidates.extend(config.ort_dylib_path.clone());
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        candidates.extend(dylibs_in(&dir));
        // lib/ beside it: the release archives' layout (scripts/fetch-ort.sh).
        candidates.extend(dylibs_in(&dir.join("lib")));
        candidates.extend(dylibs_in(&dir.join("../lib")));
    }
    candidates.extend(crate::runtime::downloaded());
    for p in candidates {
        if p.is_file() {
            return Ok(runtime_info(p));
        }
        tried.push(p.display().to_string());
    }
    if let Some(dir) = pip_onnxruntime_dir() {
        if let Some(p) = dylibs_in(&dir.join("capi")).into_iter().next() {
            return Ok(runtime_info(p));
        }
        tried.push(dir.join("capi").display().to_string());
    } else {
        tried.push("python3 -c 'import onnxruntime'".into());
    }
    Err(EmbedError::RuntimeMissing {
        tried: tried.join(", "),
    })
}

/// True when a missing ONNX Runtime may be downloaded: downloads are on
/// ([`crate::model::offline`]) and the user named no library
/// (`ORT_DYLIB_PATH` or `ort_dylib_path`: one that is missing is an error to
/// fix, not a reason to download another).
pub fn may_download_runtime(config: &Config) -> bool {
    let named = std::env::var_os("ORT_DYLIB_PATH").is_some_and(|p| !p.is_empty())
        || config.ort_dylib_path.is_some();
    !named && !crate::model::offline()
}

/// [`find_runtime`], else (when [`may_download_runtime`]) the library
/// [`crate::runtime::pull`] downloads.
///
/// # Errors
/// [`EmbedError::RuntimeMissing`] offline, [`EmbedError::RuntimeDownload`]
/// when the download fails.
pub fn find_or_download_runtime(config: &Config) -> Result<RuntimeInfo, EmbedError> {
    match find_runtime(config) {
        Err(EmbedError::RuntimeMissing { tried }) if may_download_runtime(config) => {
            crate::runtime::pull()
                .map(runtime_info)
                .map_err(|e| EmbedError::RuntimeDownload {
                    tried,
                    message: e.to_string(),
                })
        }
        other => other,
    }
}

/// The model file ONNX Runtime loads: the mapped copy of `model`
/// ([`weights::mapped_model`], kept in `<cache>/mapped/<hash of the
/// model's path>/`) whenever it can be made, else `model` itself. A failed
/// copy is logged: memory, not results, depends on it.
fn mapped_or_original(model: &Path, cache: &Path) -> PathBuf {
    let Ok(canonical) = model.canonicalize() else {
        return model.to_path_buf();
    };
    let key = crate::util::sha256_hex(canonical.to_string_lossy().as_bytes());
    let dir = cache.join("mapped").join(&key[..16]);
    match weights::mapped_model(model, &dir) {
        Ok(Some(graph)) => {
            tracing::debug!("model weights mapped from {}", dir.display());
            graph
        }
        Ok(None) => model.to_path_buf(),
        Err(e) => {
            tracing::warn!(
                "could not write the mapped copy of {} into {}: {e}; loading the weights into memory instead (about 0.4 GB more for fp32)",
                model.display(),
                dir.display()
            );
            model.to_path_buf()
        }
    }
}

/// Estimated tokens of a text for batching: chars / [`CHARS_PER_TOKEN`]
/// (the estimate `chunk_max_tokens` uses), at most [`E5_MAX_TOKENS`].
fn estimated_tokens(text: &str) -> usize {
    (text.chars().count() / CHARS_PER_TOKEN).clamp(1, E5_MAX_TOKENS)
}

/// Splits length-sorted texts into batches of at most `batch_size` texts
/// whose padded size (texts × the longest one's estimated tokens) stays
/// within `batch_tokens` (0 = no cap; a single text always fits). ONNX
/// Runtime's activation memory grows with the padded batch, so the cap
/// bounds peak RSS while short texts still go `batch_size` at a time.
pub fn token_batches(sorted: &[String], batch_size: usize, batch_tokens: usize) -> Vec<&[String]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < sorted.len() {
        let mut end = start + 1;
        while end < sorted.len() && end - start < batch_size {
            let longest = estimated_tokens(&sorted[end]);
            if batch_tokens > 0 && (end - start + 1) * longest > batch_tokens {
                break;
            }
            end += 1;
        }
        out.push(&sorted[start..end]);
        start = end;
    }
    out
}

fn runtime_info(path: PathBuf) -> RuntimeInfo {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let version = name
        .split_once(".so.")
        .map(|(_, v)| v.to_string())
        .filter(|v| v.split('.').count() >= 2);
    RuntimeInfo { path, version }
}

/// Lowers the calling thread's scheduling priority to `nice` (0–19; 0 leaves
/// it). On Linux the priority is per thread and threads it starts inherit
/// it, so calling this before the model is loaded lowers ONNX Runtime's
/// intra-op pool too. A failure is logged, not returned: priority is a
/// courtesy to the user's other work, not a requirement. No-op off Unix.
fn lower_thread_priority(nice: i32) {
    #[cfg(unix)]
    if nice > 0
        && let Err(e) = rustix::process::setpriority_process(None, nice)
    {
        tracing::warn!("cannot lower the embedding threads' priority to nice {nice}: {e}");
    }
    #[cfg(not(unix))]
    let _ = nice;
}

/// Runs blocking work at a lowered priority: at `nice` 0 on tokio's
/// blocking pool, else on a thread of its own that lowers itself first
/// (Linux priorities are per thread and an unprivileged thread cannot raise
/// its own back, so pool threads that later serve interactive calls are
/// never lowered). Work that starts threads (ONNX Runtime's intra-op pool
/// at session creation) passes the priority on to them.
///
/// # Errors
/// The thread could not be started or `f` panicked (the message says which).
pub async fn run_niced<T: Send + 'static>(
    nice: i32,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    if nice <= 0 {
        return tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| e.to_string());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(format!("niced-{nice}"))
        .spawn(move || {
            lower_thread_priority(nice);
            let _ = tx.send(f());
        })
        .map_err(|e| format!("cannot start a worker thread: {e}"))?;
    rx.await.map_err(|_| "worker thread panicked".to_string())
}

/// The ONNX Runtime shared libraries in `dir` (`libonnxruntime.so*`,
/// `libonnxruntime[.1.31.1].dylib`, `onnxruntime.dll`), longest name first.
pub fn dylibs_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("libonnxruntime.so")
                    || (n.starts_with("libonnxruntime.") && n.ends_with(".dylib"))
                    || n == "onnxruntime.dll"
            })
        })
        .collect();
    // The longest name carries the full version (libonnxruntime.so.1.31.1).
    found.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    found
}

fn pip_onnxruntime_dir() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import onnxruntime, os; print(os.path.dirname(onnxruntime.__file__))",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// True when the model files can be had without a download: `model_dir`
/// holds them, or the hub cache has every file the model needs.
pub fn model_present(config: &Config) -> bool {
    match &config.model_dir {
        Some(dir) => MODEL_FILES.iter().all(|f| dir.join(f).is_file()),
        None => crate::model::missing_files(config).is_empty(),
    }
}

const MODEL_FILES: [&str; 5] = [
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

/// multilingual-e5-small on ONNX Runtime ([`onnx::E5Session`]: mean
/// pooling, L2-normalised output).
pub struct LocalEmbedder {
    model: Mutex<onnx::E5Session>,
    batch_size: usize,
    /// Cap on a batch's estimated tokens (texts × longest text), 0 = none.
    batch_tokens: usize,
    id: String,
}

/// The model of `model_dir` (`model.onnx` and the tokenizer files), with its
/// id: the weights are identified by size, not by path, so moving the
/// directory does not force a re-embed and swapping fp32 for int8 does.
fn dir_model(
    dir: &Path,
    cache: &Path,
    threads: usize,
) -> Result<(onnx::E5Session, String), String> {
    for f in MODEL_FILES {
        if !dir.join(f).is_file() {
            return Err(format!("{}: not found", dir.join(f).display()));
        }
    }
    let size = std::fs::metadata(dir.join("model.onnx"))
        .map_err(|e| e.to_string())?
        .len();
    let id = format!("multilingual-e5-small:onnx-{size}-bytes");
    Ok((load_session(|f| dir.join(f), cache, threads)?, id))
}

/// The default model from the hub cache ([`crate::model::cached_files`]),
/// with its id.
fn hub_model(
    config: &Config,
    cache: &Path,
    threads: usize,
) -> Result<(onnx::E5Session, String), String> {
    // Keyed by file name: the hub keeps the model under `onnx/`.
    let files: std::collections::HashMap<String, PathBuf> = crate::model::cached_files(config)
        .ok_or_else(|| format!("the model's files are not all in {}", cache.display()))?
        .into_iter()
        .map(|(repo_path, file)| {
            (
                repo_path.rsplit('/').next().unwrap_or_default().to_string(),
                file,
            )
        })
        .collect();
    let file = |name: &str| files.get(name).cloned().unwrap_or_default();
    let session = load_session(file, cache, threads)?;
    Ok((session, crate::model::MODEL_REPO.to_string()))
}

/// A session on the model whose [`MODEL_FILES`] `file` locates by name,
/// its weights mapped when possible ([`mapped_or_original`]).
fn load_session(
    file: impl Fn(&str) -> PathBuf,
    cache: &Path,
    threads: usize,
) -> Result<onnx::E5Session, String> {
    let model = mapped_or_original(&file("model.onnx"), cache);
    let files = onnx::ModelFiles {
        model: &model,
        tokenizer: &file("tokenizer.json"),
        config: &file("config.json"),
        special_tokens_map: &file("special_tokens_map.json"),
        tokenizer_config: &file("tokenizer_config.json"),
    };
    onnx::E5Session::load(&files, E5_MAX_TOKENS, threads)
}

/// ONNX Runtime found or downloaded, and the model pulled into the hub
/// cache when no `model_dir` is set (downloading what is missing, with
/// progress on stderr).
///
/// # Errors
/// As [`find_or_download_runtime`]; a failed model download as
/// [`EmbedError::Model`].
fn ensure_downloaded(config: &Config) -> Result<RuntimeInfo, EmbedError> {
    let runtime = find_or_download_runtime(config)?;
    if config.model_dir.is_none() {
        crate::model::pull(config, true).map_err(|e| EmbedError::Model {
            message: e.to_string(),
            cache: crate::model::hub_cache_dir(config),
        })?;
    }
    Ok(runtime)
}

impl LocalEmbedder {
    /// Loads ONNX Runtime and the model (from `model_dir`, else the hub
    /// cache, downloading into it first when files are missing: see
    /// [`crate::model::pull`]). Takes seconds (minutes for a download): call
    /// it off the async runtime.
    ///
    /// # Errors
    /// Runtime missing or incompatible, model files missing or unreadable.
    pub fn load(config: &Config) -> Result<LocalEmbedder, EmbedError> {
        let runtime = ensure_downloaded(config)?;
        let _environment = ort::init_from(&runtime.path).map_err(|e| EmbedError::RuntimeLoad {
            path: runtime.path.clone(),
            message: e.to_string(),
        })?;
        let threads = match config.embedding_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let cache = crate::model::hub_cache_dir(config);
        let model_err = |message: String| EmbedError::Model {
            message,
            cache: cache.clone(),
        };
        // ort panics in some failure paths (e.g. a runtime that vanished
        // after discovery); contain that to an error.
        let built =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &config.model_dir {
                Some(dir) => dir_model(dir, &cache, threads),
                None => hub_model(config, &cache, threads),
            }))
            .map_err(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "ONNX Runtime panicked".into())
            })
            .and_then(|r| r)
            .map_err(model_err)?;
        Ok(LocalEmbedder {
            model: Mutex::new(built.0),
            batch_size: config.embedding_batch_size,
            batch_tokens: config.embedding_batch_tokens,
            id: built.1,
        })
    }

    fn run(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut model = self.model.lock().unwrap_or_else(|e| e.into_inner());
        model
            .embed(&texts, self.batch_size)
            .map_err(EmbedError::Inference)
    }
}

impl Embedder for LocalEmbedder {
    fn dim(&self) -> usize {
        E5_DIM
    }

    fn model_id(&self) -> String {
        self.id.clone()
    }

    fn embed_passages(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Sort by length so each batch pads to similar lengths; restore order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let sorted: Vec<String> = order
            .iter()
            .map(|&i| format!("{PASSAGE_PREFIX}{}", texts[i]))
            .collect();
        let mut vectors = Vec::with_capacity(sorted.len());
        for batch in token_batches(&sorted, self.batch_size, self.batch_tokens) {
            vectors.extend(self.run(batch.to_vec())?);
        }
        let mut out = vec![Vec::new(); texts.len()];
        for (v, &i) in vectors.into_iter().zip(&order) {
            out[i] = v;
        }
        Ok(out)
    }

    fn embed_queries(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.run(texts.iter().map(|t| format!("{QUERY_PREFIX}{t}")).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux priorities are per thread: the work runs lowered, the caller
    /// and the blocking pool keep theirs.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn run_niced_lowers_only_its_own_thread() {
        let nice_now = || rustix::process::getpriority_process(None).unwrap();
        let before = nice_now();
        let inside = run_niced(before + 3, nice_now).await.unwrap();
        assert_eq!(inside, (before + 3).min(19));
        assert_eq!(nice_now(), before);
        assert_eq!(run_niced(0, nice_now).await.unwrap(), before);
        let failed = run_niced(5, || -> i32 { panic!("boom") }).await;
        assert_eq!(failed, Err("worker thread panicked".to_string()));
    }

    #[test]
    fn token_batches_cap_the_padded_size() {
        // Estimated tokens = chars / 3: 30 chars → 10, 1,500 chars → 500.
        let mut texts: Vec<String> = (0..20).map(|_| "x".repeat(30)).collect();
        texts.extend((0..5).map(|_| "y".repeat(1500)));
        let sizes = |bt| -> Vec<usize> {
            token_batches(&texts, 16, bt)
                .iter()
                .map(|b| b.len())
                .collect()
        };
        // Short texts go 16 at a time; 500-token texts 2 at a time under a
        // 1,024-token cap, all at once without a cap.
        assert_eq!(sizes(1024), vec![16, 4, 2, 2, 1]);
        assert_eq!(sizes(0), vec![16, 9]);
        // A text over the cap still gets a batch of its own.
        assert_eq!(sizes(100), vec![10, 10, 1, 1, 1, 1, 1]);
        assert_eq!(
            token_batches(&texts, 16, 1024)
                .iter()
                .map(|b| b.len())
                .sum::<usize>(),
            25
        );
    }
}
