from calc import add, mean


def test_mean_of_halves():
    assert mean([1, 2]) == 1.5


def test_add():
    assert add(2, 3) == 5
