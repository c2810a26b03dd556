//! `semantic_search` as MCP and the CLI both run it: map first (an
//! agreement at or above the calibrated `map_short_circuit` ends `auto`,
//! docs/sessions.md), then code chunks.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::RankError;
use crate::embed::Embedder;
use crate::relevance::CALIBRATED;
use crate::store::{ForestHit, MapHit, Scope, Store};

/// Which table `semantic_search` reads.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Collection {
    /// Code chunks.
    Forest,
    /// Agreements learned from past successful sessions.
    Map,
    /// Both: map hits first, then code chunks (default).
    #[default]
    Auto,
}

/// What a semantic search found: map agreements and code chunks, best
/// first; `short_circuit` when `auto` stopped at a map agreement.
#[derive(Debug, Default)]
pub struct SemanticHits {
    pub results: Vec<ForestHit>,
    pub map_results: Vec<MapHit>,
    pub short_circuit: bool,
}

/// Searches `collection` for `query`: at most `limit` hits per table,
/// chunks within `scope`.
///
/// # Errors
/// Embedding or store errors.
pub async fn semantic_search(
    store: &Store,
    embedder: Arc<dyn Embedder>,
    query: &str,
    collection: Collection,
    limit: usize,
    scope: &Scope,
) -> Result<SemanticHits, RankError> {
    let q = query.to_string();
    // ONNX Runtime inference is CPU-bound and blocking.
    let vector = tokio::task::spawn_blocking(move || embedder.embed_query(&q))
        .await
        .map_err(|e| RankError::Worker(e.to_string()))??;
    let map_results = if collection == Collection::Forest {
        Vec::new()
    } else {
        store.search_map(&vector, limit).await?
    };
    let short_circuit = collection == Collection::Auto
        && map_results
            .first()
            .is_some_and(|h| h.score >= CALIBRATED.map_short_circuit);
    let results = if collection == Collection::Map || short_circuit {
        Vec::new()
    } else {
        let mut hits = store.search_forest(&vector, limit, scope).await?;
        hits.retain(|h| !crate::store::says_little(&h.content));
        hits
    };
    Ok(SemanticHits {
        results,
        map_results,
        short_circuit,
    })
}
