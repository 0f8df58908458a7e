use clamp_range::clamp;

#[test]
fn values_inside_stay() {
    for v in -3..=3 {
        assert_eq!(clamp(v, -3, 3), v);
    }
}

#[test]
fn values_below_become_low() {
    assert_eq!(clamp(-10, -3, 3), -3);
    assert_eq!(clamp(i64::MIN, 0, 1), 0);
}

#[test]
fn values_above_become_high() {
    assert_eq!(clamp(10, -3, 3), 3);
    assert_eq!(clamp(i64::MAX, 0, 1), 1);
}

#[test]
fn a_single_point_range() {
    for v in [-5, 7, 9] {
        assert_eq!(clamp(v, 7, 7), 7);
    }
}
