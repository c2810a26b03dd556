//! Read-only code search: text (ripgrep's libraries), symbols (tree-sitter
//! tags queries) and references (both together).

pub mod receivers;
pub mod references;
pub mod symbols;
pub mod text;
