//! What each reading tool's reply marks as named and read (the write gate's
//! evidence), and how often a gated call touches the session file. The
//! tools run on a real repository in a temporary directory; `query` and
//! `semantic_search` use a deterministic embedder (hashed words), which is
//! enough to decide which files a reply shows.

use std::sync::Arc;

use super::code_tools::*;

use super::*;
use crate::embed::Embedder;
use crate::embed::testing::HashedWords;
use crate::session::{Intent, Session, Tool};

const ORDER: &str = "<?php

namespace App\\Models;

class Order
{
    /// The order total, rounded.
    public function total(): float
    {
        $sum = 0;
        foreach ($this->lines as $line) {
            $sum += $line->price;
        }
        return round($sum, 2);
    }

    public function ship(): void
    {
        $this->shipped = true;
    }
}
";

const SERVICE: &str = "<?php

namespace App\\Services;

use App\\Models\\Order;

class OrderService
{
    public function place(Order $order): float
    {
        return $order->total();
    }
}
";

fn repo() -> (tempfile::TempDir, CodeIntel) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("app/Models")).unwrap();
    std::fs::create_dir_all(dir.path().join("app/Services")).unwrap();
    std::fs::write(dir.path().join("app/Models/Order.php"), ORDER).unwrap();
    std::fs::write(dir.path().join("app/Services/OrderService.php"), SERVICE).unwrap();
    let repo = crate::repo::Repo::open(dir.path()).unwrap();
    let config = crate::config::Config::default();
    (dir, CodeIntel::new(repo, config))
}

fn params<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn named(s: &Shown) -> Vec<&str> {
    s.named.iter().map(String::as_str).collect()
}

fn read(s: &Shown) -> Vec<(&str, usize, usize)> {
    s.read
        .iter()
        .flat_map(|(f, r)| r.iter().map(move |(a, b)| (f.as_str(), *a, *b)))
        .collect()
}

/// A kind filter that matches nothing says which kinds the files define
/// (an anonymous migration class has only methods); one that matches says
/// nothing more.
#[tokio::test]
async fn an_empty_kind_filter_names_the_kinds_there_are() {
    let (d, s) = repo();
    std::fs::create_dir_all(d.path().join("database/migrations")).unwrap();
    std::fs::write(
        d.path().join("database/migrations/2021_01_01_000000_create_orders.php"),
        "<?php\n\nreturn new class extends Migration\n{\n    public function up()\n    {\n    }\n\n    public function down()\n    {\n    }\n};\n",
    )
    .unwrap();
    let r = s
        .get_symbols_reply(params(
            serde_json::json!({"path": "database/migrations", "kind": "class"}),
        ))
        .await
        .unwrap();
    assert_eq!(r.value.total, 0);
    assert_eq!(
        r.value.other_kinds.get("method"),
        Some(&2),
        "{:?}",
        r.value.other_kinds
    );
    assert!(
        r.text
            .contains("none of that kind; the same files define: method 2 (an anonymous class"),
        "{}",
        r.text
    );
    // A kind missing beside named classes: no anonymous-class note.
    let r = s
        .get_symbols_reply(params(serde_json::json!({"path": "app", "kind": "enum"})))
        .await
        .unwrap();
    assert!(r.text.contains("none of that kind"), "{}", r.text);
    assert!(!r.text.contains("anonymous"), "{}", r.text);
    let r = s
        .get_symbols_reply(params(serde_json::json!({"path": "app", "kind": "class"})))
        .await
        .unwrap();
    assert!(r.value.total > 0 && r.value.other_kinds.is_empty());
    assert!(!r.text.contains("none of that kind"), "{}", r.text);
}

/// `files` reads several whole files in one call, each counted as read and
/// shown under its own header; a file it cannot read is listed with why
/// while the others are read; a bad request says which argument is wrong
/// and reads nothing.
#[tokio::test]
async fn read_file_reads_several_files_at_once() {
    let (_d, s) = repo();
    let both = ["app/Models/Order.php", "app/Services/OrderService.php"];
    let r = s
        .read_file_reply(params(serde_json::json!({"files": both})))
        .await
        .unwrap();
    let crate::server::wire::ReadFileResult::Several { files, .. } = &r.value else {
        panic!("several files asked, one returned");
    };
    assert_eq!(
        files.iter().map(|f| f.file.as_str()).collect::<Vec<_>>(),
        both
    );
    assert!(
        files
            .iter()
            .all(|f| !f.truncated && f.end_line == f.total_lines)
    );
    assert_eq!(r.shown.read_files(), both);
    for f in both {
        assert!(r.text.contains(&format!("{f}:1-")), "{}", r.text);
    }
    // The budget is shared: a small one cuts the second file, not the call.
    let r = s
        .read_file_reply(params(
            serde_json::json!({"files": both, "max_tokens": 150}),
        ))
        .await
        .unwrap();
    let crate::server::wire::ReadFileResult::Several { files, .. } = &r.value else {
        panic!("several files asked, one returned");
    };
    assert_eq!(files.len(), 2);
    assert!(files.iter().any(|f| f.truncated), "{}", r.text);
    assert!(
        r.text.contains("app/Services/OrderService.php:1-"),
        "{}",
        r.text
    );
    for (args, says) in [
        (serde_json::json!({}), "give `file`"),
        (
            serde_json::json!({"file": both[0], "files": both}),
            "not both",
        ),
        (
            serde_json::json!({"files": both, "start_line": 2}),
            "go with `file`",
        ),
        (
            serde_json::json!({"files": vec![both[0]; 11]}),
            "at most 10",
        ),
        (serde_json::json!({"files": ["../etc/passwd"]}), "outside"),
    ] {
        let e = s.read_file_reply(params(args.clone())).await.err().unwrap();
        assert!(e.to_string().contains(says), "{args}: {e}");
    }
    // One path it cannot read: the others are read, that one is listed.
    let r = s
        .read_file_reply(params(
            serde_json::json!({"files": [both[0], "../etc/passwd", "app/Nope.php"]}),
        ))
        .await
        .unwrap();
    let crate::server::wire::ReadFileResult::Several { files, not_read } = &r.value else {
        panic!("several files asked, one returned");
    };
    assert_eq!(files.len(), 1);
    assert_eq!(
        not_read.iter().map(|n| n.file.as_str()).collect::<Vec<_>>(),
        ["../etc/passwd", "app/Nope.php"]
    );
    assert!(not_read[0].error.contains("outside"), "{not_read:?}");
    assert!(r.text.contains("not read: `app/Nope.php`"), "{}", r.text);
    assert_eq!(r.shown.read_files(), [both[0]]);
}

#[tokio::test]
async fn read_file_and_function_at_line_read_the_lines_they_return() {
    let (_d, s) = repo();
    let r = s
        .read_file_reply(params(
            serde_json::json!({"file": "app/Models/Order.php", "start_line": 7, "end_line": 9}),
        ))
        .await
        .unwrap();
    assert_eq!(read(&r.shown), [("app/Models/Order.php", 7, 9)]);
    assert_eq!(r.shown.read_files(), ["app/Models/Order.php"]);
    // One line (`<?php`) of a longer file is named, not read; the whole of
    // a file counts however short it is.
    let r = s
        .read_file_reply(params(
            serde_json::json!({"file": "app/Models/Order.php", "start_line": 1, "end_line": 1}),
        ))
        .await
        .unwrap();
    assert_eq!(named(&r.shown), ["app/Models/Order.php"]);
    assert!(r.shown.read_files().is_empty(), "{:?}", r.shown);
    let mut whole = Shown::default();
    whole.read_unit("a.php", 1, 1);
    whole.read("b.php", 1, 2);
    whole.read("b.php", 2, 3);
    whole.read("c.php", 4, 5);
    assert_eq!(whole.read_files(), ["a.php", "b.php"]);
    // The budget cuts the file: only the lines shown are read.
    let r = s
        .read_file_reply(params(
            serde_json::json!({"file": "app/Models/Order.php", "max_tokens": 100}),
        ))
        .await
        .unwrap();
    let crate::server::wire::ReadFileResult::One(lines) = &r.value else {
        panic!("one file asked, several returned");
    };
    assert_eq!(
        read(&r.shown),
        [("app/Models/Order.php", 1, lines.end_line)]
    );
    assert!(lines.end_line < 22, "{}", lines.end_line);

    let r = s
        .function_at_line_reply(params(
            serde_json::json!({"file": "app/Models/Order.php", "line": 11}),
        ))
        .await
        .unwrap();
    assert_eq!(r.value.name, "total");
    assert_eq!(
        read(&r.shown),
        [("app/Models/Order.php", r.value.line, r.value.end_line)]
    );
    // A docblock line gives the method it documents, not the class.
    let r = s
        .function_at_line_reply(params(
            serde_json::json!({"file": "app/Models/Order.php", "line": 7}),
        ))
        .await
        .unwrap();
    assert_eq!(r.value.name, "total");
    // A line of the class outside its methods still gives the class.
    let r = s
        .function_at_line_reply(params(
            serde_json::json!({"file": "app/Models/Order.php", "line": 6}),
        ))
        .await
        .unwrap();
    assert_eq!(r.value.name, "Order");
}

#[tokio::test]
async fn names_in_results_are_not_reads() {
    let (dir, s) = repo();
    let r = s
        .find_definitions_reply(params(serde_json::json!({"symbol": "total"})))
        .await
        .unwrap();
    assert_eq!(named(&r.shown), ["app/Models/Order.php"]);
    assert!(r.shown.read.is_empty());
    assert_eq!(r.shown.total, Some(1));

    let r = s
        .find_references_reply(params(serde_json::json!({"symbol": "Order::total"})))
        .await
        .unwrap();
    assert_eq!(named(&r.shown), ["app/Services/OrderService.php"]);
    assert!(r.shown.read.is_empty());
    assert_eq!(r.shown.total, Some(1));

    let r = s
        .get_symbols_reply(params(serde_json::json!({"path": "app"})))
        .await
        .unwrap();
    assert_eq!(
        named(&r.shown),
        ["app/Models/Order.php", "app/Services/OrderService.php"]
    );
    assert!(r.shown.read.is_empty());

    let r = s
        .analyze_structure_reply(params(serde_json::json!({"path": "app/Models"})))
        .await
        .unwrap();
    assert_eq!(named(&r.shown), ["app/Models/Order.php"]);
    assert!(r.shown.read.is_empty());

    // Matching lines alone are not a read; with three lines of context they are.
    let r = s
        .search_text_reply(params(serde_json::json!({"pattern": "total"})))
        .await
        .unwrap();
    assert_eq!(
        named(&r.shown),
        ["app/Models/Order.php", "app/Services/OrderService.php"]
    );
    assert!(r.shown.read.is_empty());
    let r = s
        .search_text_reply(params(
            serde_json::json!({"pattern": "function total", "context_lines": 3}),
        ))
        .await
        .unwrap();
    assert_eq!(read(&r.shown), [("app/Models/Order.php", 5, 11)]);
    assert!(!r.text.contains("not searched"), "{}", r.text);

    // Hidden files are searched, secret ones are not; built and vendored
    // files' matches are counted apart, unless the search is aimed at
    // them; an empty answer says which files were not searched.
    for (file, text) in [
        (".env", "DB_FOREIGN_KEYS=1\n"),
        (".env.example", "COUPON_CODE=\n"),
        (".github/workflows/ci.yml", "env: COUPON_CODE\n"),
        (
            "public/vendor/livewire/livewire.min.js",
            "var COUPON_CODE=1;\n",
        ),
    ] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let search = |args: serde_json::Value| {
        let s = &s;
        async move { s.search_text_reply(params(args)).await.unwrap() }
    };
    let r = search(serde_json::json!({"pattern": "COUPON_CODE"})).await;
    assert_eq!(
        named(&r.shown),
        [".env.example", ".github/workflows/ci.yml"]
    );
    assert_eq!((r.value.total, r.value.set_aside.len()), (2, 1));
    assert!(
        r.text.contains(
            "+ 1 match(es) in 1 built or vendored file(s), not shown: public/vendor/livewire/livewire.min.js (1)"
        ),
        "{}",
        r.text
    );
    let r = search(serde_json::json!({"pattern": "COUPON_CODE", "path": "public/vendor"})).await;
    assert_eq!(named(&r.shown), ["public/vendor/livewire/livewire.min.js"]);
    for (args, first) in [
        (
            serde_json::json!({"pattern": "DB_FOREIGN_KEYS"}),
            "0 match(es) in 0 file(s) (gitignored and secret files such as .env are not searched)",
        ),
        (
            serde_json::json!({"pattern": "DB_FOREIGN_KEYS", "path": "app/Models/"}),
            "0 match(es) in 0 file(s) (searched `app/Models`)",
        ),
    ] {
        let r = search(args).await;
        assert!(r.text.starts_with(first), "{}", r.text);
    }
}

/// `search_text`'s text names each file once, above its matches (as
/// `rg --heading`); a context line two matches share is shown once, and
/// `--` parts groups of context that are not adjacent.
#[tokio::test]
async fn search_text_names_each_file_once() {
    let (_d, s) = repo();
    let text = |args: serde_json::Value| {
        let s = &s;
        async move { s.search_text_reply(params(args)).await.unwrap().text }
    };
    let with_context =
        text(serde_json::json!({"pattern": "\\$sum|shipped", "context_lines": 1})).await;
    assert_eq!(
        with_context.lines().collect::<Vec<_>>(),
        [
            "4 match(es) in 1 file(s)",
            "app/Models/Order.php",
            "9-     {",
            "10:9:         $sum = 0;",
            "11-         foreach ($this->lines as $line) {",
            "12:13:             $sum += $line->price;",
            "13-         }",
            "14:22:         return round($sum, 2);",
            "15-     }",
            "--",
            "18-     {",
            "19:16:         $this->shipped = true;",
            "20-     }",
        ],
        "{with_context}"
    );
    // Without context, no `--`; each file's path once, above its lines.
    let plain = text(serde_json::json!({"pattern": "function"})).await;
    assert_eq!(
        plain.lines().collect::<Vec<_>>(),
        [
            "3 match(es) in 2 file(s)",
            "app/Models/Order.php",
            "8:12:     public function total(): float",
            "17:12:     public function ship(): void",
            "app/Services/OrderService.php",
            "9:12:     public function place(Order $order): float",
        ],
        "{plain}"
    );
}

/// Makes the deterministic embedder the server's model and indexes the
/// repository with it.
async fn index_with_hashed_words(s: &CodeIntel) {
    let embedder: Arc<dyn Embedder> = Arc::new(HashedWords);
    *s.shared.model.write().unwrap() = ModelState::Ready(Arc::clone(&embedder));
    let store = s.shared.store(false).await.unwrap();
    let sh = &s.shared;
    crate::index::sync(
        &sh.repo,
        &sh.config,
        &store,
        std::future::ready(Ok(Arc::clone(&embedder))),
        false,
        0,
        &sh.progress,
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn query_reads_only_the_files_whose_code_it_shows() {
    let (_d, s) = repo();
    index_with_hashed_words(&s).await;
    let r = s
        .query_reply(params(
            serde_json::json!({"query": "order total rounded", "max_tokens": 20000}),
        ))
        .await
        .unwrap();
    let files: Vec<&str> = r.value.files.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(named(&r.shown), {
        let mut f = files.clone();
        f.sort_unstable();
        f
    });
    // Every chunk whose code is in the reply is a read of its lines up to
    // its first elided member (an outline's later lines are not the
    // file's), and nothing else is.
    fn code_shown(r: &Reply<super::wire::QueryResult>) -> Vec<(String, usize, usize)> {
        let mut shown = Vec::new();
        for f in &r.value.files {
            for c in &f.chunks {
                let verbatim = c
                    .content
                    .lines()
                    .take_while(|l| !crate::chunk::is_elided(l))
                    .count();
                if verbatim > 0 {
                    let start = c.start_line as usize;
                    shown.push((f.file.clone(), start, start + verbatim - 1));
                }
            }
        }
        shown.sort_unstable();
        shown
    }
    let reads = |r: &Reply<super::wire::QueryResult>| -> Vec<(String, usize, usize)> {
        let mut got: Vec<(String, usize, usize)> = read(&r.shown)
            .into_iter()
            .map(|(f, a, b)| (f.to_string(), a, b))
            .collect();
        got.sort_unstable();
        got
    };
    let wide = code_shown(&r);
    assert!(!wide.is_empty());
    assert_eq!(reads(&r), wide);

    // A tight budget shows less code (the best file's best chunk, cut),
    // and what it shows is what is read.
    let r = s
        .query_reply(params(
            serde_json::json!({"query": "order total rounded", "max_tokens": 100}),
        ))
        .await
        .unwrap();
    let tight = code_shown(&r);
    assert!(tight.len() <= 1, "{tight:?}");
    assert!(
        tight.iter().all(|t| t.0 == r.value.files[0].file),
        "{tight:?}"
    );
    assert_eq!(reads(&r), tight);

    // semantic_search shows locations only.
    let r = s
        .semantic_search_reply(params(
            serde_json::json!({"query": "order total", "collection": "forest"}),
        ))
        .await
        .unwrap();
    assert!(!r.shown.named.is_empty());
    assert!(r.shown.read.is_empty());

    // While the model loads, query ranks by words instead of refusing, and
    // its index line says so; semantic_search still waits for the model.
    *s.shared.model.write().unwrap() = ModelState::Loading(std::time::Instant::now());
    let r = s
        .query_reply(params(serde_json::json!({"query": "order total rounded"})))
        .await
        .unwrap();
    assert_eq!(r.value.files[0].file, "app/Models/Order.php");
    assert!(
        r.value.index.message.contains("ranking by words only"),
        "{}",
        r.value.index.message
    );
    let r = s
        .semantic_search_reply(params(serde_json::json!({"query": "order total"})))
        .await;
    assert!(matches!(r, Err(ToolError::NotReady { .. })));
}

/// Kind hints name only kinds the index holds (no Filament hints
/// without Filament): "column" hints `table_schema` and
/// `filament_table`; this repository has a migration but no Filament.
#[tokio::test]
async fn kind_hints_name_only_kinds_the_index_holds() {
    let (d, s) = repo();
    std::fs::create_dir_all(d.path().join("database/migrations")).unwrap();
    std::fs::write(
        d.path().join("database/migrations/2024_01_01_000000_create_orders_table.php"),
        "<?php\n\nuse Illuminate\\Database\\Migrations\\Migration;\nuse Illuminate\\Database\\Schema\\Blueprint;\nuse Illuminate\\Support\\Facades\\Schema;\n\nreturn new class extends Migration\n{\n    public function up(): void\n    {\n        Schema::create('orders', function (Blueprint $table) {\n            $table->id();\n            $table->decimal('total');\n        });\n    }\n};\n",
    )
    .unwrap();
    index_with_hashed_words(&s).await;
    assert!(
        crate::rank::plan::plan("add a column to orders")
            .kind_hints
            .contains(&"filament_table".to_string())
    );
    let r = s
        .query_reply(params(
            serde_json::json!({"query": "add a column to orders"}),
        ))
        .await
        .unwrap();
    assert_eq!(r.value.plan.kind_hints, ["table_schema"]);
}

/// A gated call reads the session file at most once and writes it once;
/// the evidence keeps the tool, the arguments, the lines read and the
/// phase the machine stamped.
#[tokio::test]
async fn a_gated_call_reads_and_writes_the_session_once() {
    let (dir, first) = repo();
    let id = first
        .shared
        .sessions
        .create(Session::new(Intent::Modify, "round the order total"))
        .unwrap()
        .id;
    // A new server: nothing of the session is cached yet.
    let s = CodeIntel::new(
        crate::repo::Repo::open(dir.path()).unwrap(),
        crate::config::Config::default(),
    );
    let before = s.shared.sessions.io();
    let p: ReadFileParams = params(
        serde_json::json!({"file": "app/Models/Order.php", "end_line": 9, "session_id": id}),
    );
    s.shared
        .gated(p.call(), s.read_file_reply(p))
        .await
        .unwrap();
    let after = s.shared.sessions.io();
    assert_eq!(
        (after.reads - before.reads, after.writes - before.writes),
        (1, 1)
    );
    // The next call finds the version it wrote: no read.
    let p: FindReferencesParams = params(serde_json::json!({"symbol": "total", "session_id": id}));
    let refs = s
        .shared
        .gated(p.call(), s.find_references_reply(p))
        .await
        .unwrap();
    let body = refs.structured_content.unwrap();
    let uses = body["total"].as_u64().unwrap() as usize;
    // The call `$order->total()`, and the comment "The order total": a
    // line that holds the name, which risk does not count as a use.
    let kinds: Vec<&str> = body["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.len(), uses, "{body}");
    assert!(
        kinds.contains(&"text") && kinds.iter().any(|k| *k != "text"),
        "{body}"
    );
    let last = s.shared.sessions.io();
    assert_eq!(
        (last.reads - after.reads, last.writes - after.writes),
        (0, 1)
    );

    let session = s.shared.sessions.get(&id).unwrap();
    assert!(session.explored.contains("app/Models/Order.php"));
    let e = &session.evidence[0];
    assert_eq!(e.tool, Tool::ReadFile);
    assert_eq!(e.params.path.as_deref(), Some("app/Models/Order.php"));
    assert_eq!(
        e.read_lines
            .iter()
            .map(|l| (l.file.as_str(), l.start_line, l.end_line))
            .collect::<Vec<_>>(),
        [("app/Models/Order.php", 1, 9)]
    );
    assert_eq!(session.reference_checks.get("total"), Some(&uses));
    let parsed = kinds.iter().filter(|k| **k != "text").count();
    assert_eq!(session.reference_uses.get("total"), Some(&parsed));
    assert_eq!(session.evidence[1].phase, session.phase);

    // No use resolves to `OrderService` (`$order->total()` is typed `Order`),
    // but that bare-name match is left: "no uses" is uncertain, the reply
    // shows the line, and it is not the session's reference check.
    let p: FindReferencesParams =
        params(serde_json::json!({"symbol": "OrderService::total", "session_id": id}));
    let refs = s
        .shared
        .gated(p.call(), s.find_references_reply(p))
        .await
        .unwrap();
    let body = refs.structured_content.unwrap();
    assert_eq!(body["total"], 0, "{body}");
    let uncertain: Vec<(&str, u64)> = body["uncertain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["file"].as_str().unwrap(), r["line"].as_u64().unwrap()))
        .collect();
    assert!(
        uncertain.contains(&("app/Services/OrderService.php", 11)),
        "{body}"
    );
    let session = s.shared.sessions.get(&id).unwrap();
    assert_eq!(session.reference_checks.get("OrderService::total"), None);
    assert!(session.reference_checks.contains_key("total"));
}

/// Sets `file`'s mtime `secs` seconds from now (negative: in the past).
fn touch(file: &std::path::Path, secs: i64) {
    let now = std::time::SystemTime::now();
    let d = std::time::Duration::from_secs(secs.unsigned_abs());
    let t = if secs < 0 { now - d } else { now + d };
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// A whole-file read in a session leaves out the lines an earlier reply
/// returned, while the file is unchanged since: one line names them, the
/// structured lines hold them all and say which. A read of chosen lines
/// shows them again, and a change to the file shows them all.
#[tokio::test]
async fn a_whole_file_read_leaves_out_what_the_session_was_shown() {
    let (dir, s) = repo();
    let order = dir.path().join("app/Models/Order.php");
    touch(&order, -100);
    let id = s
        .shared
        .sessions
        .create(Session::new(Intent::Modify, "round the order total"))
        .unwrap()
        .id;
    let read = |args: serde_json::Value| {
        let p: ReadFileParams = params(args);
        let s = &s;
        async move {
            s.shared
                .gated(p.call(), s.read_file_reply(p))
                .await
                .unwrap()
        }
    };
    let text = |r: &CallToolResult| r.content[0].as_text().unwrap().text.clone();
    // Lines 7-15: the method `total` (and its doc line).
    let first = read(serde_json::json!({
        "file": "app/Models/Order.php", "start_line": 7, "end_line": 15, "session_id": id
    }))
    .await;
    assert!(text(&first).contains("8\t    public function total(): float"));

    let whole = serde_json::json!({"file": "app/Models/Order.php", "session_id": id});
    let again = read(whole.clone()).await;
    let t = text(&again);
    assert!(
        t.contains("7-15\t… 9 lines shown earlier in this session by read_file, unchanged since"),
        "{t}"
    );
    assert!(!t.contains("public function total"), "{t}");
    assert!(t.contains("17\t    public function ship(): void"), "{t}");
    let body = again.structured_content.unwrap();
    assert_eq!(
        body["shown_earlier"],
        serde_json::json!([{"start_line": 7, "end_line": 15}])
    );
    assert!(
        body["content"]
            .as_str()
            .unwrap()
            .contains("public function total")
    );
    assert_eq!(body["end_line"], 21, "{body}");

    // Chosen lines are shown whatever came before.
    let chosen = read(serde_json::json!({
        "file": "app/Models/Order.php", "start_line": 1, "end_line": 21, "session_id": id
    }))
    .await;
    assert!(text(&chosen).contains("8\t    public function total(): float"));

    // Changed since: nothing is left out.
    touch(&order, 10);
    let changed = read(whole).await;
    let t = text(&changed);
    assert!(t.contains("8\t    public function total(): float"), "{t}");
    assert!(!t.contains("shown earlier"), "{t}");

    // Without a session nothing is left out.
    touch(&order, -100);
    let p: ReadFileParams = params(serde_json::json!({"file": "app/Models/Order.php"}));
    let t = text(&s.read_file_reply(p).await.unwrap().into_result().unwrap());
    assert!(t.contains("8\t    public function total(): float"), "{t}");
}

/// A class named by its qualified name is found where PHP's name
/// resolution makes the word that class: not another namespace's class of
/// the same short name, a language string or a stylesheet.
#[tokio::test]
async fn a_qualified_class_is_found_where_php_resolves_it() {
    let (dir, s) = repo();
    for (file, text) in [
        (
            "app/Shop/Order.php",
            "<?php\n\nnamespace App\\Shop;\n\nclass Order\n{\n    public function next(): Order\n    {\n        return new Order();\n    }\n}\n",
        ),
        (
            "lang/en/orders.php",
            "<?php\n\nreturn ['title' => 'Order'];\n",
        ),
        (
            "resources/css/app.css",
            "/* Order summary */\n.order { color: red; }\n",
        ),
    ] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let lines = |symbol: &str| {
        let s = &s;
        let symbol = symbol.to_string();
        async move {
            let p: FindReferencesParams = params(serde_json::json!({"symbol": symbol}));
            let r = s.find_references_reply(p).await.unwrap();
            r.value
                .references
                .iter()
                .map(|x| (x.file.clone(), x.line))
                .collect::<Vec<_>>()
        }
    };
    let service = "app/Services/OrderService.php".to_string();
    assert_eq!(
        lines("App\\Models\\Order").await,
        [(service.clone(), 5), (service, 9)]
    );
    let shop = "app/Shop/Order.php".to_string();
    assert_eq!(
        lines("\\App\\Shop\\Order").await,
        [(shop.clone(), 7), (shop, 9)]
    );
    // The short name still finds every use of the word.
    assert!(lines("Order").await.len() > 4);
}
