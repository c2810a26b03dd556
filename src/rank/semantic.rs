//! `semantic_search` as MCP and the CLI both run it: map first (an
//! agreement at or above the calibrated `map_short_circuit` ends `auto`,
//! docs/sessions.md), then code chunks.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::RankError;
use crate::embed::{EmbedError, Embedder};
use crate::relevance::CALIBRATED;
use crate::store::{ForestHit, MapHit, Scope, Store};

/// Weight of a Japanese request's English rendering in the vector that
/// ranks code here: more than `query`'s 0.5, which has BM25 beside it. On
/// the Japanese sets of `bench/sets` (the `semantic` row of
/// `bench/run.sh retrieval … --ja`, bench/README.md § Japanese bridge) R@10
/// averaged 0.471 / 0.512 / 0.488 and MRR 0.384 / 0.417 / 0.420 at 0.5 /
/// 0.75 / 1.0; the rendering alone lost koel-ja's R@10 (0.605 → 0.468).
pub const RENDERING_WEIGHT: f32 = 0.75;

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
/// chunks within `scope`. `ranker` holds the vocabulary cache the bridge
/// reads a Japanese request's terms with, as `query` does.
///
/// # Errors
/// Embedding or store errors.
pub async fn semantic_search(
    ranker: &super::Ranker,
    store: &Store,
    embedder: Arc<dyn Embedder>,
    query: &str,
    collection: Collection,
    limit: usize,
    scope: &Scope,
) -> Result<SemanticHits, RankError> {
    // A Japanese request ranks code by the mix `query` uses (its English
    // rendering, the bridge's words included); its own vector still brings
    // candidates (Japanese text, an app's own `lang/ja` strings, lies near
    // the request and far from its rendering). The map keeps the request's
    // own vector, which its threshold was calibrated on.
    let mut plan = super::plan::plan(query);
    let super::RequestVectors { own, rendering } = ranker
        .request_vectors(store, Some(&embedder), &mut plan, query)
        .await?;
    let vector = own.ok_or_else(|| EmbedError::Inference("no vector returned".into()))?;
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
        if let Some(en) = &rendering {
            let mut mixed = vector.clone();
            super::mix_rendering(&mut mixed, en, RENDERING_WEIGHT);
            let more = store.search_forest(&mixed, limit, scope).await?;
            hits = rescored_union(hits, more, &mixed, limit);
        }
        hits.retain(|h| !crate::store::says_little(&h.content));
        verbatim_first(&mut hits, query);
        hits
    };
    Ok(SemanticHits {
        results,
        map_results,
        short_circuit,
    })
}

/// The union of two searches' hits, one per chunk (file and lines), each
/// scored by its stored vector's dot product with `vector` (a unit vector,
/// as the stored ones are), best first, at most `limit`.
fn rescored_union(
    a: Vec<ForestHit>,
    b: Vec<ForestHit>,
    vector: &[f32],
    limit: usize,
) -> Vec<ForestHit> {
    let mut seen = std::collections::HashSet::new();
    let mut hits: Vec<ForestHit> = a
        .into_iter()
        .chain(b)
        .filter(|h| seen.insert((h.file.clone(), h.start_line, h.end_line)))
        .map(|mut h| {
            if h.vector.len() == vector.len() {
                h.score = h.vector.iter().zip(vector).map(|(x, y)| x * y).sum();
            }
            h
        })
        .collect();
    hits.sort_by(|x, y| y.score.total_cmp(&x.score));
    hits.truncate(limit);
    hits
}

/// Requests shorter than this (chars, trimmed) are not looked up verbatim:
/// a word or two occurs in too many chunks to say which one was meant.
const MIN_VERBATIM_CHARS: usize = 8;

/// Moves the hits whose content holds the whole request verbatim (trimmed,
/// at least [`MIN_VERBATIM_CHARS`]) ahead of the rest, order kept within
/// each group: a pasted message or sentence is a lookup, and the chunk that
/// says it beats the ones that only resemble it (the e2e fixture's
/// `注文をキャンセルしました`: its `lang/ja/messages.php` line against the
/// controller that cancels orders, 0.9018 against 0.9144 by an equal mix
/// of the request and its rendering).
fn verbatim_first(hits: &mut [ForestHit], query: &str) {
    let q = query.trim();
    if q.chars().count() >= MIN_VERBATIM_CHARS {
        hits.sort_by_key(|h| !h.content.contains(q));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::FileClass;

    fn hit(file: &str, score: f32, vector: Vec<f32>, content: &str) -> ForestHit {
        ForestHit {
            file: file.into(),
            class: FileClass::Source,
            start_line: 1,
            end_line: 9,
            language: "php".into(),
            kind: "method".into(),
            name: String::new(),
            scope: None,
            fqcn: None,
            signature: String::new(),
            content: content.into(),
            meta: crate::chunk::Facts::default(),
            related: Vec::new(),
            score,
            vector,
        }
    }

    #[test]
    fn both_searches_meet_on_one_scale_once_per_chunk() {
        // `a` scored by the request's own vector, `b` by the mix [0, 1].
        let a = vec![
            hit("ja.php", 0.9, vec![1.0, 0.0], ""),
            hit("both.php", 0.5, vec![0.6, 0.8], ""),
        ];
        let b = vec![
            hit("both.php", 0.8, vec![0.6, 0.8], ""),
            hit("en.php", 0.7, vec![0.0, 1.0], ""),
        ];
        let hits = rescored_union(a, b, &[0.0, 1.0], 2);
        let got: Vec<(&str, f32)> = hits.iter().map(|h| (h.file.as_str(), h.score)).collect();
        assert_eq!(got, [("en.php", 1.0), ("both.php", 0.8)]);
    }

    #[test]
    fn a_chunk_holding_the_whole_request_comes_first() {
        let mut hits = vec![
            hit(
                "OrderController.php",
                0.91,
                Vec::new(),
                "public function cancel(Order $order)",
            ),
            hit(
                "lang/ja/messages.php",
                0.90,
                Vec::new(),
                "'order_cancelled' => '注文をキャンセルしました',",
            ),
        ];
        verbatim_first(&mut hits, " 注文をキャンセルしました ");
        assert_eq!(hits[0].file, "lang/ja/messages.php");
        // Too short to be a lookup: the order stays as it was, though only
        // the controller holds the word.
        verbatim_first(&mut hits, "cancel");
        assert_eq!(hits[0].file, "lang/ja/messages.php");
    }
}
