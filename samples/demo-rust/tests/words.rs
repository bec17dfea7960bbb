//! Integration test: the public API as a user of the crate sees it.

use demo_rust::words::{title_case, word_count};

#[test]
fn counts_words_separated_by_single_spaces() {
    assert_eq!(word_count("one two three"), 3);
}

#[test]
fn counts_words_separated_by_runs_of_whitespace() {
    assert_eq!(word_count("  two   words\n"), 2);
}

#[test]
fn title_case_keeps_word_count() {
    let title = title_case("a tale of two cities");
    assert_eq!(word_count(&title), 5);
}
