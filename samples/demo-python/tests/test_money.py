from shop.money import format_cents


def test_format_whole_euros():
    assert format_cents(1200) == "12.00 EUR"


def test_format_cents():
    assert format_cents(1234) == "12.34 EUR"
