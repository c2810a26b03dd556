//! Embeddings: the [`Embedder`] trait, its fastembed implementation with
//! multilingual-e5-small and a remote one ([`endpoint`]), plus ONNX Runtime
//! discovery.

pub mod endpoint;
#[cfg(unix)]
pub mod service;
#[cfg(test)]
pub(crate) mod testing;
pub mod weights;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use fastembed::{
    EmbeddingModel, InitOptionsUserDefined, Pooling, TextEmbedding, TextInitOptions,
    TokenizerFiles, UserDefinedEmbeddingModel,
};

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
/// As [`FastEmbedder::load`] and [`endpoint::EndpointEmbedder::new`].
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
        None => std::sync::Arc::new(FastEmbedder::load(config)?),
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
/// `onnxruntime` package (README § Install documents this order).
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

/// The model's files as fastembed's hub layout names them
/// (`onnx/model.onnx`, the tokenizer files at the top), each with the file
/// it is read from: `files` as given, except that `onnx/model.onnx` is the
/// mapped copy of the weights ([`weights::mapped_model`], kept in
/// `<cache>/mapped/<hash of the model's path>/`) with its data file beside
/// it whenever that copy can be made. A failed copy is logged and the
/// original file used: memory, not results, depends on it.
fn mapped_layout(mut files: Vec<(String, PathBuf)>, cache: &Path) -> Vec<(String, PathBuf)> {
    let Some(i) = files.iter().position(|(name, _)| name == "onnx/model.onnx") else {
        return files;
    };
    let source = files[i].1.clone();
    let key = source
        .canonicalize()
        .map(|p| crate::util::sha256_hex(p.to_string_lossy().as_bytes()))
        .unwrap_or_default();
    if key.is_empty() {
        return files;
    }
    let dir = cache.join("mapped").join(&key[..16]);
    match weights::mapped_model(&source, &dir) {
        Ok(Some(graph)) => {
            tracing::debug!("model weights mapped from {}", dir.display());
            files[i].1 = graph;
            files.push((
                format!("onnx/{}", weights::DATA_FILE),
                dir.join(weights::DATA_FILE),
            ));
            files
        }
        Ok(None) => files,
        Err(e) => {
            tracing::warn!(
                "could not write the mapped copy of {} into {}: {e}; loading the weights into memory instead (about 0.4 GB more for fp32)",
                source.display(),
                dir.display()
            );
            files
        }
    }
}

/// Presents `files` (path in the hub layout, file it links to) to fastembed
/// as a Hugging Face cache (`<cache>/linked/<hash of the targets>/
/// models--intfloat--multilingual-e5-small/snapshots/local/…` of symlinks,
/// `refs/main` = `local`), so that ONNX Runtime loads the model from its
/// file. `None` where symlinks are not available or the directory cannot be
/// written.
fn linked_cache(files: &[(String, PathBuf)], cache: &Path) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        let mut targets = Vec::new();
        for (name, target) in files {
            targets.push((name, std::path::absolute(target).ok()?));
        }
        let all: Vec<String> = targets
            .iter()
            .map(|(_, t)| t.display().to_string())
            .collect();
        let key = crate::util::sha256_hex(all.join("\n").as_bytes());
        let root = cache.join("linked").join(&key[..16]);
        let repo = root.join("models--intfloat--multilingual-e5-small");
        let snap = repo.join("snapshots").join("local");
        std::fs::create_dir_all(snap.join("onnx")).ok()?;
        std::fs::create_dir_all(repo.join("refs")).ok()?;
        std::fs::write(repo.join("refs").join("main"), "local").ok()?;
        for (name, target) in targets {
            let link = snap.join(name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).ok()?;
        }
        Some(root)
    }
    #[cfg(not(unix))]
    {
        let _ = (files, cache);
        None
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
/// holds them, or the hub cache has every file fastembed reads.
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

/// multilingual-e5-small through fastembed (ONNX Runtime, mean pooling,
/// L2-normalised output).
pub struct FastEmbedder {
    model: Mutex<TextEmbedding>,
    batch_size: usize,
    /// Cap on a batch's estimated tokens (texts × longest text), 0 = none.
    batch_tokens: usize,
    id: String,
}

/// A loaded model and its id.
type Loaded = (TextEmbedding, String);

/// multilingual-e5-small from a Hugging Face cache directory (fastembed's
/// own loader).
fn hub_model(cache_dir: PathBuf, threads: usize) -> Result<TextEmbedding, String> {
    let opts = TextInitOptions::new(EmbeddingModel::MultilingualE5Small)
        .with_cache_dir(cache_dir)
        .with_max_length(E5_MAX_TOKENS)
        .with_intra_threads(threads)
        .with_session_config("session.intra_op.allow_spinning", "0")
        .with_show_download_progress(false);
    TextEmbedding::try_new(opts).map_err(|e| e.to_string())
}

/// The model from its file through a [`linked_cache`] of [`mapped_layout`]
/// (weights mapped, not copied); `None` when that cannot be built or does
/// not load (logged), for the caller to load it another way.
/// fastembed reads HF_HOME instead of the cache dir it is given, so the
/// linked cache only works (and is only built) without it.
fn linked_model(
    files: Vec<(String, PathBuf)>,
    cache: &Path,
    threads: usize,
) -> Option<TextEmbedding> {
    if crate::model::hf_home().is_some() {
        return None;
    }
    let linked = linked_cache(&mapped_layout(files, cache), cache)?;
    match hub_model(linked, threads) {
        Ok(m) => Some(m),
        Err(e) => {
            tracing::debug!("linked model cache failed: {e}");
            None
        }
    }
}

/// The model of `model_dir` (`model.onnx` and the tokenizer files), with its
/// id: the weights are
/// identified by size, not by path, so moving the directory does not force a
/// re-embed and swapping fp32 for int8 does.
fn dir_model(dir: &Path, cache: &Path, threads: usize) -> Result<Loaded, String> {
    for f in MODEL_FILES {
        if !dir.join(f).is_file() {
            return Err(format!("{}: not found", dir.join(f).display()));
        }
    }
    let size = std::fs::metadata(dir.join("model.onnx"))
        .map_err(|e| e.to_string())?
        .len();
    let id = format!("multilingual-e5-small:onnx-{size}-bytes");
    // ONNX Runtime reading the file itself peaks one copy of the weights
    // lower than loading from our buffer (peak RSS after load: 1067 vs 1513
    // MiB for fp32, 733 vs 843 MiB for int8; 2026-11-21), so model_dir is
    // presented to fastembed as a Hugging Face cache of symlinks when
    // possible.
    let files = MODEL_FILES
        .iter()
        .map(|f| {
            let name = if *f == "model.onnx" {
                "onnx/model.onnx"
            } else {
                f
            };
            (name.to_string(), dir.join(f))
        })
        .collect();
    if let Some(m) = linked_model(files, cache, threads) {
        return Ok((m, id));
    }
    let read =
        |f: &str| std::fs::read(dir.join(f)).map_err(|e| format!("{}: {e}", dir.join(f).display()));
    let files = TokenizerFiles {
        tokenizer_file: read("tokenizer.json")?,
        config_file: read("config.json")?,
        special_tokens_map_file: read("special_tokens_map.json")?,
        tokenizer_config_file: read("tokenizer_config.json")?,
    };
    let model =
        UserDefinedEmbeddingModel::new(read("model.onnx")?, files).with_pooling(Pooling::Mean);
    let opts = InitOptionsUserDefined::new()
        .with_max_length(E5_MAX_TOKENS)
        .with_intra_threads(threads)
        .with_session_config("session.intra_op.allow_spinning", "0");
    let m = TextEmbedding::try_new_from_user_defined(model, opts).map_err(|e| e.to_string())?;
    Ok((m, id))
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

impl FastEmbedder {
    /// Loads ONNX Runtime and the model (from `model_dir`, else the hub
    /// cache, downloading into it first when files are missing: see
    /// [`crate::model::pull`]). Takes seconds (minutes for a download): call
    /// it off the async runtime.
    ///
    /// # Errors
    /// Runtime missing or incompatible, model files missing or unreadable.
    pub fn load(config: &Config) -> Result<FastEmbedder, EmbedError> {
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
        // fastembed panics in some failure paths (e.g. a runtime that vanished
        // after discovery); contain that to an error.
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(
            || -> Result<Loaded, EmbedError> {
                match &config.model_dir {
                    Some(dir) => dir_model(dir, &cache, threads).map_err(model_err),
                    None => {
                        let id = "intfloat/multilingual-e5-small".to_string();
                        let linked = crate::model::cached_files(config)
                            .and_then(|files| linked_model(files, &cache, threads));
                        if let Some(m) = linked {
                            return Ok((m, id));
                        }
                        let m = hub_model(cache.clone(), threads).map_err(model_err)?;
                        Ok((m, id))
                    }
                }
            },
        ))
        .map_err(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "fastembed panicked".into());
            model_err(msg)
        })??;
        Ok(FastEmbedder {
            model: Mutex::new(built.0),
            batch_size: config.embedding_batch_size,
            batch_tokens: config.embedding_batch_tokens,
            id: built.1,
        })
    }

    fn run(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut model = self.model.lock().unwrap_or_else(|e| e.into_inner());
        model
            .embed(texts, Some(self.batch_size))
            .map_err(|e| EmbedError::Inference(e.to_string()))
    }
}

impl Embedder for FastEmbedder {
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
