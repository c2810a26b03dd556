//! Sync: walk → fingerprint → chunk → embed (only new content hashes) →
//! store. Incremental, resumable after a kill, and observable while it runs.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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

mod fulltext;
mod graph;
mod state;
mod vectors;
mod vocabulary;
mod walk;

use fulltext::*;
pub use graph::{
    CodeGraph, GraphCache, action_requests, file_uses, outside_parents, related_files, seeds,
    uses_by_name,
};
pub use state::*;
use vectors::*;
use vocabulary::*;
pub use walk::collect_chunks;
use walk::*;

/// Files chunked, embedded and committed together; the state file is saved
/// after each batch, so a killed sync loses at most one batch of work.
/// Larger batches sort more texts by length before embedding: 64 gave 0.84
/// of raw embedding throughput (then through fastembed) on laravel's Queue/ (79 files, 646 chunks).
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
    #[error(
        "the embedding model is unavailable ({0}): every file's words are indexed for query's full-text ranking; chunks and vectors wait for the model"
    )]
    ModelUnavailable(String),
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
    /// Seconds spent compacting tables grown past
    /// `store::MAX_FRAGMENTS` fragments (0 when none had).
    pub compaction_seconds: f64,
    /// Words in the vocabulary (identifier words of paths and definitions)
    /// after the sync, and how many were embedded in it.
    pub vocabulary_words: usize,
    pub vocabulary_embedded: usize,
    /// Vocabulary words whose vector came from the shared vector store.
    pub vocabulary_from_store: usize,
    /// Seconds spent embedding the vocabulary.
    pub vocabulary_seconds: f64,
    /// Commits of the git history read for co-change statistics (new ones
    /// only, after the first sync).
    pub history_commits: usize,
    /// Seconds spent reading them.
    pub history_seconds: f64,
    /// Why the history could not be read (the sync carries on without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_error: Option<String>,
    /// Seconds this sync's passages waited in the shared embedding service
    /// behind other clients' texts (another repository indexing), and the
    /// most such texts queued when one of its requests arrived.
    pub embedding_wait_seconds: f64,
    pub embedding_wait_texts: usize,
    pub seconds: f64,
}

/// Waits for the shared embedding service shorter than this are not worth
/// a line in the reply (one slice of another client's texts takes about a
/// second on a 2-core machine: docs/measurements.md).
pub const REPORTED_WAIT_SECONDS: f64 = 1.0;

impl std::fmt::Display for SyncReport {
    /// One human line: `12 added, 1 modified, … in 0.41 s`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "files: {} added, {} modified, {} deleted, {} unchanged, {} skipped; chunks: {} embedded, {} reused, {} from the shared store, {} added to it, {} in index ({} files); full-text index {:.2} s; vector index {:.2} s; vocabulary {} words ({} embedded, {:.2} s); history {} commits ({:.2} s); {:.2} s",
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
            self.history_commits,
            self.history_seconds,
            self.seconds
        )?;
        if self.compaction_seconds > 0.0 {
            write!(f, "; tables compacted in {:.2} s", self.compaction_seconds)?;
        }
        if let Some(e) = &self.vector_store_error {
            write!(f, "\nwarning: {e}; embedded locally instead")?;
        }
        if let Some(e) = &self.history_error {
            write!(f, "\nwarning: {e}; co-change statistics not updated")?;
        }
        if self.embedding_wait_seconds >= REPORTED_WAIT_SECONDS {
            write!(
                f,
                "\nnote: waited {:.1} s for the shared embedding service, busy with {} texts of another index or sync",
                self.embedding_wait_seconds, self.embedding_wait_texts
            )?;
        }
        Ok(())
    }
}

/// Incremental (or, with `force`, full) sync of `forest`.
///
/// A sync that must read many files first writes every one's `files` row
/// (the lexical pass, `index/fulltext.rs`) and only then awaits `embedder`
/// (`serve` passes the model that is still loading) and embeds, source
/// files first.
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
    embedder: impl std::future::Future<Output = Result<Arc<dyn Embedder>, IndexError>>,
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

/// What a sync must do, from the walked candidates: the files that vanished
/// (their rows are deleted after the batches, so that a renamed or moved file
/// reuses their vectors; until then the state still lists them, so a killed
/// sync deletes them next time) and the files to (re)index, source
/// directories first.
async fn plan_sync(
    candidates: Vec<Candidate>,
    state: &mut SyncState,
    store: &Store,
    config: &Config,
    report: &mut SyncReport,
) -> Result<(Vec<String>, Vec<Candidate>), IndexError> {
    let seen: HashSet<&str> = candidates.iter().map(|c| c.rel.as_str()).collect();
    let deleted: Vec<String> = state
        .files
        .keys()
        .filter(|k| !seen.contains(k.as_str()))
        .cloned()
        .collect();
    state.skipped.retain(|k, _| seen.contains(k.as_str()));
    report.deleted = deleted.len();

    // Changed admission settings: files skipped or kept under the old ones
    // are all read again (vectors are reused by content hash).
    let admission = admission_rules(config, &foreign_reasons(&candidates));
    let recheck = state.admission != admission;
    if recheck {
        state.skipped.clear();
        state.admission = admission;
    }
    let mut todo = changed_candidates(candidates, state, store, config, recheck, report).await?;
    source_dirs_first(&mut todo, &config.source_dirs);
    Ok((deleted, todo))
}

async fn run_sync(
    repo: &Repo,
    config: &Config,
    store: &Store,
    embedder: impl std::future::Future<Output = Result<Arc<dyn Embedder>, IndexError>>,
    force: bool,
    nice: i32,
    progress: &Progress,
) -> Result<SyncReport, IndexError> {
    let started = Instant::now();
    let config = &with_app_locales(repo, config);
    progress.lexical_total.store(0, Ordering::SeqCst);
    progress.lexical_done.store(0, Ordering::SeqCst);
    progress.files_total.store(0, Ordering::SeqCst);
    progress.files_done.store(0, Ordering::SeqCst);
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

    let classes = lexical_pass(
        &candidates,
        &SyncState::load(repo),
        store,
        config,
        force,
        nice,
        progress,
    )
    .await?;
    let embedder = embedder.await?;
    let embedder = &embedder;
    let model_id = embedder.model_id();
    let mut state = start_state(repo, store, &model_id, force).await?;
    let mut report = SyncReport::default();
    let mut shared = open_shared(config, &model_id, embedder.dim(), &mut report).await;
    let (deleted, mut todo) = plan_sync(candidates, &mut state, store, config, &mut report).await?;
    order_by_class(&mut todo, &classes);
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

    finish_sync(
        store,
        &mut state,
        &deleted,
        &mut shared,
        embedder,
        nice,
        &mut report,
    )
    .await?;
    mine_history(repo, nice, &mut report).await;
    state.last_sync = Some(now_secs());
    state.save(repo)?;
    report.chunks_total = store.forest_rows().await?;
    report.files_indexed = state.files.len();
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Reads the commits not yet in `.code-intel/cochange.json` (co-change
/// statistics, `graph::cochange`) on a thread at `nice`; a failure is
/// reported, never fatal.
async fn mine_history(repo: &Repo, nice: i32, report: &mut SyncReport) {
    let started = Instant::now();
    let (root, dir) = (repo.root().to_path_buf(), repo.state_dir());
    let mined = crate::embed::run_niced(nice, move || {
        crate::graph::cochange::CoChange::update(&dir, |history| {
            let n = crate::graph::cochange::mine(&root, history)?;
            Ok((n, n > 0))
        })
    })
    .await;
    match mined {
        Ok(Ok(n)) => report.history_commits = n,
        Ok(Err(e)) => report.history_error = Some(e.to_string()),
        Err(e) => report.history_error = Some(e),
    }
    report.history_seconds = started.elapsed().as_secs_f64();
}

/// The state a sync starts from: the stored one, or (forced, or a new
/// model) an empty one written before the rows go, so a kill in between
/// leaves a state that lists nothing the index lacks.
///
/// # Errors
/// The index is of another model (and not forced); a write failure.
async fn start_state(
    repo: &Repo,
    store: &Store,
    model_id: &str,
    force: bool,
) -> Result<SyncState, IndexError> {
    let state = SyncState::load(repo);
    if !force && !state.files.is_empty() && state.model_id != model_id {
        return Err(IndexError::ModelMismatch {
            index: state.model_id,
            embedder: model_id.to_string(),
        });
    }
    if !force && state.model_id == model_id {
        return Ok(state);
    }
    let state = SyncState {
        version: STATE_VERSION,
        model_id: model_id.to_string(),
        ..Default::default()
    };
    state.save(repo)?;
    store.clear_forest().await?;
    Ok(state)
}

/// A sync that added, changed or deleted this share of the indexed files
/// (numerator, denominator) or more builds the full-text indexes again
/// instead of adding the new rows to them: LanceDB's incremental
/// optimisation keeps counting replaced and deleted rows in BM25's
/// statistics. After most files changed or were deleted, file scores were
/// half or double those of an index built once over the same files
/// (`tests::touched_files_keep_their_rows_and_a_bulk_change_scores_as_a_fresh_index`),
/// and filamentphp/demo's change set scored recall@10 0.601 on a fresh
/// index and 0.595 after a checkout of a later commit and back
/// (bench/README.md § Change sets). A few changed files keep the
/// optimisation, which is cheaper: on koel at its tip (2,428 files, 11,417
/// chunks), `code-intel index` after 700 files changed spent 2.0 s
/// rebuilding both tables' indexes (of a 45 s sync), after 500 changed 0.78
/// s optimising them, after 100 changed 0.56 s (2026-11-26).
const TEXT_REBUILD_SHARE: (usize, usize) = (1, 4);

/// After the batches: rows of vanished files deleted, the vocabulary, the
/// shared store filled, the vector and full-text indexes brought up to date.
async fn finish_sync(
    store: &Store,
    state: &mut SyncState,
    deleted: &[String],
    shared: &mut Option<SharedVectors>,
    embedder: &Arc<dyn Embedder>,
    nice: i32,
    report: &mut SyncReport,
) -> Result<(), IndexError> {
    if !deleted.is_empty() {
        store.delete_files(deleted).await?;
        for d in deleted {
            state.files.remove(d);
        }
    }
    store
        .prune(&state.files.keys().map(String::as_str).collect())
        .await?;
    let changed = report.added + report.modified + report.deleted > 0;
    if changed || state.vocabulary_words == 0 {
        update_vocabulary(store, shared, embedder, nice, report).await?;
        state.vocabulary_words = report.vocabulary_words;
    } else {
        report.vocabulary_words = state.vocabulary_words;
    }
    if let Some(s) = shared.as_mut() {
        fill_shared(s, store, report).await?;
    }
    // Every file is stored in the current schema now: vectors kept from an
    // older one are no longer needed.
    store.drop_vector_cache().await?;
    report.vector_index_seconds = store.ensure_vector_index().await?;
    let touched = report.added + report.modified + report.deleted;
    let rebuild = touched * TEXT_REBUILD_SHARE.1
        >= (state.files.len() + report.deleted) * TEXT_REBUILD_SHARE.0;
    report.text_index_seconds = store.update_text_indexes(changed, rebuild).await?;
    report.compaction_seconds = store.compact().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository at `root` and its index store.
    async fn open_store(root: &std::path::Path) -> (Repo, Store) {
        let repo = Repo::open(root).unwrap();
        let store = Store::open(&repo.state_dir().join("lance"), crate::embed::E5_DIM)
            .await
            .unwrap();
        (repo, store)
    }

    /// A sync that waited a second or more for the shared embedding service
    /// says so and why; a shorter wait is not worth a line.
    #[test]
    fn a_wait_for_the_shared_service_is_reported() {
        let mut report = SyncReport {
            embedding_wait_seconds: 12.34,
            embedding_wait_texts: 4096,
            ..SyncReport::default()
        };
        let text = report.to_string();
        assert!(
            text.contains("waited 12.3 s for the shared embedding service, busy with 4096 texts"),
            "{text}"
        );
        report.embedding_wait_seconds = 0.4;
        assert!(!report.to_string().contains("waited"));
    }

    /// One sync with the default config and the deterministic embedder.
    async fn sync_hashed(repo: &Repo, store: &Store) -> Result<SyncReport, IndexError> {
        let embedder: Arc<dyn Embedder> = Arc::new(crate::embed::testing::HashedWords);
        let progress = Progress::default();
        let ready = std::future::ready(Ok(embedder));
        sync(repo, &Config::default(), store, ready, false, 0, &progress).await
    }

    /// A state of an older layout keeps its vectors: the files are read
    /// again, nothing already in `forest` is embedded again, and the rows
    /// of a file that vanished meanwhile go.
    #[tokio::test]
    async fn an_older_state_is_read_again_without_embedding_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        for i in 0..3 {
            std::fs::write(
                dir.path().join(format!("pkg/m{i}.py")),
                format!("def handler_{i}(request):\n    return request.get('item_{i}')\n"),
            )
            .unwrap();
        }
        let (repo, store) = open_store(dir.path()).await;
        assert_eq!(sync_hashed(&repo, &store).await.unwrap().chunks_embedded, 3);
        // The layout changes (an upgrade) and a file goes.
        let path = SyncState::path(&repo);
        let mut old: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        old["version"] = serde_json::json!(STATE_VERSION - 1);
        std::fs::write(&path, old.to_string()).unwrap();
        std::fs::remove_file(dir.path().join("pkg/m2.py")).unwrap();
        let report = sync_hashed(&repo, &store).await.unwrap();
        assert_eq!((report.chunks_embedded, report.chunks_reused), (0, 2));
        assert_eq!(store.forest_rows().await.unwrap(), 2);
        assert_eq!(store.file_rows().await.unwrap(), 2);
        assert_eq!(SyncState::load(&repo).version, STATE_VERSION);
    }

    /// A checkout that touches files without changing them rewrites no
    /// `files` row, and after a sync that changed most files the file-level
    /// BM25 scores are those of an index built once over the new content
    /// ([`TEXT_REBUILD_SHARE`]): an index grown over replaced rows
    /// scored differently.
    #[tokio::test]
    async fn touched_files_keep_their_rows_and_a_bulk_change_scores_as_a_fresh_index() {
        let n = fulltext::LEXICAL_MIN_FILES + 10;
        // Version a: every file handles a request; version b: a third do.
        let write_all = |root: &std::path::Path, version: char| {
            std::fs::create_dir_all(root.join("pkg")).unwrap();
            for i in 0..n {
                let body = if version == 'a' || i % 3 == 0 {
                    format!("def handler_{i}(request):\n    return request.get('item_{i}')\n")
                } else {
                    format!("def worker_{i}(job):\n    return job.run('task_{i}')\n")
                };
                std::fs::write(root.join(format!("pkg/m{i}.py")), body).unwrap();
            }
        };
        async fn scores(store: &Store, limit: usize) -> Vec<(String, f32)> {
            let query = crate::store::Bm25Query {
                groups: vec![("request item".into(), 1.0)],
            };
            let hits = store
                .search_files(&query, limit, &Default::default())
                .await
                .unwrap();
            let mut v: Vec<(String, f32)> = hits.into_iter().map(|h| (h.file, h.score)).collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        }

        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), 'a');
        let (repo, store) = open_store(dir.path()).await;
        sync_hashed(&repo, &store).await.unwrap();
        let before = store.files_version().await;

        // Touched, same content (a branch switched and back): nothing written.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
        for i in 0..n {
            std::fs::File::options()
                .write(true)
                .open(dir.path().join(format!("pkg/m{i}.py")))
                .unwrap()
                .set_modified(later)
                .unwrap();
        }
        assert_eq!(sync_hashed(&repo, &store).await.unwrap().unchanged, n);
        assert_eq!(store.files_version().await, before);

        // Most files changed: scored as an index of version b built once.
        write_all(dir.path(), 'b');
        assert_eq!(
            sync_hashed(&repo, &store).await.unwrap().modified,
            n - n.div_ceil(3)
        );
        let fresh_dir = tempfile::tempdir().unwrap();
        write_all(fresh_dir.path(), 'b');
        let (fresh_repo, fresh) = open_store(fresh_dir.path()).await;
        sync_hashed(&fresh_repo, &fresh).await.unwrap();
        let (got, want) = (scores(&store, 2 * n).await, scores(&fresh, 2 * n).await);
        assert_eq!(got.len(), n.div_ceil(3));
        for ((f, s), (g, t)) in got.iter().zip(&want) {
            assert_eq!(f, g);
            assert!((s - t).abs() < 1e-5, "{f}: {s} after the change, {t} fresh");
        }

        // Most files deleted (a checkout of an older branch): the same.
        for i in (0..n).filter(|i| i % 3 != 0 && i % 2 == 0) {
            std::fs::remove_file(dir.path().join(format!("pkg/m{i}.py"))).unwrap();
            std::fs::remove_file(fresh_dir.path().join(format!("pkg/m{i}.py"))).unwrap();
        }
        assert!(sync_hashed(&repo, &store).await.unwrap().deleted > n / 4);
        let fresh_dir2 = tempfile::tempdir().unwrap();
        for e in std::fs::read_dir(fresh_dir.path().join("pkg")).unwrap() {
            let e = e.unwrap();
            std::fs::create_dir_all(fresh_dir2.path().join("pkg")).unwrap();
            std::fs::copy(e.path(), fresh_dir2.path().join("pkg").join(e.file_name())).unwrap();
        }
        let (fresh_repo2, fresh2) = open_store(fresh_dir2.path()).await;
        sync_hashed(&fresh_repo2, &fresh2).await.unwrap();
        let (got, want) = (scores(&store, 2 * n).await, scores(&fresh2, 2 * n).await);
        assert_eq!(got.len(), want.len());
        for ((f, s), (g, t)) in got.iter().zip(&want) {
            assert_eq!(f, g);
            assert!(
                (s - t).abs() < 1e-5,
                "{f}: {s} after the deletions, {t} fresh"
            );
        }
    }

    /// A sync that writes a file adds a fragment to `forest` and `files`
    /// (its old rows are marked deleted where they were); past
    /// `store::MAX_FRAGMENTS` the sync compacts the tables, keeping every
    /// row and what a search finds.
    #[tokio::test]
    async fn many_small_syncs_leave_few_fragments() {
        let edits = crate::store::MAX_FRAGMENTS + 2;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        let write = |i: usize, word: &str| {
            std::fs::write(
                dir.path().join(format!("pkg/m{i}.py")),
                format!("def handler_{i}(request):\n    return request.get('{word}')\n"),
            )
            .unwrap();
        };
        for i in 0..edits {
            write(i, "item");
        }
        // One word per file and edit (`revisiona`, …): no split, no stem.
        let revision = |i: usize| format!("revision{}", char::from(b'a' + i as u8));
        let (repo, store) = open_store(dir.path()).await;
        sync_hashed(&repo, &store).await.unwrap();
        let mut compactions = 0;
        // Each sync edits another file, as a day's work does.
        for i in 0..edits {
            write(i, &revision(i));
            let report = sync_hashed(&repo, &store).await.unwrap();
            assert_eq!(report.modified, 1);
            compactions += usize::from(report.compaction_seconds > 0.0);
        }
        assert_eq!(compactions, 1);
        let (forest, files) = store.fragments().await;
        assert!(
            forest < crate::store::MAX_FRAGMENTS && files < crate::store::MAX_FRAGMENTS,
            "{forest} and {files} fragments"
        );
        assert_eq!(store.forest_rows().await.unwrap(), edits);
        assert_eq!(store.file_rows().await.unwrap(), edits);
        for i in [0, edits - 1] {
            let query = crate::store::Bm25Query {
                groups: vec![(revision(i), 1.0)],
            };
            let hits = store
                .search_files(&query, 10, &Default::default())
                .await
                .unwrap();
            let found: Vec<&str> = hits.iter().map(|h| h.file.as_str()).collect();
            assert_eq!(found, [format!("pkg/m{i}.py")]);
        }
    }

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
            foreign: None,
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
