//! Sync: walk → fingerprint → chunk → embed (only new content hashes) →
//! store. Incremental, resumable after a kill, and observable while it runs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Instant, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::chunk::Chunk;
use crate::classify::{self, FileClass};
use crate::config::Config;
use crate::embed::{EmbedError, Embedder};
use crate::framework;
use crate::lexical::{self, FileText};
use crate::repo::{self, PathError, Repo};
use crate::store::shared::SharedVectors;
use crate::store::{FileRow, ForestRow, Store, StoreError};
use crate::util::{group, now_secs};

/// Version of `sync_state.json`; another version forces a full rebuild.
/// 2: chunks carry framework `meta` and `related` columns.
/// 3: chunks carry their file's class and full-text search terms; the
/// `files` and `vocab` tables (vectors of version 2 are reused by content
/// hash, nothing is embedded again).
const STATE_VERSION: u32 = 3;
/// Files chunked, embedded and committed together; the state file is saved
/// after each batch, so a killed sync loses at most one batch of work.
/// Larger batches sort more texts by length before embedding: 64 gave 0.84
/// of raw fastembed throughput on laravel's Queue/ (79 files, 646 chunks).
const FILES_PER_BATCH: usize = 256;
/// The first batches are smaller (16, then 64 files) so that semantic search
/// has something to answer from seconds after a sync starts: with one
/// 256-file first batch the first result on laravel src/Illuminate came 72 s
/// after `serve` started (bench/run.sh, fp32).
const FIRST_BATCHES: [usize; 2] = [16, 64];

/// Consecutive file ranges of a sync over `n` files: [`FIRST_BATCHES`], then
/// [`FILES_PER_BATCH`] at a time.
fn batch_ranges(n: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut sizes = FIRST_BATCHES.iter().copied();
    while start < n {
        let size = sizes.next().unwrap_or(FILES_PER_BATCH);
        let end = (start + size).min(n);
        out.push(start..end);
        start = end;
    }
    out
}

/// Errors of a sync.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "a sync is already running for this repository (in this or another process); its results become searchable as it commits"
    )]
    Busy,
    #[error(
        "the index holds vectors of model `{index}` and the embedder is `{embedder}`: vectors of two models cannot be searched together; run `code-intel index --force` to re-embed everything with `{embedder}`, or configure the embedder back to `{index}` (model_dir / embedding_endpoint)"
    )]
    ModelMismatch { index: String, embedder: String },
}

/// Fingerprint of one indexed file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileState {
    /// Bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u128,
    /// SHA-256 of the content, hex.
    pub sha256: String,
    /// Chunks stored for the file.
    pub chunks: usize,
}

/// A file left out of the index, fingerprinted so that it is not read
/// again until it changes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Skipped {
    pub reason: String,
    pub size: u64,
    pub mtime_ns: u128,
}

/// `.code-intel/sync_state.json`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct SyncState {
    pub version: u32,
    /// [`Embedder::model_id`] of the vectors in `forest`.
    pub model_id: String,
    /// Unix seconds of the last completed sync.
    pub last_sync: Option<u64>,
    /// Repo-relative path → fingerprint.
    pub files: BTreeMap<String, FileState>,
    /// Repo-relative path → why it is not indexed (binary, too large, …).
    pub skipped: BTreeMap<String, Skipped>,
    /// Words in the vocabulary after the last sync (0: not built yet).
    #[serde(default)]
    pub vocabulary_words: usize,
    /// The settings that decide which files are indexed
    /// (`index_exclude_classes`, `max_file_size`, `max_chunks`) at the last
    /// sync; when they change, every file is read again.
    #[serde(default)]
    pub admission: String,
}

/// [`SyncState::admission`] of a configuration.
fn admission_rules(config: &Config) -> String {
    serde_json::json!([
        config.index_exclude_classes,
        config.max_file_size,
        config.max_chunks
    ])
    .to_string()
}

impl SyncState {
    /// Path of the state file.
    pub fn path(repo: &Repo) -> PathBuf {
        repo.state_dir().join("sync_state.json")
    }

    /// Loads the state; a missing or unreadable file gives an empty state
    /// (everything is re-synced, nothing is lost).
    pub fn load(repo: &Repo) -> SyncState {
        std::fs::read_to_string(Self::path(repo))
            .ok()
            .and_then(|t| serde_json::from_str::<SyncState>(&t).ok())
            .filter(|s| s.version == STATE_VERSION)
            .unwrap_or_default()
    }

    /// Writes atomically (temp file + rename).
    ///
    /// # Errors
    /// [`IndexError::Write`].
    pub fn save(&self, repo: &Repo) -> Result<(), IndexError> {
        let path = Self::path(repo);
        let write_err = |source| IndexError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(repo.state_dir()).map_err(write_err)?;
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_vec(self).map_err(|e| write_err(std::io::Error::other(e)))?;
        std::fs::write(&tmp, text).map_err(write_err)?;
        std::fs::rename(&tmp, &path).map_err(write_err)
    }

    /// Chunks recorded over all files (saturating: the counts come from a
    /// file on disk, which may hold anything).
    pub fn chunk_count(&self) -> usize {
        self.files
            .values()
            .fold(0usize, |n, f| n.saturating_add(f.chunks))
    }
}

/// Live progress of a sync, shared with tools that report readiness.
#[derive(Debug, Default)]
pub struct Progress {
    pub running: AtomicBool,
    /// Files that need chunking in the running sync.
    pub files_total: AtomicUsize,
    /// Of those, files committed.
    pub files_done: AtomicUsize,
}

/// What a sync did.
#[derive(Debug, Clone, Serialize, Default, schemars::JsonSchema)]
pub struct SyncReport {
    pub added: usize,
    pub modified: usize,
    pub deleted: usize,
    pub unchanged: usize,
    /// Files left out (binary, over `max_file_size`, past `max_chunks`).
    pub skipped: usize,
    /// Chunks whose text was embedded in this sync.
    pub chunks_embedded: usize,
    /// Chunks whose vector was reused from the index by content hash.
    pub chunks_reused: usize,
    /// Chunks whose vector came from the shared vector store
    /// (`vector_store`) instead of being embedded.
    pub chunks_from_store: usize,
    /// Vectors this sync added to the shared vector store (chunks and
    /// vocabulary words it embedded, and any of the local index the store
    /// lacked).
    pub vectors_to_store: usize,
    /// Why the shared vector store was not used (unreachable, no
    /// credentials …): the sync carried on embedding locally, and the next
    /// one adds what the store lacks.
    pub vector_store_error: Option<String>,
    /// Chunks in the index after the sync.
    pub chunks_total: usize,
    /// Files indexed after the sync.
    pub files_indexed: usize,
    /// Seconds spent updating the full-text (BM25) indexes.
    pub text_index_seconds: f64,
    /// Seconds spent building the vector (IVF) index; it is built once,
    /// when `forest` reaches `store::VECTOR_INDEX_MIN_ROWS` chunks.
    pub vector_index_seconds: f64,
    /// Words in the vocabulary (identifier words of paths and definitions)
    /// after the sync, and how many were embedded in it.
    pub vocabulary_words: usize,
    pub vocabulary_embedded: usize,
    /// Vocabulary words whose vector came from the shared vector store.
    pub vocabulary_from_store: usize,
    /// Seconds spent embedding the vocabulary.
    pub vocabulary_seconds: f64,
    pub seconds: f64,
}

impl std::fmt::Display for SyncReport {
    /// One human line: `12 added, 1 modified, … in 0.41 s`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "files: {} added, {} modified, {} deleted, {} unchanged, {} skipped; chunks: {} embedded, {} reused, {} from the shared store, {} added to it, {} in index ({} files); full-text index {:.2} s; vector index {:.2} s; vocabulary {} words ({} embedded, {:.2} s); {:.2} s",
            self.added,
            self.modified,
            self.deleted,
            self.unchanged,
            self.skipped,
            self.chunks_embedded,
            self.chunks_reused,
            self.chunks_from_store,
            self.vectors_to_store,
            self.chunks_total,
            self.files_indexed,
            self.text_index_seconds,
            self.vector_index_seconds,
            self.vocabulary_words,
            self.vocabulary_embedded,
            self.vocabulary_seconds,
            self.seconds
        )?;
        if let Some(e) = &self.vector_store_error {
            write!(f, "\nwarning: {e}; embedded locally instead")?;
        }
        Ok(())
    }
}

#[derive(Clone)]
struct Candidate {
    rel: String,
    abs: PathBuf,
    size: u64,
    mtime_ns: u128,
}

fn mtime_ns(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// Files the index covers: everything the walker yields that is a regular
/// file, with size and mtime.
///
/// # Errors
/// Invalid exclude patterns.
fn walk(repo: &Repo, config: &Config) -> Result<Vec<Candidate>, IndexError> {
    let mut out = Vec::new();
    for entry in repo.walker(repo.root(), config)?.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let abs = entry.into_path();
        out.push(Candidate {
            rel: repo.rel(&abs),
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
            abs,
        });
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// Puts files under `source_dirs` first, so the part of the index users ask
/// about is searchable early; the sort is stable, so path order holds within
/// each group.
fn source_dirs_first(todo: &mut [Candidate], source_dirs: &[String]) {
    let prefixes: Vec<String> = source_dirs
        .iter()
        .map(|d| format!("{}/", d.trim_end_matches('/')))
        .collect();
    todo.sort_by_key(|c| !prefixes.iter().any(|p| c.rel.starts_with(p.as_str())));
}

/// One file read, hashed, classified and chunked.
struct Prepared {
    rel: String,
    state: FileState,
    class: FileClass,
    reason: String,
    language: String,
    lines: u32,
    /// Chunks with their content hash and search text.
    chunks: Vec<(Chunk, String, String)>,
    text: FileText,
}

/// Reads, hashes, classifies and chunks one file; `Err(reason)` when it is
/// left out of the index (binary, unreadable, or of a class in
/// `index_exclude_classes`).
fn prepare(c: &Candidate, config: &Config) -> Result<Prepared, String> {
    let bytes = repo::read_regular(&c.abs).map_err(|e| format!("unreadable: {e}"))?;
    if repo::bytes_look_binary(&bytes) {
        return Err("binary".into());
    }
    let class = classify::classify(&c.rel, &bytes);
    if config.index_exclude_classes.contains(&class.class) {
        return Err(format!(
            "{} ({}): not embedded by index_exclude_classes, still text-searchable",
            class.class.name(),
            class.reason
        ));
    }
    let sha = crate::util::sha256_hex(&bytes);
    let source = String::from_utf8_lossy(&bytes);
    let chunked = framework::chunk_source(&c.rel, &source, config);
    let text = lexical::file_text(&c.rel, &source, &chunked);
    let language = chunked
        .first()
        .map_or_else(|| "text".to_string(), |ch| ch.language.clone());
    let chunks: Vec<(Chunk, String, String)> = chunked
        .into_iter()
        .map(|ch| {
            let h = ch.content_hash();
            let t = lexical::chunk_text(&ch);
            (ch, h, t)
        })
        .collect();
    Ok(Prepared {
        rel: c.rel.clone(),
        state: FileState {
            size: c.size,
            mtime_ns: c.mtime_ns,
            sha256: sha,
            chunks: chunks.len(),
        },
        class: class.class,
        reason: class.reason,
        language,
        lines: u32::try_from(source.lines().count()).unwrap_or(u32::MAX),
        chunks,
        text,
    })
}

/// Every chunk the index would hold for the repository, deduplicated by
/// content hash (what a full sync embeds). For benchmarks.
///
/// # Errors
/// Invalid exclude patterns.
pub fn collect_chunks(repo: &Repo, config: &Config) -> Result<Vec<(Chunk, String)>, IndexError> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for c in walk(repo, config)? {
        if c.size > config.max_file_size {
            continue;
        }
        if let Ok(p) = prepare(&c, config) {
            out.extend(
                p.chunks
                    .into_iter()
                    .filter(|(_, h, _)| seen.insert(h.clone()))
                    .map(|(c, h, _)| (c, h)),
            );
        }
    }
    Ok(out)
}

/// Incremental (or, with `force`, full) sync of `forest`.
///
/// A file whose size and mtime match its fingerprint is not read; one whose
/// SHA-256 matches is unchanged; otherwise it is re-chunked and only chunks
/// whose content hash has no stored vector are embedded. Deleted files lose
/// their rows. Progress is published in `progress`. At `nice` > 0
/// (`serve`'s background and tool-started syncs: `embedding_nice`) the
/// chunking and the embedding run on threads of that lowered priority
/// ([`crate::embed::run_niced`]); the CLI's `index` passes 0.
///
/// # Errors
/// Store, embedding or state-file failures. Work committed before the error
/// is kept (and recorded in the state file).
pub async fn sync(
    repo: &Repo,
    config: &Config,
    store: &Store,
    embedder: &Arc<dyn Embedder>,
    force: bool,
    nice: i32,
    progress: &Progress,
) -> Result<SyncReport, IndexError> {
    if progress.running.swap(true, Ordering::SeqCst) {
        return Err(IndexError::Busy);
    }
    // One writer per repository across processes (two clients' servers, a
    // CLI index): an OS file lock, released when the file is closed, also
    // when the process dies. The state is loaded after taking it, so what
    // another process indexed is not indexed again.
    let lock = match lock_sync(repo) {
        Ok(l) => l,
        Err(e) => {
            progress.running.store(false, Ordering::SeqCst);
            return Err(e);
        }
    };
    let result = run_sync(repo, config, store, embedder, force, nice, progress).await;
    drop(lock);
    progress.running.store(false, Ordering::SeqCst);
    result
}

fn lock_sync(repo: &Repo) -> Result<std::fs::File, IndexError> {
    let path = repo.state_dir().join("sync.lock");
    let err = |source| IndexError::Write {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(repo.state_dir()).map_err(err)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(err)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(IndexError::Busy),
        Err(std::fs::TryLockError::Error(e)) => Err(err(e)),
    }
}

async fn run_sync(
    repo: &Repo,
    config: &Config,
    store: &Store,
    embedder: &Arc<dyn Embedder>,
    force: bool,
    nice: i32,
    progress: &Progress,
) -> Result<SyncReport, IndexError> {
    let started = Instant::now();
    let mut state = SyncState::load(repo);
    let model_id = embedder.model_id();
    if !force && !state.files.is_empty() && state.model_id != model_id {
        return Err(IndexError::ModelMismatch {
            index: state.model_id,
            embedder: model_id,
        });
    }
    if force || state.model_id != model_id {
        // The empty state is written before the rows go, so a kill in
        // between leaves a state that lists nothing the index lacks.
        state = SyncState {
            version: STATE_VERSION,
            model_id: model_id.clone(),
            ..Default::default()
        };
        state.save(repo)?;
        store.clear_forest().await?;
    }
    let mut report = SyncReport::default();
    let mut shared = open_shared(config, &model_id, embedder.dim(), &mut report).await;
    let (repo2, config2) = (repo.clone(), config.clone());
    // Walking stats every file: blocking I/O, off the async runtime.
    let candidates = tokio::task::spawn_blocking(move || walk(&repo2, &config2))
        .await
        .map_err(|e| {
            IndexError::Path(PathError::Root {
                path: repo.root().into(),
                source: std::io::Error::other(e),
            })
        })??;

    let seen: HashSet<&str> = candidates.iter().map(|c| c.rel.as_str()).collect();
    let deleted: Vec<String> = state
        .files
        .keys()
        .filter(|k| !seen.contains(k.as_str()))
        .cloned()
        .collect();
    state.skipped.retain(|k, _| seen.contains(k.as_str()));
    // Rows of vanished files are deleted after the batches, so that a renamed
    // or moved file reuses their vectors; until then the state still lists
    // them, so a killed sync deletes them next time.
    report.deleted = deleted.len();

    // Changed admission settings: files skipped or kept under the old ones
    // are all read again (vectors are reused by content hash).
    let admission = admission_rules(config);
    let recheck = state.admission != admission;
    if recheck {
        state.skipped.clear();
        state.admission = admission;
    }
    let mut todo =
        changed_candidates(candidates, &mut state, store, config, recheck, &mut report).await?;
    source_dirs_first(&mut todo, &config.source_dirs);
    progress.files_total.store(todo.len(), Ordering::SeqCst);
    progress.files_done.store(0, Ordering::SeqCst);
    state.save(repo)?;

    let mut total_chunks = state.chunk_count().saturating_sub(
        deleted
            .iter()
            .filter_map(|d| state.files.get(d))
            .fold(0usize, |n, f| n.saturating_add(f.chunks)),
    );
    for range in batch_ranges(todo.len()) {
        let batch = &todo[range];
        let owned = batch.to_vec();
        let config2 = config.clone();
        // Reading, hashing, parsing and chunking are CPU-bound.
        let prepared = crate::embed::run_niced(nice, move || {
            owned
                .iter()
                .map(|c| (c.rel.clone(), c.size, c.mtime_ns, prepare(c, &config2)))
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| IndexError::Embed(EmbedError::Inference(e)))?;

        let previously: HashSet<String> = batch
            .iter()
            .filter(|c| state.files.contains_key(&c.rel))
            .map(|c| c.rel.clone())
            .collect();
        let (ready, gone) = admit(prepared, &mut state, &mut total_chunks, config, &mut report);

        let vectors = vectors_for(&ready, store, &mut shared, embedder, nice, &mut report).await?;

        store_batch(store, &ready, &gone, &previously, &vectors).await?;
        for p in ready {
            state.files.insert(p.rel, p.state);
        }
        state.save(repo)?;
        progress.files_done.fetch_add(batch.len(), Ordering::SeqCst);
    }

    if !deleted.is_empty() {
        store.delete_files(&deleted).await?;
        for d in &deleted {
            state.files.remove(d);
        }
    }
    let changed = report.added + report.modified + report.deleted > 0;
    if changed || state.vocabulary_words == 0 {
        update_vocabulary(store, &mut shared, embedder, nice, &mut report).await?;
        state.vocabulary_words = report.vocabulary_words;
    } else {
        report.vocabulary_words = state.vocabulary_words;
    }
    if let Some(s) = shared.as_mut() {
        fill_shared(s, store, &mut report).await?;
    }
    // Every file is stored in the current schema now: vectors kept from an
    // older one are no longer needed.
    store.drop_vector_cache().await?;
    report.vector_index_seconds = store.ensure_vector_index().await?;
    report.text_index_seconds = store.update_text_indexes(changed).await?;
    state.last_sync = Some(now_secs());
    state.save(repo)?;
    report.chunks_total = store.forest_rows().await?;
    report.files_indexed = state.files.len();
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Sorts the walked files into what this sync must read: files over
/// `max_file_size` are dropped from the index (and reported skipped), files
/// skipped before and unchanged since stay skipped, files whose size and
/// mtime match the state are unchanged (unless `recheck`); the rest are
/// returned.
async fn changed_candidates(
    candidates: Vec<Candidate>,
    state: &mut SyncState,
    store: &Store,
    config: &Config,
    recheck: bool,
    report: &mut SyncReport,
) -> Result<Vec<Candidate>, IndexError> {
    let mut todo: Vec<Candidate> = Vec::new();
    for c in candidates {
        if c.size > config.max_file_size {
            if state.files.remove(&c.rel).is_some() {
                store.delete_files(std::slice::from_ref(&c.rel)).await?;
                report.deleted += 1;
            }
            let reason = format!("larger than max_file_size ({} bytes)", config.max_file_size);
            state.skipped.insert(
                c.rel,
                Skipped {
                    reason,
                    size: c.size,
                    mtime_ns: c.mtime_ns,
                },
            );
            report.skipped += 1;
            continue;
        }
        if state
            .skipped
            .get(&c.rel)
            .is_some_and(|s| s.size == c.size && s.mtime_ns == c.mtime_ns)
        {
            report.skipped += 1;
            continue;
        }
        match state.files.get(&c.rel) {
            Some(f) if !recheck && f.size == c.size && f.mtime_ns == c.mtime_ns => {
                report.unchanged += 1
            }
            _ => todo.push(c),
        }
    }
    Ok(todo)
}

/// Decides, for each prepared file of a batch, whether its chunks are
/// stored: identical content only refreshes the fingerprint; files past
/// `max_chunks` or left out (binary, unreadable, an excluded class) are
/// recorded as skipped and their old rows queued for deletion. Returns
/// (files to store, files whose rows go); `total_chunks` follows.
fn admit(
    prepared: Vec<(String, u64, u128, Result<Prepared, String>)>,
    state: &mut SyncState,
    total_chunks: &mut usize,
    config: &Config,
    report: &mut SyncReport,
) -> (Vec<Prepared>, Vec<String>) {
    let mut ready: Vec<Prepared> = Vec::new();
    let mut gone: Vec<String> = Vec::new();
    for (rel, size, mtime_ns, p) in prepared {
        match p {
            Ok(p) => {
                let previous = state
                    .files
                    .get(&rel)
                    .map(|f| (f.chunks, f.sha256 == p.state.sha256));
                if let Some((chunks, true)) = previous {
                    // Touched but identical: refresh the fingerprint only.
                    report.unchanged += 1;
                    state.files.insert(rel, FileState { chunks, ..p.state });
                    continue;
                }
                let old_chunks = previous.map_or(0, |(c, _)| c);
                if total_chunks
                    .saturating_sub(old_chunks)
                    .saturating_add(p.chunks.len())
                    > config.max_chunks
                {
                    let reason = format!("max_chunks ({}) reached", config.max_chunks);
                    state.skipped.insert(
                        rel.clone(),
                        Skipped {
                            reason,
                            size,
                            mtime_ns,
                        },
                    );
                    report.skipped += 1;
                    if state.files.remove(&rel).is_some() {
                        gone.push(rel);
                        *total_chunks = total_chunks.saturating_sub(old_chunks);
                    }
                    continue;
                }
                *total_chunks = total_chunks.saturating_sub(old_chunks) + p.chunks.len();
                if previous.is_some() {
                    report.modified += 1;
                } else {
                    report.added += 1;
                }
                state.skipped.remove(&rel);
                ready.push(p);
            }
            Err(reason) => {
                if let Some(f) = state.files.remove(&rel) {
                    gone.push(rel.clone());
                    *total_chunks = total_chunks.saturating_sub(f.chunks);
                    report.deleted += 1;
                }
                state.skipped.insert(
                    rel,
                    Skipped {
                        reason,
                        size,
                        mtime_ns,
                    },
                );
                report.skipped += 1;
            }
        }
    }

    (ready, gone)
}

/// The shared vector store of `config`, or `None` (none configured, or it
/// failed to open: the error goes to `report` and the sync goes on locally).
async fn open_shared(
    config: &Config,
    model_id: &str,
    dim: usize,
    report: &mut SyncReport,
) -> Option<SharedVectors> {
    let uri = config.vector_store.as_deref()?;
    SharedVectors::open(uri, &config.vector_store_options, model_id, dim)
        .await
        .map_err(|e| shared_failed(report, &e))
        .ok()
}

/// Records a shared-store failure in `report` (and the log); the sync goes
/// on locally.
fn shared_failed(report: &mut SyncReport, e: &StoreError) {
    tracing::warn!("{e}; the sync goes on locally");
    report.vector_store_error = Some(e.to_string());
}

/// Vectors the shared store holds for `keys` (keys it lacks are absent; no
/// store, nothing). A store that fails is recorded and dropped for the rest
/// of the sync: the caller embeds what is absent.
async fn lookup_shared(
    shared: &mut Option<SharedVectors>,
    keys: &[String],
    report: &mut SyncReport,
) -> HashMap<String, Vec<f32>> {
    let Some(s) = shared.as_ref() else {
        return HashMap::new();
    };
    match s.lookup(keys).await {
        Ok(found) => found,
        Err(e) => {
            shared_failed(report, &e);
            *shared = None;
            HashMap::new()
        }
    }
}

/// Adds to the shared store every vector of the local index it lacks: what
/// this sync embedded, and what earlier syncs embedded while the store was
/// unreachable (or before it was configured). One pass over the local
/// content hashes; a failure is reported, never fatal.
async fn fill_shared(
    shared: &mut SharedVectors,
    store: &Store,
    report: &mut SyncReport,
) -> Result<(), IndexError> {
    let lacking: Vec<String> = store
        .content_hashes()
        .await?
        .into_iter()
        .filter(|h| !shared.contains(h))
        .collect();
    let mut rows: Vec<(String, Vec<f32>)> = if lacking.is_empty() {
        Vec::new()
    } else {
        store
            .vectors_for_hashes(&lacking)
            .await?
            .into_iter()
            .collect()
    };
    let words_lacking = store
        .vocab_words()
        .await?
        .iter()
        .any(|w| !shared.contains(&vocab_key(w)));
    if words_lacking {
        rows.extend(
            store
                .vocab_vectors()
                .await?
                .into_iter()
                .map(|(w, v)| (vocab_key(&w), v))
                .filter(|(k, _)| !shared.contains(k)),
        );
    }
    if rows.is_empty() {
        return Ok(());
    }
    match shared.put(&rows).await {
        Ok(n) => report.vectors_to_store = n,
        Err(e) => shared_failed(report, &e),
    }
    Ok(())
}

/// Vectors of every chunk of `ready` by content hash: reused from the index
/// (same file's old rows, renamed files, identical code elsewhere, vectors
/// kept from an older schema), then from the shared store, the rest
/// embedded in one call. A shared store that fails is dropped for the rest
/// of the sync (reported).
async fn vectors_for(
    ready: &[Prepared],
    store: &Store,
    shared: &mut Option<SharedVectors>,
    embedder: &Arc<dyn Embedder>,
    nice: i32,
    report: &mut SyncReport,
) -> Result<HashMap<String, Vec<f32>>, IndexError> {
    let hashes: Vec<String> = ready
        .iter()
        .flat_map(|p| p.chunks.iter().map(|(_, h, _)| h.clone()))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let mut vectors = store.vectors_for_hashes(&hashes).await?;
    let lacking: Vec<String> = hashes
        .iter()
        .filter(|h| !vectors.contains_key(*h))
        .cloned()
        .collect();
    let found = lookup_shared(shared, &lacking, report).await;
    let from_store: HashSet<String> = found.keys().cloned().collect();
    vectors.extend(found);
    let mut missing: Vec<(String, String)> = Vec::new();
    let mut queued: HashSet<&str> = HashSet::new();
    for p in ready {
        for (c, h, _) in &p.chunks {
            if from_store.contains(h) {
                report.chunks_from_store += 1;
            } else if vectors.contains_key(h) {
                report.chunks_reused += 1;
            } else if queued.insert(h.as_str()) {
                missing.push((h.clone(), c.embedding_text()));
                report.chunks_embedded += 1;
            } else {
                report.chunks_reused += 1;
            }
        }
    }
    if !missing.is_empty() {
        let texts: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
        let emb = Arc::clone(embedder);
        // ONNX Runtime inference is CPU-bound and blocking; the calling
        // thread is one of its intra-op workers, so it runs at `nice` too.
        let new = crate::embed::run_niced(nice, move || emb.embed_passages(&texts))
            .await
            .map_err(|e| IndexError::Embed(EmbedError::Inference(e)))??;
        for ((h, _), v) in missing.into_iter().zip(new) {
            vectors.insert(h, v);
        }
    }

    Ok(vectors)
}

/// Writes one batch: files that had rows are replaced in one commit
/// (readers never see them missing); files new to the index and
/// killed-sync leftovers are cleared and appended; the rows of `gone` files
/// are deleted; their `files` rows are upserted.
async fn store_batch(
    store: &Store,
    ready: &[Prepared],
    gone: &[String],
    previously: &HashSet<String>,
    vectors: &HashMap<String, Vec<f32>>,
) -> Result<(), IndexError> {
    let mut rewrite: Vec<String> = ready
        .iter()
        .filter(|p| previously.contains(p.rel.as_str()))
        .map(|p| p.rel.clone())
        .collect();
    rewrite.extend(gone.iter().cloned());
    let fresh: Vec<String> = ready
        .iter()
        .filter(|p| !previously.contains(p.rel.as_str()))
        .map(|p| p.rel.clone())
        .collect();
    store.delete_files(&fresh).await?;
    let rows: Vec<ForestRow> = ready
        .iter()
        .flat_map(|p| {
            p.chunks.iter().filter_map(|(c, h, t)| {
                vectors.get(h).map(|v| ForestRow {
                    chunk: c,
                    hash: h,
                    vector: v,
                    class: p.class,
                    search_text: t,
                })
            })
        })
        .collect();
    let (replaced, added): (Vec<ForestRow>, Vec<ForestRow>) = rows
        .into_iter()
        .partition(|r| previously.contains(r.chunk.file.as_str()));
    store.replace_files(&rewrite, &replaced).await?;
    store.add(&added).await?;
    store.delete_files(gone).await?;
    let file_rows: Vec<FileRow> = ready
        .iter()
        .map(|p| FileRow {
            file: &p.rel,
            class: p.class,
            reason: &p.reason,
            language: &p.language,
            lines: p.lines,
            text: &p.text,
        })
        .collect();
    store.put_files(&file_rows).await?;
    Ok(())
}

/// Brings `vocab` in line with the words of the indexed files: new words are
/// embedded (E5 `query:` form, as the Japanese terms they are compared with),
/// words no file has any more are dropped.
async fn update_vocabulary(
    store: &Store,
    shared: &mut Option<SharedVectors>,
    embedder: &Arc<dyn Embedder>,
    nice: i32,
    report: &mut SyncReport,
) -> Result<(), IndexError> {
    let started = Instant::now();
    let files = store.file_words().await?;
    let counts = lexical::vocabulary(files.iter().map(String::as_str));
    let have = store.vocab_words().await?;
    let gone: Vec<String> = have
        .iter()
        .filter(|w| !counts.contains_key(*w))
        .cloned()
        .collect();
    let new: Vec<(String, u32)> = counts
        .iter()
        .filter(|(w, _)| !have.contains(*w))
        .map(|(w, n)| (w.clone(), *n))
        .collect();
    let keys: Vec<String> = new.iter().map(|(w, _)| vocab_key(w)).collect();
    let mut found = lookup_shared(shared, &keys, report).await;
    let mut add = Vec::with_capacity(new.len());
    let mut todo = Vec::new();
    for (w, n) in new {
        match found.remove(&vocab_key(&w)) {
            Some(v) => add.push((w, n, v)),
            None => todo.push((w, n)),
        }
    }
    report.vocabulary_from_store = add.len();
    for part in todo.chunks(VOCABULARY_BATCH) {
        let texts: Vec<String> = part.iter().map(|(w, _)| w.clone()).collect();
        let emb = Arc::clone(embedder);
        // ONNX Runtime inference is CPU-bound and blocking.
        let vectors = crate::embed::run_niced(nice, move || emb.embed_queries(&texts))
            .await
            .map_err(|e| IndexError::Embed(EmbedError::Inference(e)))??;
        add.extend(
            part.iter()
                .zip(vectors)
                .map(|((w, n), v)| (w.clone(), *n, v)),
        );
    }
    store.update_vocab(&add, &gone).await?;
    report.vocabulary_words = counts.len();
    report.vocabulary_embedded = todo.len();
    report.vocabulary_seconds = started.elapsed().as_secs_f64();
    Ok(())
}

/// Key of a vocabulary word's vector in the shared store. Words are
/// embedded as queries, chunks as passages, so they never share a key with
/// a chunk's content hash (hex SHA-256).
fn vocab_key(word: &str) -> String {
    format!("vocab:{word}")
}

/// Vocabulary words embedded per call (short texts: one ONNX Runtime batch
/// of `embedding_batch_size` at a time inside).
const VOCABULARY_BATCH: usize = 512;

/// Files whose size or mtime differ from the state, plus new and vanished
/// files: what the next sync would look at (stat only, no reads).
pub fn stale_files(repo: &Repo, config: &Config, state: &SyncState) -> usize {
    let Ok(candidates) = walk(repo, config) else {
        return 0;
    };
    let seen: HashSet<&str> = candidates.iter().map(|c| c.rel.as_str()).collect();
    let changed = candidates
        .iter()
        .filter(|c| c.size <= config.max_file_size)
        .filter(|c| !state.skipped.contains_key(&c.rel))
        .filter(|c| {
            state
                .files
                .get(&c.rel)
                .is_none_or(|f| f.size != c.size || f.mtime_ns != c.mtime_ns)
        })
        .count();
    changed
        + state
            .files
            .keys()
            .filter(|k| !seen.contains(k.as_str()))
            .count()
}

/// How ready the index is, for replies that depend on it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Readiness {
    /// `ready`, `indexing`, `empty` or `stale`.
    pub state: String,
    pub files_indexed: usize,
    pub chunks: usize,
    /// Files to process in the running sync, and how many are done.
    pub sync_files_done: Option<usize>,
    pub sync_files_total: Option<usize>,
    /// Unix seconds of the last completed sync.
    pub last_sync: Option<u64>,
    /// One line for people, e.g. `indexing 1,200/3,354 files, results partial`.
    pub message: String,
}

/// Readiness from the state file and the live progress.
pub fn readiness(repo: &Repo, progress: &Progress, config: &Config) -> Readiness {
    let state = SyncState::load(repo);
    let files = state.files.len();
    let chunks = state.chunk_count();
    let running = progress.running.load(Ordering::SeqCst);
    let (done, total) = (
        progress.files_done.load(Ordering::SeqCst),
        progress.files_total.load(Ordering::SeqCst),
    );
    let stale = state
        .last_sync
        .is_none_or(|t| (now_secs().saturating_sub(t) as f64) > config.sync_ttl_hours * 3600.0);
    let (label, message) = if running {
        (
            "indexing",
            format!(
                "indexing {}/{} files, results partial ({} files, {} chunks searchable now)",
                group(done),
                group(total),
                group(files),
                group(chunks)
            ),
        )
    } else if files == 0 {
        (
            "empty",
            "index empty: run sync_index or `code-intel index` first".to_string(),
        )
    } else if stale {
        (
            "stale",
            format!(
                "index covers {} files, {} chunks; last sync is older than sync_ttl_hours, run sync_index",
                group(files),
                group(chunks)
            ),
        )
    } else {
        (
            "ready",
            format!(
                "index ready: {} files, {} chunks",
                group(files),
                group(chunks)
            ),
        )
    };
    Readiness {
        state: label.into(),
        files_indexed: files,
        chunks,
        sync_files_done: running.then_some(done),
        sync_files_total: running.then_some(total),
        last_sync: state.last_sync,
        message,
    }
}

/// True when the last sync is older than `sync_ttl_hours` (or never ran).
pub fn sync_due(repo: &Repo, config: &Config) -> bool {
    SyncState::load(repo)
        .last_sync
        .is_none_or(|t| (now_secs().saturating_sub(t) as f64) >= config.sync_ttl_hours * 3600.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_start_small() {
        let sizes = |n| batch_ranges(n).iter().map(|r| r.len()).collect::<Vec<_>>();
        assert_eq!(sizes(1176), vec![16, 64, 256, 256, 256, 256, 72]);
        assert_eq!(sizes(10), vec![10]);
        assert!(sizes(0).is_empty());
        assert_eq!(batch_ranges(100).last(), Some(&(80..100)));
    }

    #[test]
    fn source_dirs_are_indexed_first_in_path_order() {
        let mut todo: Vec<Candidate> = [
            "README.md",
            "app/b.php",
            "tests/t.php",
            "app/a.php",
            "src/x.ts",
        ]
        .iter()
        .map(|r| Candidate {
            rel: r.to_string(),
            abs: PathBuf::from(r),
            size: 1,
            mtime_ns: 0,
        })
        .collect();
        source_dirs_first(&mut todo, &["src".into(), "app/".into()]);
        let order: Vec<&str> = todo.iter().map(|c| c.rel.as_str()).collect();
        assert_eq!(
            order,
            [
                "app/b.php",
                "app/a.php",
                "src/x.ts",
                "README.md",
                "tests/t.php"
            ]
        );
    }
}
