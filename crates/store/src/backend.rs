//! What differs between the two databases, and nothing else: how a connection is had, how a
//! writing transaction begins, the bulk write of an import, and how replicas are woken.

use std::ops::DerefMut;

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

    async fn read(&self) -> Result<Self::Pooled, StoreError>;
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
}

#[async_trait::async_trait]
impl Backend for Sqlite {
    type Conn = sqlx::SqliteConnection;
    type Pooled = sqlx::pool::PoolConnection<sqlx::Sqlite>;
    type Tx = sqlx::Transaction<'static, sqlx::Sqlite>;

    async fn read(&self) -> Result<Self::Pooled, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    async fn write(&self) -> Result<Self::Tx, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    async fn commit(tx: Self::Tx) -> Result<(), StoreError> {
        Ok(tx.commit().await?)
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

    async fn read(&self) -> Result<Self::Pooled, StoreError> {
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
