//! Integration tests: one binary, modules by area. Everything runs against real parts on
//! 127.0.0.1 with random ports: the simulated FuelWatch origin is the only stand-in.

mod archive;
mod backfill;
mod browser;
mod catalog;
mod consumers;
mod deploy;
mod enrich;
mod errors;
mod events;
mod explore;
mod feed_fixtures;
mod forecast;
mod golden;
mod hardening;
mod hostile;
mod http_api;
mod import_faults;
mod layers;
mod process;
mod properties;
mod replicas;
mod routes;
mod sim_feed;
mod source_client;
mod stations;
mod store;
mod street_map;
mod summaries;
mod support;
mod upstream_forms;
mod warm;
mod wholesale;
