//! What differs between the two databases, and nothing else: how a connection is had, how a
//! writing transaction begins, the bulk write of an import, and how replicas are woken.

use std::ops::DerefMut;
use std::sync::Arc;

use super::StoreError;
use super::conn::{Conn, Statement, sql};

/// The PostgreSQL channel a publish notifies, waking every replica's event reader.
pub const CHANNEL: &str = "wafuel_events";

/// Wakes the event reader when the store says a publish committed.
#[async_trait::async_trait]
pub trait EventWaker: Send {
    /// Resolves on the next notification; an error means the listening connection is gone.
    async fn wait(&mut self) -> Result<(), StoreError>;
}

/// A station's prices of a product in one month: `day:price` pairs, days ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonthRow {
    pub sid: i64,
    pub product: i64,
    /// `YYYYMM`.
    pub month: i64,
    pub prices: String,
}

/// One database behind the store.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    type Conn: Conn;
    /// A connection of the pool, for reads and single statements.
    type Pooled: DerefMut<Target = Self::Conn> + Send;
    /// A transaction that writes; dropped without [`commit`](Self::commit), it rolls back.
    type Tx: DerefMut<Target = Self::Conn> + Send;
    /// A connection for a write of one statement (a lease, a budget, a corrupt row's delete),
    /// outside a transaction.
    type Single: DerefMut<Target = Self::Conn> + Send;

    async fn read(&self) -> Result<Self::Pooled, StoreError>;
    /// A connection for one writing statement: on SQLite it waits its turn with the
    /// transactions ([`Sqlite::turn`]).
    async fn single(&self) -> Result<Self::Single, StoreError>;
    /// Begin a transaction that will write. SQLite takes the write lock first: a transaction
    /// that reads and then writes fails (SQLITE_BUSY_SNAPSHOT, no busy wait) when another
    /// connection commits in between.
    async fn write(&self) -> Result<Self::Tx, StoreError>;
    async fn commit(tx: Self::Tx) -> Result<(), StoreError>;
    /// Insert or replace stations' month rows in bulk, in the caller's transaction.
    async fn put_month_rows(conn: &mut Self::Conn, rows: &[MonthRow]) -> Result<(), StoreError>;
    /// The statement that wakes the other replicas when the transaction commits, if any.
    fn notify(&self) -> Option<Statement>;
    /// Something that resolves when another replica may have published, or `None` where the
    /// event reader must poll.
    async fn waker(&self) -> Option<Box<dyn EventWaker>>;
}

/// Month rows a multi-row statement (4 arguments each, well under both databases' limits).
const ROWS_A_STATEMENT: usize = 500;

const PUT_MONTHS: &str = "INSERT INTO station_months (sid, product, month, prices)";
const PUT_MONTHS_TAIL: &str = " ON CONFLICT (sid, product, month) DO UPDATE SET prices = excluded.prices";

/// The embedded SQLite database (WAL, busy timeout).
#[derive(Debug, Clone)]
pub struct Sqlite {
    pub(super) pool: sqlx::SqlitePool,
    /// This process's writers take turns here before `BEGIN IMMEDIATE`. SQLite lets one
    /// connection write at a time, and a connection refused the lock retries in growing
    /// sleeps (up to 100 ms each), so a publish that came while an archive month was being
    /// written (260–400 ms) began up to 100 ms after the lock was free; queued here, it
    /// begins at the commit, in the order writers came. Other processes on the same file
    /// still meet the busy wait.
    pub(super) turn: Arc<tokio::sync::Mutex<()>>,
}

/// As long as SQLite's own busy wait (`busy_timeout`): a writer queued longer fails as one
/// refused the lock would.
const TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Sqlite {
    pub(super) fn new(pool: sqlx::SqlitePool) -> Self {
        Self { pool, turn: Arc::default() }
    }

    async fn take_turn(&self) -> Result<tokio::sync::OwnedMutexGuard<()>, StoreError> {
        tokio::time::timeout(TURN_WAIT, self.turn.clone().lock_owned())
            .await
            .map_err(|_| StoreError::Busy(TURN_WAIT))
    }
}

/// A SQLite connection or transaction holding this process's turn to write
/// ([`Sqlite::turn`]) until it is dropped (a transaction: until it commits, or is dropped and
/// rolled back).
#[derive(Debug)]
pub struct Turn<T> {
    // Declared first, so dropped first: a rollback is queued before the turn is handed on.
    held: T,
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

impl<T: DerefMut<Target = sqlx::SqliteConnection>> std::ops::Deref for Turn<T> {
    type Target = sqlx::SqliteConnection;
    fn deref(&self) -> &Self::Target {
        &self.held
    }
}

impl<T: DerefMut<Target = sqlx::SqliteConnection>> DerefMut for Turn<T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.held
    }
}

#[async_trait::async_trait]
impl Backend for Sqlite {
    type Conn = sqlx::SqliteConnection;
    type Pooled = sqlx::pool::PoolConnection<sqlx::Sqlite>;
    type Tx = Turn<sqlx::Transaction<'static, sqlx::Sqlite>>;
    type Single = Turn<sqlx::pool::PoolConnection<sqlx::Sqlite>>;

    async fn read(&self) -> Result<Self::Pooled, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    async fn single(&self) -> Result<Self::Single, StoreError> {
        let turn = self.take_turn().await?;
        Ok(Turn { held: self.pool.acquire().await?, _turn: turn })
    }

    async fn write(&self) -> Result<Self::Tx, StoreError> {
        let turn = self.take_turn().await?;
        let tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        Ok(Turn { held: tx, _turn: turn })
    }

    async fn commit(tx: Self::Tx) -> Result<(), StoreError> {
        Ok(tx.held.commit().await?)
    }

    async fn put_month_rows(conn: &mut Self::Conn, rows: &[MonthRow]) -> Result<(), StoreError> {
        for chunk in rows.chunks(ROWS_A_STATEMENT) {
            let values = chunk
                .iter()
                .map(|r| vec![r.sid.into(), r.product.into(), r.month.into(), r.prices.clone().into()]);
            conn.execute(Statement::rows(PUT_MONTHS, values, PUT_MONTHS_TAIL)).await?;
        }
        Ok(())
    }

    fn notify(&self) -> Option<Statement> {
        None
    }

    async fn waker(&self) -> Option<Box<dyn EventWaker>> {
        None
    }
}

/// The shared PostgreSQL database.
#[derive(Debug, Clone)]
pub struct Postgres {
    pub(super) pool: sqlx::PgPool,
}

const COPY_TABLE: &str = "CREATE TEMP TABLE IF NOT EXISTS import_months \
     (sid BIGINT, product BIGINT, month BIGINT, prices TEXT) ON COMMIT DELETE ROWS";
const COPY_IN: &str = "COPY import_months (sid, product, month, prices) FROM STDIN";
const COPY_MOVE: &str = "INSERT INTO station_months (sid, product, month, prices) \
     SELECT sid, product, month, prices FROM import_months \
     ON CONFLICT (sid, product, month) DO UPDATE SET prices = excluded.prices";

#[async_trait::async_trait]
impl Backend for Postgres {
    type Conn = sqlx::PgConnection;
    type Pooled = sqlx::pool::PoolConnection<sqlx::Postgres>;
    type Tx = sqlx::Transaction<'static, sqlx::Postgres>;
    type Single = sqlx::pool::PoolConnection<sqlx::Postgres>;

    async fn read(&self) -> Result<Self::Pooled, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    async fn single(&self) -> Result<Self::Single, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    async fn write(&self) -> Result<Self::Tx, StoreError> {
        Ok(self.pool.begin().await?)
    }

    async fn commit(tx: Self::Tx) -> Result<(), StoreError> {
        Ok(tx.commit().await?)
    }

    /// `COPY` into a session table emptied at commit, then one `INSERT … SELECT`.
    async fn put_month_rows(conn: &mut Self::Conn, rows: &[MonthRow]) -> Result<(), StoreError> {
        use std::fmt::Write;
        if rows.is_empty() {
            return Ok(());
        }
        conn.execute(sql(COPY_TABLE)).await?;
        let mut text = String::with_capacity(rows.len() * 200);
        for r in rows {
            // Digits, ':' and ',' only: nothing COPY's text form would escape. Writing into a
            // String cannot fail.
            let _ = writeln!(text, "{}\t{}\t{}\t{}", r.sid, r.product, r.month, r.prices);
        }
        let mut copy = conn.copy_in_raw(COPY_IN).await?;
        copy.send(text.into_bytes()).await?;
        copy.finish().await?;
        conn.execute(sql(COPY_MOVE)).await?;
        Ok(())
    }

    fn notify(&self) -> Option<Statement> {
        Some(sql("SELECT pg_notify($1, '')").bind(CHANNEL))
    }

    /// `LISTEN wafuel_events` on a connection of its own.
    async fn waker(&self) -> Option<Box<dyn EventWaker>> {
        let mut listener = match sqlx::postgres::PgListener::connect_with(&self.pool).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "cannot LISTEN for events; polling instead");
                return None;
            }
        };
        if let Err(e) = listener.listen(CHANNEL).await {
            tracing::warn!(error = %e, "cannot LISTEN for events; polling instead");
            return None;
        }
        Some(Box::new(PgWaker(listener)))
    }
}

/// Wakes the reader on each notification of [`CHANNEL`].
struct PgWaker(sqlx::postgres::PgListener);

#[async_trait::async_trait]
impl EventWaker for PgWaker {
    async fn wait(&mut self) -> Result<(), StoreError> {
        self.0.recv().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sqlite_writers_of_one_process_take_turns_in_the_order_they_came() {
        let dir = tempfile::tempdir().expect("dir");
        let url = format!("sqlite://{}", dir.path().join("turns.sqlite3").display());
        let store = crate::SqliteStore::open(&url).await.expect("open");
        let db = store.db.clone();
        // A transaction holds the write, as an archive month being written does.
        let first = db.write().await.expect("the first writer");
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut writers = Vec::new();
        for i in 0..5 {
            let (db, order) = (db.clone(), order.clone());
            writers.push(tokio::spawn(async move {
                let mut conn = db.single().await.expect("a turn");
                let now = jiff::Timestamp::now();
                let job = format!("job-{i}");
                let claimed = crate::leases::claim_job(&mut *conn, &job, "test", (now, now)).await;
                assert_eq!(claimed.ok(), Some(true));
                order.lock().expect("not poisoned").push(i);
            }));
            // This writer reaches the queue before the next one starts (one thread runs both).
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
        }
        // None has written while the transaction held the store.
        assert!(order.lock().expect("not poisoned").is_empty());
        Sqlite::commit(first).await.expect("commit");
        for writer in writers {
            writer.await.expect("a writer");
        }
        // Each began at the previous one's end, in the order they came; with only SQLite's
        // busy wait, whichever retried first after the commit went first.
        assert_eq!(*order.lock().expect("not poisoned"), vec![0, 1, 2, 3, 4]);
    }
}
