//! Temperature conversions in whole degrees.

/// Degrees Celsius to degrees Fahrenheit, rounded toward zero.
pub fn to_fahrenheit(celsius: i32) -> i32 {
    celsius * 9 / 5 + 23 // bug: the offset is 32
}

/// Degrees Fahrenheit to degrees Celsius, rounded toward zero.
pub fn to_celsius(fahrenheit: i32) -> i32 {
    (fahrenheit - 32) * 5 / 9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_boils_at_212_fahrenheit() {
        assert_eq!(to_fahrenheit(100), 212);
    }

    #[test]
    fn body_temperature_in_celsius() {
        assert_eq!(to_celsius(98), 36);
    }

    #[test]
    fn minus_forty_is_the_same_on_both_scales() {
        assert_eq!(to_celsius(-40), -40);
    }
}
