//! stage: emit
