//! LanceDB at `.code-intel/lance`: tables `forest` (code chunks with their
//! vectors and search text), `files` (one row per indexed file: the
//! file-level full-text index), `vocab` (the repository's identifier words
//! with their vectors, for the Japanese → English bridge) and `map`
//! (agreements: past successful query → symbol pairs). Arrow and Lance SQL
//! stay here: callers describe what they want with [`Scope`] and
//! [`Bm25Query`].
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

mod columns;
mod files;
mod forest;
mod map;
mod query;
mod schema;
pub mod shared;
mod vocab;

use columns::*;
pub use files::*;
pub use forest::*;
pub use map::*;
pub use query::*;
use schema::*;

use crate::chunk::{Chunk, Facts};
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
/// partitions) instead of a flat scan. Probing every partition (see
/// [`VECTOR_INDEX_NPROBES`]) finds the chunks the flat scan finds in a
/// third to a half of its time: 100 nearest chunks of 30 requests, p50, dev
/// build, laravel/framework `src/` (19,051 chunks) 28 → 9.4 ms, koel
/// (6,065) 13.0 → 7.6 ms (bench/README.md § Query latency).
pub const VECTOR_INDEX_MIN_ROWS: usize = 5_000;
/// IVF partitions searched per query: every one of an index of up to
/// 40,000 rows (√rows partitions), so the search is exact there; a larger
/// index probes this many of its partitions. 40 probes of 138 partitions
/// moved `query`'s R@10 on the laravel commit sets by −0.003 (English) and
/// −0.022 (Japanese); probing all 138 took no longer.
pub const VECTOR_INDEX_NPROBES: usize = 200;
/// Fragments (files of rows) a table may hold before a sync compacts it.
/// A sync that writes adds one to `forest` and `files` (the old rows of a
/// file are marked deleted in theirs), a full index one per batch; searches
/// slow down with their number and with deleted rows: filamentphp/demo
/// after 100 one-file syncs (9 fragments), `query`'s search stage 29–36 ms
/// p50 against 23 ms once compacted (bench/README.md § Query latency).
pub const MAX_FRAGMENTS: usize = 8;
/// Rows per `IN (…)` filter when looking vectors up by content hash.
const HASH_LOOKUP_BATCH: usize = 512;

/// Bytes LanceDB may keep in its index cache (full-text and vector index
/// pages) and its metadata cache (manifests, fragment and file metadata)
/// for one store. Lance's defaults are 6 GiB and 1 GiB
/// (`lance::dataset::DEFAULT_INDEX_CACHE_SIZE`,
/// `DEFAULT_METADATA_CACHE_SIZE`), in effect no bound; a sync writes a
/// version per batch, each with its own full-text index segments, and the
/// caches keep what queries read of each (what bounding them saves:
/// [`cache_session`]).
const INDEX_CACHE_BYTES: usize = 128 << 20;
const METADATA_CACHE_BYTES: usize = 32 << 20;

/// A LanceDB session with caches bounded by [`INDEX_CACHE_BYTES`] and
/// [`METADATA_CACHE_BYTES`]. Measured 2026-11-25 (a cold `serve` on koel at
/// b73c97ff92 until `index ready`, 1,347 files, 6,065 chunks, debug build,
/// the two builds one after the other): the `serve`'s peak `VmHWM` 352 MB
/// with Lance's defaults, 325 MB bounded; 20 warm `query` calls after it,
/// p50 66 ms and 64 ms.
fn cache_session() -> Arc<lancedb::Session> {
    Arc::new(lancedb::Session::new(
        INDEX_CACHE_BYTES,
        METADATA_CACHE_BYTES,
        Arc::new(lancedb::ObjectStoreRegistry::default()),
    ))
}

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

/// The tables of one repository.
pub struct Store {
    db: Connection,
    forest: Table,
    files: Table,
    vocab: Table,
    map: Table,
    dim: usize,
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
            .session(cache_session())
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

    /// Whether `forest` holds a chunk of this kind (`filament_table`,
    /// `table_schema`, …): a framework kind the repository never produces
    /// is not a hint worth giving.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn has_kind(&self, kind: &str) -> Result<bool, StoreError> {
        let filter = format!("kind = {}", sql_str(kind));
        Ok(self.forest.count_rows(Some(filter)).await? > 0)
    }

    /// Rows in `files` (one per file whose words are indexed).
    ///
    /// # Errors
    /// Lance errors.
    pub async fn file_rows(&self) -> Result<usize, StoreError> {
        Ok(self.files.count_rows(None).await?)
    }

    /// The `files` table's version: it moves with every write.
    #[cfg(test)]
    pub(crate) async fn files_version(&self) -> u64 {
        self.files.version().await.unwrap()
    }

    /// Rows in `map`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn map_rows(&self) -> Result<usize, StoreError> {
        Ok(self.map.count_rows(None).await?)
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

    /// Deletes every `forest` row. `files` rows do not depend on the model
    /// and stay (a forced sync replaces them; those of files no longer
    /// indexed go with [`Store::prune`]).
    ///
    /// # Errors
    /// Lance errors.
    pub async fn clear_forest(&self) -> Result<(), StoreError> {
        self.forest.delete("true").await?;
        Ok(())
    }

    /// Brings the full-text indexes up to date: creates those missing (first
    /// sync), and with `changed` adds the rows written since to the others
    /// (LanceDB's incremental index optimisation; rows not yet indexed are
    /// still found by a flat scan meanwhile), or with `rebuild` builds them
    /// again from the rows. The optimised index keeps counting replaced and
    /// deleted rows in BM25's statistics, so a sync that changed or deleted
    /// many files asks for a rebuild (`index::TEXT_REBUILD_SHARE`). Returns
    /// the seconds spent.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn update_text_indexes(
        &self,
        changed: bool,
        rebuild: bool,
    ) -> Result<f64, StoreError> {
        let started = std::time::Instant::now();
        for table in [&self.forest, &self.files] {
            update_text_index(table, changed, rebuild).await?;
        }
        Ok(started.elapsed().as_secs_f64())
    }

    /// [`Store::update_text_indexes`] of the `files` table alone (after the
    /// lexical pass, so that its rows are searched through the index).
    ///
    /// # Errors
    /// Lance errors.
    pub async fn update_file_text_index(&self) -> Result<(), StoreError> {
        update_text_index(&self.files, true, false).await
    }

    /// Compacts every table that holds more than [`MAX_FRAGMENTS`]
    /// fragments: LanceDB's `optimize` (its fragments rewritten into few,
    /// versions older than seven days removed, indexes brought up to date;
    /// a reader of an older version keeps it). Returns the seconds spent, 0
    /// when no table needed it.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn compact(&self) -> Result<f64, StoreError> {
        let started = std::time::Instant::now();
        let mut compacted = false;
        for table in [&self.forest, &self.files, &self.vocab, &self.map] {
            if fragments(table).await? > MAX_FRAGMENTS {
                table.optimize(OptimizeAction::All).await?;
                compacted = true;
            }
        }
        Ok(if compacted {
            started.elapsed().as_secs_f64()
        } else {
            0.0
        })
    }

    /// Fragments of `forest` and `files`.
    #[cfg(test)]
    pub(crate) async fn fragments(&self) -> (usize, usize) {
        (
            fragments(&self.forest).await.unwrap(),
            fragments(&self.files).await.unwrap(),
        )
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
}

/// Fragments (files of rows) `table` holds.
async fn fragments(table: &Table) -> lancedb::Result<usize> {
    Ok(table.stats().await?.fragment_stats.num_fragments)
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

/// Creates the full-text indexes of `table` that are missing (when it has
/// rows), and with `changed` adds the rows written since to the others, or
/// with `rebuild` builds them again from the rows.
async fn update_text_index(table: &Table, changed: bool, rebuild: bool) -> Result<(), StoreError> {
    let indices = table.list_indices().await?;
    let mut rebuilt: Vec<&str> = Vec::new();
    for (t, col) in FTS_COLUMNS {
        if t != table.name() {
            continue;
        }
        let existing = indices.iter().find(|i| i.columns.iter().any(|c| c == col));
        // Rows are counted only when an index may be built: a sync with
        // nothing to do reads no more than before.
        let build =
            (existing.is_none() || (changed && rebuild)) && table.count_rows(None).await? > 0;
        if build {
            table
                .create_index(&[col], Index::FTS(fts_params()))
                .replace(true)
                .execute()
                .await?;
            rebuilt.push(col);
        }
    }
    // The others (and the vector index of `forest`) take the new rows.
    let others = indices
        .iter()
        .any(|i| !i.columns.iter().any(|c| rebuilt.contains(&c.as_str())));
    if others && changed {
        table
            .optimize(OptimizeAction::Index(Default::default()))
            .await?;
    }
    Ok(())
}
