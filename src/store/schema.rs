//! The tables' Arrow schemas and the compatibility check that decides
//! whether an existing table can be kept.

use super::*;

pub(super) fn forest_schema(dim: usize) -> SchemaRef {
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

pub(super) fn files_schema() -> SchemaRef {
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

pub(super) fn vocab_schema(dim: usize) -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("word", DataType::Utf8, false),
        Field::new("files", DataType::UInt32, false),
        vector_field(dim),
    ]))
}

pub(super) fn map_schema(dim: usize) -> SchemaRef {
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

pub(super) fn vector_field(dim: usize) -> Field {
    Field::new(
        "vector",
        DataType::FixedSizeList(
            Arc::new(Field::new("item", DataType::Float32, true)),
            dim as i32,
        ),
        false,
    )
}

/// Same column names and types (vector width included); nullability and
/// metadata, which Lance may normalise, are not compared.
pub(super) fn compatible(found: &Schema, expected: &Schema) -> bool {
    found.fields().len() == expected.fields().len()
        && found
            .fields()
            .iter()
            .zip(expected.fields())
            .all(|(a, b)| a.name() == b.name() && same_type(a.data_type(), b.data_type()))
}

pub(super) fn same_type(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::FixedSizeList(x, n), DataType::FixedSizeList(y, m)) => {
            n == m && x.data_type() == y.data_type()
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_compatible_by_names_and_types_only() {
        let f = forest_schema(384);
        assert!(compatible(&f, &forest_schema(384)));
        // Another vector width is another index.
        assert!(!compatible(&f, &forest_schema(768)));
        assert!(!compatible(&files_schema(), &f));
        // Nullability and metadata, which Lance may normalise, do not count.
        let relaxed = Schema::new(
            f.fields()
                .iter()
                .map(|x| x.as_ref().clone().with_nullable(true))
                .collect::<Vec<_>>(),
        );
        assert!(compatible(&relaxed, &f));
        // A column renamed or dropped does.
        let mut fields: Vec<Field> = f.fields().iter().map(|x| x.as_ref().clone()).collect();
        fields.pop();
        assert!(!compatible(&Schema::new(fields), &f));
    }
}
