//! The stdio transport with a guard in front of rmcp. rmcp 3.9's line codec
//! skips a line it cannot decode without answering, so a client waits for
//! that request forever. The guard reads every line first and answers, per
//! JSON-RPC 2.0, what rmcp would drop: a line that is not JSON (-32700, id
//! null), an object that is not a request (-32600), a batch (-32600), a
//! line over [`MAX_LINE_BYTES`], and arguments nested deeper than
//! [`MAX_DEPTH`] (a `tools/call` gets a tool error naming the limit; other
//! methods -32600), and tool arguments holding a string over
//! [`MAX_STRING_CHARS`] or a list over [`MAX_LIST_ITEMS`] (a tool error
//! naming the argument and the limit). Everything else goes to rmcp unchanged, through an
//! in-memory pipe; rmcp's replies and the guard's share one writer, a line
//! at a time, so they never interleave on stdout.

use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest request line accepted, in bytes (4 MiB: tool arguments are
/// queries, patterns and lists of names; a larger line is an error, not a
/// request).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// Deepest nesting of arrays and objects accepted in a request (the request
/// envelope takes three levels; no tool's arguments need more than four).
pub const MAX_DEPTH: usize = 32;
/// Longest string accepted anywhere in tool arguments, in chars (32 KiB: a
/// query, a pattern, a quote or a note; a 1 MB `query` kept a runtime worker
/// busy for seconds in the fuzz run of tests/e2e/test_reliability.py).
pub const MAX_STRING_CHARS: usize = 32 * 1024;
/// Longest list accepted anywhere in tool arguments (10,000 symbols to
/// `validate_symbol_relevance` ran over 10 s).
pub const MAX_LIST_ITEMS: usize = 1_000;

/// The first string or list in `v` over the limits, as (JSON path, what).
fn oversized(v: &Value, path: &mut String) -> Option<(String, String)> {
    match v {
        Value::String(s) if s.chars().count() > MAX_STRING_CHARS => Some((
            path.clone(),
            format!(
                "a string of {} chars (at most {MAX_STRING_CHARS})",
                s.chars().count()
            ),
        )),
        Value::Array(items) => {
            if items.len() > MAX_LIST_ITEMS {
                return Some((
                    path.clone(),
                    format!("a list of {} items (at most {MAX_LIST_ITEMS})", items.len()),
                ));
            }
            items.iter().enumerate().find_map(|(i, x)| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = oversized(x, path);
                path.truncate(len);
                found
            })
        }
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(k);
            let found = oversized(x, path);
            path.truncate(len);
            found
        }),
        _ => None,
    }
}

/// A `tools/call` answered with a tool error (`isError`), as MCP asks for
/// errors the model can correct.
fn tool_error(id: Value, text: String) -> Verdict {
    Verdict::Answer(json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": text}], "isError": true},
    }))
}

/// What to do with one line of input.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to rmcp.
    Forward,
    /// Answer it with this JSON-RPC message.
    Answer(Value),
    /// Nothing to do (a blank line, an invalid notification).
    Skip,
}

fn error(id: Value, code: i64, message: String) -> Verdict {
    Verdict::Answer(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    }))
}

/// Deepest nesting of `[`/`{` outside strings.
fn depth(bytes: &[u8]) -> usize {
    let (mut d, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                d += 1;
                max = max.max(d);
            }
            b']' | b'}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The value of a top-level field of a JSON object text that may not parse
/// as a whole (too deep, truncated): scans to the field at depth 1 and
/// parses only its value, when that value is a string or a number.
pub fn top_level_field(text: &str, field: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let (mut d, mut i) = (0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(bytes.len());
                if d == 1 && text.get(start + 1..end) == Some(field) {
                    let rest = text.get(end + 1..)?.trim_start();
                    let rest = rest.strip_prefix(':')?.trim_start();
                    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
                    return match stream.next() {
                        Some(Ok(v @ (Value::String(_) | Value::Number(_) | Value::Null))) => {
                            Some(v)
                        }
                        _ => None,
                    };
                }
            }
            b'{' | b'[' => d += 1,
            b'}' | b']' => d = d.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Decides what to do with one line (without its newline).
pub fn check_line(line: &[u8]) -> Verdict {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Verdict::Skip;
    }
    let text = String::from_utf8_lossy(trimmed);
    let id = || top_level_field(&text, "id").unwrap_or(Value::Null);
    if trimmed.len() > MAX_LINE_BYTES {
        return error(
            id(),
            -32600,
            format!("request larger than {MAX_LINE_BYTES} bytes"),
        );
    }
    let Ok(valid) = std::str::from_utf8(trimmed) else {
        return error(
            id(),
            -32700,
            "parse error: the line is not valid UTF-8".into(),
        );
    };
    if depth(trimmed) > MAX_DEPTH {
        let method = top_level_field(valid, "method");
        return match (method.as_ref().and_then(Value::as_str), id()) {
            (Some("tools/call"), id) if !id.is_null() => tool_error(
                id,
                format!("arguments nest deeper than {MAX_DEPTH} levels, the limit: flatten them"),
            ),
            (_, id) => error(
                id,
                -32600,
                format!("invalid request: nested deeper than {MAX_DEPTH} levels"),
            ),
        };
    }
    let v: Value = match serde_json::from_str(valid) {
        Ok(v) => v,
        Err(e) => return error(id(), -32700, format!("parse error: {e}")),
    };
    let Some(obj) = v.as_object() else {
        let what = if v.is_array() {
            "batches are not supported: send one request per line"
        } else {
            "a request must be a JSON object"
        };
        return error(Value::Null, -32600, format!("invalid request: {what}"));
    };
    let id = obj.get("id").cloned();
    let id_ok = id
        .as_ref()
        .is_none_or(|i| i.is_string() || i.is_number() || i.is_null());
    let reply_id = || id.clone().filter(|_| id_ok).unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return error(
            reply_id(),
            -32600,
            "invalid request: \"jsonrpc\" must be \"2.0\"".into(),
        );
    }
    if !id_ok {
        return error(
            Value::Null,
            -32600,
            "invalid request: \"id\" must be a string, a number or null".into(),
        );
    }
    // rmcp keeps numeric ids as i64 and answers others without their id:
    // answer them here, with the id as sent.
    if let Some(Value::Number(n)) = &id
        && n.as_i64().is_none()
    {
        return error(
            reply_id(),
            -32600,
            format!(
                "invalid request: a numeric \"id\" must be an integer from {} to {}; use a string id",
                i64::MIN,
                i64::MAX
            ),
        );
    }
    match obj.get("method") {
        Some(Value::String(m)) if m == "tools/call" && id.is_some() => {
            check_tool_call(obj, reply_id())
        }
        Some(Value::String(_)) => Verdict::Forward,
        Some(_) => error(
            reply_id(),
            -32600,
            "invalid request: \"method\" must be a string".into(),
        ),
        // A response to one of our requests (sampling, roots): rmcp's.
        None if obj.contains_key("result") || obj.contains_key("error") => Verdict::Forward,
        None if id.is_some() => error(reply_id(), -32600, "invalid request: no \"method\"".into()),
        None => Verdict::Skip,
    }
}

/// A `tools/call` request's params: an object with a string `name`, whose
/// `arguments` (when given) is an object within the size limits. rmcp
/// answers a missing `name` as an unknown method (-32601); the method is
/// known and its params are invalid (-32602, JSON-RPC 2.0 § 5.1).
fn check_tool_call(obj: &serde_json::Map<String, Value>, id: Value) -> Verdict {
    let params = obj.get("params");
    let args = params.and_then(|p| p.get("arguments"));
    let shape = match (params, args) {
        (None, _) => Some("tools/call needs params with the tool's \"name\""),
        (Some(p), _) if !p.is_object() => Some("\"params\" must be an object"),
        (Some(p), _) if !p.get("name").is_some_and(Value::is_string) => {
            Some("\"name\" (the tool to call, a string) is missing")
        }
        (_, Some(a)) if !a.is_object() && !a.is_null() => {
            Some("\"arguments\" must be an object of named arguments")
        }
        _ => None,
    };
    if let Some(what) = shape {
        return error(id, -32602, format!("invalid params: {what}"));
    }
    match args.and_then(|a| oversized(a, &mut String::new())) {
        Some((at, what)) => tool_error(
            id,
            format!("argument `{at}` is {what}, over the limit: shorten it or split the call"),
        ),
        None => Verdict::Forward,
    }
}

/// rmcp's writer: collects bytes into lines and hands whole lines to the
/// stdout task.
pub struct LineSink {
    buf: Vec<u8>,
    tx: mpsc::UnboundedSender<Vec<u8>>,
}

impl AsyncWrite for LineSink {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.buf.extend_from_slice(data);
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=pos).collect();
            if self.tx.send(line).is_err() {
                return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()));
            }
        }
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Reads one line of at most [`MAX_LINE_BYTES`] + 1 bytes into `line`
/// (without the newline); the rest of a longer line is read and dropped.
/// `Ok(false)` at end of input.
async fn read_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<bool> {
    line.clear();
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(!line.is_empty());
        }
        let (chunk, found) = match buf.iter().position(|b| *b == b'\n') {
            Some(p) => (&buf[..p], true),
            None => (buf, false),
        };
        let room = (MAX_LINE_BYTES + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len() + usize::from(found);
        input.consume(used);
        if found {
            return Ok(true);
        }
    }
}

/// The guarded transport: what rmcp reads and writes, and the writer task,
/// which ends once rmcp and the guard are done and every line is written.
pub struct Guarded {
    pub input: tokio::io::DuplexStream,
    pub output: LineSink,
    pub writer: tokio::task::JoinHandle<()>,
}

/// The transport `serve` runs. Spawns the guard reading `input` and the
/// writer owning `output`.
pub fn guarded<R, W>(input: R, output: W) -> Guarded
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_rmcp, rmcp_in) = tokio::io::duplex(256 * 1024);
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let answers = tx.clone();
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = rx.recv().await {
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        while let Ok(true) = read_line(&mut input, &mut line).await {
            match check_line(&line) {
                Verdict::Forward => {
                    line.push(b'\n');
                    if to_rmcp.write_all(&line).await.is_err() {
                        break;
                    }
                }
                Verdict::Answer(v) => {
                    tracing::debug!("answered a malformed request: {v}");
                    let mut out = v.to_string().into_bytes();
                    out.push(b'\n');
                    if answers.send(out).is_err() {
                        break;
                    }
                }
                Verdict::Skip => {}
            }
        }
        // End of input: rmcp sees end of its input and stops serving.
        let _ = to_rmcp.shutdown().await;
    });
    Guarded {
        input: rmcp_in,
        output: LineSink {
            buf: Vec::new(),
            tx,
        },
        writer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match check_line(line.as_bytes()) {
            Verdict::Answer(v) => v,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn malformed_requests_are_answered() {
        for (line, code, id) in [
            ("not json", -32700, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":NaN}}"#,
                -32700,
                json!(7),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":1e400}}"#,
                -32700,
                json!("a"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{"q":"\ud800"}}}"#,
                -32700,
                json!(3),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/ca"#,
                -32700,
                json!(4),
            ),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                -32600,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
                -32600,
                json!(5),
            ),
            (r#"{"jsonrpc":"2.0","id":6,"method":42}"#, -32600, json!(6)),
            (
                r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"query","arguments":["x"]}}"#,
                -32602,
                json!(10),
            ),
            (
                r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":["query"]}"#,
                -32602,
                json!(11),
            ),
            (
                r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"arguments":{}}}"#,
                -32602,
                json!(12),
            ),
            (
                r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":7}}"#,
                -32602,
                json!(13),
            ),
            (
                r#"{"jsonrpc":"2.0","id":14,"method":"tools/call"}"#,
                -32602,
                json!(14),
            ),
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
                -32600,
                json!(18446744073709551616.0),
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                -32600,
                Value::Null,
            ),
        ] {
            let v = answer(line);
            assert_eq!(v["error"]["code"], json!(code), "{line}: {v}");
            assert_eq!(v["id"], id, "{line}: {v}");
        }
        let mut invalid_utf8 =
            br#"{"jsonrpc":"2.0","id":8,"method":"ping","params":{"q":""#.to_vec();
        invalid_utf8.extend_from_slice(&[0xff, 0xfe]);
        invalid_utf8.extend_from_slice(br#""}}"#);
        let v = match check_line(&invalid_utf8) {
            Verdict::Answer(v) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            (v["error"]["code"].clone(), v["id"].clone()),
            (json!(-32700), json!(8))
        );
    }

    #[test]
    fn deep_arguments_get_a_tool_error_naming_the_limit() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"search_text","arguments":{{"pattern":{}1{}}}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let v = answer(&deep);
        assert_eq!(v["id"], json!(9));
        assert_eq!(v["result"]["isError"], json!(true));
        assert!(
            v["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("32 levels")
        );
        let deep_other = deep.replace("tools/call", "resources/read");
        assert_eq!(answer(&deep_other)["error"]["code"], json!(-32600));
    }

    /// A 1 MB query and 10,000 symbols are answered with a tool error that
    /// names the argument; arguments within the limits go to rmcp.
    #[test]
    fn oversized_arguments_get_a_tool_error_naming_them() {
        let call = |args: Value| {
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "t", "arguments": args}})
            .to_string()
        };
        let v = answer(&call(json!({"query": "x".repeat(1_000_000)})));
        assert_eq!(v["id"], json!(4));
        assert_eq!(v["result"]["isError"], json!(true));
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("`query`") && text.contains("32768"), "{text}");
        let symbols: Vec<String> = (0..10_000).map(|i| format!("s{i}")).collect();
        let v = answer(&call(json!({"symbols": symbols})));
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("`symbols`") && text.contains("1000"),
            "{text}"
        );
        let v = answer(&call(
            json!({"slots": {"a": {"quote": "y".repeat(40_000)}}}),
        ));
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("`slots.a.quote`"), "{text}");
        assert_eq!(
            check_line(call(json!({"query": "x".repeat(30_000), "symbols": ["a"]})).as_bytes()),
            Verdict::Forward
        );
    }

    #[test]
    fn requests_notifications_and_responses_go_to_rmcp() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
        ] {
            assert_eq!(check_line(line.as_bytes()), Verdict::Forward, "{line}");
        }
        assert_eq!(check_line(b"   "), Verdict::Skip);
        assert_eq!(
            top_level_field(r#"{"params":{"id":1},"id":"x""#, "id"),
            Some(json!("x"))
        );
    }
}

/// Property tests of the line guard: whatever arrives on a line,
/// `check_line` answers without panicking, and a `tools/call` with an id is
/// never dropped.
#[cfg(test)]
mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{MAX_DEPTH, Verdict, check_line, top_level_field};

    /// JSON values up to a few levels deep, with strings that include
    /// quotes, backslashes, surrogate-range escapes' text and non-ASCII.
    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-z\"\\\\{}\\[\\]:,ま-ん0-9 ]{0,40}".prop_map(Value::from),
        ];
        leaf.prop_recursive(6, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
                prop::collection::btree_map("[a-z_]{1,12}", inner, 0..8)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A reply is JSON-RPC 2.0 with the given id and an error or a result.
    fn is_reply(v: &Value, id: &Value) -> bool {
        v["jsonrpc"] == "2.0"
            && &v["id"] == id
            && (v["error"]["code"].is_i64() || v["result"]["isError"] == true)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_get_a_verdict(line in prop::collection::vec(any::<u8>(), 0..300)) {
            if let Verdict::Answer(v) = check_line(&line) {
                prop_assert_eq!(&v["jsonrpc"], "2.0");
                prop_assert!(v["error"]["code"].is_i64() || v["result"].is_object(), "{v}");
            }
            let _ = top_level_field(&String::from_utf8_lossy(&line), "id");
        }

        #[test]
        fn tool_calls_with_any_arguments_are_forwarded_or_answered(
            args in arb_json(), id in any::<u32>(), name in "[a-z_]{1,20}",
        ) {
            let id = json!(id);
            let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                              "params": {"name": name, "arguments": args}}).to_string();
            match check_line(line.as_bytes()) {
                Verdict::Forward => {}
                Verdict::Answer(v) => prop_assert!(is_reply(&v, &id), "{v}"),
                Verdict::Skip => prop_assert!(false, "a tools/call with an id was dropped"),
            }
        }

        #[test]
        fn nesting_past_the_limit_is_a_tool_error_with_the_id(extra in 1usize..40, id in any::<u32>()) {
            let depth = MAX_DEPTH + extra;
            let args = format!("{{\"x\":{}{}}}", "[".repeat(depth), "]".repeat(depth));
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"query","arguments":{args}}}}}"#
            );
            match check_line(line.as_bytes()) {
                Verdict::Answer(v) => {
                    prop_assert!(is_reply(&v, &json!(id)), "{v}");
                    prop_assert_eq!(&v["result"]["isError"], true);
                }
                other => prop_assert!(false, "{other:?}"),
            }
        }
    }
}
