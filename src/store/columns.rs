//! Arrow helpers: typed columns of record batches, vectors as
//! fixed-size lists, SQL string literals, whole-column reads.

use super::*;

/// Quotes a string for a Lance SQL filter (`'` doubled).
pub fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Every row of `table`, these columns only.
pub(super) async fn read_columns(
    table: &Table,
    columns: &[&str],
) -> lancedb::Result<Vec<RecordBatch>> {
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
pub(super) fn strings(batches: &[RecordBatch], col: &str) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for b in batches {
        let c = string_col(b, col)?;
        out.extend((0..b.num_rows()).map(|i| c.value(i).to_string()));
    }
    Ok(out)
}

pub(super) fn column<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a Arc<dyn Array>, StoreError> {
    b.column_by_name(name)
        .ok_or_else(|| StoreError::Data(format!("column `{name}` missing")))
}

pub(super) fn string_col<'a>(
    b: &'a RecordBatch,
    name: &str,
) -> Result<&'a StringArray, StoreError> {
    column(b, name)?
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| StoreError::Data(format!("column `{name}` is not text")))
}

pub(super) fn u32_col<'a>(
    b: &'a RecordBatch,
    name: &str,
) -> Result<&'a arrow_array::PrimitiveArray<UInt32Type>, StoreError> {
    column(b, name)?
        .as_primitive_opt::<UInt32Type>()
        .ok_or_else(|| StoreError::Data(format!("column `{name}` is not u32")))
}

pub(super) fn distance_col(
    b: &RecordBatch,
) -> Result<&arrow_array::PrimitiveArray<Float32Type>, StoreError> {
    f32_col(b, "_distance")
}

pub(super) fn f32_col<'a>(
    b: &'a RecordBatch,
    name: &str,
) -> Result<&'a arrow_array::PrimitiveArray<Float32Type>, StoreError> {
    column(b, name)?
        .as_primitive_opt::<Float32Type>()
        .ok_or_else(|| StoreError::Data(format!("column `{name}` is not f32")))
}

pub(super) fn vector_col(b: &RecordBatch) -> Result<&FixedSizeListArray, StoreError> {
    column(b, "vector")?
        .as_fixed_size_list_opt()
        .ok_or_else(|| StoreError::Data("column `vector` is not a fixed-size list".into()))
}

/// `flat` (rows × `dim` values) as the `vector` column.
pub(super) fn vector_array(flat: Vec<f32>, dim: usize) -> Result<FixedSizeListArray, StoreError> {
    FixedSizeListArray::try_new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        dim as i32,
        Arc::new(Float32Array::from(flat)),
        None,
    )
    .map_err(|e| StoreError::Data(e.to_string()))
}

pub(super) fn row_vector(vectors: &FixedSizeListArray, i: usize) -> Vec<f32> {
    vectors
        .value(i)
        .as_primitive::<Float32Type>()
        .values()
        .to_vec()
}
