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
//!    score (fitted weights, class prior) orders them.
//! 5. Each returned file carries its best chunks.
//!
//! Nothing here knows MCP; `server` and the CLI call [`Ranker::run`].

pub mod bridge;
pub mod fusion;
pub mod plan;
mod semantic;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use crate::chunk::split_identifier;
use crate::classify::{self, FileClass};
use crate::embed::{EmbedError, Embedder};
use crate::lexical;
use crate::store::{Bm25Query, ForestHit, Scope, Store, StoreError};

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
/// Top lexical files whose chunks get a cosine even when the vector search
/// did not reach them (their vectors are read and compared).
const COSINE_BACKFILL_FILES: usize = 30;
/// Files whose chunks are read for that backfill: read while the vector
/// search runs, before it is known which of them it reaches, so a few more
/// than [`COSINE_BACKFILL_FILES`].
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

/// One `query` call.
#[derive(Debug, Clone)]
pub struct Request {
    pub query: String,
    /// Files returned at most.
    pub limit: usize,
    /// Best chunks returned per file.
    pub chunks_per_file: usize,
    pub scope: Scope,
    /// Classes the index does not embed (`index_exclude_classes`): a file
    /// of these without chunks is complete, not waiting for the sync.
    pub not_embedded: Vec<FileClass>,
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
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub meta: serde_json::Map<String, serde_json::Value>,
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

/// The result of one `query` call.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Ranking {
    pub plan: QueryPlan,
    pub files: Vec<RankedFile>,
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

/// What a search found for one file.
#[derive(Default)]
struct Candidate {
    class: Option<FileClass>,
    class_reason: String,
    file_bm25: f32,
    chunks: Vec<ForestHit>,
    /// Chunk index → (BM25, cosine) by chunk identity.
    scores: HashMap<ChunkKey, (f32, f32)>,
    /// A lexically strong file (among the backfill's reads) of an embedded
    /// class with no chunk in the index: the sync has indexed its words,
    /// not yet its chunks and vectors.
    pending: bool,
    /// Among the backfill's reads (the lexically strongest files).
    strong: bool,
}

type ChunkKey = (u32, u32, String);

impl Candidate {
    /// Records a chunk's cosine; the chunk joins the candidate's chunks
    /// unless a search already brought it (every chunk in `chunks` has an
    /// entry in `scores`).
    fn add_cosine(&mut self, h: ForestHit, cos: f32) {
        match self.scores.entry(key(&h)) {
            std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().1 = cos,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((0.0, cos));
                self.chunks.push(h);
            }
        }
    }
}

fn key(h: &ForestHit) -> ChunkKey {
    (h.start_line, h.end_line, h.name.clone())
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
    /// hints in an application without Filament (issue 24 § 4).
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
    /// the bridge has read into `plan` the terms the glossary left (the
    /// repository's vocabulary). Both `None` without an embedder.
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
        // One model call for the request, the terms for the bridge (those
        // the glossary left, the compounds it took a word from) and the
        // pieces of the katakana ones that may be read as words.
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
            let vocab = self.vocabulary(store).await?;
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

    /// Runs the pipeline. With `explain`, [`Ranking::candidates`] lists every
    /// candidate file with its features. Without an embedder (the model is
    /// loading or unavailable) the ranking is lexical: the full-text and name
    /// signals only, Japanese words through the glossary alone, every cosine
    /// feature zero.
    ///
    /// # Errors
    /// Store or embedding errors.
    pub async fn run(
        &self,
        store: &Store,
        embedder: Option<Arc<dyn Embedder>>,
        weights: &HybridWeights,
        req: &Request,
        graph: Option<&crate::index::CodeGraph>,
        explain: bool,
    ) -> Result<Ranking, RankError> {
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

        let mut cands = candidates(
            files,
            chunks,
            nearest,
            &read,
            read_chunks,
            query_vector.as_deref(),
        );
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
        let mut ranked = fuse(&plan, cands, weights, &requested, req, graph, explain);
        let candidates = std::mem::take(&mut ranked.1);
        let fuse_ms = t.elapsed().as_secs_f64() * 1000.0;
        Ok(Ranking {
            plan,
            files: ranked.0,
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

/// Candidate files from the file-level BM25 hits, the chunk-level BM25 hits
/// and the vector search; lexically strong files (`read`, best first) the
/// vector search did not reach get the cosine of their stored chunk vectors
/// (`read_chunks`) with the query (when there is a query vector: a lexical
/// ranking gives them their chunks for the reply and no cosine).
fn candidates(
    files: Vec<crate::store::FileHit>,
    chunks: Vec<ForestHit>,
    nearest: Vec<ForestHit>,
    read: &[String],
    read_chunks: Vec<ForestHit>,
    query_vector: Option<&[f32]>,
) -> HashMap<String, Candidate> {
    let mut cands: HashMap<String, Candidate> = HashMap::new();
    for f in files {
        let c = cands.entry(f.file).or_default();
        c.file_bm25 = f.score;
        c.class = Some(f.class);
        c.class_reason = f.reason;
    }
    for h in chunks {
        let c = cands.entry(h.file.clone()).or_default();
        c.scores.entry(key(&h)).or_insert((0.0, 0.0)).0 = h.score;
        c.class.get_or_insert(h.class);
        c.chunks.push(h);
    }
    for h in nearest
        .into_iter()
        .filter(|h| !crate::store::says_little(&h.content))
    {
        let c = cands.entry(h.file.clone()).or_default();
        c.class.get_or_insert(h.class);
        let cos = h.score;
        c.add_cosine(h, cos);
    }
    let backfill: HashSet<&String> = read
        .iter()
        .filter(|f| {
            cands
                .get(*f)
                .is_none_or(|c| c.scores.values().all(|s| s.1 == 0.0))
        })
        .take(COSINE_BACKFILL_FILES)
        .collect();
    let backfill: HashSet<String> = backfill.into_iter().cloned().collect();
    for h in read_chunks
        .into_iter()
        .filter(|h| backfill.contains(&h.file) && !crate::store::says_little(&h.content))
    {
        let cos = query_vector.map_or(0.0, |q| crate::relevance::cosine(q, &h.vector));
        cands.entry(h.file.clone()).or_default().add_cosine(h, cos);
    }
    cands
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

/// Stemmed words of an identifier or path.
fn stems_of(text: &str) -> HashSet<String> {
    split_identifier(text)
        .split_whitespace()
        .map(stem)
        .collect()
}

/// What scores are normalised by, over all candidates of one request.
struct Norms {
    /// Stemmed keywords of the plan.
    keywords: HashSet<String>,
    /// Identifiers of the request, unqualified.
    identifiers: HashSet<String>,
    /// Best file-level BM25.
    max_file: f32,
    /// Best chunk-level BM25.
    max_chunk: f32,
    /// Lowest positive cosine and the spread to the highest.
    lo: f32,
    spread: f32,
}

impl Norms {
    fn new(plan: &QueryPlan, cands: &HashMap<String, Candidate>) -> Norms {
        let (lo, hi) = cands
            .values()
            .flat_map(|c| c.scores.values().map(|s| s.1).filter(|c| *c > 0.0))
            .fold((f32::MAX, f32::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
        Norms {
            keywords: plan.keywords.iter().map(|k| stem(k)).collect(),
            identifiers: plan
                .identifiers
                .iter()
                .map(|i| crate::search::symbols::split_qualified(i).1)
                .collect(),
            max_file: cands.values().map(|c| c.file_bm25).fold(0.0f32, f32::max),
            max_chunk: cands
                .values()
                .flat_map(|c| c.scores.values().map(|s| s.0))
                .fold(0.0f32, f32::max),
            lo,
            spread: (hi - lo).max(1e-6),
        }
    }

    /// Share of the keywords among `words` (0-1).
    fn share(&self, words: &HashSet<String>) -> f32 {
        if self.keywords.is_empty() {
            return 0.0;
        }
        self.keywords.iter().filter(|k| words.contains(*k)).count() as f32
            / self.keywords.len() as f32
    }

    /// A chunk's normalised BM25, normalised cosine, definition match and
    /// raw cosine.
    fn chunk(&self, c: &Candidate, h: &ForestHit) -> (f32, f32, f32, f32) {
        let (bm25, cos) = c.scores.get(&key(h)).copied().unwrap_or((0.0, 0.0));
        let b = if self.max_chunk > 0.0 {
            bm25 / self.max_chunk
        } else {
            0.0
        };
        let v = if cos > 0.0 {
            ((cos - self.lo) / self.spread).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let own = match &h.scope {
            Some(s) if h.kind == "method" || h.kind.contains('_') => format!("{s} {}", h.name),
            _ => h.name.clone(),
        };
        let def = if matches!(h.kind.as_str(), "module" | "window") {
            0.0
        } else {
            self.share(&stems_of(&own))
        };
        (b, v, def, cos)
    }
}

/// Scores every candidate, returns the best `req.limit` files with their
/// best chunks, and (with `explain`) every candidate's features.
fn fuse(
    plan: &QueryPlan,
    cands: HashMap<String, Candidate>,
    weights: &HybridWeights,
    requested: &[FileClass],
    req: &Request,
    graph: Option<&crate::index::CodeGraph>,
    explain: bool,
) -> (Vec<RankedFile>, Vec<(String, FileClass, Features)>) {
    let norms = Norms::new(plan, &cands);
    let pending: HashSet<String> = cands
        .iter()
        .filter(|(_, c)| c.pending)
        .map(|(f, _)| f.clone())
        .collect();
    let strong = cands.values().filter(|c| c.strong).count();
    let coverage = if strong == 0 {
        1.0
    } else {
        1.0 - pending.len() as f32 / strong as f32
    };
    let mut scored: Vec<(f32, RankedFile, Features)> = cands
        .into_iter()
        .map(|(file, c)| score_file(file, &c, &norms, plan, weights, requested, req))
        .collect();
    impute_pending(&mut scored, &pending, coverage, weights, requested);
    let by_score = |a: &(f32, RankedFile, Features), b: &(f32, RankedFile, Features)| {
        b.0.total_cmp(&a.0).then_with(|| a.1.file.cmp(&b.1.file))
    };
    scored.sort_by(by_score);
    if let Some(g) = graph
        && (explain || weights.graph != 0.0 || weights.cochange != 0.0)
    {
        graph_stage(&mut scored, g, weights, requested);
        scored.sort_by(by_score);
    }
    let explained = if explain {
        scored
            .iter()
            .map(|(_, f, feat)| (f.file.clone(), f.class, feat.clone()))
            .collect()
    } else {
        Vec::new()
    };
    let files = scored
        .into_iter()
        .take(req.limit)
        .map(|(_, f, _)| f)
        .collect();
    (files, explained)
}

/// Files the sync has not embedded yet (their words are indexed, their
/// chunks and vectors not: a cold or large sync's lexical pass, issue 25
/// § 1) would rank below every embedded file, for lack of the chunk-level
/// features, and a feature normalised over the few files that have chunks
/// overstates how well those match. So, while some are pending: a pending
/// file's chunk BM25 is its file BM25, and each feature only chunks give
/// ([`CHUNK_FEATURES`]: vector, support, definition, kind) is `m`, the value
/// a [`Line`] fitted on the lexically matched embedded files expects at the
/// file's keyword score (their mean with fewer than three; 0 when none
/// are: a lexical ranking); an embedded file's value `v` is shrunk to
/// `m + (v − m) · coverage`, `coverage` being the embedded share of the
/// lexically strongest files. With a complete index nothing is pending and
/// nothing changes. Measured with `bench/run.sh coldstart` (koel, 10 later
/// commits, 20 s after start, 16 of 1,548 files embedded): recall@10 0.00
/// without any of this, 0.14 with the vector imputation alone. On
/// laravel/framework `src/` with 80 of 1,740 files embedded (20 later
/// commits, BM25 baseline 0.600), imputing the vector alone gave 0.542:
/// the embedded files' support, definition and kind features still lifted
/// them over pending files that match as well; all four: 0.617.
fn impute_pending(
    scored: &mut [(f32, RankedFile, Features)],
    pending: &HashSet<String>,
    coverage: f32,
    weights: &HybridWeights,
    requested: &[FileClass],
) {
    if pending.is_empty() {
        return;
    }
    let mut embedded: Vec<Features> = scored
        .iter()
        .filter(|s| !pending.contains(&s.1.file) && s.2.keyword > 0.0)
        .map(|s| s.2.clone())
        .collect();
    let keywords: Vec<f32> = embedded.iter().map(|f| f.keyword).collect();
    let lines = CHUNK_FEATURES.map(|get| {
        let values: Vec<f32> = embedded.iter_mut().map(|f| *get(f)).collect();
        Line::fit(&keywords, &values)
    });
    for (score, file, features) in scored.iter_mut() {
        let is_pending = pending.contains(&file.file);
        if is_pending {
            features.chunk_keyword = features.keyword;
        }
        let keyword = features.keyword;
        for (get, line) in CHUNK_FEATURES.iter().zip(&lines) {
            let expected = line.at(keyword);
            let value = get(features);
            *value = if is_pending {
                expected
            } else {
                expected + (*value - expected) * coverage
            };
        }
        *score = features.score(weights, file.class, requested.contains(&file.class));
        file.score = *score;
        file.why.features = features.clone();
    }
}

/// A least-squares line `y = a + b·x` with `b ≥ 0` (a feature is not
/// expected to fall as the file's words match better), read back clamped
/// to 0–1; the mean of `y` when the points cannot fit a line, 0 without
/// points.
struct Line {
    a: f32,
    b: f32,
}

impl Line {
    fn fit(x: &[f32], y: &[f32]) -> Line {
        let n = x.len() as f32;
        if x.is_empty() {
            return Line { a: 0.0, b: 0.0 };
        }
        let (mx, my) = (x.iter().sum::<f32>() / n, y.iter().sum::<f32>() / n);
        let sxx: f32 = x.iter().map(|v| (v - mx) * (v - mx)).sum();
        let sxy: f32 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
        let b = if x.len() >= 3 && sxx > 1e-6 {
            (sxy / sxx).max(0.0)
        } else {
            0.0
        };
        Line { a: my - b * mx, b }
    }

    fn at(&self, x: f32) -> f32 {
        (self.a + self.b * x).clamp(0.0, 1.0)
    }
}

/// The features only a file's chunks give (a pending file has none yet).
const CHUNK_FEATURES: [fn(&mut Features) -> &mut f32; 4] = [
    |f| &mut f.vector,
    |f| &mut f.support,
    |f| &mut f.definition,
    |f| &mut f.kind,
];

/// Files the first stage ranks best, whose graph neighbours and co-change
/// partners get the `graph` and `cochange` features.
const GRAPH_SEEDS: usize = 3;

/// The second stage: every candidate's edges to and co-change with the
/// best [`GRAPH_SEEDS`] files enter its score; neighbours that were not
/// candidates join with those features alone (no chunk matched them).
fn graph_stage(
    scored: &mut Vec<(f32, RankedFile, Features)>,
    g: &crate::index::CodeGraph,
    weights: &HybridWeights,
    requested: &[FileClass],
) {
    let seeds: Vec<String> = scored
        .iter()
        .take(GRAPH_SEEDS)
        .map(|s| s.1.file.clone())
        .collect();
    let related = crate::graph::related(&g.graph, Some(&g.history), &seeds, 50);
    let mut index: HashMap<String, usize> = scored
        .iter()
        .enumerate()
        .map(|(i, s)| (s.1.file.clone(), i))
        .collect();
    for r in related {
        let i = match index.get(&r.file) {
            Some(&i) => i,
            None => {
                let class = classify::classify_path(&r.file);
                scored.push((
                    0.0,
                    RankedFile {
                        file: r.file.clone(),
                        class: class.class,
                        score: 0.0,
                        why: Why {
                            features: Features::default(),
                            cosine: 0.0,
                            class_prior: 0.0,
                            class_reason: class.reason,
                        },
                        chunks: Vec::new(),
                    },
                    Features::default(),
                ));
                index.insert(r.file.clone(), scored.len() - 1);
                scored.len() - 1
            }
        };
        let (score, file, features) = &mut scored[i];
        features.graph = r.edge_score.min(1.0);
        features.cochange = r.cochange.unwrap_or(0.0);
        let asked = requested.contains(&file.class);
        *score = features.score(weights, file.class, asked);
        file.score = *score;
        file.why.features = features.clone();
        if !asked {
            file.why.class_prior =
                weights.class_prior.get(&file.class).copied().unwrap_or(0.0) as f32;
        }
    }
}

/// One candidate file's features, fused score and best chunks.
fn score_file(
    file: String,
    c: &Candidate,
    norms: &Norms,
    plan: &QueryPlan,
    weights: &HybridWeights,
    requested: &[FileClass],
    req: &Request,
) -> (f32, RankedFile, Features) {
    let class = c
        .class
        .unwrap_or_else(|| classify::classify_path(&file).class);
    let class_reason = if c.class_reason.is_empty() {
        classify::classify_path(&file).reason
    } else {
        c.class_reason.clone()
    };
    // Per chunk: normalised BM25 and cosine, and the definition match.
    let mut chunk_scores: Vec<(f32, f32, f32, f32, &ForestHit)> = c
        .chunks
        .iter()
        .map(|h| {
            let (b, v, def, cos) = norms.chunk(c, h);
            (b, v, def, cos, h)
        })
        .collect();
    chunk_scores.sort_by(|a, b| (b.0 + b.1 + 0.5 * b.2).total_cmp(&(a.0 + a.1 + 0.5 * a.2)));
    let best = |f: fn(&(f32, f32, f32, f32, &ForestHit)) -> f32| {
        chunk_scores.iter().map(f).fold(0.0f32, f32::max)
    };
    let matching = chunk_scores
        .iter()
        .filter(|s| s.0 > 0.0 || s.1 > 0.5)
        .count();
    let stem_name = file.rsplit('/').next().unwrap_or(&file);
    let stem_name = stem_name.split('.').next().unwrap_or(stem_name);
    let identifier = !norms.identifiers.is_empty()
        && (norms.identifiers.contains(stem_name)
            || c.chunks.iter().any(|h| {
                !matches!(h.kind.as_str(), "module" | "window")
                    && norms.identifiers.contains(&h.name)
            }));
    let features = Features {
        keyword: if norms.max_file > 0.0 {
            c.file_bm25 / norms.max_file
        } else {
            0.0
        },
        chunk_keyword: best(|s| s.0),
        vector: best(|s| s.1),
        path: norms.share(&stems_of(&file)),
        definition: best(|s| s.2),
        identifier: f32::from(u8::from(identifier)),
        kind: f32::from(u8::from(
            c.chunks.iter().any(|h| plan.kind_hints.contains(&h.kind)),
        )),
        support: fusion::support(matching.saturating_sub(1)),
        // The second stage (`graph_stage`) sets these.
        graph: 0.0,
        cochange: 0.0,
    };
    let asked = requested.contains(&class);
    let score = features.score(weights, class, asked);
    let prior = if asked {
        0.0
    } else {
        weights.class_prior.get(&class).copied().unwrap_or(0.0) as f32
    };
    let chunks = chunk_scores
        .iter()
        .take(req.chunks_per_file)
        .map(|(_, _, _, cos, h)| FileChunk {
            start_line: h.start_line,
            end_line: h.end_line,
            kind: h.kind.clone(),
            name: h.name.clone(),
            fqcn: h.fqcn.clone(),
            signature: h.signature.clone(),
            content: h.content.clone(),
            meta: h.meta.clone(),
            related: h.related.clone(),
            cosine: *cos,
            bm25: c.scores.get(&key(h)).map_or(0.0, |s| s.0),
        })
        .collect();
    let ranked = RankedFile {
        file,
        class,
        score,
        why: Why {
            features: features.clone(),
            cosine: best(|s| s.3),
            class_prior: prior,
            class_reason,
        },
        chunks,
    };
    (score, ranked, features)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(file: &str, features: Features) -> (f32, RankedFile, Features) {
        (
            0.0,
            RankedFile {
                file: file.into(),
                class: FileClass::Source,
                score: 0.0,
                why: Why {
                    features: features.clone(),
                    cosine: 0.0,
                    class_prior: 0.0,
                    class_reason: String::new(),
                },
                chunks: Vec::new(),
            },
            features,
        )
    }

    /// While the index is partial, a pending file that matches the query's
    /// words best is not ranked below a weaker embedded file for the
    /// features only chunks give (support, definition, kind, vector); once
    /// nothing is pending the features are left as they are.
    #[test]
    fn pending_files_are_not_outranked_for_lacking_chunks() {
        let embedded = Features {
            keyword: 0.6,
            chunk_keyword: 0.6,
            vector: 0.9,
            support: 0.97,
            definition: 0.5,
            kind: 1.0,
            ..Features::default()
        };
        let pending_file = Features {
            keyword: 1.0,
            ..Features::default()
        };
        let weights = HybridWeights::default();
        let mut list = vec![
            scored("a.php", embedded.clone()),
            scored("b.php", pending_file),
        ];
        let pending: HashSet<String> = ["b.php".to_string()].into();
        impute_pending(&mut list, &pending, 0.05, &weights, &[]);
        let (a, b) = (list[0].0, list[1].0);
        assert!(b > a, "pending {b} vs embedded {a}");
        assert_eq!(list[1].2.chunk_keyword, 1.0);
        // The mean over the lexically matched embedded files (here one).
        assert_eq!(list[1].2.support, 0.97);
        // Nothing pending: the embedded file keeps its features.
        let mut full = vec![scored("a.php", embedded.clone())];
        impute_pending(&mut full, &HashSet::new(), 1.0, &weights, &[]);
        assert_eq!(full[0].2, embedded);
    }
}
