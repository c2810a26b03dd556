//! What the index holds and how ready it is: `sync_state.json` (per-file
//! fingerprints and chunk counts), the live progress of a sync with the
//! state file's cached summary, readiness, and the one staleness rule.

use super::*;

/// Version of `sync_state.json`; another version forces a full rebuild.
/// 2: chunks carry framework `meta` and `related` columns.
/// 3: chunks carry their file's class and full-text search terms; the
/// `files` and `vocab` tables (vectors of version 2 are reused by content
/// hash, nothing is embedded again).
/// 4: files carry their code-graph facts (every file is read and chunked
/// again once; vectors are reused by content hash).
pub(super) const STATE_VERSION: u32 = 4;

/// Fingerprint of one indexed file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileState {
    /// Bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u128,
    /// SHA-256 of the content, hex.
    pub sha256: String,
    /// [`crate::chunk::CHUNKING_VERSION`] the chunks were made with (0:
    /// before it was recorded).
    #[serde(default)]
    pub chunking: u32,
    /// Chunks stored for the file.
    pub chunks: usize,
    /// What the file says about others: the code graph's unresolved edges
    /// (`graph::FileFacts`), derived in the same pass as the chunks.
    #[serde(default, skip_serializing_if = "crate::graph::FileFacts::is_empty")]
    pub facts: crate::graph::FileFacts,
}

impl FileState {
    /// Whether `other` (the same file read again) has the content and the
    /// chunking this state's rows were made from: then its rows stay.
    pub fn same_rows(&self, other: &FileState) -> bool {
        self.sha256 == other.sha256 && self.chunking == other.chunking
    }
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
    /// (`index_exclude_classes`, `max_file_size`, `max_chunks`,
    /// `index_locales` with the detected ones), the
    /// classifier's rules version, the foreign trees the walk found, the
    /// code-graph facts' version and the chunking version
    /// ([`crate::chunk::CHUNKING_VERSION`]), at the last sync; when they
    /// change, every file is read again.
    #[serde(default)]
    pub admission: String,
}

/// [`SyncState::admission`] of a configuration and the walk's foreign
/// trees (`foreign`: their reasons, [`foreign_reasons`]).
pub(super) fn admission_rules(config: &Config, foreign: &[String]) -> String {
    serde_json::json!([
        config.index_exclude_classes,
        config.max_file_size,
        config.max_chunks,
        config.index_locales,
        crate::classify::RULES_VERSION,
        foreign,
        crate::graph::facts::FACTS_VERSION,
        crate::chunk::CHUNKING_VERSION
    ])
    .to_string()
}

impl SyncState {
    /// Path of the state file.
    pub fn path(repo: &Repo) -> PathBuf {
        repo.state_dir().join("sync_state.json")
    }

    /// Loads the state; a missing or unreadable file gives an empty state
    /// (everything is re-synced, nothing is lost). A state of an older
    /// layout keeps only its `model_id`: every file is read again, and the
    /// vectors already in `forest` are reused by content hash instead of
    /// being cleared and embedded again (the files that vanished meanwhile
    /// lose their rows at the end of the sync, [`Store::prune`]).
    pub fn load(repo: &Repo) -> SyncState {
        let Some(value) = std::fs::read_to_string(Self::path(repo))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        else {
            return SyncState::default();
        };
        if value["version"].as_u64() == Some(u64::from(STATE_VERSION)) {
            return serde_json::from_value(value).unwrap_or_default();
        }
        SyncState {
            version: STATE_VERSION,
            model_id: value["model_id"].as_str().unwrap_or_default().to_string(),
            ..SyncState::default()
        }
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

/// Live progress of a sync, shared with tools that report readiness, and
/// the summary of `sync_state.json` they report with it.
#[derive(Debug, Default)]
pub struct Progress {
    pub running: AtomicBool,
    /// Files that need chunking in the running sync.
    pub files_total: AtomicUsize,
    /// Of those, files committed.
    pub files_done: AtomicUsize,
    /// Files the running sync's lexical pass reads (0 when it has none).
    pub lexical_total: AtomicUsize,
    /// Of those, files whose `files` row (full-text) is written.
    pub lexical_done: AtomicUsize,
    /// The state file's summary as of its stamp: parsed again only after a
    /// sync (of this process or another) wrote the file.
    pub(super) summary: std::sync::Mutex<Option<(crate::util::FileStamp, StateSummary)>>,
}

/// What readiness needs of `sync_state.json`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StateSummary {
    pub(super) files: usize,
    pub(super) chunks: usize,
    pub(super) last_sync: Option<u64>,
}

impl Progress {
    /// The state file's summary: cached while the file's stamp is unchanged.
    pub(super) fn summary(&self, repo: &Repo) -> StateSummary {
        let path = SyncState::path(repo);
        let Some(stamp) = crate::util::FileStamp::of(&path) else {
            return StateSummary::default();
        };
        let mut cached = self.summary.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, summary)) = *cached
            && s == stamp
        {
            return summary;
        }
        let state = SyncState::load(repo);
        let summary = StateSummary {
            files: state.files.len(),
            chunks: state.chunk_count(),
            last_sync: state.last_sync,
        };
        *cached = Some((stamp, summary));
        summary
    }
}

/// How ready the index is (`Readiness::state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IndexState {
    /// Complete and synced within `sync_ttl_hours`.
    Ready,
    /// A sync is running: results are partial.
    Indexing,
    /// Nothing indexed yet.
    Empty,
    /// The last sync is older than `sync_ttl_hours` (or never completed).
    Stale,
}

/// The one staleness rule: no completed sync, or the last one is at least
/// `sync_ttl_hours` old (readiness says `stale`, `serve` syncs on start).
pub(super) fn is_stale(last_sync: Option<u64>, config: &Config) -> bool {
    last_sync
        .is_none_or(|t| (now_secs().saturating_sub(t) as f64) >= config.sync_ttl_hours * 3600.0)
}

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
    pub state: IndexState,
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

/// Readiness from the live progress and the state file's cached summary.
pub fn readiness(repo: &Repo, progress: &Progress, config: &Config) -> Readiness {
    let state = progress.summary(repo);
    let (files, chunks) = (state.files, state.chunks);
    let running = progress.running.load(Ordering::SeqCst);
    let (done, total) = (
        progress.files_done.load(Ordering::SeqCst),
        progress.files_total.load(Ordering::SeqCst),
    );
    let stale = is_stale(state.last_sync, config);
    let (lexical_done, lexical_total) = (
        progress.lexical_done.load(Ordering::SeqCst),
        progress.lexical_total.load(Ordering::SeqCst),
    );
    let (label, message) = if running && lexical_done < lexical_total {
        (
            IndexState::Indexing,
            format!(
                "reading files for the full-text index {}/{}, then embedding: query ranks by words meanwhile ({} files, {} chunks with vectors now)",
                group(lexical_done),
                group(lexical_total),
                group(files),
                group(chunks)
            ),
        )
    } else if running && total == 0 {
        // The sync has not yet listed what changed: the index holds what
        // the last sync left.
        (
            IndexState::Indexing,
            format!(
                "checking for changed files; results from the index as last synced ({} files, {} chunks)",
                group(files),
                group(chunks)
            ),
        )
    } else if running {
        let lexical = if lexical_total > 0 {
            "; every file is ranked by its words, code and vectors fill in"
        } else {
            ""
        };
        (
            IndexState::Indexing,
            format!(
                "indexing {}/{} files, results partial ({} files, {} chunks with vectors now{lexical})",
                group(done),
                group(total),
                group(files),
                group(chunks)
            ),
        )
    } else if files == 0 {
        (
            IndexState::Empty,
            "index empty: run sync_index or `code-intel index` first".to_string(),
        )
    } else if stale {
        (
            IndexState::Stale,
            format!(
                "index covers {} files, {} chunks; last sync is older than sync_ttl_hours, run sync_index",
                group(files),
                group(chunks)
            ),
        )
    } else {
        (
            IndexState::Ready,
            format!(
                "index ready: {} files, {} chunks",
                group(files),
                group(chunks)
            ),
        )
    };
    Readiness {
        state: label,
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
    is_stale(SyncState::load(repo).last_sync, config)
}
