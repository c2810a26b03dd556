//! File-level fusion: every candidate file gets features from the full-text
//! (BM25) and vector searches and from its names, and a linear score whose
//! weights were fitted on the development sets (`bench/fit.py`; docs/measurements.md §
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
//! - `graph`: code-graph edges between the file and the best three files
//!   of the first stage, summed and capped at 1 (`graph::related`);
//! - `cochange`: its co-change confidence with those three files;
//! - `quoted`: share of the request's quoted texts (a button label, a
//!   heading) the file holds, directly or through a translation key
//!   ([`super::quoted`]);
//! - `recency`, `named`: how lately the file changed; the request names
//!   its path;
//! - `phrase`: adjacent words of the request that are adjacent words of
//!   the file's path ("Settings > Categories" →
//!   `app/Http/Controllers/Settings/Categories.php`; [`super::named`]);
//! - the class prior: a fitted bonus per file class (source 0), unless the
//!   query asks for that class ("the test for…").

use serde::{Deserialize, Serialize};

use crate::classify::FileClass;
use crate::config::HybridWeights;

/// A feature that did not fire is left out of replies (it reads back as 0).
fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

/// The features of one candidate file (see the module docs), 0–1 each;
/// zeros are not serialised.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Features {
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub keyword: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub chunk_keyword: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub vector: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub path: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub definition: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub identifier: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub kind: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub support: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub graph: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub cochange: f32,
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub quoted: f32,
    /// How recently the file changed in the repository's history
    /// ([`crate::graph::cochange::CoChange::recency`]).
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub recency: f32,
    /// 1 when the request names the file's path (a traceback's frame, "in
    /// `app/Models/User.php`"; [`crate::rank::plan::QueryPlan::names_file`])
    /// or a URL one of its routes serves ([`crate::rank::named::named_urls`]).
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub named: f32,
    /// Adjacent words of the request that are adjacent words of the
    /// file's path ("Settings > Categories", "Profit & Loss";
    /// [`crate::rank::plan::QueryPlan::phrase_score`]): 0.5 a pair, 1 two.
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        serialize_with = "crate::util::round4"
    )]
    pub phrase: f32,
}

impl Features {
    /// The fused score of a file of `class`; `requested` when the query asks
    /// for that class (then no prior applies).
    pub fn score(&self, w: &HybridWeights, class: FileClass, requested: bool) -> f32 {
        let prior = class_prior(w, class, requested);
        (w.keyword * f64::from(self.keyword)
            + w.chunk_keyword * f64::from(self.chunk_keyword)
            + w.vector * f64::from(self.vector)
            + w.path * f64::from(self.path)
            + w.definition * f64::from(self.definition)
            + w.identifier * f64::from(self.identifier)
            + w.kind * f64::from(self.kind)
            + w.support * f64::from(self.support)
            + w.graph * f64::from(self.graph)
            + w.cochange * f64::from(self.cochange)
            + w.quoted * f64::from(self.quoted)
            + w.recency * f64::from(self.recency)
            + w.named * f64::from(self.named)
            + w.phrase * f64::from(self.phrase)
            + prior) as f32
    }
}

/// The prior of a file of `class` in the fused score: the fitted
/// `class_prior` weight (source first), none when the query asks for that
/// class (`requested`) or the class has no weight.
pub fn class_prior(w: &HybridWeights, class: FileClass, requested: bool) -> f64 {
    if requested {
        0.0
    } else {
        w.class_prior.get(&class).copied().unwrap_or(0.0)
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
