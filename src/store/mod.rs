//! LanceDB at `.code-intel/lance`: tables `forest` (code chunks with their
//! vectors and search text), `files` (one row per indexed file: the
//! file-level full-text index), `vocab` (the repository's identifier words
//! with their vectors, for the Japanese → English bridge) and `map`
//! (agreements: past successful query → symbol pairs). Arrow and Lance SQL
//! stay here: callers describe what they want with [`Scope`] and
//! [`TextQuery`].
//!
//! Full-text search is LanceDB's inverted index (BM25) over text our
//! [`crate::lexical`] analysis produced (identifiers whole and split, path
//! words), with LanceDB's `simple` tokenizer, lowercasing, English stop words
//! and Snowball stemming on both the index and the query side.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt32Type};
use arrow_array::{
    Array, FixedSizeListArray, Float32Array, RecordBatch, RecordBatchIterator, StringArray,
    UInt32Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use lancedb::index::Index;
use lancedb::index::scalar::{
    BooleanQuery, FtsIndexBuilder, FtsQuery, FullTextSearchQuery, MatchQuery, Occur,
};
use lancedb::index::vector::IvfFlatIndexBuilder;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::OptimizeAction;
use lancedb::{Connection, DistanceType, Table};
use serde::Serialize;

pub mod shared;

use crate::chunk::Chunk;
use crate::classify::FileClass;

pub const FOREST: &str = "forest";
pub const FILES: &str = "files";
pub const VOCAB: &str = "vocab";
pub const MAP: &str = "map";
/// Vectors kept from a `forest` table whose schema changed (an upgrade), so
/// that the full re-sync the change forces reuses them instead of embedding
/// every chunk again; dropped when that sync completes.
const VECTOR_CACHE: &str = "vector_cache";
/// `forest` rows from which the vector search uses an IVF index (√rows
/// partitions) instead of a flat scan.
pub const VECTOR_INDEX_MIN_ROWS: usize = 20_000;
/// IVF partitions searched per query.
pub const VECTOR_INDEX_NPROBES: usize = 40;
/// Rows per `IN (…)` filter when looking vectors up by content hash.
const HASH_LOOKUP_BATCH: usize = 512;

/// Errors of the vector store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "index at {path} is unreadable ({message}); rebuild it with `code-intel index --force`"
    )]
    Open { path: String, message: String },
    #[error("index operation failed: {0}")]
    Lance(#[from] lancedb::Error),
    #[error("index data malformed: {0}")]
    Data(String),
    #[error("shared vector store {uri}: {message}")]
    Shared { uri: String, message: String },
}

/// One chunk of `forest` with its vector.
pub struct ForestRow<'a> {
    pub chunk: &'a Chunk,
    pub hash: &'a str,
    pub vector: &'a [f32],
    /// Class of the chunk's file.
    pub class: FileClass,
    /// Full-text search terms ([`crate::lexical::chunk_text`]).
    pub search_text: &'a str,
}

/// One row of `files`.
pub struct FileRow<'a> {
    /// Repo-relative path.
    pub file: &'a str,
    pub class: FileClass,
    /// Why the file has its class.
    pub reason: &'a str,
    pub language: &'a str,
    /// Lines in the file.
    pub lines: u32,
    /// Search terms of the path, the definitions and the content.
    pub text: &'a crate::lexical::FileText,
}

/// A `files` full-text hit: BM25 score summed over the columns, each with
/// its boost.
#[derive(Debug, Clone)]
pub struct FileHit {
    pub file: String,
    pub class: FileClass,
    pub reason: String,
    pub score: f32,
}

/// Which rows a search may return.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    /// Only this repo-relative file.
    pub file: Option<String>,
    /// Only files under this repo-relative directory (without trailing `/`).
    pub dir: Option<String>,
    /// Only chunks of this language.
    pub language: Option<String>,
    /// Only files of these classes (empty: all).
    pub classes: Vec<FileClass>,
}

impl Scope {
    /// The Lance SQL predicate, `None` for everything. `language` applies to
    /// `forest` only (`for_files` false).
    fn sql(&self, for_files: bool) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(f) = &self.file {
            parts.push(format!("file = {}", sql_str(f)));
        }
        if let Some(d) = self.dir.as_deref().filter(|d| !d.is_empty()) {
            parts.push(format!("starts_with(file, {})", sql_str(&format!("{d}/"))));
        }
        if let (Some(l), false) = (&self.language, for_files) {
            parts.push(format!("language = {}", sql_str(&l.to_lowercase())));
        }
        if !self.classes.is_empty() {
            let list: Vec<String> = self.classes.iter().map(|c| sql_str(c.name())).collect();
            parts.push(format!("class IN ({})", list.join(",")));
        }
        (!parts.is_empty()).then(|| parts.join(" AND "))
    }
}

/// A full-text query: groups of terms, each with a weight (a group's BM25
/// score is multiplied by it); a chunk or file matches when any term does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextQuery {
    pub groups: Vec<(String, f32)>,
}

impl TextQuery {
    /// True when no group has a term.
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|(t, _)| t.trim().is_empty())
    }

    /// The Lance query over `columns`, each (column, boost).
    fn fts(&self, columns: &[(&str, f32)]) -> FtsQuery {
        let mut clauses = Vec::new();
        for (text, weight) in self.groups.iter().filter(|(t, _)| !t.trim().is_empty()) {
            for (col, boost) in columns {
                clauses.push((
                    Occur::Should,
                    MatchQuery::new(text.clone())
                        .with_column(Some((*col).to_string()))
                        .with_boost(weight * boost)
                        .into(),
                ));
            }
        }
        if clauses.len() == 1 {
            return clauses
                .pop()
                .map(|c| c.1)
                .unwrap_or_else(|| MatchQuery::new(String::new()).into());
        }
        BooleanQuery::new(clauses).into()
    }
}

/// Columns of `files` searched by [`Store::search_files`] with their boosts:
/// a word in the path or in a definition's name says more about a file than
/// the same word in its body. Fitted on the development sets together with
/// the fusion weights (`bench/fit.py`, README § Retrieval benchmark).
pub const FILE_COLUMNS: [(&str, f32); 3] = [
    ("path_text", 2.0),
    ("symbols_text", 1.0),
    ("body_text", 1.0),
];

/// Full-text indexed columns: (table, column).
const FTS_COLUMNS: [(&str, &str); 4] = [
    (FOREST, "search_text"),
    (FILES, "path_text"),
    (FILES, "symbols_text"),
    (FILES, "body_text"),
];

/// A `forest` search hit. `score` is cosine similarity (1 − cosine distance)
/// for vector searches, BM25 for full-text searches, 0 for plain reads.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ForestHit {
    pub file: String,
    /// Class of the chunk's file (source, test, docs, …).
    pub class: FileClass,
    pub start_line: u32,
    pub end_line: u32,
    pub language: String,
    pub kind: String,
    pub name: String,
    pub scope: Option<String>,
    pub fqcn: Option<String>,
    pub signature: String,
    pub content: String,
    /// Framework facts of the chunk (JSON object; `{}` when none).
    pub meta: serde_json::Map<String, serde_json::Value>,
    /// Symbols the chunk points at (FQCNs, `table:…`, `route:…`).
    pub related: Vec<String>,
    pub score: f32,
    /// The stored embedding (not serialised; used by hybrid ranking).
    #[serde(skip)]
    #[schemars(skip)]
    pub vector: Vec<f32>,
}

/// A `map` search hit (an agreement recorded after a successful session).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MapHit {
    pub query: String,
    /// JSON list of symbols the agreement names.
    pub symbols: String,
    /// JSON list of files.
    pub files: String,
    pub score: f32,
}

/// The tables of one repository.
pub struct Store {
    db: Connection,
    forest: Table,
    files: Table,
    vocab: Table,
    map: Table,
    dim: usize,
}

fn forest_schema(dim: usize) -> SchemaRef {
    let s = |n: &str| Field::new(n, DataType::Utf8, false);
    let o = |n: &str| Field::new(n, DataType::Utf8, true);
    Arc::new(Schema::new(vec![
        s("file"),
        s("class"),
        s("language"),
        s("kind"),
        s("name"),
        o("scope"),
        o("fqcn"),
        s("signature"),
        o("doc"),
        Field::new("start_line", DataType::UInt32, false),
        Field::new("end_line", DataType::UInt32, false),
        s("content"),
        s("content_hash"),
        s("meta"),
        s("related"),
        s("search_text"),
        vector_field(dim),
    ]))
}

fn files_schema() -> SchemaRef {
    let s = |n: &str| Field::new(n, DataType::Utf8, false);
    Arc::new(Schema::new(vec![
        s("file"),
        s("class"),
        s("reason"),
        s("language"),
        Field::new("lines", DataType::UInt32, false),
        s("path_text"),
        s("symbols_text"),
        s("body_text"),
        s("words"),
    ]))
}

fn vocab_schema(dim: usize) -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("word", DataType::Utf8, false),
        Field::new("files", DataType::UInt32, false),
        vector_field(dim),
    ]))
}

fn map_schema(dim: usize) -> SchemaRef {
    let s = |n: &str| Field::new(n, DataType::Utf8, false);
    Arc::new(Schema::new(vec![
        s("id"),
        s("query"),
        s("symbols"),
        s("files"),
        s("created_at"),
        vector_field(dim),
    ]))
}

fn vector_field(dim: usize) -> Field {
    Field::new(
        "vector",
        DataType::FixedSizeList(
            Arc::new(Field::new("item", DataType::Float32, true)),
            dim as i32,
        ),
        false,
    )
}

/// Quotes a string for a Lance SQL filter (`'` doubled).
pub fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl Store {
    /// Opens (creating when missing) the tables under `dir`. A table whose
    /// columns or vector width differ (an upgrade, a model change) is
    /// recreated empty; `forest`'s vectors of the same width are kept aside
    /// first (see [`VECTOR_CACHE`]).
    ///
    /// # Errors
    /// [`StoreError::Open`] when the directory holds an unreadable index.
    pub async fn open(dir: &Path, dim: usize) -> Result<Store, StoreError> {
        let open_err = |e: lancedb::Error| StoreError::Open {
            path: dir.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        let db = lancedb::connect(&dir.to_string_lossy())
            .read_consistency_interval(std::time::Duration::ZERO)
            .execute()
            .await
            .map_err(open_err)?;
        let names = db.table_names().execute().await.map_err(open_err)?;
        if names.iter().any(|n| n == FOREST) {
            keep_vectors(&db, &names, dim).await.map_err(open_err)?;
        }
        let forest = open_or_create(&db, &names, FOREST, forest_schema(dim))
            .await
            .map_err(open_err)?;
        let files = open_or_create(&db, &names, FILES, files_schema())
            .await
            .map_err(open_err)?;
        let vocab = open_or_create(&db, &names, VOCAB, vocab_schema(dim))
            .await
            .map_err(open_err)?;
        let map = open_or_create(&db, &names, MAP, map_schema(dim))
            .await
            .map_err(open_err)?;
        Ok(Store {
            db,
            forest,
            files,
            vocab,
            map,
            dim,
        })
    }

    /// [`Store::open`]; with `rebuild`, an index that cannot be opened is
    /// deleted and created anew (what `--force` promises).
    ///
    /// # Errors
    /// As [`Store::open`], or the directory cannot be removed.
    pub async fn open_or_rebuild(
        dir: &Path,
        dim: usize,
        rebuild: bool,
    ) -> Result<Store, StoreError> {
        match Store::open(dir, dim).await {
            Err(StoreError::Open { .. }) if rebuild => {
                tracing::warn!("index at {} is unreadable; rebuilding it", dir.display());
                std::fs::remove_dir_all(dir).map_err(|e| StoreError::Open {
                    path: dir.display().to_string(),
                    message: format!("cannot remove it: {e}"),
                })?;
                Store::open(dir, dim).await
            }
            other => other,
        }
    }

    /// Rows in `forest`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn forest_rows(&self) -> Result<usize, StoreError> {
        Ok(self.forest.count_rows(None).await?)
    }

    /// Rows in `map`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn map_rows(&self) -> Result<usize, StoreError> {
        Ok(self.map.count_rows(None).await?)
    }

    /// Vectors already stored for these content hashes (any file).
    ///
    /// # Errors
    /// Lance errors or malformed rows.
    pub async fn vectors_for_hashes(
        &self,
        hashes: &[String],
    ) -> Result<HashMap<String, Vec<f32>>, StoreError> {
        let mut out = HashMap::new();
        let cache = self.vector_cache().await?;
        for table in std::iter::once(&self.forest).chain(cache.as_ref()) {
            let missing: Vec<&String> = hashes.iter().filter(|h| !out.contains_key(*h)).collect();
            lookup_vectors(table, None, &missing, &mut out).await?;
        }
        Ok(out)
    }

    async fn vector_cache(&self) -> Result<Option<Table>, StoreError> {
        let names = self.db.table_names().execute().await?;
        if !names.iter().any(|n| n == VECTOR_CACHE) {
            return Ok(None);
        }
        Ok(Some(self.db.open_table(VECTOR_CACHE).execute().await?))
    }

    /// The distinct content hashes in `forest`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn content_hashes(&self) -> Result<HashSet<String>, StoreError> {
        let batches = read_columns(&self.forest, &["content_hash"]).await?;
        Ok(strings(&batches, "content_hash")?.into_iter().collect())
    }

    /// Drops the vectors kept from an older `forest` (after a sync that
    /// re-stored every file).
    ///
    /// # Errors
    /// Lance errors.
    pub async fn drop_vector_cache(&self) -> Result<(), StoreError> {
        if self.vector_cache().await?.is_some() {
            self.db.drop_table(VECTOR_CACHE, &[]).await?;
        }
        Ok(())
    }

    /// Deletes every `forest` row of these files.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn delete_files(&self, files: &[String]) -> Result<(), StoreError> {
        for part in files.chunks(HASH_LOOKUP_BATCH) {
            let list: Vec<String> = part.iter().map(|f| sql_str(f)).collect();
            let filter = format!("file IN ({})", list.join(","));
            self.forest.delete(filter.as_str()).await?;
            self.files.delete(filter.as_str()).await?;
        }
        Ok(())
    }

    /// Deletes every `forest` and `files` row.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn clear_forest(&self) -> Result<(), StoreError> {
        self.forest.delete("true").await?;
        self.files.delete("true").await?;
        Ok(())
    }

    /// Replaces the `files` rows of these files (deleting theirs first).
    ///
    /// # Errors
    /// Lance errors.
    pub async fn put_files(&self, rows: &[FileRow<'_>]) -> Result<(), StoreError> {
        if rows.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = rows.iter().map(|r| r.file.to_string()).collect();
        for part in names.chunks(HASH_LOOKUP_BATCH) {
            let list: Vec<String> = part.iter().map(|f| sql_str(f)).collect();
            self.files
                .delete(format!("file IN ({})", list.join(",")).as_str())
                .await?;
        }
        fn col<'r>(
            rows: &'r [FileRow<'r>],
            f: impl Fn(&'r FileRow<'r>) -> &'r str,
        ) -> Arc<dyn Array> {
            Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
        }
        let batch = RecordBatch::try_new(
            files_schema(),
            vec![
                col(rows, |r| r.file),
                col(rows, |r| r.class.name()),
                col(rows, |r| r.reason),
                col(rows, |r| r.language),
                Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.lines))),
                col(rows, |r| r.text.path.as_str()),
                col(rows, |r| r.text.symbols.as_str()),
                col(rows, |r| r.text.body.as_str()),
                col(rows, |r| r.text.words.as_str()),
            ],
        )
        .map_err(|e| StoreError::Data(e.to_string()))?;
        self.files.add(batch).execute().await?;
        Ok(())
    }

    /// Brings the full-text indexes up to date: creates those missing (first
    /// sync), and with `changed` adds the rows written since to the others
    /// (LanceDB's incremental index optimisation; rows not yet indexed are
    /// still found by a flat scan meanwhile). Returns the seconds spent.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn update_text_indexes(&self, changed: bool) -> Result<f64, StoreError> {
        let started = std::time::Instant::now();
        for table in [&self.forest, &self.files] {
            let indexed: HashSet<String> = table
                .list_indices()
                .await?
                .into_iter()
                .flat_map(|i| i.columns)
                .collect();
            let mut optimize = false;
            for (t, col) in FTS_COLUMNS {
                if t != table.name() {
                    continue;
                }
                if indexed.contains(col) {
                    optimize = true;
                } else if table.count_rows(None).await? > 0 {
                    table
                        .create_index(&[col], Index::FTS(fts_params()))
                        .replace(true)
                        .execute()
                        .await?;
                }
            }
            if optimize && changed {
                table
                    .optimize(OptimizeAction::Index(Default::default()))
                    .await?;
            }
        }
        Ok(started.elapsed().as_secs_f64())
    }

    /// Creates the IVF index on `forest.vector` once the table has
    /// [`VECTOR_INDEX_MIN_ROWS`] rows (later rows join it through the
    /// incremental optimisation of [`Store::update_text_indexes`], which
    /// covers every index of the table). Returns the seconds spent.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn ensure_vector_index(&self) -> Result<f64, StoreError> {
        let started = std::time::Instant::now();
        let has = self
            .forest
            .list_indices()
            .await?
            .iter()
            .any(|i| i.columns.iter().any(|c| c == "vector"));
        let rows = self.forest.count_rows(None).await?;
        if has || rows < VECTOR_INDEX_MIN_ROWS {
            return Ok(started.elapsed().as_secs_f64());
        }
        let partitions = ((rows as f64).sqrt() as u32).max(1);
        self.forest
            .create_index(
                &["vector"],
                Index::IvfFlat(
                    IvfFlatIndexBuilder::default()
                        .distance_type(DistanceType::Dot)
                        .num_partitions(partitions),
                ),
            )
            .execute()
            .await?;
        Ok(started.elapsed().as_secs_f64())
    }

    /// BM25 search of `forest` chunks, best first, at most `limit`; `score`
    /// is the BM25 score.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn search_chunks_text(
        &self,
        query: &TextQuery,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<ForestHit>, StoreError> {
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = self
            .forest
            .query()
            .full_text_search(FullTextSearchQuery::new_query(
                query.fts(&[("search_text", 1.0)]),
            ))
            .select(Select::Columns(
                FOREST_READ_COLUMNS
                    .iter()
                    .chain(std::iter::once(&"_score"))
                    .map(|c| c.to_string())
                    .collect(),
            ))
            .limit(limit);
        if let Some(f) = scope.sql(false) {
            q = q.only_if(f);
        }
        let batches: Vec<RecordBatch> = q.execute().await?.try_collect().await?;
        let mut hits = forest_hits(&batches)?;
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(hits)
    }

    /// BM25 search of `files` over [`FILE_COLUMNS`], best first, at most
    /// `limit`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn search_files(
        &self,
        query: &TextQuery,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<FileHit>, StoreError> {
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = self
            .files
            .query()
            .full_text_search(FullTextSearchQuery::new_query(query.fts(&FILE_COLUMNS)))
            .select(Select::Columns(vec![
                "file".into(),
                "class".into(),
                "reason".into(),
                "_score".into(),
            ]))
            .limit(limit);
        if let Some(f) = scope.sql(true) {
            q = q.only_if(f);
        }
        let batches: Vec<RecordBatch> = q.execute().await?.try_collect().await?;
        let mut out = Vec::new();
        for b in &batches {
            let (file, class, reason) = (
                string_col(b, "file")?,
                string_col(b, "class")?,
                string_col(b, "reason")?,
            );
            let score = f32_col(b, "_score")?;
            for i in 0..b.num_rows() {
                out.push(FileHit {
                    file: file.value(i).to_string(),
                    class: FileClass::parse(class.value(i)).unwrap_or(FileClass::Source),
                    reason: reason.value(i).to_string(),
                    score: score.value(i),
                });
            }
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(out)
    }

    /// Classes of indexed files (repo-relative path → class).
    ///
    /// # Errors
    /// Lance errors.
    pub async fn file_classes(&self) -> Result<HashMap<String, FileClass>, StoreError> {
        let batches = read_columns(&self.files, &["file", "class"]).await?;
        let mut out = HashMap::new();
        for b in &batches {
            let (file, class) = (string_col(b, "file")?, string_col(b, "class")?);
            for i in 0..b.num_rows() {
                out.insert(
                    file.value(i).to_string(),
                    FileClass::parse(class.value(i)).unwrap_or(FileClass::Source),
                );
            }
        }
        Ok(out)
    }

    /// The vocabulary words of every indexed file ([`crate::lexical::FileText::words`]),
    /// one string per file.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn file_words(&self) -> Result<Vec<String>, StoreError> {
        strings(&read_columns(&self.files, &["words"]).await?, "words")
    }

    /// Words in `vocab`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn vocab_words(&self) -> Result<HashSet<String>, StoreError> {
        Ok(
            strings(&read_columns(&self.vocab, &["word"]).await?, "word")?
                .into_iter()
                .collect(),
        )
    }

    /// Adds words with their file counts and vectors, and deletes `gone`.
    ///
    /// # Errors
    /// Lance errors, or a vector of the wrong width.
    pub async fn update_vocab(
        &self,
        add: &[(String, u32, Vec<f32>)],
        gone: &[String],
    ) -> Result<(), StoreError> {
        for part in gone.chunks(HASH_LOOKUP_BATCH) {
            let list: Vec<String> = part.iter().map(|w| sql_str(w)).collect();
            self.vocab
                .delete(format!("word IN ({})", list.join(",")).as_str())
                .await?;
        }
        if add.is_empty() {
            return Ok(());
        }
        let mut flat = Vec::with_capacity(add.len() * self.dim);
        for (w, _, v) in add {
            if v.len() != self.dim {
                return Err(StoreError::Data(format!(
                    "vector of word {w} has {} dimensions, the index has {}",
                    v.len(),
                    self.dim
                )));
            }
            flat.extend_from_slice(v);
        }
        let batch = RecordBatch::try_new(
            vocab_schema(self.dim),
            vec![
                Arc::new(StringArray::from_iter_values(
                    add.iter().map(|a| a.0.as_str()),
                )),
                Arc::new(UInt32Array::from_iter_values(add.iter().map(|a| a.1))),
                Arc::new(self.vectors(flat)?),
            ],
        )
        .map_err(|e| StoreError::Data(e.to_string()))?;
        self.vocab.add(batch).execute().await?;
        Ok(())
    }

    /// Nearest vocabulary words to `vector` by cosine similarity, with the
    /// number of files each occurs in.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn search_vocab(
        &self,
        vector: &[f32],
        limit: usize,
    ) -> Result<Vec<(String, u32, f32)>, StoreError> {
        let batches: Vec<RecordBatch> = self
            .vocab
            .query()
            .nearest_to(vector.to_vec())?
            .distance_type(DistanceType::Cosine)
            .select(Select::Columns(vec![
                "word".into(),
                "files".into(),
                "_distance".into(),
            ]))
            .limit(limit)
            .execute()
            .await?
            .try_collect()
            .await?;
        let mut out = Vec::new();
        for b in &batches {
            let (w, n, d) = (
                string_col(b, "word")?,
                u32_col(b, "files")?,
                distance_col(b)?,
            );
            for i in 0..b.num_rows() {
                out.push((w.value(i).to_string(), n.value(i), 1.0 - d.value(i)));
            }
        }
        out.sort_by(|a, b| b.2.total_cmp(&a.2));
        Ok(out)
    }

    /// Every vocabulary word with its vector.
    ///
    /// # Errors
    /// Lance errors or malformed rows.
    pub async fn vocab_vectors(&self) -> Result<Vec<(String, Vec<f32>)>, StoreError> {
        let batches: Vec<RecordBatch> = self
            .vocab
            .query()
            .select(Select::Columns(vec!["word".into(), "vector".into()]))
            .execute()
            .await?
            .try_collect()
            .await?;
        let mut out = Vec::new();
        for b in &batches {
            let (w, v) = (string_col(b, "word")?, vector_col(b)?);
            for i in 0..b.num_rows() {
                out.push((w.value(i).to_string(), row_vector(v, i)));
            }
        }
        Ok(out)
    }

    /// Rows of `vocab`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn vocab_rows(&self) -> Result<usize, StoreError> {
        Ok(self.vocab.count_rows(None).await?)
    }

    /// Bytes the index takes on disk (all tables, all versions kept).
    pub fn disk_bytes(dir: &Path) -> u64 {
        fn walk(p: &Path) -> u64 {
            std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(dir)
    }

    fn vectors(&self, flat: Vec<f32>) -> Result<FixedSizeListArray, StoreError> {
        vector_array(flat, self.dim)
    }

    /// Appends chunks with their vectors in one commit.
    ///
    /// # Errors
    /// Lance errors, or a vector of the wrong width.
    pub async fn add(&self, rows: &[ForestRow<'_>]) -> Result<(), StoreError> {
        if rows.is_empty() {
            return Ok(());
        }
        self.forest.add(self.forest_batch(rows)?).execute().await?;
        Ok(())
    }

    /// Replaces every row of `files` with `rows` in one commit (a merge
    /// insert keyed on file, lines, kind, name and content hash that deletes
    /// the files' unmatched rows), so a concurrent reader sees either the old
    /// or the new chunks of a file, never neither.
    ///
    /// # Errors
    /// Lance errors, or a vector of the wrong width.
    pub async fn replace_files(
        &self,
        files: &[String],
        rows: &[ForestRow<'_>],
    ) -> Result<(), StoreError> {
        if files.is_empty() {
            return self.add(rows).await;
        }
        if rows.is_empty() {
            return self.delete_files(files).await;
        }
        let batch = self.forest_batch(rows)?;
        let schema = batch.schema();
        let list: Vec<String> = files.iter().map(|f| sql_str(f)).collect();
        let mut merge = self.forest.merge_insert(&[
            "file",
            "start_line",
            "end_line",
            "kind",
            "name",
            "content_hash",
        ]);
        merge
            .when_matched_update_all(None)
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(Some(format!("file IN ({})", list.join(","))));
        let reader = RecordBatchIterator::new(vec![Ok(batch)], schema);
        merge.execute(Box::new(reader)).await?;
        Ok(())
    }

    fn forest_batch(&self, rows: &[ForestRow<'_>]) -> Result<RecordBatch, StoreError> {
        let str_col = |f: &dyn Fn(&ForestRow) -> String| -> Arc<dyn Array> {
            Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
        };
        let opt_col = |f: &dyn Fn(&ForestRow) -> Option<String>| -> Arc<dyn Array> {
            Arc::new(rows.iter().map(f).collect::<StringArray>())
        };
        let mut flat = Vec::with_capacity(rows.len() * self.dim);
        for r in rows {
            if r.vector.len() != self.dim {
                return Err(StoreError::Data(format!(
                    "vector of {} has {} dimensions, the index has {}",
                    r.chunk.file,
                    r.vector.len(),
                    self.dim
                )));
            }
            flat.extend_from_slice(r.vector);
        }
        let vectors = self.vectors(flat)?;
        let batch = RecordBatch::try_new(
            forest_schema(self.dim),
            vec![
                str_col(&|r| r.chunk.file.clone()),
                str_col(&|r| r.class.name().to_string()),
                str_col(&|r| r.chunk.language.clone()),
                str_col(&|r| r.chunk.kind.clone()),
                str_col(&|r| r.chunk.name.clone()),
                opt_col(&|r| r.chunk.scope.clone()),
                opt_col(&|r| r.chunk.fqcn.clone()),
                str_col(&|r| r.chunk.signature.clone()),
                opt_col(&|r| r.chunk.doc.clone()),
                Arc::new(UInt32Array::from_iter_values(
                    rows.iter().map(|r| r.chunk.start_line as u32),
                )),
                Arc::new(UInt32Array::from_iter_values(
                    rows.iter().map(|r| r.chunk.end_line as u32),
                )),
                str_col(&|r| r.chunk.content.clone()),
                str_col(&|r| r.hash.to_string()),
                str_col(&|r| serde_json::Value::Object(r.chunk.meta.clone()).to_string()),
                str_col(&|r| serde_json::to_string(&r.chunk.related).unwrap_or_default()),
                str_col(&|r| r.search_text.to_string()),
                Arc::new(vectors),
            ],
        )
        .map_err(|e| StoreError::Data(e.to_string()))?;
        Ok(batch)
    }

    /// Nearest `forest` chunks by cosine similarity within `scope`, best
    /// first, with their stored vectors.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn search_forest(
        &self,
        vector: &[f32],
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<ForestHit>, StoreError> {
        let mut q = self
            .forest
            .query()
            .nearest_to(vector.to_vec())?
            .distance_type(DistanceType::Dot)
            .nprobes(VECTOR_INDEX_NPROBES)?
            .select(Select::Columns(
                FOREST_READ_COLUMNS
                    .iter()
                    .chain(std::iter::once(&"_distance"))
                    .map(|c| c.to_string())
                    .collect(),
            ))
            .limit(limit);
        if let Some(f) = scope.sql(false) {
            q = q.only_if(f);
        }
        let batches: Vec<RecordBatch> = q.execute().await?.try_collect().await?;
        let mut hits = forest_hits(&batches)?;
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(hits)
    }

    /// Every `forest` chunk of `files`, with its stored vector and `score` 0
    /// (no query), at most `limit`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn chunks_of_files(
        &self,
        files: &[String],
        limit: usize,
    ) -> Result<Vec<ForestHit>, StoreError> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let list: Vec<String> = files.iter().map(|f| sql_str(f)).collect();
        let batches: Vec<RecordBatch> = self
            .forest
            .query()
            .only_if(format!("file IN ({})", list.join(",")))
            .select(Select::Columns(
                FOREST_READ_COLUMNS
                    .iter()
                    .chain(std::iter::once(&"vector"))
                    .map(|c| c.to_string())
                    .collect(),
            ))
            .limit(limit)
            .execute()
            .await?
            .try_collect()
            .await?;
        forest_hits(&batches)
    }

    /// Adds one agreement to `map` (visible to searches at once).
    ///
    /// # Errors
    /// Lance errors, or a vector of the wrong width.
    pub async fn add_agreement(
        &self,
        id: &str,
        query: &str,
        symbols: &[String],
        files: &[String],
        vector: &[f32],
    ) -> Result<(), StoreError> {
        if vector.len() != self.dim {
            return Err(StoreError::Data(format!(
                "agreement vector has {} dimensions, the index has {}",
                vector.len(),
                self.dim
            )));
        }
        let text = |v: &str| -> Arc<dyn Array> { Arc::new(StringArray::from(vec![v.to_string()])) };
        let json = |v: &[String]| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
        let vectors = self.vectors(vector.to_vec())?;
        let batch = RecordBatch::try_new(
            map_schema(self.dim),
            vec![
                text(id),
                text(query),
                text(&json(symbols)),
                text(&json(files)),
                text(&crate::util::now_secs().to_string()),
                Arc::new(vectors),
            ],
        )
        .map_err(|e| StoreError::Data(e.to_string()))?;
        self.map
            .delete(format!("id = {}", sql_str(id)).as_str())
            .await?;
        self.map.add(batch).execute().await?;
        Ok(())
    }

    /// Nearest `map` agreements by cosine similarity.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn search_map(
        &self,
        vector: &[f32],
        limit: usize,
    ) -> Result<Vec<MapHit>, StoreError> {
        if self.map_rows().await? == 0 {
            return Ok(Vec::new());
        }
        let batches: Vec<RecordBatch> = self
            .map
            .query()
            .nearest_to(vector.to_vec())?
            .distance_type(DistanceType::Cosine)
            .limit(limit)
            .execute()
            .await?
            .try_collect()
            .await?;
        let mut hits = Vec::new();
        for b in &batches {
            let (q, s, f) = (
                string_col(b, "query")?,
                string_col(b, "symbols")?,
                string_col(b, "files")?,
            );
            let dist = distance_col(b)?;
            for i in 0..b.num_rows() {
                hits.push(MapHit {
                    query: q.value(i).into(),
                    symbols: s.value(i).into(),
                    files: f.value(i).into(),
                    score: 1.0 - dist.value(i),
                });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(hits)
    }
}

/// `forest` columns a search reads (all but the search text; the vector
/// only where a caller needs it).
const FOREST_READ_COLUMNS: [&str; 15] = [
    "file",
    "class",
    "language",
    "kind",
    "name",
    "scope",
    "fqcn",
    "signature",
    "doc",
    "start_line",
    "end_line",
    "content",
    "content_hash",
    "meta",
    "related",
];

/// Reads `forest` rows; `score` is 1 − `_distance` (vector search),
/// `_score` (full-text search) or 0.
fn forest_hits(batches: &[RecordBatch]) -> Result<Vec<ForestHit>, StoreError> {
    let mut hits = Vec::new();
    for b in batches {
        let s = |n| string_col(b, n);
        let class = s("class")?;
        let (file, language, kind, name, scope, fqcn, signature, content) = (
            s("file")?,
            s("language")?,
            s("kind")?,
            s("name")?,
            s("scope")?,
            s("fqcn")?,
            s("signature")?,
            s("content")?,
        );
        let (meta, related) = (s("meta")?, s("related")?);
        let start = u32_col(b, "start_line")?;
        let end = u32_col(b, "end_line")?;
        let dist = b
            .column_by_name("_distance")
            .map(|_| distance_col(b))
            .transpose()?;
        let bm25 = b
            .column_by_name("_score")
            .map(|_| f32_col(b, "_score"))
            .transpose()?;
        let vectors = vector_col(b).ok();
        for i in 0..b.num_rows() {
            let opt = |a: &StringArray| (!a.is_null(i)).then(|| a.value(i).to_string());
            hits.push(ForestHit {
                file: file.value(i).into(),
                class: FileClass::parse(class.value(i)).unwrap_or(FileClass::Source),
                start_line: start.value(i),
                end_line: end.value(i),
                language: language.value(i).into(),
                kind: kind.value(i).into(),
                name: name.value(i).into(),
                scope: opt(scope),
                fqcn: opt(fqcn),
                signature: signature.value(i).into(),
                content: content.value(i).into(),
                meta: serde_json::from_str(meta.value(i)).unwrap_or_default(),
                related: serde_json::from_str(related.value(i)).unwrap_or_default(),
                score: match (dist, bm25) {
                    (Some(d), _) => 1.0 - d.value(i),
                    (None, Some(s)) => s.value(i),
                    (None, None) => 0.0,
                },
                vector: vectors.map(|v| row_vector(v, i)).unwrap_or_default(),
            });
        }
    }
    Ok(hits)
}

/// LanceDB analyzer for the full-text columns: our text is already split
/// into identifier words ([`crate::lexical`]); LanceDB lowercases, drops
/// English stop words and stems (Snowball) on both sides, and drops tokens
/// over [`crate::lexical::MAX_TOKEN_CHARS`].
fn fts_params() -> FtsIndexBuilder {
    FtsIndexBuilder::default()
        .base_tokenizer("simple".to_string())
        .lower_case(true)
        .stem(true)
        .remove_stop_words(true)
        .ascii_folding(true)
        .with_position(false)
        .max_token_length(Some(crate::lexical::MAX_TOKEN_CHARS))
}

/// Every row of `table`, these columns only.
async fn read_columns(table: &Table, columns: &[&str]) -> lancedb::Result<Vec<RecordBatch>> {
    table
        .query()
        .select(Select::Columns(
            columns.iter().map(|c| (*c).to_string()).collect(),
        ))
        .execute()
        .await?
        .try_collect()
        .await
}

/// The values of string column `col` over `batches`, in order.
fn strings(batches: &[RecordBatch], col: &str) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for b in batches {
        let c = string_col(b, col)?;
        out.extend((0..b.num_rows()).map(|i| c.value(i).to_string()));
    }
    Ok(out)
}

/// Adds to `out` the vectors of `table` rows whose `content_hash` is in
/// `hashes` (and that pass `filter`, a Lance SQL condition); the first row
/// of a hash wins.
async fn lookup_vectors(
    table: &Table,
    filter: Option<&str>,
    hashes: &[&String],
    out: &mut HashMap<String, Vec<f32>>,
) -> Result<(), StoreError> {
    for part in hashes.chunks(HASH_LOOKUP_BATCH) {
        let list: Vec<String> = part.iter().map(|h| sql_str(h)).collect();
        let mut condition = format!("content_hash IN ({})", list.join(","));
        if let Some(f) = filter {
            condition = format!("{f} AND {condition}");
        }
        let batches: Vec<RecordBatch> = table
            .query()
            .only_if(condition)
            .select(Select::Columns(vec![
                "content_hash".into(),
                "vector".into(),
            ]))
            .execute()
            .await?
            .try_collect()
            .await?;
        for b in &batches {
            let hashes = string_col(b, "content_hash")?;
            let vectors = vector_col(b)?;
            for i in 0..b.num_rows() {
                out.entry(hashes.value(i).to_string())
                    .or_insert_with(|| row_vector(vectors, i));
            }
        }
    }
    Ok(())
}

/// When `forest` is about to be recreated (columns changed) but its vectors
/// have the model's width, copies `(content_hash, vector)` into
/// [`VECTOR_CACHE`] first, so that the full re-sync reuses them.
async fn keep_vectors(db: &Connection, names: &[String], dim: usize) -> lancedb::Result<()> {
    let table = db.open_table(FOREST).execute().await?;
    let schema = table.schema().await?;
    if compatible(schema.as_ref(), &forest_schema(dim)) || names.iter().any(|n| n == VECTOR_CACHE) {
        return Ok(());
    }
    let same_width = schema.field_with_name("vector").is_ok_and(
        |f| matches!(f.data_type(), DataType::FixedSizeList(_, n) if *n as usize == dim),
    );
    if !same_width || schema.field_with_name("content_hash").is_err() {
        return Ok(());
    }
    let batches: Vec<RecordBatch> = table
        .query()
        .select(Select::Columns(vec![
            "content_hash".into(),
            "vector".into(),
        ]))
        .execute()
        .await?
        .try_collect()
        .await?;
    if batches.is_empty() {
        return Ok(());
    }
    db.create_table(VECTOR_CACHE, batches).execute().await?;
    tracing::info!("index schema changed: kept the stored vectors for the re-sync");
    Ok(())
}

async fn open_or_create(
    db: &Connection,
    names: &[String],
    name: &str,
    schema: SchemaRef,
) -> lancedb::Result<Table> {
    if names.iter().any(|n| n == name) {
        let table = db.open_table(name).execute().await?;
        if compatible(table.schema().await?.as_ref(), &schema) {
            return Ok(table);
        }
        // Vector width or columns changed (new model or schema): start over.
        db.drop_table(name, &[]).await?;
    }
    db.create_empty_table(name, schema).execute().await
}

/// Same column names and types (vector width included); nullability and
/// metadata, which Lance may normalise, are not compared.
fn compatible(found: &Schema, expected: &Schema) -> bool {
    found.fields().len() == expected.fields().len()
        && found
            .fields()
            .iter()
            .zip(expected.fields())
            .all(|(a, b)| a.name() == b.name() && same_type(a.data_type(), b.data_type()))
}

fn same_type(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::FixedSizeList(x, n), DataType::FixedSizeList(y, m)) => {
            n == m && x.data_type() == y.data_type()
        }
        _ => a == b,
    }
}

fn column<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a Arc<dyn Array>, StoreError> {
    b.column_by_name(name)
        .ok_or_else(|| StoreError::Data(format!("column `{name}` missing")))
}

fn string_col<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a StringArray, StoreError> {
    column(b, name)?
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| StoreError::Data(format!("column `{name}` is not text")))
}

fn u32_col<'a>(
    b: &'a RecordBatch,
    name: &str,
) -> Result<&'a arrow_array::PrimitiveArray<UInt32Type>, StoreError> {
    column(b, name)?
        .as_primitive_opt::<UInt32Type>()
        .ok_or_else(|| StoreError::Data(format!("column `{name}` is not u32")))
}

fn distance_col(b: &RecordBatch) -> Result<&arrow_array::PrimitiveArray<Float32Type>, StoreError> {
    f32_col(b, "_distance")
}

fn f32_col<'a>(
    b: &'a RecordBatch,
    name: &str,
) -> Result<&'a arrow_array::PrimitiveArray<Float32Type>, StoreError> {
    column(b, name)?
        .as_primitive_opt::<Float32Type>()
        .ok_or_else(|| StoreError::Data(format!("column `{name}` is not f32")))
}

fn vector_col(b: &RecordBatch) -> Result<&FixedSizeListArray, StoreError> {
    column(b, "vector")?
        .as_fixed_size_list_opt()
        .ok_or_else(|| StoreError::Data("column `vector` is not a fixed-size list".into()))
}

/// `flat` (rows × `dim` values) as the `vector` column.
fn vector_array(flat: Vec<f32>, dim: usize) -> Result<FixedSizeListArray, StoreError> {
    FixedSizeListArray::try_new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        dim as i32,
        Arc::new(Float32Array::from(flat)),
        None,
    )
    .map_err(|e| StoreError::Data(e.to_string()))
}

fn row_vector(vectors: &FixedSizeListArray, i: usize) -> Vec<f32> {
    vectors
        .value(i)
        .as_primitive::<Float32Type>()
        .values()
        .to_vec()
}
