//! The model's weights in a file ONNX Runtime maps instead of copying.
//!
//! The Hub's `model.onnx` stores every initializer inline (`raw_data`), so
//! ONNX Runtime copies all of them into its own memory: 470 MB of the fp32
//! multilingual-e5-small, 384 MB of which is the 250,002 × 384 word-embedding
//! table a text reads a few hundred rows of. Stored as ONNX external data at
//! offsets aligned to [`ALIGN`], ONNX Runtime 1.31 maps such initializers
//! (`MapFileIntoMemory`) and uses the mapping in place: the pages of the
//! table are read from the file when a text uses their rows, and they are
//! the kernel's page cache, shared by every process that maps the file and
//! reclaimable under memory pressure. Measured on this project's test
//! machine (2026-11-25, ONNX Runtime 1.31.1 through Python, fp32 e5): anonymous
//! memory after load 547 → 108 MB; after embedding 74 passages of koel's
//! `app/Services` (1,537 distinct tokens), 361 MB of file pages (the
//! kernel's read-around brings 128 KiB per missing row; advising the
//! mapping `MADV_RANDOM` keeps that to 44 MB but needs `unsafe`, which this
//! crate forbids). The computation is the same on the same bytes, so
//! embeddings do not change.
//!
//! That still leaves the table's pages in the service's RSS: every page a
//! text's rows fall in, plus the kernel's read-around, stays mapped, and a
//! large repository's texts touch most of the 384 MB (`RssFile` 408 MB
//! after 1,461 chunks of laravel/framework; docs/measurements.md § Speed, memory
//! and quality has the measurements before and after). So the rewrite also
//! *detaches* the table: the one `Gather` that reads rows of a large 2-D
//! initializer by a graph input (`word_embeddings[input_ids]`) is removed,
//! its output becomes a graph input, the table stays in the data file, and
//! [`DetachedGather`] (the model's metadata entry [`DETACHED_KEY`]) tells the
//! caller where the rows are: the session's caller reads the rows a batch
//! needs with positional reads (page cache, not the process's RSS) and
//! passes them in. A `Gather` on axis 0 copies rows, so the model computes
//! on the same numbers.
//!
//! The rewrite walks the protobuf wire format (`ModelProto.graph` →
//! `GraphProto.initializer` → `TensorProto.raw_data`, field numbers of
//! `onnx/onnx.proto`) and copies every other field byte for byte, so fields
//! this code does not know survive.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use prost::encoding::{WireType, decode_key, decode_varint, encode_key, encode_varint};

/// Alignment of each initializer's offset in the data file, in bytes: ONNX
/// Runtime maps an external initializer only when its offset is a multiple
/// of the allocation granularity (4 KiB pages on Linux, 64 KiB on Windows);
/// 64 KiB satisfies both.
pub const ALIGN: u64 = 65_536;

/// Initializers smaller than this many bytes stay inline (biases and
/// layer-norm weights: 1.5 KiB each in e5-small; mapping them would cost a
/// 64 KiB-aligned slot each for nothing).
pub const MIN_EXTERNAL_BYTES: usize = 4096;

/// A 2-D initializer read by a `Gather` is detached ([`DetachedGather`])
/// from this many bytes on: e5-small's word embeddings are 384 MB fp32 and
/// 96 MB int8; the next largest tables (positions, 197 KB) stay in the model.
pub const DETACH_MIN_BYTES: usize = 16 << 20;

/// The model metadata key (`ModelProto.metadata_props`) whose value is the
/// JSON of the [`DetachedGather`] the rewrite made.
pub const DETACHED_KEY: &str = "code-intel.detached_gather";

/// A `Gather` the rewritten model leaves to its caller: feed graph input
/// `input` with the rows of the table that `indices` (the graph input of
/// token ids) selects, shape `[batch, tokens, cols]`, element type
/// `elem_type` (`TensorProto.DataType`: 1 float, 2 uint8, 3 int8). Row `i`
/// is `cols` elements, little-endian, at byte `offset + i × cols × size` of
/// the data file `location` (relative to the model's directory); `rows`
/// rows in all.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DetachedGather {
    pub input: String,
    pub indices: String,
    pub location: String,
    pub offset: u64,
    pub rows: u64,
    pub cols: u64,
    pub elem_type: i32,
}

/// `ModelProto.graph`, `.metadata_props`.
const MODEL_GRAPH: u32 = 7;
const MODEL_METADATA: u32 = 14;
/// `GraphProto.node`, `.initializer`, `.input`.
const GRAPH_NODE: u32 = 1;
const GRAPH_INITIALIZER: u32 = 5;
const GRAPH_INPUT: u32 = 11;
/// `NodeProto.input`, `.output`, `.op_type`, `.attribute`;
/// `AttributeProto.name`, `.i`.
const NODE_INPUT: u32 = 1;
const NODE_OUTPUT: u32 = 2;
const NODE_OP_TYPE: u32 = 4;
const NODE_ATTRIBUTE: u32 = 5;
const ATTRIBUTE_NAME: u32 = 1;
const ATTRIBUTE_INT: u32 = 3;
/// `ValueInfoProto.name`, `.type`; `TypeProto.tensor_type`;
/// `TypeProto.Tensor.elem_type`, `.shape`; `TensorShapeProto.dim`;
/// `Dimension.dim_value`, `.dim_param`.
const VALUE_NAME: u32 = 1;
const VALUE_TYPE: u32 = 2;
const TYPE_TENSOR: u32 = 1;
const TENSOR_TYPE_ELEM: u32 = 1;
const TENSOR_TYPE_SHAPE: u32 = 2;
const SHAPE_DIM: u32 = 1;
const DIM_VALUE: u32 = 1;
const DIM_PARAM: u32 = 2;
/// `TensorProto.dims`, `.data_type`, `.name`.
const TENSOR_DIMS: u32 = 1;
const TENSOR_DATA_TYPE: u32 = 2;
const TENSOR_NAME: u32 = 8;
/// `TensorProto.raw_data`, `.external_data`, `.data_location`.
const TENSOR_RAW_DATA: u32 = 9;
const TENSOR_EXTERNAL_DATA: u32 = 13;
const TENSOR_DATA_LOCATION: u32 = 14;
/// `TensorProto.DataLocation.EXTERNAL`.
const LOCATION_EXTERNAL: u64 = 1;

/// One field of a protobuf message: its number, its bytes as written (key
/// included) and, for a length-delimited field, its payload.
struct Field<'a> {
    number: u32,
    raw: &'a [u8],
    payload: Option<&'a [u8]>,
    /// A varint field's value.
    varint: Option<u64>,
}

fn malformed(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("not an ONNX model: {what}"),
    )
}

/// The fields of one message, in order.
fn fields(message: &[u8]) -> io::Result<Vec<Field<'_>>> {
    let mut out = Vec::new();
    let mut rest = message;
    while !rest.is_empty() {
        let start = message.len() - rest.len();
        let (number, wire) = decode_key(&mut rest).map_err(|e| malformed(&e.to_string()))?;
        let mut payload = None;
        let mut varint = None;
        match wire {
            WireType::Varint => {
                varint = Some(decode_varint(&mut rest).map_err(|e| malformed(&e.to_string()))?);
            }
            WireType::SixtyFourBit | WireType::ThirtyTwoBit => {
                let n = if wire == WireType::SixtyFourBit { 8 } else { 4 };
                rest = rest
                    .get(n..)
                    .ok_or_else(|| malformed("truncated fixed field"))?;
            }
            WireType::LengthDelimited => {
                let len = decode_varint(&mut rest).map_err(|e| malformed(&e.to_string()))?;
                let len = usize::try_from(len).map_err(|_| malformed("field too long"))?;
                let body = rest
                    .get(..len)
                    .ok_or_else(|| malformed("truncated field"))?;
                payload = Some(body);
                rest = &rest[len..];
            }
            WireType::StartGroup | WireType::EndGroup => return Err(malformed("group field")),
        }
        out.push(Field {
            number,
            raw: &message[start..message.len() - rest.len()],
            payload,
            varint,
        });
    }
    Ok(out)
}

fn put_bytes(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// `StringStringEntryProto { key = 1, value = 2 }`.
fn entry(key: &str, value: &str) -> Vec<u8> {
    let mut e = Vec::new();
    put_bytes(&mut e, 1, key.as_bytes());
    put_bytes(&mut e, 2, value.as_bytes());
    e
}

/// Rewrites `model` (a serialized `ModelProto`) so that each top-level
/// initializer of at least [`MIN_EXTERNAL_BYTES`] is external data in
/// `data`, which the returned model names `data_name` (a path relative to
/// the model file's directory, as ONNX resolves it), and the `Gather` of a
/// table of at least [`DETACH_MIN_BYTES`] is detached (module docs; the
/// model's metadata entry [`DETACHED_KEY`] says where its rows are). `data`
/// is written from offset 0; each initializer starts at a multiple of
/// [`ALIGN`].
///
/// Returns the rewritten model and the bytes moved out (0 when the model
/// already keeps its weights outside, or inline in typed fields).
///
/// # Errors
/// `model` is not a protobuf message of the shape above
/// (`InvalidData`), or writing `data` failed.
pub fn externalize(
    model: &[u8],
    data_name: &str,
    data: &mut impl Write,
) -> io::Result<(Vec<u8>, u64)> {
    let mut written = 0u64;
    let mut moved = 0u64;
    let mut detached = None;
    let mut out = Vec::with_capacity(1 << 20);
    for f in fields(model)? {
        match (f.number, f.payload) {
            (MODEL_GRAPH, Some(graph)) => {
                let gfs = fields(graph)?;
                // Nodes this code cannot read: the weights move out as
                // before, nothing is detached.
                let detach = detachable(&gfs).unwrap_or(None);
                let mut g = Vec::with_capacity(graph.len().min(1 << 20));
                for (i, gf) in gfs.iter().enumerate() {
                    match (gf.number, gf.payload, &detach) {
                        (_, _, Some(d)) if i == d.node || Some(i) == d.table_input => {}
                        (_, _, Some(d)) if i == d.table.field => {
                            let offset = append_aligned(data, d.table.raw, &mut written)?;
                            moved += d.table.raw.len() as u64;
                            detached = Some(DetachedGather {
                                input: d.output.to_string(),
                                indices: d.indices.to_string(),
                                location: data_name.to_string(),
                                offset,
                                rows: d.table.rows,
                                cols: d.table.cols,
                                elem_type: d.table.elem_type,
                            });
                        }
                        (GRAPH_INITIALIZER, Some(tensor), _) => {
                            let t = tensor_out(tensor, data_name, data, &mut written, &mut moved)?;
                            put_bytes(&mut g, GRAPH_INITIALIZER, &t);
                        }
                        _ => g.extend_from_slice(gf.raw),
                    }
                }
                if let Some(d) = &detached {
                    put_bytes(&mut g, GRAPH_INPUT, &rows_input(d));
                }
                put_bytes(&mut out, MODEL_GRAPH, &g);
            }
            _ => out.extend_from_slice(f.raw),
        }
    }
    if let Some(d) = &detached {
        let json = serde_json::to_string(d).map_err(io::Error::other)?;
        put_bytes(&mut out, MODEL_METADATA, &entry(DETACHED_KEY, &json));
    }
    Ok((out, moved))
}

/// The `Gather` [`externalize`] detaches: its index among the graph's
/// fields, its table (name, raw bytes, shape, element type), the index of
/// the graph input that names the table too (older exports list
/// initializers as inputs), its indices input and its output.
struct Detach<'a> {
    node: usize,
    table: Table<'a>,
    table_input: Option<usize>,
    indices: &'a str,
    output: &'a str,
}

/// A `TensorProto` that can be detached: a 2-D table held inline, the
/// `field`-th field of its graph.
#[derive(Clone, Copy)]
struct Table<'a> {
    field: usize,
    name: &'a str,
    raw: &'a [u8],
    rows: u64,
    cols: u64,
    elem_type: i32,
}

/// The first length-delimited field `number` of `message` as UTF-8.
fn string(message: &[u8], number: u32) -> io::Result<Option<&str>> {
    Ok(fields(message)?
        .into_iter()
        .find(|f| f.number == number)
        .and_then(|f| f.payload)
        .and_then(|p| std::str::from_utf8(p).ok()))
}

/// Every length-delimited field `number` of `message` as UTF-8.
fn strings(message: &[u8], number: u32) -> io::Result<Vec<&str>> {
    Ok(fields(message)?
        .into_iter()
        .filter(|f| f.number == number)
        .filter_map(|f| f.payload.and_then(|p| std::str::from_utf8(p).ok()))
        .collect())
}

/// The `Gather` to detach: on axis 0, reading a 2-D initializer of at
/// least [`DETACH_MIN_BYTES`] held inline (float, uint8 or int8) that no
/// other node reads, by a graph input; the largest such table when there
/// are several.
fn detachable<'a>(graph: &[Field<'a>]) -> io::Result<Option<Detach<'a>>> {
    let mut inputs = Vec::new();
    let mut nodes = Vec::new();
    let mut tables = Vec::new();
    for (i, f) in graph.iter().enumerate() {
        let Some(p) = f.payload else { continue };
        match f.number {
            GRAPH_INPUT => inputs.extend(string(p, VALUE_NAME)?.map(|name| (i, name))),
            GRAPH_NODE => nodes.push((i, p)),
            GRAPH_INITIALIZER => tables.extend(table(i, p)?),
            _ => {}
        }
    }
    let mut readers: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut gathers = Vec::new();
    for &(i, p) in &nodes {
        let node_inputs = strings(p, NODE_INPUT)?;
        for name in &node_inputs {
            *readers.entry(name).or_default() += 1;
        }
        if string(p, NODE_OP_TYPE)? != Some("Gather") || axis(p)? != 0 {
            continue;
        }
        let outputs = strings(p, NODE_OUTPUT)?;
        if let ([table, indices], [output]) = (&node_inputs[..], &outputs[..]) {
            gathers.push((i, *table, *indices, *output));
        }
    }
    let input = |name: &str| inputs.iter().find(|(_, n)| *n == name).map(|(i, _)| *i);
    Ok(gathers
        .into_iter()
        .filter(|(_, t, indices, _)| readers.get(t) == Some(&1) && input(indices).is_some())
        .filter_map(|(node, t, indices, output)| {
            let table = *tables.iter().find(|x| x.name == t)?;
            Some(Detach {
                node,
                table,
                table_input: input(t),
                indices,
                output,
            })
        })
        .max_by_key(|d| d.table.raw.len()))
}

/// The tensor, the `field`-th field of its graph, as a [`Table`], when it
/// is one.
fn table(field: usize, tensor: &[u8]) -> io::Result<Option<Table<'_>>> {
    let fs = fields(tensor)?;
    let mut dims = Vec::new();
    for f in fs.iter().filter(|f| f.number == TENSOR_DIMS) {
        match (f.varint, f.payload) {
            (Some(v), _) => dims.push(v),
            (None, Some(mut packed)) => {
                while !packed.is_empty() {
                    dims.push(decode_varint(&mut packed).map_err(|e| malformed(&e.to_string()))?);
                }
            }
            _ => {}
        }
    }
    let elem_type = fs
        .iter()
        .find(|f| f.number == TENSOR_DATA_TYPE)
        .and_then(|f| f.varint)
        .unwrap_or(0) as i32;
    let size = match elem_type {
        1 => 4,
        2 | 3 => 1,
        _ => return Ok(None),
    };
    let name = fs
        .iter()
        .find(|f| f.number == TENSOR_NAME)
        .and_then(|f| f.payload)
        .and_then(|p| std::str::from_utf8(p).ok());
    let raw = fs
        .iter()
        .find(|f| f.number == TENSOR_RAW_DATA)
        .and_then(|f| f.payload);
    match (name, raw, &dims[..]) {
        (Some(name), Some(raw), &[rows, cols])
            if raw.len() >= DETACH_MIN_BYTES && rows * cols * size == raw.len() as u64 =>
        {
            Ok(Some(Table {
                field,
                name,
                raw,
                rows,
                cols,
                elem_type,
            }))
        }
        _ => Ok(None),
    }
}

/// A node's `axis` attribute (0 when absent).
fn axis(node: &[u8]) -> io::Result<i64> {
    for f in fields(node)? {
        if let (NODE_ATTRIBUTE, Some(a)) = (f.number, f.payload) {
            let afs = fields(a)?;
            let named_axis = afs
                .iter()
                .any(|x| x.number == ATTRIBUTE_NAME && x.payload == Some(b"axis"));
            if named_axis {
                let i = afs.iter().find(|x| x.number == ATTRIBUTE_INT);
                return Ok(i.and_then(|x| x.varint).unwrap_or(0) as i64);
            }
        }
    }
    Ok(0)
}

/// The `ValueInfoProto` of the detached rows: `[batch, tokens, cols]`.
fn rows_input(d: &DetachedGather) -> Vec<u8> {
    let mut shape = Vec::new();
    for dim in ["batch", "tokens"] {
        let mut x = Vec::new();
        put_bytes(&mut x, DIM_PARAM, dim.as_bytes());
        put_bytes(&mut shape, SHAPE_DIM, &x);
    }
    let mut x = Vec::new();
    encode_key(DIM_VALUE, WireType::Varint, &mut x);
    encode_varint(d.cols, &mut x);
    put_bytes(&mut shape, SHAPE_DIM, &x);
    let mut tensor = Vec::new();
    encode_key(TENSOR_TYPE_ELEM, WireType::Varint, &mut tensor);
    encode_varint(d.elem_type as u64, &mut tensor);
    put_bytes(&mut tensor, TENSOR_TYPE_SHAPE, &shape);
    let mut ty = Vec::new();
    put_bytes(&mut ty, TYPE_TENSOR, &tensor);
    let mut v = Vec::new();
    put_bytes(&mut v, VALUE_NAME, d.input.as_bytes());
    put_bytes(&mut v, VALUE_TYPE, &ty);
    v
}

/// Writes `raw` to `data` at the next multiple of [`ALIGN`] after
/// `written` bytes, zero-padded; returns its offset.
fn append_aligned(data: &mut impl Write, raw: &[u8], written: &mut u64) -> io::Result<u64> {
    let pad = (ALIGN - *written % ALIGN) % ALIGN;
    data.write_all(&vec![0u8; pad as usize])?;
    let offset = *written + pad;
    data.write_all(raw)?;
    *written = offset + raw.len() as u64;
    Ok(offset)
}

/// One `TensorProto`, its `raw_data` moved to `data` when it is large
/// enough and the tensor is not external already.
fn tensor_out(
    tensor: &[u8],
    data_name: &str,
    data: &mut impl Write,
    written: &mut u64,
    moved: &mut u64,
) -> io::Result<Vec<u8>> {
    let fs = fields(tensor)?;
    let already = fs
        .iter()
        .any(|f| f.number == TENSOR_EXTERNAL_DATA || f.number == TENSOR_DATA_LOCATION);
    let raw = fs
        .iter()
        .find(|f| f.number == TENSOR_RAW_DATA)
        .and_then(|f| f.payload)
        .filter(|r| r.len() >= MIN_EXTERNAL_BYTES);
    let Some(raw) = raw.filter(|_| !already) else {
        return Ok(tensor.to_vec());
    };
    let offset = append_aligned(data, raw, written)?;
    *moved += raw.len() as u64;
    let mut t = Vec::with_capacity(256);
    for f in fs.iter().filter(|f| f.number != TENSOR_RAW_DATA) {
        t.extend_from_slice(f.raw);
    }
    for (k, v) in [
        ("location", data_name.to_string()),
        ("offset", offset.to_string()),
        ("length", raw.len().to_string()),
    ] {
        put_bytes(&mut t, TENSOR_EXTERNAL_DATA, &entry(k, &v));
    }
    encode_key(TENSOR_DATA_LOCATION, WireType::Varint, &mut t);
    encode_varint(LOCATION_EXTERNAL, &mut t);
    Ok(t)
}

/// The version of [`externalize`]'s rewrite, recorded in the stamp of a
/// mapped copy so that a copy an older rewrite made is made again (2: the
/// word-embedding `Gather` detached).
const REWRITE_VERSION: u32 = 2;

/// The name of the data file beside a mapped model.
pub const DATA_FILE: &str = "model.onnx.data";

/// `model.onnx` rewritten by [`externalize`] into `dir` (as `model.onnx` and
/// [`DATA_FILE`]), reusing the copy already there when `dir/source` records
/// the same source (canonical path, size, modification time) and rewrite
/// ([`REWRITE_VERSION`]). Files are
/// written under temporary names and renamed one after the other (data,
/// model, stamp), so no reader sees a half-written file; two processes
/// converting the same source at once write the same bytes. (A process
/// loading in the instant between two renames after the source itself
/// changed could pair the new data with the old model; the next load
/// finds the stamp and both files current.)
///
/// Returns the mapped model's path, or `None` when `source` keeps no
/// initializer inline (nothing to map). Costs a second copy of the weights
/// on disk (470 MB for fp32 e5-small) and one read and write of them the
/// first time (about 2 s here).
///
/// # Errors
/// Reading `source`, writing `dir`, or `source` not an ONNX model.
pub fn mapped_model(source: &Path, dir: &Path) -> io::Result<Option<PathBuf>> {
    let meta = std::fs::metadata(source)?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let stamp = format!(
        "{}\n{}\n{modified}\n{REWRITE_VERSION}\n",
        source.canonicalize()?.display(),
        meta.len()
    );
    let graph = dir.join("model.onnx");
    let stamp_file = dir.join("source");
    if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s == stamp)
        && graph.is_file()
        && dir.join(DATA_FILE).is_file()
    {
        return Ok(Some(graph));
    }
    std::fs::create_dir_all(dir)?;
    let model = std::fs::read(source)?;
    let tmp = |name: &str| dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let (tmp_data, tmp_graph, tmp_stamp) = (tmp(DATA_FILE), tmp("model.onnx"), tmp("source"));
    let result = (|| {
        let mut data = io::BufWriter::new(std::fs::File::create(&tmp_data)?);
        let (rewritten, moved) = externalize(&model, DATA_FILE, &mut data)?;
        data.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        if moved == 0 {
            return Ok(None);
        }
        std::fs::write(&tmp_graph, rewritten)?;
        std::fs::write(&tmp_stamp, &stamp)?;
        std::fs::rename(&tmp_data, dir.join(DATA_FILE))?;
        std::fs::rename(&tmp_graph, &graph)?;
        std::fs::rename(&tmp_stamp, &stamp_file)?;
        Ok(Some(graph.clone()))
    })();
    for t in [&tmp_data, &tmp_graph, &tmp_stamp] {
        let _ = std::fs::remove_file(t);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, raw: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        encode_key(1, WireType::Varint, &mut t); // dims
        encode_varint(raw.len() as u64, &mut t);
        encode_key(2, WireType::Varint, &mut t); // data_type FLOAT… any
        encode_varint(2, &mut t);
        put_bytes(&mut t, 8, name.as_bytes());
        put_bytes(&mut t, TENSOR_RAW_DATA, raw);
        t
    }

    #[test]
    fn large_initializers_move_out_aligned_and_everything_else_stays() {
        let big: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let big2 = vec![7u8; 5000];
        let small = vec![1u8; 16];
        let mut graph = Vec::new();
        put_bytes(&mut graph, 1, b"node bytes"); // GraphProto.node
        for t in [
            tensor("big", &big),
            tensor("small", &small),
            tensor("big2", &big2),
        ] {
            put_bytes(&mut graph, GRAPH_INITIALIZER, &t);
        }
        let mut model = Vec::new();
        encode_key(1, WireType::Varint, &mut model); // ir_version
        encode_varint(8, &mut model);
        put_bytes(&mut model, MODEL_GRAPH, &graph);
        put_bytes(&mut model, 14, b"opset"); // after the graph: order kept

        let mut data = Vec::new();
        let (out, moved) = externalize(&model, "w.data", &mut data).unwrap();
        assert_eq!(moved, 15_000);
        assert_eq!(&data[..10_000], &big[..]);
        assert_eq!(&data[65_536..70_536], &big2[..]);
        assert_eq!(data.len(), 70_536);

        let top = fields(&out).unwrap();
        assert_eq!(top.iter().map(|f| f.number).collect::<Vec<_>>(), [1, 7, 14]);
        let g = fields(top[1].payload.unwrap()).unwrap();
        assert_eq!(g[0].raw, fields(&graph).unwrap()[0].raw);
        let inits: Vec<_> = g.iter().skip(1).map(|f| f.payload.unwrap()).collect();
        assert_eq!(inits[1], &tensor("small", &small)[..], "small stays inline");
        let ext = |t: &[u8]| -> Vec<(String, String)> {
            fields(t)
                .unwrap()
                .into_iter()
                .filter(|f| f.number == TENSOR_EXTERNAL_DATA)
                .map(|f| {
                    let kv = fields(f.payload.unwrap()).unwrap();
                    let s = |i: usize| String::from_utf8(kv[i].payload.unwrap().to_vec()).unwrap();
                    (s(0), s(1))
                })
                .collect()
        };
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            ext(inits[2]),
            [
                kv("location", "w.data"),
                kv("offset", "65536"),
                kv("length", "5000")
            ]
        );
        let big_fields = fields(inits[0]).unwrap();
        assert!(big_fields.iter().all(|f| f.number != TENSOR_RAW_DATA));
        assert_eq!(big_fields[2].payload, Some(&b"big"[..]), "name kept");
        assert_eq!(
            big_fields.last().unwrap().raw,
            [TENSOR_DATA_LOCATION as u8 * 8, 1]
        );

        // Already external: a second pass moves nothing.
        let mut again = Vec::new();
        let (same, moved) = externalize(&out, "w.data", &mut again).unwrap();
        assert_eq!((moved, again.len()), (0, 0));
        assert_eq!(same, out);
    }

    fn one_initializer_model(raw: &[u8]) -> Vec<u8> {
        let mut graph = Vec::new();
        put_bytes(&mut graph, GRAPH_INITIALIZER, &tensor("w", raw));
        let mut model = Vec::new();
        put_bytes(&mut model, MODEL_GRAPH, &graph);
        model
    }

    #[test]
    fn the_mapped_copy_is_reused_until_the_source_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("model.onnx");
        let dir = tmp.path().join("mapped");
        std::fs::write(&source, one_initializer_model(&[3u8; 8192])).unwrap();
        let graph = mapped_model(&source, &dir).unwrap().unwrap();
        assert_eq!(graph, dir.join("model.onnx"));
        assert_eq!(std::fs::read(dir.join(DATA_FILE)).unwrap(), vec![3u8; 8192]);
        let first = std::fs::metadata(&graph).unwrap().modified().unwrap();

        // Same source: nothing rewritten.
        std::thread::sleep(std::time::Duration::from_millis(20));
        mapped_model(&source, &dir).unwrap().unwrap();
        assert_eq!(
            std::fs::metadata(&graph).unwrap().modified().unwrap(),
            first
        );

        // Another model at the same path (fp32 swapped for int8): rewritten.
        std::fs::write(&source, one_initializer_model(&[5u8; 4096])).unwrap();
        mapped_model(&source, &dir).unwrap().unwrap();
        assert_eq!(std::fs::read(dir.join(DATA_FILE)).unwrap(), vec![5u8; 4096]);
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());

        // Nothing large enough to map: no copy, the original is used.
        std::fs::write(&source, one_initializer_model(&[1u8; 16])).unwrap();
        assert_eq!(
            mapped_model(&source, &tmp.path().join("none")).unwrap(),
            None
        );
    }

    fn node(op: &str, inputs: &[&str], output: &str) -> Vec<u8> {
        let mut n = Vec::new();
        for i in inputs {
            put_bytes(&mut n, NODE_INPUT, i.as_bytes());
        }
        put_bytes(&mut n, NODE_OUTPUT, output.as_bytes());
        put_bytes(&mut n, NODE_OP_TYPE, op.as_bytes());
        n
    }

    fn table_tensor(name: &str, rows: u64, cols: u64, raw: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        let mut dims = Vec::new();
        encode_varint(rows, &mut dims);
        encode_varint(cols, &mut dims);
        put_bytes(&mut t, TENSOR_DIMS, &dims); // packed, as protobuf 3 writes them
        encode_key(TENSOR_DATA_TYPE, WireType::Varint, &mut t);
        encode_varint(2, &mut t); // uint8
        put_bytes(&mut t, TENSOR_NAME, name.as_bytes());
        put_bytes(&mut t, TENSOR_RAW_DATA, raw);
        t
    }

    fn input(name: &str) -> Vec<u8> {
        let mut v = Vec::new();
        put_bytes(&mut v, VALUE_NAME, name.as_bytes());
        v
    }

    #[test]
    fn the_word_embedding_gather_is_detached_and_its_rows_located() {
        let (rows, cols) = (DETACH_MIN_BYTES as u64 / 64, 64u64);
        let raw: Vec<u8> = (0..rows * cols).map(|i| (i / cols % 251) as u8).collect();
        let model = |extra_reader: bool| {
            let mut graph = Vec::new();
            put_bytes(
                &mut graph,
                GRAPH_NODE,
                &node("Gather", &["word", "input_ids"], "we"),
            );
            put_bytes(&mut graph, GRAPH_NODE, &node("Add", &["we", "pos"], "x"));
            if extra_reader {
                put_bytes(&mut graph, GRAPH_NODE, &node("Shape", &["word"], "s"));
            }
            put_bytes(&mut graph, GRAPH_INPUT, &input("input_ids"));
            // Older exports list initializers among the inputs too.
            put_bytes(&mut graph, GRAPH_INPUT, &input("word"));
            put_bytes(&mut graph, GRAPH_INITIALIZER, &tensor("pos", &[9u8; 8192]));
            put_bytes(
                &mut graph,
                GRAPH_INITIALIZER,
                &table_tensor("word", rows, cols, &raw),
            );
            let mut m = Vec::new();
            put_bytes(&mut m, MODEL_GRAPH, &graph);
            m
        };

        let mut data = Vec::new();
        let (out, moved) = externalize(&model(false), "w.data", &mut data).unwrap();
        assert_eq!(moved, 8192 + raw.len() as u64);
        let top = fields(&out).unwrap();
        let meta = top.iter().find(|f| f.number == MODEL_METADATA).unwrap();
        assert_eq!(
            string(meta.payload.unwrap(), 1).unwrap(),
            Some(DETACHED_KEY)
        );
        let d: DetachedGather =
            serde_json::from_str(string(meta.payload.unwrap(), 2).unwrap().unwrap()).unwrap();
        assert_eq!(
            d,
            DetachedGather {
                input: "we".into(),
                indices: "input_ids".into(),
                location: "w.data".into(),
                offset: ALIGN,
                rows,
                cols,
                elem_type: 2,
            }
        );
        // Row 300 of the table is where the entry says.
        let at = (d.offset + 300 * cols) as usize;
        assert_eq!(&data[at..at + cols as usize], &raw[300 * 64..301 * 64]);
        let graph = fields(top[0].payload.unwrap()).unwrap();
        // The string field `inner` of each graph field `outer`.
        let names = |outer: u32, inner: u32| -> Vec<&str> {
            graph
                .iter()
                .filter(|f| f.number == outer)
                .map(|f| string(f.payload.unwrap(), inner).unwrap().unwrap())
                .collect()
        };
        assert_eq!(
            names(GRAPH_NODE, NODE_OP_TYPE),
            ["Add"],
            "the Gather is gone"
        );
        assert_eq!(names(GRAPH_INPUT, VALUE_NAME), ["input_ids", "we"]);
        assert_eq!(
            names(GRAPH_INITIALIZER, TENSOR_NAME),
            ["pos"],
            "the table is left out of the graph"
        );

        // Another node reads the table: nothing is detached.
        let (out, _) = externalize(&model(true), "w.data", &mut Vec::new()).unwrap();
        assert!(
            fields(&out)
                .unwrap()
                .iter()
                .all(|f| f.number != MODEL_METADATA)
        );
    }

    #[test]
    fn not_a_model_is_invalid_data() {
        let mut sink = Vec::new();
        let err = externalize(&[0x3a, 0xff], "d", &mut sink).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().starts_with("not an ONNX model"), "{err}");
    }
}
