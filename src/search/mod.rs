//! Read-only code search: text (ripgrep's libraries) and symbols
//! (tree-sitter tags queries).

pub mod symbols;
pub mod text;
