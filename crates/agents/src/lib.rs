//! The producer and consumer roles (filled in by the agents issue).
