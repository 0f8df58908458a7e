use off_by_one::sum_up_to;

#[test]
fn zero_and_one() {
    assert_eq!(sum_up_to(0), 0);
    assert_eq!(sum_up_to(1), 1);
}

#[test]
fn matches_the_closed_form() {
    for n in 0..200u64 {
        assert_eq!(sum_up_to(n), n * (n + 1) / 2, "n = {n}");
    }
}
