//! File-level fusion: every candidate file gets features from the full-text
//! (BM25) and vector searches and from its names, and a linear score whose
//! weights were fitted on the development sets (`bench/fit.py`; README §
//! Retrieval benchmark) rather than guessed.
//!
//! Features are in 0–1 so that weights compare:
//! - `keyword`: the file's BM25 over path, definition names and content
//!   (the `files` table) divided by the best file's in this query;
//! - `chunk_keyword`: its best chunk's BM25 (the `forest` table), likewise;
//! - `vector`: its best chunk's cosine, min–max normalised over the
//!   candidates (e5 cosines cluster in 0.75–0.93, so a raw cosine would
//!   spread files by a few hundredths);
//! - `path`: share of the query's keywords found among the file path's
//!   words (stemmed);
//! - `definition`: share found in the name of its best definition chunk
//!   (`ProductForm.configure` for "product form");
//! - `identifier`: an identifier of the query names a definition in the
//!   file or the file itself;
//! - `kind`: a chunk of the file has a framework kind the query hints at;
//! - `support`: how many of its chunks matched beyond the first, damped;
//! - the class prior: a fitted bonus per file class (source 0), unless the
//!   query asks for that class ("the test for…").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::classify::FileClass;

/// Weights of the fused file score (config key `hybrid_weights`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default)]
pub struct HybridWeights {
    /// File-level BM25 (path, definition names, content).
    pub keyword: f64,
    /// Best chunk's BM25.
    pub chunk_keyword: f64,
    /// Best chunk's cosine, normalised over the candidates.
    pub vector: f64,
    /// Query keywords in the file path.
    pub path: f64,
    /// Query keywords in the best definition's name.
    pub definition: f64,
    /// A query identifier names a definition in the file.
    pub identifier: f64,
    /// A framework chunk kind the query hints at.
    pub kind: f64,
    /// Further matching chunks, damped.
    pub support: f64,
    /// Added to a file of this class when the query does not ask for the
    /// class (source: 0).
    pub class_prior: BTreeMap<FileClass, f64>,
}

impl Default for HybridWeights {
    /// Fitted by coordinate ascent on mean(recall@10) + mean(MRR) over the
    /// development sets (laravel/framework 200 + 68 Japanese, livewire 150,
    /// httpx 150 queries; `bench/fit.py`, 2026-11-21); see README §
    /// Retrieval benchmark for the run and its cross-validated numbers.
    fn default() -> Self {
        HybridWeights {
            keyword: 1.0,
            chunk_keyword: 0.5,
            vector: 0.6,
            path: 0.4,
            definition: 0.3,
            identifier: 0.5,
            kind: 0.2,
            support: 0.1,
            class_prior: [
                (FileClass::Config, -0.2),
                (FileClass::Test, -0.6),
                (FileClass::Docs, -0.6),
                (FileClass::Example, -0.5),
                (FileClass::Generated, -0.8),
                (FileClass::Vendored, -0.8),
                (FileClass::Lock, -1.0),
            ]
            .into_iter()
            .collect(),
        }
    }
}

impl HybridWeights {
    /// Every weight finite (negative weights are allowed: priors).
    pub fn is_valid(&self) -> bool {
        [
            self.keyword,
            self.chunk_keyword,
            self.vector,
            self.path,
            self.definition,
            self.identifier,
            self.kind,
            self.support,
        ]
        .iter()
        .chain(self.class_prior.values())
        .all(|w| w.is_finite())
    }
}

/// The features of one candidate file (see the module docs), 0–1 each.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Features {
    pub keyword: f32,
    pub chunk_keyword: f32,
    pub vector: f32,
    pub path: f32,
    pub definition: f32,
    pub identifier: f32,
    pub kind: f32,
    pub support: f32,
}

impl Features {
    /// The fused score of a file of `class`; `requested` when the query asks
    /// for that class (then no prior applies).
    pub fn score(&self, w: &HybridWeights, class: FileClass, requested: bool) -> f32 {
        let prior = if requested {
            0.0
        } else {
            w.class_prior.get(&class).copied().unwrap_or(0.0)
        };
        (w.keyword * f64::from(self.keyword)
            + w.chunk_keyword * f64::from(self.chunk_keyword)
            + w.vector * f64::from(self.vector)
            + w.path * f64::from(self.path)
            + w.definition * f64::from(self.definition)
            + w.identifier * f64::from(self.identifier)
            + w.kind * f64::from(self.kind)
            + w.support * f64::from(self.support)
            + prior) as f32
    }
}

/// `n` further matching chunks beyond the best, damped to 0–1 (1 − 2^−n):
/// one more chunk counts half, five more almost fully.
pub fn support(extra_chunks: usize) -> f32 {
    1.0 - 0.5f32.powi(extra_chunks.min(16) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source file with a strong lexical match beats a test file with a
    /// stronger one, unless the query asks for tests.
    #[test]
    fn class_prior_puts_source_first_unless_asked() {
        let w = HybridWeights::default();
        let source = Features {
            keyword: 0.8,
            vector: 0.7,
            ..Features::default()
        };
        let test = Features {
            keyword: 1.0,
            vector: 0.8,
            ..Features::default()
        };
        let s = source.score(&w, FileClass::Source, false);
        assert!(s > test.score(&w, FileClass::Test, false));
        assert!(s < test.score(&w, FileClass::Test, true));
        assert!(w.is_valid());
        assert_eq!(support(0), 0.0);
        assert!((support(1) - 0.5).abs() < 1e-6);
    }
}
