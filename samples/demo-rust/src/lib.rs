//! Greenloop's Rust demo: small helpers with unit tests here and an
//! integration test in `tests/`.

pub mod temperature;
pub mod words;
