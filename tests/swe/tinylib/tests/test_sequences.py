import pytest
from tinylib import chunk, dedupe, window


def test_chunk_even():
    assert chunk([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_chunk_uneven():
    assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunk_rejects_zero():
    with pytest.raises(ValueError):
        chunk([1], 0)


def test_window():
    assert window([1, 2, 3, 4], 3) == [(1, 2, 3), (2, 3, 4)]


def test_window_as_wide_as_the_items():
    assert window([1, 2], 2) == [(1, 2)]


def test_window_wider_than_the_items():
    assert window([1, 2], 3) == []


def test_dedupe_keeps_first_occurrences_in_order():
    assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_dedupe_of_nothing():
    assert dedupe([]) == []
