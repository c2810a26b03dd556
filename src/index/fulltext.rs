//! The lexical pass of a sync (ARCHITECTURE.md § index). Before anything is embedded,
//! every file the sync will read gets its `files` row — class, path,
//! definitions and words for the file-level BM25 search — so `query` ranks
//! the whole repository by its words seconds after a cold start, while the
//! model loads and the embedding batches fill in chunks and vectors.
//!
//! It writes no chunk rows and leaves the state alone: the state lists only
//! files whose chunks are committed, so a kill during or after the pass
//! leaves nothing that the next sync would not redo, and `files` rows of
//! files the state does not list are pruned at the end of every sync
//! ([`Store::prune`]).

use super::*;

/// Files read per `files` commit of the lexical pass.
const LEXICAL_BATCH: usize = 256;

/// A sync with fewer files to read skips the pass: its first embedding
/// batches (16, then 64 files: [`FIRST_BATCHES`]) are as quick to land.
pub(super) const LEXICAL_MIN_FILES: usize = 80;

/// What the sync will read, as far as the stored state says without the
/// model: files over `max_file_size`, files skipped before and unchanged
/// since, and (unless `force`) files whose fingerprint matches are left out.
fn to_read<'c>(
    candidates: &'c [Candidate],
    state: &SyncState,
    config: &Config,
    force: bool,
) -> Vec<&'c Candidate> {
    candidates
        .iter()
        .filter(|c| c.size <= config.max_file_size)
        .filter(|c| {
            !state
                .skipped
                .get(&c.rel)
                .is_some_and(|s| s.size == c.size && s.mtime_ns == c.mtime_ns)
        })
        .filter(|c| {
            force
                || !state
                    .files
                    .get(&c.rel)
                    .is_some_and(|f| f.size == c.size && f.mtime_ns == c.mtime_ns)
        })
        .collect()
}

/// Writes the `files` row of every file the sync will read whose content
/// changed, when there are at least [`LEXICAL_MIN_FILES`] to read; returns
/// each file's class (empty when the pass was skipped), which orders the
/// embedding batches.
///
/// # Errors
/// Store errors; a chunking worker that died.
pub(super) async fn lexical_pass(
    candidates: &[Candidate],
    state: &SyncState,
    store: &Store,
    config: &Config,
    force: bool,
    nice: i32,
    progress: &Progress,
) -> Result<HashMap<String, FileClass>, IndexError> {
    let todo = to_read(candidates, state, config, force);
    let mut classes = HashMap::new();
    if todo.len() < LEXICAL_MIN_FILES {
        return Ok(classes);
    }
    progress.lexical_total.store(todo.len(), Ordering::SeqCst);
    let mut written = 0;
    for batch in todo.chunks(LEXICAL_BATCH) {
        let owned: Vec<Candidate> = batch.iter().map(|c| (*c).clone()).collect();
        let config2 = config.clone();
        let prepared = crate::embed::run_niced(nice, move || {
            owned
                .iter()
                .filter_map(|c| prepare(c, &config2).ok())
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| IndexError::Embed(EmbedError::Inference(e)))?;
        // A file whose content is what the state says (a checkout or a
        // build touched it) keeps its row: the embedding stage will only
        // refresh its fingerprint (`walk::admit`).
        let rows: Vec<FileRow> = prepared
            .iter()
            .filter(|p| {
                force
                    || state
                        .files
                        .get(&p.rel)
                        .is_none_or(|f| !f.same_rows(&p.state))
            })
            .map(Prepared::file_row)
            .collect();
        if !rows.is_empty() {
            store.put_files(&rows).await?;
            written += rows.len();
        }
        classes.extend(prepared.iter().map(|p| (p.rel.clone(), p.class)));
        progress
            .lexical_done
            .fetch_add(batch.len(), Ordering::SeqCst);
    }
    if written > 0 {
        store.update_file_text_index().await?;
    }
    Ok(classes)
}

/// Orders the files to embed by what users ask about first: by class in
/// ranking-preference order ([`FileClass::ALL`]: source, config, then tests,
/// docs …); files the pass did not classify (left out of the index) last.
/// The sort is stable: source directories, already first, stay first within
/// each class, and path order holds.
pub(super) fn order_by_class(todo: &mut [Candidate], classes: &HashMap<String, FileClass>) {
    if classes.is_empty() {
        return;
    }
    todo.sort_by_key(|c| {
        classes.get(&c.rel).map_or(FileClass::ALL.len(), |k| {
            FileClass::ALL.iter().position(|x| x == k).unwrap_or(0)
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(rel: &str, size: u64) -> Candidate {
        Candidate {
            rel: rel.into(),
            abs: PathBuf::from(rel),
            size,
            mtime_ns: 7,
            foreign: None,
        }
    }

    #[test]
    fn reads_what_the_sync_will_read_and_orders_source_first() {
        let mut state = SyncState::default();
        let fingerprint = |size| FileState {
            size,
            mtime_ns: 7,
            sha256: String::new(),
            chunking: crate::chunk::CHUNKING_VERSION,
            chunks: 1,
            facts: Default::default(),
        };
        state.files.insert("same.php".into(), fingerprint(10));
        state.files.insert("edited.php".into(), fingerprint(11));
        let candidates = [
            candidate("same.php", 10),
            candidate("edited.php", 12),
            candidate("huge.php", u64::MAX),
            candidate("new.php", 5),
        ];
        let config = Config::default();
        let rels = |v: Vec<&Candidate>| v.iter().map(|c| c.rel.clone()).collect::<Vec<_>>();
        assert_eq!(
            rels(to_read(&candidates, &state, &config, false)),
            ["edited.php", "new.php"]
        );
        assert_eq!(
            rels(to_read(&candidates, &state, &config, true)),
            ["same.php", "edited.php", "new.php"]
        );

        let mut todo = vec![
            candidate("README.md", 1),
            candidate("tests/ATest.php", 1),
            candidate("unread.bin", 1),
            candidate("app/A.php", 1),
            candidate("config/app.php", 1),
            candidate("app/B.php", 1),
        ];
        let classes: HashMap<String, FileClass> = [
            ("README.md", FileClass::Docs),
            ("tests/ATest.php", FileClass::Test),
            ("app/A.php", FileClass::Source),
            ("config/app.php", FileClass::Config),
            ("app/B.php", FileClass::Source),
        ]
        .into_iter()
        .map(|(f, c)| (f.to_string(), c))
        .collect();
        order_by_class(&mut todo, &classes);
        let order: Vec<&str> = todo.iter().map(|c| c.rel.as_str()).collect();
        assert_eq!(
            order,
            [
                "app/A.php",
                "app/B.php",
                "config/app.php",
                "tests/ATest.php",
                "README.md",
                "unread.bin"
            ]
        );
    }
}
