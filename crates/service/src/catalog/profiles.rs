//! Provider profiles in memory. Loaded whole once, then kept until the store's change
//! counter of profiles moves (any replica's enrichment job bumps it with each write),
//! checked at most once per recheck interval. Prices are never failed or held up by
//! enrichment: a slow or failing store leaves the profiles held before (none at first).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use jiff::Timestamp;

use crate::memo::Recheck;

use wafuel_domain::profile::{RETENTION, StoredProfile};
use wafuel_store::enrich::EnrichStore;

/// Servable profiles by station key.
pub type ProfileMap = HashMap<String, StoredProfile>;

/// How long a read of profiles may wait for the store before going without them.
pub const PROFILE_BUDGET: Duration = Duration::from_millis(250);

#[derive(Clone)]
struct Loaded {
    /// The change counter the map was read at.
    version: i64,
    map: Arc<ProfileMap>,
    /// When the store last confirmed (or failed to confirm) the counter.
    checked_at: Timestamp,
}

/// The profiles every render merges, held in memory.
pub struct Profiles {
    store: Arc<dyn EnrichStore>,
    recheck: Recheck,
    held: RwLock<Option<Loaded>>,
    /// One refresh at a time; others serve what is held meanwhile.
    refreshing: tokio::sync::Mutex<()>,
}

impl Profiles {
    pub fn new(store: Arc<dyn EnrichStore>, recheck: Recheck) -> Self {
        Self { store, recheck, held: RwLock::new(None), refreshing: tokio::sync::Mutex::new(()) }
    }

    /// The servable profiles at `now`.
    pub async fn current(&self, now: Timestamp) -> Arc<ProfileMap> {
        let store = &self.store;
        let held = crate::sync::read(&self.held).clone();
        let guard = match &held {
            Some(l) if self.recent(l, now) => return l.map.clone(),
            // Refreshing held profiles never makes a request wait for another's refresh.
            Some(l) => match self.refreshing.try_lock() {
                Ok(guard) => guard,
                Err(_) => return l.map.clone(),
            },
            // Nothing held yet: wait for the first load rather than render without profiles.
            None => self.refreshing.lock().await,
        };
        // Another request may have refreshed while this one waited for the lock.
        if let Some(l) = crate::sync::read(&self.held).as_ref()
            && self.recent(l, now)
        {
            return l.map.clone();
        }
        let loaded = match tokio::time::timeout(PROFILE_BUDGET, self.refresh(store, held.as_ref(), now)).await
        {
            Ok(Ok(loaded)) => loaded,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "enrichment store unavailable; rendering with the profiles held");
                self.unconfirmed(held, now)
            }
            Err(_) => {
                tracing::warn!("enrichment store too slow; rendering with the profiles held");
                self.unconfirmed(held, now)
            }
        };
        let map = loaded.map.clone();
        *crate::sync::write(&self.held) = Some(loaded);
        drop(guard);
        map
    }

    fn recent(&self, loaded: &Loaded, now: Timestamp) -> bool {
        self.recheck.recent(loaded.checked_at, now)
    }

    /// What is held (or nothing), not asked again before the next recheck.
    fn unconfirmed(&self, held: Option<Loaded>, now: Timestamp) -> Loaded {
        match held {
            Some(l) => Loaded { checked_at: now, ..l },
            None => Loaded { version: -1, map: Arc::default(), checked_at: now },
        }
    }

    /// The held map when the counter has not moved, else a fresh read.
    async fn refresh(
        &self,
        store: &Arc<dyn EnrichStore>,
        held: Option<&Loaded>,
        now: Timestamp,
    ) -> Result<Loaded, wafuel_store::StoreError> {
        let version = store.profiles_version().await?;
        let since = now.saturating_sub(RETENTION).unwrap_or(now);
        if let Some(l) = held
            && l.version == version
        {
            // Profiles past retention are never merged (`merge` checks), so an unchanged
            // counter keeps the map whatever the clock says.
            return Ok(Loaded { checked_at: now, ..l.clone() });
        }
        let list = store.profiles(since).await?;
        let map = list.into_iter().map(|p| (p.station_key.clone(), p)).collect();
        Ok(Loaded { version, map: Arc::new(map), checked_at: now })
    }
}
