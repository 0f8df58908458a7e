use accumulator_reset::run_lengths;

#[test]
fn empty_and_single() {
    assert_eq!(run_lengths(""), vec![]);
    assert_eq!(run_lengths("x"), vec![('x', 1)]);
    assert_eq!(run_lengths("xxxx"), vec![('x', 4)]);
}

#[test]
fn many_runs() {
    assert_eq!(
        run_lengths("aaabccdddd"),
        vec![('a', 3), ('b', 1), ('c', 2), ('d', 4)]
    );
    assert_eq!(
        run_lengths("abab"),
        vec![('a', 1), ('b', 1), ('a', 1), ('b', 1)]
    );
}

#[test]
fn non_ascii() {
    assert_eq!(run_lengths("ééü"), vec![('é', 2), ('ü', 1)]);
}

#[test]
fn runs_expand_back_to_the_text() {
    let texts = [
        "",
        "a",
        "aab",
        "abba",
        "mississippi",
        "zzzyyyxxx  w",
        "ééüé",
    ];
    for text in texts {
        let runs = run_lengths(text);
        let rebuilt: String = runs
            .iter()
            .map(|&(c, n)| std::iter::repeat(c).take(n).collect::<String>())
            .collect();
        assert_eq!(rebuilt, text, "{text:?}");
        assert!(runs.iter().all(|&(_, n)| n > 0), "{text:?}");
        assert!(runs.windows(2).all(|w| w[0].0 != w[1].0), "{text:?}");
    }
}
