//! The `map` table: agreements of successful sessions and their search.

use super::*;

/// A `map` search hit (an agreement recorded after a successful session).
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct MapHit {
    pub query: String,
    /// JSON list of symbols the agreement names.
    pub symbols: String,
    /// JSON list of files.
    pub files: String,
    pub score: f32,
}

impl Store {
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
