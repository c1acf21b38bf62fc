//! Concurrent identical work shares one future: the first caller starts it, every caller
//! awaits the same result.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};

use crate::sync::lock;

type Running<K, V> = Arc<Mutex<HashMap<K, Shared<BoxFuture<'static, Option<V>>>>>>;

pub struct SingleFlight<K, V: Clone> {
    running: Running<K, V>,
}

impl<K, V: Clone> Default for SingleFlight<K, V> {
    fn default() -> Self {
        Self { running: Arc::new(Mutex::new(HashMap::new())) }
    }
}

impl<K, V> SingleFlight<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// Run `work` for `key` unless it is already running. Returns its result (`None` only
    /// if the runtime cancelled it) and whether this caller started it.
    pub async fn run<F>(&self, key: K, work: F) -> (Option<V>, bool)
    where
        F: Future<Output = V> + Send + 'static,
    {
        let (shared, leader) = {
            let mut running = lock(&self.running);
            match running.get(&key) {
                Some(existing) => (existing.clone(), false),
                None => {
                    // Spawned, so the work completes (and the key is released) even when every
                    // waiting request goes away.
                    let registry = self.running.clone();
                    let done_key = key.clone();
                    let handle = tokio::spawn(async move {
                        let value = work.await;
                        lock(&registry).remove(&done_key);
                        value
                    });
                    let shared = async move {
                        match handle.await {
                            Ok(v) => Some(v),
                            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                            Err(_) => None,
                        }
                    }
                    .boxed()
                    .shared();
                    running.insert(key, shared.clone());
                    (shared, true)
                }
            }
        };
        (shared.await, leader)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn identical_work_runs_once() {
        let flight: Arc<SingleFlight<&'static str, usize>> = Arc::default();
        let runs = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (flight, runs) = (flight.clone(), runs.clone());
            tasks.push(tokio::spawn(async move {
                flight
                    .run("k", async move {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        runs.fetch_add(1, Ordering::SeqCst) + 1
                    })
                    .await
            }));
        }
        let mut leaders = 0;
        for t in tasks {
            let (value, leader) = t.await.expect("task");
            assert_eq!(value, Some(1));
            leaders += usize::from(leader);
        }
        assert_eq!(leaders, 1);
        // Finished work is released: the next call runs again.
        let (again, leader) = flight.run("k", async { 7 }).await;
        assert_eq!((again, leader), (Some(7), true));
    }
}
