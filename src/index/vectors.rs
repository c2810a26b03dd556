//! Vectors for a batch of chunks: reused from the local index by content
//! hash, then from the team's shared vector store, embedded for the rest;
//! the batch's rows written and what the shared store lacks added.

use super::*;

/// The shared vector store of `config`, or `None` (none configured, or it
/// failed to open: the error goes to `report` and the sync goes on locally).
pub(super) async fn open_shared(
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
pub(super) fn shared_failed(report: &mut SyncReport, e: &StoreError) {
    tracing::warn!("{e}; the sync goes on locally");
    report.vector_store_error = Some(e.to_string());
}

/// Vectors the shared store holds for `keys` (keys it lacks are absent; no
/// store, nothing). A store that fails is recorded and dropped for the rest
/// of the sync: the caller embeds what is absent.
pub(super) async fn lookup_shared(
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
pub(super) async fn fill_shared(
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
pub(super) async fn vectors_for(
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
        let wait = embedder.take_wait();
        report.embedding_wait_seconds += wait.waited.as_secs_f64();
        report.embedding_wait_texts = report.embedding_wait_texts.max(wait.texts_ahead);
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
pub(super) async fn store_batch(
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
    let file_rows: Vec<FileRow> = ready.iter().map(Prepared::file_row).collect();
    store.put_files(&file_rows).await?;
    Ok(())
}
