#[cfg(feature = "tls-rustls")]
pub mod rustls;
