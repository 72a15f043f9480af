//! stage: scan
