//! The `vocab` table: the repository's words and their vectors, the
//! Japanese → English bridge's search space.

use super::*;

impl Store {
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
}
