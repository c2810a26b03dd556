//! The `query` pipeline: plan → bridge → full-text and vector searches →
//! file-level fusion → files with their best chunks.
//!
//! 1. [`plan::plan`] reads the request (identifiers, English keywords,
//!    Japanese terms through the seed glossary, framework kind hints).
//! 2. [`bridge`] maps the Japanese terms the glossary lacks to the
//!    repository's own words (reading and e5 cosine).
//! 3. Three searches run together: BM25 over `files` (path, definition
//!    names, content), BM25 over `forest` chunks, and the e5 vector search
//!    over `forest`.
//! 4. Every file any of them found gets [`fusion::Features`]; the fused
//!    score (fitted weights, class prior) orders them ([`fuse`]).
//! 5. One `graph::related` call over the best files gives the graph stage
//!    its features (when its weights are not zero, or with `explain`) and
//!    the reply its "also check" list ([`partners`]).
//! 6. Each returned file carries its best chunks.
//!
//! Nothing here knows MCP; `server`, the CLI (`code-intel query`) and the
//! benchmark call [`Ranker::answer`] and get the same [`QueryAnswer`].

pub mod bridge;
mod candidates;
pub mod dictionary;
mod fuse;
pub mod fusion;
pub mod named;
mod partners;
pub mod plan;
#[cfg(test)]
mod proptests;
pub mod quoted;
mod semantic;
pub mod value_check;
mod words;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use crate::classify::{self, FileClass};
use crate::embed::{EmbedError, Embedder};
use crate::graph::Related;
use crate::lexical;
use crate::store::{Bm25Query, Scope, Store, StoreError};

pub use crate::config::HybridWeights;
pub use fusion::Features;
pub use plan::{QueryPlan, stem};
pub use semantic::{Collection, SemanticHits, semantic_search};

/// Files the file-level BM25 search returns as candidates.
const FILE_CANDIDATES: usize = 100;
/// Chunks the chunk-level BM25 search returns.
const CHUNK_CANDIDATES: usize = 200;
/// Chunks the vector search returns.
const VECTOR_CANDIDATES: usize = 100;
/// Files whose chunks are read for the cosine backfill: read while the vector
/// search runs, before it is known which of them it reaches, so a few more
/// than the backfill's 30 (`candidates::COSINE_BACKFILL_FILES`).
const BACKFILL_READ_FILES: usize = 45;

/// Errors of the pipeline.
#[derive(Debug, thiserror::Error)]
pub enum RankError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("ranking worker failed: {0}")]
    Worker(String),
}

/// Files a default `query` reply shows, ranked and "also check" together
/// (tests apart): ranked files past the default `limit` of 10 fill the
/// slots "also check" leaves. Twenty is the reply size
/// the change-set benchmark holds replies to (bench/README.md § Change
/// sets). Replayed over its rows (build 938414c; the reply showed 15–18
/// files), filling to 20 found every file of a multi-file change more often
/// on the development parts (koel 0.273 → 0.295, BookStack 0.153 → 0.169,
/// filamentphp/demo 0.852 → 0.926; Japanese demo 0.400 → 0.500) and on the
/// frozen parts (koel 0.318 → 0.364, BookStack 0.296 → 0.407, Japanese
/// BookStack 0.286 → 0.357; demo unchanged); filling to 18 found less.
/// Measured after, the same sets (build 2f0a239): as replayed, except koel
/// (unchanged: within the 1,200-token text its lists reach 19.1 files of
/// 20) and Japanese demo (0.400 either way).
pub const REPLY_FILES: usize = 20;

/// Files a `query` ranks when the caller gives no `limit`.
pub const QUERY_LIMIT: usize = 10;

/// `(limit, fill_to)` of a [`QueryRequest`] for the `limit` a caller gave:
/// that many files exactly, or with none [`QUERY_LIMIT`] filled to
/// [`REPLY_FILES`].
pub fn limits(limit: Option<usize>) -> (usize, usize) {
    match limit {
        Some(n) => (n, 0),
        None => (QUERY_LIMIT, REPLY_FILES),
    }
}

/// One `query` call.
#[derive(Debug, Clone)]
pub struct QueryRequest {
    pub query: String,
    /// Files returned at most before [`QueryRequest::fill_to`] adds more.
    pub limit: usize,
    /// With a value, ranked files past `limit` are added while the files
    /// and "also check" together are fewer (a file "also check" lists is
    /// not added twice): [`REPLY_FILES`] when the caller gave no `limit`,
    /// 0 (`limit` files exactly) when it did.
    pub fill_to: usize,
    /// Best chunks returned per file.
    pub chunks_per_file: usize,
    pub scope: Scope,
    /// Classes the index does not embed (`index_exclude_classes`): a file
    /// of these without chunks is complete, not waiting for the sync.
    pub not_embedded: Vec<FileClass>,
    /// The repository root, where the request's quoted texts are looked
    /// for in the code graph's files ([`quoted`]); `None` leaves the
    /// `quoted` feature at 0.
    pub root: Option<std::path::PathBuf>,
}

/// A chunk of a returned file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileChunk {
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub kind: String,
    pub name: String,
    pub fqcn: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signature: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content: String,
    /// Framework facts (JSON object; left out when none).
    #[serde(skip_serializing_if = "crate::chunk::Facts::is_empty")]
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub meta: crate::chunk::Facts,
    /// Symbols the chunk points at (FQCNs, `table:…`, `route:…`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<String>,
    /// Cosine similarity to the request (0 when not compared).
    #[serde(serialize_with = "crate::util::round4")]
    pub cosine: f32,
    /// BM25 score of the chunk (0 when it matched no term).
    #[serde(serialize_with = "crate::util::round4")]
    pub bm25: f32,
}

/// Why a file ranked where it did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Why {
    #[serde(flatten)]
    pub features: Features,
    /// Raw best cosine of the file's chunks.
    #[serde(serialize_with = "crate::util::round4")]
    pub cosine: f32,
    /// The class prior applied (0 for source, or when the query asks for
    /// the class).
    #[serde(serialize_with = "crate::util::round4")]
    pub class_prior: f32,
    /// Why the file has its class.
    pub class_reason: String,
}

/// A ranked file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RankedFile {
    /// Repo-relative path.
    pub file: String,
    pub class: FileClass,
    /// The fused score the list is sorted by.
    #[serde(serialize_with = "crate::util::round4")]
    pub score: f32,
    pub why: Why,
    /// Its best chunks, best first.
    pub chunks: Vec<FileChunk>,
}

/// Milliseconds per stage, for the benchmark.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Timings {
    pub embed_ms: f64,
    pub search_ms: f64,
    pub fuse_ms: f64,
    pub total_ms: f64,
}

/// The whole answer to one `query` call: what the MCP reply, the CLI and
/// the benchmark lay out, each in its own way, without changing it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueryAnswer {
    pub plan: QueryPlan,
    /// The request's `limit` best first, and more as its `fill_to` allows.
    pub files: Vec<RankedFile>,
    /// What the change likely needs besides `files`: code-graph neighbours
    /// and co-change partners of the best files, counterparts and files
    /// several listed files share (empty without a code graph).
    pub also_check: Vec<Related>,
    /// The tests that exercise `files` and `also_check`
    /// ([`crate::graph::tests_for`]), which the change likely updates;
    /// tests take none of the slots above unless the request asks for
    /// tests.
    pub tests: Vec<Related>,
    /// Classes the request asks for (not ranked below source).
    pub requested_classes: Vec<FileClass>,
    pub timings: Timings,
    /// Every candidate with its features (for `bench/fit.py`; empty unless
    /// asked for).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<(String, FileClass, Features)>,
}

/// The pipeline with what it caches between calls (the vocabulary, which
/// chunk kinds the index holds).
#[derive(Default)]
pub struct Ranker {
    /// (rows of `vocab` when loaded, the vocabulary).
    vocabulary: Mutex<Option<(usize, Arc<bridge::Vocabulary>)>>,
    /// (rows of `forest` when asked, kind → whether a chunk has it).
    kinds: Mutex<(usize, HashMap<String, bool>)>,
}

/// A request's vectors ([`Ranker::request_vectors`]): its own, and its
/// English rendering's when it is Japanese.
pub(crate) struct RequestVectors {
    pub own: Option<Vec<f32>>,
    pub rendering: Option<Vec<f32>>,
}

impl Ranker {
    /// The vocabulary of the current index, reloaded when `vocab` changed.
    async fn vocabulary(&self, store: &Store) -> Result<Arc<bridge::Vocabulary>, RankError> {
        let rows = store.vocab_rows().await?;
        if let Some((n, v)) = self
            .vocabulary
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            && *n == rows
        {
            return Ok(Arc::clone(v));
        }
        let vocab = Arc::new(bridge::Vocabulary::new(store.vocab_vectors().await?));
        *self.vocabulary.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((rows, Arc::clone(&vocab)));
        Ok(vocab)
    }

    /// Keeps the plan's kind hints the index has chunks of: no Filament
    /// hints in an application without Filament.
    async fn keep_present_kinds(
        &self,
        store: &Store,
        plan: &mut QueryPlan,
    ) -> Result<(), RankError> {
        if plan.kind_hints.is_empty() {
            return Ok(());
        }
        let rows = store.forest_rows().await?;
        let mut keep = Vec::new();
        for kind in std::mem::take(&mut plan.kind_hints) {
            let known = {
                let mut cache = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
                if cache.0 != rows {
                    *cache = (rows, HashMap::new());
                }
                cache.1.get(&kind).copied()
            };
            let present = match known {
                Some(p) => p,
                None => {
                    let p = store.has_kind(&kind).await?;
                    let mut cache = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
                    if cache.0 == rows {
                        cache.1.insert(kind.clone(), p);
                    }
                    p
                }
            };
            if present {
                keep.push(kind);
            }
        }
        plan.kind_hints = keep;
        Ok(())
    }

    /// The request's e5 query vector and, for a Japanese request, its
    /// English rendering's ([`plan::QueryPlan::english_rendering`]), after
    /// the general dictionary and the bridge have read into `plan` the terms
    /// the glossary left (the repository's vocabulary). Both `None` without
    /// an embedder.
    ///
    /// # Errors
    /// Store or embedding errors.
    pub(crate) async fn request_vectors(
        &self,
        store: &Store,
        embedder: Option<&Arc<dyn Embedder>>,
        plan: &mut QueryPlan,
        query: &str,
    ) -> Result<RequestVectors, RankError> {
        // The general dictionary reads what the glossary left; its terms
        // keep the words the repository uses, and one left with none joins
        // the bridge's terms.
        // The vocabulary is loaded at most once, for this and the bridge.
        plan.read_dictionary(query, dictionary::dictionary());
        let mut vocab = None;
        if plan
            .translated
            .iter()
            .any(|t| t.via == plan::TranslationSource::Dictionary)
        {
            if embedder.is_some() {
                vocab = Some(self.vocabulary(store).await?);
            }
            match vocab.as_ref().filter(|v| !v.is_empty()) {
                Some(v) => plan.keep_dictionary_words(query, Some(&|w: &str| v.knows(w))),
                None => plan.keep_dictionary_words(query, None),
            }
        }
        // One model call for the request, the terms for the bridge (those
        // the glossary and the dictionary left, the compounds the glossary
        // took a word from) and the pieces of the katakana ones that may be
        // read as words.
        let mut terms = plan.untranslated.clone();
        terms.extend(plan.compounds.iter().map(|(run, _)| run.clone()));
        let pieces = bridge::compound_pieces(&terms);
        // A Japanese request the glossary read whole has its English
        // rendering now, and it joins the same call.
        let early_rendering = terms
            .is_empty()
            .then(|| plan.english_rendering(query))
            .flatten();
        let mut texts = vec![query.to_string()];
        texts.extend(terms.iter().cloned());
        texts.extend(pieces.iter().cloned());
        texts.extend(early_rendering.iter().cloned());
        let mut vectors = match embedder {
            Some(emb) => embed_blocking(emb, texts).await?,
            None => Vec::new(),
        };
        let mut rendering = early_rendering.and_then(|_| vectors.pop());
        let own = (!vectors.is_empty()).then(|| vectors.remove(0));
        if let (Some(emb), true) = (embedder, own.is_some() && !terms.is_empty()) {
            let vocab = match vocab {
                Some(v) => v,
                None => self.vocabulary(store).await?,
            };
            let piece_vectors: HashMap<String, Vec<f32>> = pieces
                .into_iter()
                .zip(vectors.split_off(terms.len()))
                .collect();
            let found = vocab.translate(&terms, &vectors, &piece_vectors);
            plan.add_translations(query, found);
            if let Some(en) = plan.english_rendering(query) {
                rendering = embed_blocking(emb, vec![en]).await?.pop();
            }
        }
        Ok(RequestVectors { own, rendering })
    }

    /// Runs the pipeline. With `explain`, [`QueryAnswer::candidates`] lists every
    /// candidate file with its features. Without an embedder (the model is
    /// loading or unavailable) the ranking is lexical: the full-text and name
    /// signals only, Japanese words through the glossary alone, every cosine
    /// feature zero.
    ///
    /// # Errors
    /// Store or embedding errors.
    pub async fn answer(
        &self,
        store: &Store,
        embedder: Option<Arc<dyn Embedder>>,
        weights: &HybridWeights,
        req: &QueryRequest,
        graph: Option<&crate::index::CodeGraph>,
        explain: bool,
    ) -> Result<QueryAnswer, RankError> {
        let started = Instant::now();
        let mut plan = plan::plan(&req.query);
        let RequestVectors { own, rendering } = self
            .request_vectors(store, embedder.as_ref(), &mut plan, &req.query)
            .await?;
        let mut query_vector = own;
        if let (Some(q), Some(en)) = (query_vector.as_mut(), rendering) {
            mix_rendering(q, &en, RENDERING_WEIGHT);
        }
        let embed_ms = started.elapsed().as_secs_f64() * 1000.0;
        self.keep_present_kinds(store, &mut plan).await?;

        let text = text_query(&plan);
        let t = Instant::now();
        // The backfill's chunks are read as soon as the file ranking is
        // known, while the (slower) vector search runs.
        let files_and_backfill = async {
            let files = store
                .search_files(&text, FILE_CANDIDATES, &req.scope)
                .await?;
            let mut top: Vec<&crate::store::FileHit> = files.iter().collect();
            top.sort_by(|a, b| b.score.total_cmp(&a.score));
            let read: Vec<String> = top
                .iter()
                .take(BACKFILL_READ_FILES)
                .map(|f| f.file.clone())
                .collect();
            let chunks = store.chunks_of_files(&read, 5_000).await?;
            Ok::<_, StoreError>((files, read, chunks))
        };
        let nearest = async {
            match &query_vector {
                Some(v) => store.search_forest(v, VECTOR_CANDIDATES, &req.scope).await,
                None => Ok(Vec::new()),
            }
        };
        let (files_and_backfill, chunks, nearest) = tokio::join!(
            files_and_backfill,
            store.search_chunks_text(&text, CHUNK_CANDIDATES, &req.scope),
            nearest,
        );
        let ((files, read, read_chunks), chunks, nearest) =
            (files_and_backfill?, chunks?, nearest?);

        let mut cands = candidates::candidates(
            files,
            chunks,
            nearest,
            &read,
            read_chunks,
            query_vector.as_deref(),
        );
        if let (Some(root), Some(g)) = (&req.root, graph) {
            let phrases = quoted::phrases(&req.query);
            // A file only the quoted text found joins the candidates when
            // the search is not scoped (its class or path is not checked).
            let add = req.scope.is_everything();
            for (file, score) in quoted::quoted_files(root, g.graph.files(), &phrases) {
                if let Some(c) = cands.get_mut(&file) {
                    c.quoted = score;
                } else if add {
                    cands.entry(file).or_default().quoted = score;
                }
            }
            // Likewise the controllers of the routes it names by URL.
            for file in plan.named_urls.iter().flat_map(|u| g.graph.url_files(u)) {
                if let Some(c) = cands.get_mut(&file) {
                    c.routed = true;
                } else if add {
                    cands.entry(file).or_default().routed = true;
                }
            }
        }
        for f in &read {
            if let Some(c) = cands.get_mut(f) {
                c.strong = true;
                c.pending =
                    c.chunks.is_empty() && !c.class.is_some_and(|k| req.not_embedded.contains(&k));
            }
        }
        let search_ms = t.elapsed().as_secs_f64() * 1000.0;

        let t = Instant::now();
        let requested = classify::requested_classes(&req.query);
        let fusion = fuse::Fusion {
            plan: &plan,
            weights,
            requested: &requested,
            req,
            history: graph.map(|g| &g.history),
        };
        let mut ranked = fuse::fuse(&fusion, cands);
        // One `graph::related` call serves the graph stage and "also check".
        let related = graph.map(|g| partners::seed_partners(g, &ranked, req.limit));
        if let Some(r) = &related
            && (explain || weights.graph != 0.0 || weights.cochange != 0.0)
        {
            partners::graph_stage(
                &mut ranked,
                r,
                weights,
                &requested,
                req.scope.is_everything(),
            );
        }
        let candidates = if explain {
            ranked
                .iter()
                .map(|f| (f.file.clone(), f.class, f.why.features.clone()))
                .collect()
        } else {
            Vec::new()
        };
        // Tests take slots when the request asks for them, in words or by
        // the `kinds` it restricts the search to.
        let slots_for_tests =
            requested.contains(&FileClass::Test) || req.scope.classes.contains(&FileClass::Test);
        if !slots_for_tests {
            ranked.retain(|f| f.class != FileClass::Test);
        }
        // One copy of a translation file: an application with two source
        // locales (`resources/lang/en-GB/bills.php` and `en-US/bills.php`:
        // akaunting, Cachet) had both copies take adjacent slots in trial
        // replies (bench/README.md § Honest agent trial).
        let mut translations = HashSet::new();
        ranked.retain(|f| translation_group(&f.file).is_none_or(|g| translations.insert(g)));
        let rest = ranked.split_off(req.limit.min(ranked.len()));
        let mut also_check = match (graph, &related) {
            (Some(g), Some(r)) => partners::also_check(g, r, &ranked),
            _ => Vec::new(),
        };
        if !slots_for_tests {
            also_check.retain(|f| f.class != FileClass::Test);
        }
        also_check.retain(|f| translation_group(&f.file).is_none_or(|g| translations.insert(g)));
        fill(&mut ranked, rest, &also_check, req.fill_to);
        let tests = graph
            .map(|g| partners::tests(g, &ranked, &also_check))
            .unwrap_or_default();
        if let Some(g) = graph {
            for c in ranked.iter_mut().flat_map(|f| f.chunks.iter_mut()) {
                c.related = g.graph.existing_related(&c.related);
            }
        }
        let fuse_ms = t.elapsed().as_secs_f64() * 1000.0;
        Ok(QueryAnswer {
            plan,
            files: ranked,
            also_check,
            tests,
            requested_classes: requested,
            timings: Timings {
                embed_ms,
                search_ms,
                fuse_ms,
                total_ms: started.elapsed().as_secs_f64() * 1000.0,
            },
            candidates,
        })
    }
}

/// A translation file's path with its locale as `*`
/// (`resources/lang/en-GB/bills.php` → `resources/lang/*/bills.php`,
/// `lang/en.json` → `lang/*.json`): the same for each locale's copy.
fn translation_group(rel: &str) -> Option<String> {
    let locale = classify::translation_locale(rel)?;
    Some(rel.replacen(&format!("/{locale}"), "/*", 1))
}

/// Adds the next of `rest` (ranked files past the limit, best first) to
/// `ranked` while `ranked` and `also` together hold fewer than `fill_to`
/// files, skipping the files `also` lists.
fn fill(ranked: &mut Vec<RankedFile>, rest: Vec<RankedFile>, also: &[Related], fill_to: usize) {
    for f in rest {
        if ranked.len() + also.len() >= fill_to {
            break;
        }
        if !also.iter().any(|a| a.file == f.file) {
            ranked.push(f);
        }
    }
}

/// Share of a Japanese request's English rendering
/// ([`plan::QueryPlan::english_rendering`]) in its query vector; the
/// request's own vector has the rest. The equal mix, not fitted: on the
/// Japanese sets of `bench/sets` (`bench/run.sh retrieval … --ja`, the table
/// in `bench/README.md` § Retrieval) the rendering alone lost MRR
/// (BookStack 0.597 → 0.532), 0.35 and 0.5 differed by a request here or
/// there, and 0.5 shared the most top-5 files with the English request.
const RENDERING_WEIGHT: f32 = 0.5;

/// `q` ← the unit vector of `(1 − w)·q + w·en`, `w` the rendering's
/// weight ([`RENDERING_WEIGHT`] in `query`, [`semantic::RENDERING_WEIGHT`]
/// in `semantic_search`); both are unit vectors of the same model.
pub(crate) fn mix_rendering(q: &mut [f32], en: &[f32], w: f32) {
    for (a, b) in q.iter_mut().zip(en) {
        *a = (1.0 - w) * *a + w * b;
    }
    let norm = q.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        q.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Embeds `texts` as queries off the async runtime (ONNX Runtime inference
/// is CPU-bound and blocking).
async fn embed_blocking(
    emb: &Arc<dyn Embedder>,
    texts: Vec<String>,
) -> Result<Vec<Vec<f32>>, RankError> {
    let emb = emb.clone();
    Ok(
        tokio::task::spawn_blocking(move || emb.embed_queries(&texts))
            .await
            .map_err(|e| RankError::Worker(e.to_string()))??,
    )
}

/// The full-text query of a plan: the request's own words and identifiers
/// (weight 1), then each translated word with its weight.
pub fn text_query(plan: &QueryPlan) -> Bm25Query {
    let mut own = String::new();
    for w in plan.english.iter().chain(&plan.identifiers) {
        lexical::terms_into(w, &mut own);
    }
    let mut groups = vec![(own, 1.0)];
    let mut seen: HashSet<&str> = HashSet::new();
    for t in &plan.translated {
        for (w, weight) in &t.words {
            if seen.insert(w.as_str()) {
                groups.push((lexical::terms(w), *weight));
            }
        }
    }
    Bm25Query { groups }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> RankedFile {
        RankedFile {
            file: name.into(),
            class: FileClass::Source,
            score: 0.0,
            why: Why {
                features: Features::default(),
                cosine: 0.0,
                class_prior: 0.0,
                class_reason: String::new(),
            },
            chunks: Vec::new(),
        }
    }

    fn also(name: &str) -> Related {
        Related {
            file: name.into(),
            class: FileClass::Source,
            score: 1.0,
            edge_score: 1.0,
            edges: Vec::new(),
            cochange: None,
            cochange_commits: None,
        }
    }

    fn names(files: &[RankedFile]) -> Vec<&str> {
        files.iter().map(|f| f.file.as_str()).collect()
    }

    /// "Also check" names a model's policy but not its existing
    /// migration, though the code graph ties both to it (a change to the
    /// table adds a migration; bench/README.md § Change sets).
    #[test]
    fn also_check_names_no_existing_migration() {
        use crate::graph::facts::FileFacts;
        let model = "app/Models/Order.php";
        let migration = "database/migrations/2024_01_01_000000_create_orders_table.php";
        let policy = "app/Policies/OrderPolicy.php";
        let facts: std::collections::BTreeMap<String, FileFacts> = [
            (
                model,
                FileFacts {
                    defines: vec!["App\\Models\\Order".into()],
                    tables: vec!["orders".into()],
                    ..Default::default()
                },
            ),
            (
                migration,
                FileFacts {
                    tables: vec!["orders".into()],
                    ..Default::default()
                },
            ),
            (
                policy,
                FileFacts {
                    defines: vec!["App\\Policies\\OrderPolicy".into()],
                    ..Default::default()
                },
            ),
        ]
        .into_iter()
        .map(|(f, x)| (f.to_string(), x))
        .collect();
        let files = facts.keys().cloned().collect();
        let g = crate::index::CodeGraph {
            graph: crate::graph::Graph::build(&facts, &files),
            history: Default::default(),
        };
        let partners = crate::graph::related(&g.graph, None, &[model.to_string()], 30);
        let related: Vec<&str> = partners.iter().map(|r| r.file.as_str()).collect();
        assert!(
            related.contains(&migration) && related.contains(&policy),
            "{related:?}"
        );
        let also = partners::also_check(&g, &partners, &[file(model)]);
        let also: Vec<&str> = also.iter().map(|r| r.file.as_str()).collect();
        assert!(
            also.contains(&policy) && !also.contains(&migration),
            "{also:?}"
        );
    }

    /// Ranked files past the limit fill what "also check" leaves of the
    /// reply, in rank order, never repeating a file "also check" lists; a
    /// caller's own limit (fill_to 0) gets that many files exactly.
    #[test]
    fn ranked_files_fill_the_slots_also_check_leaves() {
        let rest = || vec![file("d"), file("e"), file("f"), file("g")];
        let mut ranked = vec![file("a"), file("b")];
        fill(&mut ranked, rest(), &[also("x"), also("e")], 5);
        assert_eq!(names(&ranked), ["a", "b", "d"]);
        let mut ranked = vec![file("a"), file("b")];
        fill(&mut ranked, rest(), &[also("e")], 5);
        assert_eq!(names(&ranked), ["a", "b", "d", "f"]);
        let mut ranked = vec![file("a"), file("b")];
        fill(&mut ranked, rest(), &[], 0);
        assert_eq!(names(&ranked), ["a", "b"]);
        assert_eq!(limits(None), (QUERY_LIMIT, REPLY_FILES));
        assert_eq!(limits(Some(3)), (3, 0));
    }

    /// Each locale's copy of a translation file has one group.
    #[test]
    fn translation_copies_share_a_group() {
        let g = |f| translation_group(f);
        assert_eq!(
            g("resources/lang/en-GB/bills.php"),
            g("resources/lang/en-US/bills.php")
        );
        assert_eq!(
            g("resources/lang/en-GB/bills.php").as_deref(),
            Some("resources/lang/*/bills.php")
        );
        assert_eq!(g("lang/en.json").as_deref(), Some("lang/*.json"));
        assert_ne!(g("lang/en/auth.php"), g("lang/en/bills.php"));
        assert_eq!(g("app/Models/Bill.php"), None);
    }
}
