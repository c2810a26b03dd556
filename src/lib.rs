//! code-intel: a single-binary MCP server that gives coding agents code
//! intelligence over the repository they edit — ripgrep-speed text search,
//! tree-sitter symbols and structure, and AST-chunked multilingual semantic
//! search in an embedded LanceDB index kept in sync incrementally.
//!
//! Module map (dependencies point down): `server` (MCP only) → `index`
//! (walk → chunk → embed → store) → `chunk`, `embed`, `store` → `search`
//! (text, symbols) → `lang`, `repo`, `config`. Nothing but the MCP
//! transport writes to stdout.

pub mod chunk;
pub mod classify;
pub mod client;
pub mod config;
pub mod embed;
pub mod framework;
pub mod index;
pub mod lang;
pub mod learn;
pub mod lexical;
pub mod model;
pub mod rank;
pub mod relevance;
pub mod repo;
pub mod runtime;
pub mod search;
pub mod server;
pub mod session;
pub mod store;
pub mod util;

#[cfg(test)]
mod architecture_tests;
