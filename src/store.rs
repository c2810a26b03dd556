//! LanceDB at `.code-intel/lance`: tables `forest` (code chunks) and `map`
//! (agreements: past successful query → symbol pairs). Arrow stays here.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt32Type};
use arrow_array::{Array, FixedSizeListArray, Float32Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::{Connection, DistanceType, Table};
use serde::Serialize;

use crate::chunk::Chunk;

pub const FOREST: &str = "forest";
pub const MAP: &str = "map";
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
}

/// One chunk of `forest` with its vector.
pub struct ForestRow<'a> {
    pub chunk: &'a Chunk,
    pub hash: &'a str,
    pub vector: &'a [f32],
}

/// A `forest` search hit. `score` is cosine similarity (1 − cosine distance).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ForestHit {
    pub file: String,
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

/// Both tables of one repository.
pub struct Store {
    _db: Connection,
    forest: Table,
    map: Table,
    dim: usize,
}

fn forest_schema(dim: usize) -> SchemaRef {
    let s = |n: &str| Field::new(n, DataType::Utf8, false);
    let o = |n: &str| Field::new(n, DataType::Utf8, true);
    Arc::new(Schema::new(vec![
        s("file"),
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
    /// Opens (creating when missing) both tables under `dir`. A table whose
    /// vector width differs from `dim` (model changed) is recreated empty.
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
        let forest = open_or_create(&db, &names, FOREST, forest_schema(dim))
            .await
            .map_err(open_err)?;
        let map = open_or_create(&db, &names, MAP, map_schema(dim))
            .await
            .map_err(open_err)?;
        Ok(Store {
            _db: db,
            forest,
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
        for part in hashes.chunks(HASH_LOOKUP_BATCH) {
            let list: Vec<String> = part.iter().map(|h| sql_str(h)).collect();
            let batches: Vec<RecordBatch> = self
                .forest
                .query()
                .only_if(format!("content_hash IN ({})", list.join(",")))
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
        Ok(out)
    }

    /// Deletes every `forest` row of these files.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn delete_files(&self, files: &[String]) -> Result<(), StoreError> {
        for part in files.chunks(HASH_LOOKUP_BATCH) {
            let list: Vec<String> = part.iter().map(|f| sql_str(f)).collect();
            self.forest
                .delete(format!("file IN ({})", list.join(",")).as_str())
                .await?;
        }
        Ok(())
    }

    /// Deletes every `forest` row.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn clear_forest(&self) -> Result<(), StoreError> {
        self.forest.delete("true").await?;
        Ok(())
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
        let reader = arrow_array::RecordBatchIterator::new(vec![Ok(batch)], schema);
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
        let vectors = FixedSizeListArray::try_new(
            Arc::new(Field::new("item", DataType::Float32, true)),
            self.dim as i32,
            Arc::new(Float32Array::from(flat)),
            None,
        )
        .map_err(|e| StoreError::Data(e.to_string()))?;
        let batch = RecordBatch::try_new(
            forest_schema(self.dim),
            vec![
                str_col(&|r| r.chunk.file.clone()),
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
                Arc::new(vectors),
            ],
        )
        .map_err(|e| StoreError::Data(e.to_string()))?;
        Ok(batch)
    }

    /// Nearest `forest` chunks by cosine similarity, optionally filtered by
    /// a Lance SQL predicate.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn search_forest(
        &self,
        vector: &[f32],
        limit: usize,
        filter: Option<&str>,
    ) -> Result<Vec<ForestHit>, StoreError> {
        let mut q = self
            .forest
            .query()
            .nearest_to(vector.to_vec())?
            .distance_type(DistanceType::Cosine)
            .limit(limit);
        if let Some(f) = filter {
            q = q.only_if(f);
        }
        let batches: Vec<RecordBatch> = q.execute().await?.try_collect().await?;
        let mut hits = forest_hits(&batches)?;
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(hits)
    }

    /// `forest` rows matching a Lance SQL predicate, at most `limit`, with
    /// their stored vectors and `score` 0 (no query vector).
    ///
    /// # Errors
    /// Lance errors.
    pub async fn forest_where(
        &self,
        filter: &str,
        limit: usize,
    ) -> Result<Vec<ForestHit>, StoreError> {
        let batches: Vec<RecordBatch> = self
            .forest
            .query()
            .only_if(filter)
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
        let vectors = FixedSizeListArray::try_new(
            Arc::new(Field::new("item", DataType::Float32, true)),
            self.dim as i32,
            Arc::new(Float32Array::from(vector.to_vec())),
            None,
        )
        .map_err(|e| StoreError::Data(e.to_string()))?;
        let batch = RecordBatch::try_new(
            map_schema(self.dim),
            vec![
                text(id),
                text(query),
                text(&json(symbols)),
                text(&json(files)),
                text(&crate::index::now_secs().to_string()),
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

/// Reads `forest` rows; `score` is 1 − `_distance` when the batch has one,
/// else 0.
fn forest_hits(batches: &[RecordBatch]) -> Result<Vec<ForestHit>, StoreError> {
    let mut hits = Vec::new();
    for b in batches {
        let s = |n| string_col(b, n);
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
        let vectors = vector_col(b).ok();
        for i in 0..b.num_rows() {
            let opt = |a: &StringArray| (!a.is_null(i)).then(|| a.value(i).to_string());
            hits.push(ForestHit {
                file: file.value(i).into(),
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
                score: dist.map_or(0.0, |d| 1.0 - d.value(i)),
                vector: vectors.map(|v| row_vector(v, i)).unwrap_or_default(),
            });
        }
    }
    Ok(hits)
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
    column(b, "_distance")?
        .as_primitive_opt::<Float32Type>()
        .ok_or_else(|| StoreError::Data("column `_distance` is not f32".into()))
}

fn vector_col(b: &RecordBatch) -> Result<&FixedSizeListArray, StoreError> {
    column(b, "vector")?
        .as_fixed_size_list_opt()
        .ok_or_else(|| StoreError::Data("column `vector` is not a fixed-size list".into()))
}

fn row_vector(vectors: &FixedSizeListArray, i: usize) -> Vec<f32> {
    vectors
        .value(i)
        .as_primitive::<Float32Type>()
        .values()
        .to_vec()
}
