//! The repository's vocabulary for the Japanese → English bridge: words of
//! the indexed files, embedded once, kept in the `vocab` table.

use super::*;

/// Brings `vocab` in line with the words of the indexed files: new words are
/// embedded (E5 `query:` form, as the Japanese terms they are compared with),
/// words no file has any more are dropped.
pub(super) async fn update_vocabulary(
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
pub(super) fn vocab_key(word: &str) -> String {
    format!("vocab:{word}")
}

/// Vocabulary words embedded per call (short texts: one ONNX Runtime batch
/// of `embedding_batch_size` at a time inside).
pub(super) const VOCABULARY_BATCH: usize = 512;
