//! Argument parsing and dispatch; each subcommand lives in its own file.

pub fn main() -> i32 {
    0
}
