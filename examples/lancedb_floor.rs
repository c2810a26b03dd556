//! The peer of the binary-size benchmark (`bench/run.sh size`, issue 14
//! part 1): a program that uses LanceDB the way code-intel does and nothing
//! else. It creates a table of (id, text, 4-d vector) rows, builds an FTS
//! index and an IVF_FLAT index, merge-inserts, deletes and optimizes, then
//! runs a BM25 and a vector query with SQL filters, on a store opened by URI
//! (a directory, or `s3://` with the default `s3` feature), with the same
//! features and profile as code-intel. Its stripped size is the part of
//! code-intel's size that LanceDB sets.
//!
//! `cargo run --release --example lancedb_floor -- <empty dir or URI>`
//! prints the row counts to stderr.

use std::sync::Arc;

use arrow_array::{
    FixedSizeListArray, Float32Array, RecordBatch, RecordBatchIterator, StringArray,
};
use arrow_schema::{DataType, Field, Schema};
use futures::TryStreamExt;
use lancedb::index::Index;
use lancedb::index::scalar::{FtsIndexBuilder, FullTextSearchQuery};
use lancedb::index::vector::IvfFlatIndexBuilder;
use lancedb::query::{ExecutableQuery, QueryBase};
use lancedb::table::OptimizeAction;

fn batch(n: usize, offset: usize) -> (Arc<Schema>, RecordBatch) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new(
            "vector",
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), 4),
            false,
        ),
    ]));
    let ids: Vec<String> = (offset..offset + n).map(|i| format!("id{i}")).collect();
    let texts: Vec<String> = (offset..offset + n)
        .map(|i| format!("word{} other{}", i % 7, i % 3))
        .collect();
    let values: Vec<f32> = (0..n * 4).map(|i| (i % 11) as f32).collect();
    let vectors = FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        4,
        Arc::new(Float32Array::from(values)),
        None,
    );
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(ids)),
            Arc::new(StringArray::from(texts)),
            Arc::new(vectors),
        ],
    )
    .unwrap();
    (schema, b)
}

#[tokio::main]
async fn main() -> lancedb::Result<()> {
    let uri = std::env::args()
        .nth(1)
        .expect("usage: lancedb_floor <dir or URI>");
    let db = lancedb::connect(&uri).execute().await?;
    let (_, b) = batch(300, 0);
    let table = db.create_table("t", vec![b]).execute().await?;
    table
        .create_index(&["text"], Index::FTS(FtsIndexBuilder::default().stem(true)))
        .execute()
        .await?;
    table
        .create_index(
            &["vector"],
            Index::IvfFlat(IvfFlatIndexBuilder::default().num_partitions(2)),
        )
        .execute()
        .await?;
    let (schema, b) = batch(100, 250);
    let mut merge = table.merge_insert(&["id"]);
    merge
        .when_matched_update_all(None)
        .when_not_matched_insert_all();
    merge
        .execute(Box::new(RecordBatchIterator::new(vec![Ok(b)], schema)))
        .await?;
    table.delete("id = 'id1'").await?;
    table.optimize(OptimizeAction::All).await?;
    let bm25: Vec<RecordBatch> = table
        .query()
        .full_text_search(FullTextSearchQuery::new("word3".to_string()))
        .only_if("id != 'id3'")
        .limit(5)
        .execute()
        .await?
        .try_collect()
        .await?;
    let knn: Vec<RecordBatch> = table
        .query()
        .nearest_to(vec![1.0, 2.0, 3.0, 4.0])?
        .only_if("id IN ('id4', 'id5', 'id6')")
        .limit(5)
        .execute()
        .await?
        .try_collect()
        .await?;
    let rows = |v: &[RecordBatch]| v.iter().map(|b| b.num_rows()).sum::<usize>();
    eprintln!(
        "rows {}; bm25 {}; knn {}",
        table.count_rows(None).await?,
        rows(&bm25),
        rows(&knn)
    );
    Ok(())
}
