use string_handling::capitalize;

#[test]
fn empty() {
    assert_eq!(capitalize(""), "");
}

#[test]
fn ascii_words() {
    assert_eq!(capitalize("hello"), "Hello");
    assert_eq!(capitalize("Hello"), "Hello");
    assert_eq!(capitalize("a"), "A");
    assert_eq!(capitalize("rUST"), "RUST");
    assert_eq!(capitalize("1st"), "1st");
}

#[test]
fn non_ascii_first_letter() {
    assert_eq!(capitalize("élan"), "Élan");
    assert_eq!(capitalize("über"), "Über");
    assert_eq!(capitalize("ñ"), "Ñ");
}

#[test]
fn only_the_first_letter_changes() {
    assert_eq!(capitalize("hello world"), "Hello world");
    assert_eq!(capitalize("añejo"), "Añejo");
}
