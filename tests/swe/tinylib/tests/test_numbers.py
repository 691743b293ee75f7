import pytest
from tinylib import clamp, mean, running_total


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_below_and_above():
    assert clamp(-3, 0, 10) == 0
    assert clamp(13, 0, 10) == 10


def test_clamp_bounds_are_inclusive():
    assert clamp(0, 0, 10) == 0
    assert clamp(10, 0, 10) == 10


def test_clamp_rejects_inverted_bounds():
    with pytest.raises(ValueError):
        clamp(1, 5, 2)


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_of_one():
    assert mean([7]) == 7


def test_mean_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        mean([])


def test_running_total():
    assert running_total([1, 2, 3]) == [1, 3, 6]


def test_running_total_from_a_start():
    assert running_total([1, 1], start=10) == [11, 12]
