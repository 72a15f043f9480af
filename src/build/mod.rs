//! stage: build
