//! stage: parse
