//! Candidate files of one request: what the file-level BM25 search, the
//! chunk-level BM25 search and the vector search found for each file, with
//! the cosine backfilled for lexically strong files the vector search did
//! not reach.

use std::collections::{HashMap, HashSet};

use crate::classify::FileClass;
use crate::store::{FileHit, ForestHit};

/// Top lexical files whose chunks get a cosine even when the vector search
/// did not reach them (their vectors are read and compared).
const COSINE_BACKFILL_FILES: usize = 30;

/// A chunk's identity within its file: 1-based start and end line, name.
pub(super) type ChunkKey = (u32, u32, String);

pub(super) fn key(h: &ForestHit) -> ChunkKey {
    (h.start_line, h.end_line, h.name.clone())
}

/// A chunk's raw scores from the searches: BM25 (0 when it matched no
/// term) and cosine with the request (0 when not compared).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct ChunkHit {
    pub bm25: f32,
    pub cosine: f32,
}

/// What the searches found for one file.
#[derive(Default)]
pub(super) struct FileCandidate {
    pub class: Option<FileClass>,
    pub class_reason: String,
    pub file_bm25: f32,
    pub chunks: Vec<ForestHit>,
    /// Every chunk in `chunks`, by identity.
    pub scores: HashMap<ChunkKey, ChunkHit>,
    /// A lexically strong file (among the backfill's reads) of an embedded
    /// class with no chunk in the index: the sync has indexed its words,
    /// not yet its chunks and vectors.
    pub pending: bool,
    /// Among the backfill's reads (the lexically strongest files).
    pub strong: bool,
    /// The `quoted` feature ([`super::quoted::quoted_files`]).
    pub quoted: f32,
    /// A controller of a route the request names by URL
    /// ([`crate::graph::Graph::url_files`]): a named file.
    pub routed: bool,
}

impl FileCandidate {
    /// Records a chunk's cosine; the chunk joins the candidate's chunks
    /// unless a search already brought it (every chunk in `chunks` has an
    /// entry in `scores`).
    fn add_cosine(&mut self, h: ForestHit, cosine: f32) {
        match self.scores.entry(key(&h)) {
            std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().cosine = cosine,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(ChunkHit { bm25: 0.0, cosine });
                self.chunks.push(h);
            }
        }
    }

    /// The raw scores of one of its chunks.
    pub fn hit(&self, h: &ForestHit) -> ChunkHit {
        self.scores.get(&key(h)).copied().unwrap_or_default()
    }
}

/// Candidate files from the file-level BM25 hits, the chunk-level BM25 hits
/// and the vector search; lexically strong files (`read`, best first) the
/// vector search did not reach get the cosine of their stored chunk vectors
/// (`read_chunks`) with the query (when there is a query vector: a lexical
/// ranking gives them their chunks for the reply and no cosine).
pub(super) fn candidates(
    files: Vec<FileHit>,
    chunks: Vec<ForestHit>,
    nearest: Vec<ForestHit>,
    read: &[String],
    read_chunks: Vec<ForestHit>,
    query_vector: Option<&[f32]>,
) -> HashMap<String, FileCandidate> {
    let mut cands: HashMap<String, FileCandidate> = HashMap::new();
    for f in files {
        let c = cands.entry(f.file).or_default();
        c.file_bm25 = f.score;
        c.class = Some(f.class);
        c.class_reason = f.reason;
    }
    for h in chunks {
        let c = cands.entry(h.file.clone()).or_default();
        c.scores.entry(key(&h)).or_default().bm25 = h.score;
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
    let backfill: HashSet<String> = read
        .iter()
        .filter(|f| {
            cands
                .get(*f)
                .is_none_or(|c| c.scores.values().all(|s| s.cosine == 0.0))
        })
        .take(COSINE_BACKFILL_FILES)
        .cloned()
        .collect();
    for h in read_chunks
        .into_iter()
        .filter(|h| backfill.contains(&h.file) && !crate::store::says_little(&h.content))
    {
        let cos = query_vector.map_or(0.0, |q| crate::relevance::cosine(q, &h.vector));
        cands.entry(h.file.clone()).or_default().add_cosine(h, cos);
    }
    cands
}
