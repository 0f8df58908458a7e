use prefix_format::format_id;

#[test]
fn small_numbers_are_zero_padded() {
    assert_eq!(format_id("BUG", 7), "BUG-0007");
    assert_eq!(format_id("OPS", 42), "OPS-0042");
    assert_eq!(format_id("X", 0), "X-0000");
}

#[test]
fn long_numbers_are_not_cut() {
    assert_eq!(format_id("BUG", 1234), "BUG-1234");
    assert_eq!(format_id("BUG", 123456), "BUG-123456");
}

#[test]
fn an_empty_prefix_keeps_the_dash() {
    assert_eq!(format_id("", 5), "-0005");
}
