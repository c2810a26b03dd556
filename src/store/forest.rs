//! The `forest` table: chunk rows with their vectors, the vector cache
//! kept across a forced rebuild, and the chunk searches (vector, BM25,
//! chunks of files).

use super::*;

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
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub meta: Facts,
    /// Symbols the chunk points at (FQCNs, `table:…`, `route:…`).
    pub related: Vec<String>,
    pub score: f32,
    /// The stored embedding (not serialised; used by hybrid ranking).
    #[serde(skip)]
    #[schemars(skip)]
    pub vector: Vec<f32>,
}

/// Chunks with fewer letters and digits than this say too little for their
/// embedding to mean anything: a `storage/app/.gitignore` (`*`,
/// `!.gitignore`, 15) or an empty `.gitkeep` lies near every request in
/// multilingual-e5-small's space (short texts sit close to the centroid) and
/// took `query`'s top three on filamentphp/demo for "Hide sidebar on
/// creation" (bench/changeset.py, snapshot 2022-06-01). The shortest real
/// members, a migration's `down()` with one `dropIfExists`, have over 40.
pub const MIN_EMBEDDED_CHARS: usize = 16;

/// Whether a chunk's `content` is too short for vector similarity to count
/// (fewer than [`MIN_EMBEDDED_CHARS`] alphanumeric chars; CJK letters
/// count). Such chunks stay searchable by words and names.
pub fn says_little(content: &str) -> bool {
    content
        .chars()
        .filter(|c| c.is_alphanumeric())
        .take(MIN_EMBEDDED_CHARS)
        .count()
        < MIN_EMBEDDED_CHARS
}

/// `forest` columns a search reads (all but the search text; the vector
/// only where a caller needs it).
pub(super) const FOREST_READ_COLUMNS: [&str; 15] = [
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

/// A row's `meta` column: its facts, or none (with a warning naming the
/// file) when the text cannot be read — a row another build wrote, or a
/// damaged one; the chunk stays searchable by its text and vector.
fn stored_facts(file: &str, text: &str) -> Facts {
    Facts::from_stored(text).unwrap_or_else(|e| {
        tracing::warn!("{file}: {e}");
        Facts::default()
    })
}

/// Reads `forest` rows; `score` is 1 − `_distance` (vector search),
/// `_score` (full-text search) or 0.
pub(super) fn forest_hits(batches: &[RecordBatch]) -> Result<Vec<ForestHit>, StoreError> {
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
                meta: stored_facts(file.value(i), meta.value(i)),
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

impl Store {
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

    pub(super) async fn vector_cache(&self) -> Result<Option<Table>, StoreError> {
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

    /// BM25 search of `forest` chunks, best first, at most `limit`; `score`
    /// is the BM25 score.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn search_chunks_text(
        &self,
        query: &Bm25Query,
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

    pub(super) fn vectors(&self, flat: Vec<f32>) -> Result<FixedSizeListArray, StoreError> {
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

    pub(super) fn forest_batch(&self, rows: &[ForestRow<'_>]) -> Result<RecordBatch, StoreError> {
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
                str_col(&|r| r.chunk.meta.to_stored()),
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
                    .chain([&"vector", &"_distance"])
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
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_say_little_and_code_does_not() {
        use super::says_little;
        assert!(says_little(""));
        assert!(says_little("*\n!.gitignore\n"));
        assert!(says_little("*\n!public/\n!.gitignore\n"));
        assert!(!says_little(
            "public function down()\n{\n    Schema::dropIfExists('media');\n}"
        ));
        // Sixteen Japanese letters are a sentence, not a placeholder.
        assert!(!says_little("注文の合計金額を税込みで計算して表示する処理"));
    }

    /// The IVF index probes every partition of a table of its size: the
    /// nearest chunks and their scores are those of the flat scan.
    #[tokio::test]
    async fn the_vector_index_finds_what_the_flat_scan_finds() {
        use super::*;
        use crate::store::{Scope, VECTOR_INDEX_MIN_ROWS};
        const DIM: usize = 16;
        // Deterministic pseudo-random unit vectors (splitmix64).
        let vector = |i: usize| -> Vec<f32> {
            let mut x = i as u64;
            let v: Vec<f32> = (0..DIM)
                .map(|_| {
                    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = x;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    (z ^ (z >> 31)) as f32 / u64::MAX as f32 - 0.5
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect()
        };
        let chunks: Vec<Chunk> = (0..VECTOR_INDEX_MIN_ROWS)
            .map(|i| Chunk {
                file: format!("src/m{}.py", i / 10),
                language: "python".into(),
                kind: "function".into(),
                name: format!("f{i}"),
                scope: None,
                fqcn: None,
                signature: format!("def f{i}()"),
                doc: None,
                start_line: i % 10 * 3 + 1,
                end_line: i % 10 * 3 + 2,
                content: format!("def f{i}():\n    return {i}\n"),
                meta: Default::default(),
                related: Vec::new(),
            })
            .collect();
        let vectors: Vec<Vec<f32>> = (0..chunks.len()).map(vector).collect();
        let hashes: Vec<String> = (0..chunks.len()).map(|i| format!("h{i}")).collect();
        let rows: Vec<ForestRow> = chunks
            .iter()
            .zip(&vectors)
            .zip(&hashes)
            .map(|((chunk, vector), hash)| ForestRow {
                chunk,
                hash,
                vector,
                class: FileClass::Source,
                search_text: &chunk.name,
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), DIM).await.unwrap();
        store.add(&rows).await.unwrap();
        let nearest = async |store: &Store| -> Vec<Vec<(String, u32, i64)>> {
            let mut all = Vec::new();
            for q in [1, 2_500, 4_999, 12_345] {
                let hits = store
                    .search_forest(&vector(q), 100, &Scope::default())
                    .await
                    .unwrap();
                // Scores to 1e-5: the index sums the products in another order.
                all.push(
                    hits.into_iter()
                        .map(|h| (h.file, h.start_line, (h.score * 1e5).round() as i64))
                        .collect(),
                );
            }
            all
        };
        let flat = nearest(&store).await;
        store.ensure_vector_index().await.unwrap();
        assert!(
            store
                .forest
                .list_indices()
                .await
                .unwrap()
                .iter()
                .any(|i| i.columns == ["vector"]),
            "no IVF index was built"
        );
        assert_eq!(nearest(&store).await, flat);
    }
}
