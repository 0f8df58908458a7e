//! Providers against a mock HTTP server and a fake model CLI.
