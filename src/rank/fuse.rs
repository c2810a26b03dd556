//! The first stage of the ranking: every candidate file's features
//! ([`Features`], normalised over the request's candidates), its fused
//! score and its best chunks; files the sync has not embedded yet get the
//! chunk features imputed.

use std::collections::{HashMap, HashSet};

use super::candidates::{ChunkHit, FileCandidate};
use super::fusion::{self, Features};
use super::{FileChunk, HybridWeights, QueryPlan, QueryRequest, RankedFile, Why, stem};
use crate::classify::{self, FileClass};
use crate::graph::cochange::CoChange;
use crate::store::ForestHit;
use crate::util::split_identifier;

/// What scoring one request's candidates needs besides the candidates.
pub(super) struct Fusion<'a> {
    pub plan: &'a QueryPlan,
    pub weights: &'a HybridWeights,
    /// Classes the request asks for (no class prior for them).
    pub requested: &'a [FileClass],
    pub req: &'a QueryRequest,
    /// The repository's co-change history, for the `recency` feature.
    pub history: Option<&'a CoChange>,
}

impl RankedFile {
    /// Sets the fused score and the class prior from the file's features
    /// (the one place both are computed).
    pub(super) fn rescore(&mut self, weights: &HybridWeights, requested: &[FileClass]) {
        let asked = requested.contains(&self.class);
        self.score = self.why.features.score(weights, self.class, asked);
        self.why.class_prior = fusion::class_prior(weights, self.class, asked) as f32;
    }
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

/// One chunk's normalised scores (0–1): BM25 over the best chunk's, cosine
/// min–max over the candidates', the definition match; with its raw hit.
struct ChunkScore<'h> {
    bm25: f32,
    vector: f32,
    definition: f32,
    raw: ChunkHit,
    chunk: &'h ForestHit,
}

impl ChunkScore<'_> {
    /// The order of a file's chunks in the reply.
    fn order(&self) -> f32 {
        self.bm25 + self.vector + 0.5 * self.definition
    }
}

impl Norms {
    fn new(plan: &QueryPlan, cands: &HashMap<String, FileCandidate>) -> Norms {
        let (lo, hi) = cands
            .values()
            .flat_map(|c| c.scores.values().map(|s| s.cosine).filter(|c| *c > 0.0))
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
                .flat_map(|c| c.scores.values().map(|s| s.bm25))
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

    fn chunk<'h>(&self, c: &FileCandidate, h: &'h ForestHit) -> ChunkScore<'h> {
        let raw = c.hit(h);
        let bm25 = if self.max_chunk > 0.0 {
            raw.bm25 / self.max_chunk
        } else {
            0.0
        };
        let vector = if raw.cosine > 0.0 {
            ((raw.cosine - self.lo) / self.spread).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let own = match &h.scope {
            Some(s) if h.kind == "method" || h.kind.contains('_') => format!("{s} {}", h.name),
            _ => h.name.clone(),
        };
        let definition = if matches!(h.kind.as_str(), "module" | "window") {
            0.0
        } else {
            self.share(&stems_of(&own))
        };
        ChunkScore {
            bm25,
            vector,
            definition,
            raw,
            chunk: h,
        }
    }
}

/// Best first, ties by path.
pub(super) fn best_first(files: &mut [RankedFile]) {
    files.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.file.cmp(&b.file))
    });
}

/// Scores every candidate: every file with its features, fused score and
/// best chunks, best first (all of them: the graph stage and `explain`
/// read past the limit).
pub(super) fn fuse(f: &Fusion, cands: HashMap<String, FileCandidate>) -> Vec<RankedFile> {
    let norms = Norms::new(f.plan, &cands);
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
    let mut scored: Vec<RankedFile> = cands
        .into_iter()
        .map(|(file, c)| score_file(f, &norms, file, &c))
        .collect();
    impute_pending(&mut scored, &pending, coverage, f.weights, f.requested);
    best_first(&mut scored);
    scored
}

/// Files the sync has not embedded yet (their words are indexed, their
/// chunks and vectors not: a cold or large sync's lexical pass) would rank
/// below every embedded file, for lack of the chunk-level features, and a
/// feature normalised over the few files that have chunks overstates how
/// well those match. So, while some are pending: a pending file's chunk
/// BM25 is its file BM25, and each feature only chunks give
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
    scored: &mut [RankedFile],
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
        .filter(|s| !pending.contains(&s.file) && s.why.features.keyword > 0.0)
        .map(|s| s.why.features.clone())
        .collect();
    let keywords: Vec<f32> = embedded.iter().map(|f| f.keyword).collect();
    let lines = CHUNK_FEATURES.map(|get| {
        let values: Vec<f32> = embedded.iter_mut().map(|f| *get(f)).collect();
        Line::fit(&keywords, &values)
    });
    for file in scored.iter_mut() {
        let is_pending = pending.contains(&file.file);
        let features = &mut file.why.features;
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
        file.rescore(weights, requested);
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

/// One candidate file's features, fused score and best chunks.
fn score_file(f: &Fusion, norms: &Norms, file: String, c: &FileCandidate) -> RankedFile {
    let (class, class_reason) = match (c.class, c.class_reason.is_empty()) {
        (Some(class), false) => (class, c.class_reason.clone()),
        (known, _) => {
            let by_path = classify::classify_path(&file);
            (known.unwrap_or(by_path.class), by_path.reason)
        }
    };
    let mut chunk_scores: Vec<ChunkScore> = c.chunks.iter().map(|h| norms.chunk(c, h)).collect();
    chunk_scores.sort_by(|a, b| b.order().total_cmp(&a.order()));
    let best = |get: fn(&ChunkScore) -> f32| chunk_scores.iter().map(get).fold(0.0f32, f32::max);
    let matching = chunk_scores
        .iter()
        .filter(|s| s.bm25 > 0.0 || s.vector > 0.5)
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
        chunk_keyword: best(|s| s.bm25),
        vector: best(|s| s.vector),
        path: norms.share(&stems_of(&file)),
        definition: best(|s| s.definition),
        identifier: f32::from(u8::from(identifier)),
        kind: f32::from(u8::from(
            c.chunks.iter().any(|h| f.plan.kind_hints.contains(&h.kind)),
        )),
        support: fusion::support(matching.saturating_sub(1)),
        // The graph stage (`partners::graph_stage`) sets these.
        graph: 0.0,
        cochange: 0.0,
        quoted: c.quoted,
        recency: f.history.map_or(0.0, |h| h.recency(&file)),
        named: f32::from(u8::from(c.routed || f.plan.names_file(&file))),
        phrase: f.plan.phrase_score(&file),
    };
    let chunks = chunk_scores
        .iter()
        .take(f.req.chunks_per_file)
        .map(|s| {
            let h = s.chunk;
            FileChunk {
                start_line: h.start_line,
                end_line: h.end_line,
                kind: h.kind.clone(),
                name: h.name.clone(),
                fqcn: h.fqcn.clone(),
                signature: h.signature.clone(),
                content: h.content.clone(),
                meta: h.meta.clone(),
                related: h.related.clone(),
                cosine: s.raw.cosine,
                bm25: s.raw.bm25,
            }
        })
        .collect();
    let mut ranked = RankedFile {
        file,
        class,
        score: 0.0,
        why: Why {
            features,
            cosine: best(|s| s.raw.cosine),
            class_prior: 0.0,
            class_reason,
        },
        chunks,
    };
    ranked.rescore(f.weights, f.requested);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(file: &str, features: Features) -> RankedFile {
        RankedFile {
            file: file.into(),
            class: FileClass::Source,
            score: 0.0,
            why: Why {
                features,
                cosine: 0.0,
                class_prior: 0.0,
                class_reason: String::new(),
            },
            chunks: Vec::new(),
        }
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
        let (a, b) = (list[0].score, list[1].score);
        assert!(b > a, "pending {b} vs embedded {a}");
        assert_eq!(list[1].why.features.chunk_keyword, 1.0);
        // The mean over the lexically matched embedded files (here one).
        assert_eq!(list[1].why.features.support, 0.97);
        // Nothing pending: the embedded file keeps its features.
        let mut full = vec![scored("a.php", embedded.clone())];
        impute_pending(&mut full, &HashSet::new(), 1.0, &weights, &[]);
        assert_eq!(full[0].why.features, embedded);
    }
}
