//! Which files a sync looks at: the gitignore-aware walk with size and
//! mtime, source directories first, the admission rules (class, size,
//! binary, `max_chunks`), and chunking a file.

use super::*;

#[derive(Clone)]
pub(super) struct Candidate {
    pub(super) rel: String,
    pub(super) abs: PathBuf,
    pub(super) size: u64,
    pub(super) mtime_ns: u128,
    /// Why the file is another project's code kept in the tree
    /// ([`classify::licence::foreign_trees`]), when it is.
    pub(super) foreign: Option<Arc<str>>,
}

pub(super) fn mtime_ns(meta: &std::fs::Metadata) -> u128 {
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
pub(super) fn walk(repo: &Repo, config: &Config) -> Result<Vec<Candidate>, IndexError> {
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
            foreign: None,
        });
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    mark_foreign(&mut out);
    Ok(out)
}

/// `config` with the application's own locales
/// (`framework::locales::app_locales`) added to `index_locales`, every one
/// as a [`classify::locale_key`], each once: what every sync classifies
/// with.
pub(super) fn with_app_locales(repo: &Repo, config: &Config) -> Config {
    let mut c = config.clone();
    let found = crate::framework::locales::app_locales(repo.root());
    c.index_locales = Vec::new();
    for l in config.index_locales.iter().chain(&found) {
        let key = classify::locale_key(l);
        if !c.index_locales.contains(&key) {
            c.index_locales.push(key);
        }
    }
    c
}

/// Licence files larger than this (bytes) are not read for copyright lines.
const LICENCE_MAX_BYTES: u64 = 64 * 1024;

/// Marks the files under directories that hold another project's licence
/// (`classify::licence`): they are classed `vendored`, text-searchable and
/// not embedded by default.
fn mark_foreign(candidates: &mut [Candidate]) {
    let licences: Vec<(String, String)> = candidates
        .iter()
        .filter(|c| c.size <= LICENCE_MAX_BYTES)
        .filter(|c| classify::licence::is_licence_file(c.rel.rsplit('/').next().unwrap_or("")))
        .filter_map(|c| Some((c.rel.clone(), std::fs::read_to_string(&c.abs).ok()?)))
        .collect();
    for (prefix, reason) in classify::licence::foreign_trees(&licences) {
        let reason: Arc<str> = reason.into();
        for c in candidates.iter_mut().filter(|c| c.rel.starts_with(&prefix)) {
            c.foreign = Some(Arc::clone(&reason));
        }
    }
}

/// The foreign trees the walk found (their reasons, sorted), for the
/// admission rules: when they change, every file is classified again.
pub(super) fn foreign_reasons(candidates: &[Candidate]) -> Vec<String> {
    let reasons: BTreeSet<&str> = candidates
        .iter()
        .filter_map(|c| c.foreign.as_deref())
        .collect();
    reasons.into_iter().map(str::to_string).collect()
}

/// Puts files under `source_dirs` first, so the part of the index users ask
/// about is searchable early; the sort is stable, so path order holds within
/// each group.
pub(super) fn source_dirs_first(todo: &mut [Candidate], source_dirs: &[String]) {
    let prefixes: Vec<String> = source_dirs
        .iter()
        .map(|d| format!("{}/", d.trim_end_matches('/')))
        .collect();
    todo.sort_by_key(|c| !prefixes.iter().any(|p| c.rel.starts_with(p.as_str())));
}

/// One file read, hashed, classified and chunked.
pub(super) struct Prepared {
    pub(super) rel: String,
    pub(super) state: FileState,
    pub(super) class: FileClass,
    pub(super) reason: String,
    pub(super) language: String,
    pub(super) lines: u32,
    /// Chunks with their content hash and search text.
    pub(super) chunks: Vec<(Chunk, String, String)>,
    pub(super) text: FileText,
}

impl Prepared {
    /// The file's `files` row (file-level BM25 text and class).
    pub(super) fn file_row(&self) -> FileRow<'_> {
        FileRow {
            file: &self.rel,
            class: self.class,
            reason: &self.reason,
            language: &self.language,
            lines: self.lines,
            text: &self.text,
        }
    }
}

/// Reads, hashes, classifies and chunks one file; `Err(reason)` when it is
/// left out of the index (binary, unreadable, or of a class in
/// `index_exclude_classes`).
pub(super) fn prepare(c: &Candidate, config: &Config) -> Result<Prepared, String> {
    let bytes = repo::read_regular(&c.abs).map_err(|e| format!("unreadable: {e}"))?;
    if repo::bytes_look_binary(&bytes) {
        return Err("binary".into());
    }
    let mut class = classify::classify(&c.rel, &bytes);
    if class.class == FileClass::L10n
        && let Some(loc) = classify::translation_locale(&c.rel)
        && config.index_locales.contains(&classify::locale_key(loc))
    {
        class = classify::Classification {
            class: FileClass::Source,
            reason: format!(
                "translation for locale {loc}, one of the application's (index_locales)"
            ),
        };
    }
    // The path's own verdict stands for what is already left out
    // (vendored, generated, lock); the rest of a foreign tree is vendored.
    if let Some(reason) = &c.foreign
        && !matches!(
            class.class,
            FileClass::Vendored | FileClass::Generated | FileClass::Lock
        )
    {
        class = classify::Classification {
            class: FileClass::Vendored,
            reason: reason.to_string(),
        };
    }
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
            chunking: crate::chunk::CHUNKING_VERSION,
            chunks: chunks.len(),
            facts: crate::graph::facts::extract(&c.rel, &source),
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
    let config = &with_app_locales(repo, config);
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

/// Sorts the walked files into what this sync must read: files over
/// `max_file_size` are dropped from the index (and reported skipped), files
/// skipped before and unchanged since stay skipped, files whose size and
/// mtime match the state are unchanged (unless `recheck`); the rest are
/// returned.
pub(super) async fn changed_candidates(
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
pub(super) fn admit(
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
                    .map(|f| (f.chunks, f.same_rows(&p.state)));
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
