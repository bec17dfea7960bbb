import pytest

from stats.summary import above, clamp, mean, running_total


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_mean_of_nothing():
    with pytest.raises(ValueError):
        mean([])


def test_clamp():
    assert clamp(5, 0, 10) == 5
    assert clamp(-1, 0, 10) == 0
    assert clamp(11, 0, 10) == 10
    assert clamp(10, 0, 10) == 10


def test_running_total():
    assert running_total([1, 2, 3]) == [1, 3, 6]


def test_above():
    assert above([1, 5, 7], 5) == [7]
