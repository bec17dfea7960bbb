from shop.label import label


def test_label_is_text():
    assert isinstance(label("apple", 1), str)


def test_name_is_capitalized():
    assert label("apple", 2).startswith("Apple ")


def test_quantity_is_shown():
    assert label("Apple", 2).endswith(" x2")
