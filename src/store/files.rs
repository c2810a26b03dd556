//! The `files` table: one row per file with its file-level search text
//! and class; the file-level BM25 search.

use super::*;

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

impl Store {
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

    /// BM25 search of `files` over [`FILE_COLUMNS`], best first, at most
    /// `limit`.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn search_files(
        &self,
        query: &Bm25Query,
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

    /// The vocabulary words of every indexed file ([`crate::lexical::FileText::words`]),
    /// one string per file.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn file_words(&self) -> Result<Vec<String>, StoreError> {
        strings(&read_columns(&self.files, &["words"]).await?, "words")
    }

    /// Deletes the `forest` and `files` rows of files `keep` does not hold:
    /// `files` rows the lexical pass wrote for files a sync then left out
    /// or that vanished after a killed sync, and rows of files that
    /// vanished while a state of an older layout was read again
    /// ([`crate::index::SyncState::load`]). Returns how many files went.
    ///
    /// # Errors
    /// Lance errors.
    pub async fn prune(&self, keep: &HashSet<&str>) -> Result<usize, StoreError> {
        let mut gone: HashSet<String> = HashSet::new();
        for table in [&self.files, &self.forest] {
            gone.extend(
                strings(&read_columns(table, &["file"]).await?, "file")?
                    .into_iter()
                    .filter(|f| !keep.contains(f.as_str())),
            );
        }
        let gone: Vec<String> = gone.into_iter().collect();
        self.delete_files(&gone).await?;
        Ok(gone.len())
    }
}
