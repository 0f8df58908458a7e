use missing_edge_case::average;

#[test]
fn empty_is_none() {
    assert_eq!(average(&[]), None);
    let empty: Vec<u32> = Vec::new();
    assert_eq!(average(&empty), None);
}

#[test]
fn single_value() {
    assert_eq!(average(&[0]), Some(0));
    assert_eq!(average(&[7]), Some(7));
    assert_eq!(average(&[u32::MAX]), Some(u32::MAX));
}

#[test]
fn several_values_round_down() {
    assert_eq!(average(&[1, 2, 3]), Some(2));
    assert_eq!(average(&[1, 2]), Some(1));
    assert_eq!(average(&[10, 20, 30, 41]), Some(25));
}

#[test]
fn large_values_do_not_overflow() {
    assert_eq!(average(&[u32::MAX, u32::MAX, u32::MAX]), Some(u32::MAX));
    assert_eq!(average(&[u32::MAX, 1]), Some(2_147_483_648));
}
