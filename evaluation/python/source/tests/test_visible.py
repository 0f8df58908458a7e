from calc import mean


def test_mean_of_evens():
    assert mean([2, 4]) == 3
