//! "Did you mean": the closest of some names to a word that matched none.

/// The candidate closest to `word` by edit distance, when it is close
/// enough to be a slip (at most a third of the word's length, and at least
/// one edit allowed); ties go to the first.
///
/// ```ignore
/// assert_eq!(closest("BLOK", ["BLOCK", "WARPS"]), Some("BLOCK"));
/// ```
pub(crate) fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == word {
            continue;
        }
        let d = distance(word, c);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over characters, case-insensitive for a change of
/// case alone costing nothing but a tie-break.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    // Names are short; a long one is no slip of another.
    if a.len().abs_diff(b.len()) > a.len().max(b.len()) / 2 + 1 || a.len() > 256 || b.len() > 256 {
        return usize::MAX;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_slip_finds_its_name_and_a_stranger_finds_none() {
        assert_eq!(closest("BLOK", ["BLOCK", "WARPS"]), Some("BLOCK"));
        assert_eq!(closest("colsun", ["colsum", "rowsum"]), Some("colsum"));
        assert_eq!(closest("nn", ["n", "m"]), Some("n"));
        assert_eq!(closest("block", ["BLOCK"]), Some("BLOCK"));
        assert_eq!(closest("zzzzzz", ["BLOCK", "WARPS"]), None);
        assert_eq!(closest("x", []), None);
        assert_eq!(closest(&"a".repeat(10_000), ["a"]), None);
    }
}
