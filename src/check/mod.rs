//! stage: check
