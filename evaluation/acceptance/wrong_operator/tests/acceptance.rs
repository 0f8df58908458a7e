use wrong_operator::{days_in_year, is_leap_year};

#[test]
fn ordinary_years() {
    assert!(is_leap_year(1996));
    assert!(is_leap_year(2024));
    assert!(!is_leap_year(2023));
    assert!(!is_leap_year(2025));
}

#[test]
fn centuries() {
    assert!(!is_leap_year(1700));
    assert!(!is_leap_year(1800));
    assert!(!is_leap_year(1900));
    assert!(!is_leap_year(2100));
    assert!(is_leap_year(1600));
    assert!(is_leap_year(2000));
    assert!(is_leap_year(2400));
}

#[test]
fn matches_the_gregorian_rule() {
    for year in 1..=4000u32 {
        let expected = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        assert_eq!(is_leap_year(year), expected, "year {year}");
    }
}

#[test]
fn days_follow_the_rule() {
    assert_eq!(days_in_year(2024), 366);
    assert_eq!(days_in_year(2000), 366);
    assert_eq!(days_in_year(1900), 365);
    assert_eq!(days_in_year(2023), 365);
}
