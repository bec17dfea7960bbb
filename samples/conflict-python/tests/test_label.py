from shop.label import label, shown_name, shown_qty


def test_label_is_text():
    assert isinstance(label("apple", 1), str)


def test_name_is_capitalized():
    assert shown_name("apple") == "Apple"


def test_quantity_is_shown():
    assert shown_qty(2) == 2
