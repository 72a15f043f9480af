//! "Did you mean": the closest of some names to a word that matched none.

/// The candidate closest to `word` by edit distance, when it is close
/// enough to be a slip (at most a third of the word's length, and at least
/// one edit allowed) and shares a character with it (`z` is no slip of
/// `A`); ties go to the first.
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
        // Every character replaced is another name, not a slip of this one.
        let replaced_all = d >= word.chars().count().max(c.chars().count());
        if d <= limit && !replaced_all && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Edit distance over characters (Levenshtein, with two neighbours swapped
/// counting as one edit, the commonest slip: `agr` for `arg`),
/// case-insensitive for a change of case alone costing nothing but a tie-break.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    // Names are short; a long one is no slip of another.
    if a.len().abs_diff(b.len()) > a.len().max(b.len()) / 2 + 1 || a.len() > 256 || b.len() > 256 {
        return usize::MAX;
    }
    // Two rows back (for a swap), the previous row and the current one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 0..a.len() {
        row[0] = i + 1;
        for j in 0..b.len() {
            let mut d = (prev[j] + usize::from(a[i] != b[j])).min(row[j] + 1).min(prev[j + 1] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                d = d.min(before[j - 1] + 1);
            }
            row[j + 1] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_slip_finds_its_name_and_a_stranger_finds_none() {
        assert_eq!(closest("BLOK", ["BLOCK", "WARPS"]), Some("BLOCK"));
        assert_eq!(closest("colsun", ["colsum", "rowsum"]), Some("colsum"));
        assert_eq!(closest("nn", ["n", "m"]), Some("n"));
        assert_eq!(closest("agr", ["arg", "ret"]), Some("arg"));
        assert_eq!(closest("alpah", ["alpha", "beta"]), Some("alpha"));
        assert_eq!(closest("gar", ["arg"]), None);
        assert_eq!(closest("block", ["BLOCK"]), Some("BLOCK"));
        assert_eq!(closest("zzzzzz", ["BLOCK", "WARPS"]), None);
        assert_eq!(closest("x", []), None);
        assert_eq!(closest("z", ["A", "n"]), None);
        assert_eq!(closest("N", ["n", "m"]), Some("n"));
        assert_eq!(closest("x", ["xs"]), Some("xs"));
        assert_eq!(closest(&"a".repeat(10_000), ["a"]), None);
    }
}
