use wrong_return::clamp;

#[test]
fn inside_is_unchanged() {
    assert_eq!(clamp(5, 0, 10), 5);
    assert_eq!(clamp(0, 0, 10), 0);
    assert_eq!(clamp(10, 0, 10), 10);
}

#[test]
fn outside_goes_to_the_nearest_bound() {
    assert_eq!(clamp(-3, 0, 10), 0);
    assert_eq!(clamp(11, 0, 10), 10);
    assert_eq!(clamp(i32::MAX, -5, 5), 5);
    assert_eq!(clamp(i32::MIN, -5, 5), -5);
}

#[test]
fn empty_width_range() {
    assert_eq!(clamp(-1, 3, 3), 3);
    assert_eq!(clamp(9, 3, 3), 3);
}

#[test]
fn matches_the_standard_library() {
    for low in -4..=4 {
        for high in low..=4 {
            for value in -8..=8 {
                assert_eq!(
                    clamp(value, low, high),
                    value.clamp(low, high),
                    "clamp({value}, {low}, {high})"
                );
            }
        }
    }
}
