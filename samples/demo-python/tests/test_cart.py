import pytest
from shop.cart import Cart


def test_add_and_total():
    cart = Cart()
    cart.add("apple", 30, 2)
    cart.add("pear", 45)
    assert cart.total() == 105


def test_add_same_sku_merges_quantities():
    cart = Cart()
    cart.add("apple", 30, 2)
    cart.add("apple", 30, 3)
    assert cart.total() == 150


def test_discount():
    cart = Cart()
    cart.add("book", 2000)
    assert cart.discount(10) == 1800


def test_rejects_zero_quantity():
    with pytest.raises(ValueError):
        Cart().add("apple", 30, 0)


def test_skus_sorted():
    cart = Cart()
    cart.add("pear", 1)
    cart.add("apple", 1)
    assert cart.skus() == ["apple", "pear"]
