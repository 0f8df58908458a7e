use pretty_assertions::assert_eq;
use wrong_comparator::top_words;

fn words(pairs: &[(&str, usize)]) -> Vec<(String, usize)> {
    pairs.iter().map(|&(w, n)| (w.to_string(), n)).collect()
}

#[test]
fn most_frequent_first() {
    assert_eq!(
        top_words("b a b c b a", 2),
        words(&[("b", 3), ("a", 2)])
    );
}

#[test]
fn ties_in_alphabetical_order() {
    assert_eq!(
        top_words("pear apple fig apple fig pear", 3),
        words(&[("apple", 2), ("fig", 2), ("pear", 2)])
    );
}

#[test]
fn case_and_punctuation_are_folded() {
    assert_eq!(
        top_words("It's here. IT'S there; it's everywhere!", 1),
        words(&[("it's", 3)])
    );
}

#[test]
fn empty_text_and_zero() {
    assert_eq!(top_words("", 5), words(&[]));
    assert_eq!(top_words("a b c", 0), words(&[]));
}

#[test]
fn fewer_words_than_asked() {
    assert_eq!(
        top_words("one two two", 10),
        words(&[("two", 2), ("one", 1)])
    );
}
