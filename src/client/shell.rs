//! The files a Bash command line writes, for the write-gate hook: the line
//! is parsed with tree-sitter-bash (the tree-sitter organisation's grammar,
//! so quoting, `&&` / `;` / pipes, subshells, `if` / `for` bodies and
//! heredocs are the grammar's business), then each simple command and
//! redirection is read for its written files:
//!
//! - redirections `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&FILE`;
//! - `tee`, `touch`, `truncate`, `dd of=`, `cp` / `mv` / `ln` / `install`
//!   (the destination; `mv` also the sources it removes), `rm` (existing
//!   files), `sed -i` / `perl -i` (the files edited in place),
//!   `git checkout -- FILE…`, `git restore FILE…`, `git rm`, `git mv`;
//! - `bash -c` / `sh -c` / `eval` strings, read the same way; `sudo`, `env`,
//!   `command`, `nohup`, `time`, `nice` in front of a command are skipped;
//! - `cd DIR` moves the directory later relative paths are taken from.
//!
//! A word the shell would expand at run time (`$VAR`, `$(…)`, backquotes)
//! names no file that can be known here and is left out; globs are
//! expanded against the file system. Programs that write through their own
//! code (`python -c`, `php -r`, a script) are not read: the hook gates
//! command lines, it does not sandbox programs.

use std::path::{Path, PathBuf};

use tree_sitter::{Node, Parser};

use super::Write;

/// Commands that run the command after them, with their options that take
/// a value as the next word (`sudo -u www-data sed -i …`, `nice -n 5 …`).
const PREFIX_COMMANDS: [(&str, &[&str]); 7] = [
    (
        "sudo",
        &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
    ),
    ("env", &["-u", "-C", "-S"]),
    ("command", &[]),
    ("nohup", &[]),
    ("time", &["-f", "-o"]),
    ("nice", &["-n"]),
    ("exec", &["-a"]),
];

/// The files `command` writes, run from `cwd` (absolute paths, not
/// resolved), in the order the command line names them. A line that does
/// not parse yields what its parsed parts name (tree-sitter recovers).
pub fn writes(command: &str, cwd: &Path) -> Vec<Write> {
    let mut out = Vec::new();
    let mut cwd = cwd.to_path_buf();
    read_line(command, &mut cwd, &mut out, 0);
    out
}

/// `bash -c` inside `bash -c` … is followed this deep.
const MAX_NESTING: usize = 4;

fn read_line(command: &str, cwd: &mut PathBuf, out: &mut Vec<Write>, depth: usize) {
    if depth > MAX_NESTING {
        return;
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return;
    }
    let Some(tree) = parser.parse(command, None) else {
        return;
    };
    let src = command.as_bytes();
    // Pre-order: a command's `cd` is seen before the commands after it, a
    // redirected statement's body before its redirections.
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "command" => read_command(node, src, cwd, out, depth),
            "file_redirect" => read_redirect(node, src, cwd, out),
            _ => {}
        }
        let mut c = node.walk();
        let children: Vec<Node> = node.children(&mut c).collect();
        stack.extend(children.into_iter().rev());
    }
}

/// The literal text of a word, as the shell would pass it, or `None` when
/// it expands at run time.
fn literal(node: Node, src: &[u8]) -> Option<String> {
    let text = node.utf8_text(src).ok()?;
    match node.kind() {
        "word" | "number" => Some(unescape(text)),
        "raw_string" => Some(text.trim_matches('\'').to_string()),
        "string" => {
            let mut c = node.walk();
            let mut s = String::new();
            for part in node.children(&mut c) {
                match part.kind() {
                    "\"" => {}
                    "string_content" => s.push_str(&unescape_double(part.utf8_text(src).ok()?)),
                    _ => return None,
                }
            }
            Some(s)
        }
        "concatenation" => {
            let mut c = node.walk();
            let mut s = String::new();
            for part in node.children(&mut c) {
                s.push_str(&literal(part, src)?);
            }
            Some(s)
        }
        _ => None,
    }
}

/// An unquoted word: a backslash quotes the next character.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        if ch == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(ch);
        }
    }
    out
}

/// Inside double quotes a backslash quotes only `$`, `` ` ``, `"`, `\`.
fn unescape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '"' | '\\')
        {
            out.push(next);
            chars.next();
        } else {
            out.push(ch);
        }
    }
    out
}

fn read_redirect(node: Node, src: &[u8], cwd: &Path, out: &mut Vec<Write>) {
    let mut c = node.walk();
    let op = node
        .children(&mut c)
        .find(|n| !n.is_named())
        .and_then(|n| n.utf8_text(src).ok())
        .unwrap_or("");
    let Some(dest) = node.child_by_field_name("destination") else {
        return;
    };
    let Some(target) = literal(dest, src) else {
        return;
    };
    let writes_file = match op {
        ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => true,
        // `>&2` duplicates a descriptor; `>&file` writes the file.
        ">&" | "&>&" => !target.chars().all(|ch| ch.is_ascii_digit()) && target != "-",
        _ => false,
    };
    if writes_file {
        push(out, cwd, &target, true);
    }
}

/// The command's name and its arguments as literals (`None` for a word
/// that expands at run time).
fn words(node: Node, src: &[u8]) -> (Option<String>, Vec<Option<String>>) {
    let name = node
        .child_by_field_name("name")
        .and_then(|n| n.named_child(0).or(Some(n)))
        .and_then(|n| literal(n, src));
    let mut c = node.walk();
    let args = node
        .children_by_field_name("argument", &mut c)
        .map(|n| literal(n, src))
        .collect();
    (name, args)
}

fn read_command(node: Node, src: &[u8], cwd: &mut PathBuf, out: &mut Vec<Write>, depth: usize) {
    let (Some(name), args) = words(node, src) else {
        return;
    };
    let mut argv: Vec<Option<String>> = std::iter::once(Some(name)).chain(args).collect();
    // `sudo -u x sed -i …`, `env A=1 tee f`: the command after the prefix.
    while let Some(Some(first)) = argv.first() {
        let base = first.rsplit('/').next().unwrap_or(first);
        let Some((_, valued)) = PREFIX_COMMANDS.iter().find(|(name, _)| *name == base) else {
            break;
        };
        // Its options (and their values) and `NAME=value` assignments, up to
        // the command it runs.
        let mut skip = 1;
        while let Some(Some(a)) = argv.get(skip) {
            if valued.contains(&a.as_str()) {
                skip += 2;
            } else if a.starts_with('-') || a.contains('=') {
                skip += 1;
            } else {
                break;
            }
        }
        argv.drain(..skip.min(argv.len()));
    }
    let Some(Some(first)) = argv.first() else {
        return;
    };
    let program = first.rsplit('/').next().unwrap_or(first).to_string();
    let args = &argv[1..];
    let lit: Vec<&str> = args.iter().flatten().map(String::as_str).collect();
    let operands = || lit.iter().copied().filter(|a| !a.starts_with('-'));
    match program.as_str() {
        "cd" => {
            if let Some(dir) = lit.first() {
                *cwd = cwd.join(expand_home(dir));
            }
        }
        "bash" | "sh" | "zsh" | "dash" => {
            if let Some(i) = lit.iter().position(|a| *a == "-c")
                && let Some(script) = lit.get(i + 1)
            {
                read_line(script, &mut cwd.clone(), out, depth + 1);
            }
        }
        "eval" => read_line(&lit.join(" "), cwd, out, depth + 1),
        "tee" | "touch" => operands().for_each(|f| push(out, cwd, f, true)),
        "truncate" => {
            let mut it = lit.iter();
            while let Some(a) = it.next() {
                match *a {
                    "-s" | "--size" | "-r" | "--reference" => {
                        it.next();
                    }
                    a if a.starts_with('-') => {}
                    f => push(out, cwd, f, true),
                }
            }
        }
        "dd" => lit
            .iter()
            .filter_map(|a| a.strip_prefix("of="))
            .for_each(|f| push(out, cwd, f, true)),
        "rm" | "unlink" | "shred" => operands().for_each(|f| push_existing(out, cwd, f)),
        "cp" | "install" | "ln" => copy_like(&lit, cwd, out, false),
        "mv" => copy_like(&lit, cwd, out, true),
        "sed" | "perl" => in_place(&program, &lit, cwd, out),
        "git" => git(&lit, cwd, out),
        _ => {}
    }
}

/// `cp`/`mv`/`ln`/`install`: the destination (a directory takes each
/// source's name); `mv` also removes its sources.
fn copy_like(args: &[&str], cwd: &Path, out: &mut Vec<Write>, moves: bool) {
    let mut target_dir = None;
    let mut operands = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-t" | "--target-directory" => target_dir = it.next().copied(),
            "-S" | "--suffix" | "-m" | "--mode" | "-o" | "--owner" | "-g" | "--group" => {
                it.next();
            }
            a if a.starts_with("--target-directory=") => {
                target_dir = a.split_once('=').map(|x| x.1);
            }
            a if a.starts_with('-') && a.len() > 1 => {}
            f => operands.push(f),
        }
    }
    let (sources, dest) = match target_dir {
        Some(d) => (operands.as_slice(), Some(d)),
        None => match operands.split_last() {
            Some((d, rest)) if !rest.is_empty() => (rest, Some(*d)),
            _ => (&[][..], None),
        },
    };
    let Some(dest) = dest else { return };
    let dest_abs = cwd.join(expand_home(dest));
    let into_dir = target_dir.is_some() || dest_abs.is_dir() || dest.ends_with('/');
    for src in sources {
        if moves {
            push_existing(out, cwd, src);
        }
        if into_dir {
            let name = Path::new(src).file_name().unwrap_or_default();
            out.push(Write {
                path: dest_abs.join(name),
                creates: true,
            });
        }
    }
    if !into_dir {
        push(out, cwd, dest, true);
    }
}

/// `sed -i` / `perl -i` (`-i.bak`, `-pi`, `--in-place`): the files after
/// the script; without an in-place flag they only print.
fn in_place(program: &str, args: &[&str], cwd: &Path, out: &mut Vec<Write>) {
    let flag_in_place = |a: &str| {
        a.starts_with("--in-place")
            || (a.starts_with('-') && !a.starts_with("--") && {
                // The option letters before a suffix (`-i.bak`, `-ni`).
                let letters: String = a[1..]
                    .chars()
                    .take_while(char::is_ascii_alphabetic)
                    .collect();
                letters.contains('i')
            })
    };
    if !args.iter().any(|a| flag_in_place(a)) {
        return;
    }
    let mut script_given = false;
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-e" | "-f" | "--expression" | "--file" => {
                script_given = true;
                it.next();
            }
            // perl's -M / -I take their value in the same word; sed's -l N.
            "-l" if program == "sed" => {
                it.next();
            }
            a if a.starts_with("--expression=") || a.starts_with("--file=") => script_given = true,
            a if a.starts_with('-') && a.len() > 1 => {
                if a[1..].contains('e') && !a.starts_with("--") && program == "perl" {
                    // `perl -pie 's/…/'`: the next word is the script.
                    script_given = true;
                    it.next();
                }
            }
            _ if !script_given => script_given = true,
            f => files.push(f),
        }
    }
    for f in files {
        push(out, cwd, f, false);
    }
}

/// `git checkout -- FILE…`, `git restore FILE…`, `git rm FILE…`,
/// `git mv SRC… DEST` (with `-C DIR` honoured).
fn git(args: &[&str], cwd: &Path, out: &mut Vec<Write>) {
    let mut dir = cwd.to_path_buf();
    let mut it = args.iter().peekable();
    while let Some(a) = it.peek() {
        match **a {
            "-C" => {
                it.next();
                if let Some(d) = it.next() {
                    dir = dir.join(expand_home(d));
                }
            }
            "-c" | "--git-dir" | "--work-tree" => {
                it.next();
                it.next();
            }
            a if a.starts_with('-') => {
                it.next();
            }
            _ => break,
        }
    }
    let Some(sub) = it.next() else { return };
    let rest: Vec<&str> = it.copied().collect();
    match *sub {
        "checkout" => {
            if let Some(i) = rest.iter().position(|a| *a == "--") {
                rest[i + 1..].iter().for_each(|f| push(out, &dir, f, false));
            }
        }
        "restore" | "rm" => {
            let mut it = rest.iter();
            while let Some(a) = it.next() {
                match *a {
                    "-s" | "--source" => {
                        it.next();
                    }
                    a if a.starts_with('-') => {}
                    f => push(out, &dir, f, false),
                }
            }
        }
        "mv" => copy_like(&rest, &dir, out, true),
        _ => {}
    }
}

fn expand_home(word: &str) -> PathBuf {
    match word.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(rest.trim_start_matches('/')))
            .unwrap_or_else(|| PathBuf::from(word)),
        _ => PathBuf::from(word),
    }
}

/// `word` joined to `cwd`, globs expanded against the file system (a glob
/// that matches nothing stays literal, as in bash).
fn push(out: &mut Vec<Write>, cwd: &Path, word: &str, creates: bool) {
    for path in expand(cwd, word) {
        out.push(Write { path, creates });
    }
}

/// Like [`push`], for commands that only touch existing files (`rm`,
/// `mv`'s sources): a name that is no file is nothing written.
fn push_existing(out: &mut Vec<Write>, cwd: &Path, word: &str) {
    for path in expand(cwd, word) {
        if path.is_file() {
            out.push(Write {
                path,
                creates: false,
            });
        }
    }
}

fn expand(cwd: &Path, word: &str) -> Vec<PathBuf> {
    let path = cwd.join(expand_home(word));
    if !word.contains(['*', '?', '[']) {
        return vec![path];
    }
    let mut found: Vec<PathBuf> = vec![PathBuf::new()];
    for part in path.components() {
        let text = part.as_os_str().to_string_lossy();
        if !text.contains(['*', '?', '[']) {
            found.iter_mut().for_each(|p| p.push(part));
            continue;
        }
        let Ok(glob) = globset::Glob::new(&text) else {
            return vec![path];
        };
        let m = glob.compile_matcher();
        found = found
            .iter()
            .flat_map(|dir| {
                std::fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| {
                        let name = e.file_name();
                        // Bash's globs leave dot files out unless asked.
                        let name = name.to_string_lossy();
                        (!name.starts_with('.') || text.starts_with('.')) && m.is_match(&*name)
                    })
                    .map(|e| e.path())
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    if found.is_empty() {
        vec![path]
    } else {
        found.sort();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files `command` writes from `/repo`, as `(path, creates)`.
    fn check(command: &str, expected: &[(&str, bool)]) {
        let got: Vec<(String, bool)> = writes(command, Path::new("/repo"))
            .into_iter()
            .map(|w| (w.path.display().to_string(), w.creates))
            .collect();
        let want: Vec<(String, bool)> = expected.iter().map(|(p, c)| (p.to_string(), *c)).collect();
        assert_eq!(got, want, "{command}");
    }

    #[test]
    fn redirections_and_writing_commands_name_their_files() {
        check("echo hi > app/a.php", &[("/repo/app/a.php", true)]);
        check("echo hi>>'b c.txt'", &[("/repo/b c.txt", true)]);
        check(
            "cat <<'EOF' > app/New.php\n<?php\nEOF\n",
            &[("/repo/app/New.php", true)],
        );
        check(
            "printf x | tee -a app/x.php /tmp/log",
            &[("/repo/app/x.php", true), ("/tmp/log", true)],
        );
        check(
            "sed -i 's/a/b/' app/x.php app/y.php",
            &[("/repo/app/x.php", false), ("/repo/app/y.php", false)],
        );
        check(
            "sed -i.bak -e 's/a/b/' -e 's/c/d/' \"app/x.php\"",
            &[("/repo/app/x.php", false)],
        );
        check(
            "perl -pi -e 's/a/b/' app/x.php",
            &[("/repo/app/x.php", false)],
        );
        check("cp /tmp/x.php app/y.php", &[("/repo/app/y.php", true)]);
        check(
            "cd app && touch z.php; truncate -s 0 w.php",
            &[("/repo/app/z.php", true), ("/repo/app/w.php", true)],
        );
        check(
            "git checkout -- app/x.php routes/web.php",
            &[("/repo/app/x.php", false), ("/repo/routes/web.php", false)],
        );
        check(
            "git -C sub restore --source HEAD~1 a.txt",
            &[("/repo/sub/a.txt", false)],
        );
        check("bash -c 'echo x > app/q.php'", &[("/repo/app/q.php", true)]);
        check(
            "sudo -E tee app/t.php < /dev/null",
            &[("/repo/app/t.php", true)],
        );
        check(
            "dd if=/dev/zero of=app/blob bs=1 count=1",
            &[("/repo/app/blob", true)],
        );
        check("if true; then echo x > a.txt; fi", &[("/repo/a.txt", true)]);
        check("(cd app; echo x >| b.txt)", &[("/repo/app/b.txt", true)]);
    }

    #[test]
    fn reading_commands_and_run_time_words_name_nothing() {
        check(
            "cat app/x.php | grep foo > /dev/null",
            &[("/dev/null", true)],
        );
        check("sed 's/a/b/' app/x.php", &[]);
        check("ls -la 2>&1", &[]);
        check("echo x > \"$OUT\"", &[]);
        check("echo x > $(mktemp)", &[]);
        check("rg -n 'a > b' app", &[]);
        check("echo 'sed -i s/a/b/ app/x.php'", &[]);
        check("git checkout main", &[]);
    }

    #[test]
    fn moves_remove_their_existing_sources_and_globs_expand() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        std::fs::write(dir.join("a.php"), "x").unwrap();
        std::fs::write(dir.join("b.php"), "x").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        let got: Vec<(PathBuf, bool)> = writes("mv a.php sub/ && rm *.php", &dir)
            .into_iter()
            .map(|w| (w.path, w.creates))
            .collect();
        assert_eq!(
            got,
            vec![
                (dir.join("a.php"), false),
                (dir.join("sub/a.php"), true),
                (dir.join("a.php"), false),
                (dir.join("b.php"), false),
            ]
        );
    }
}
