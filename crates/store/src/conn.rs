//! The one seam between the store's plain code and the two databases: a statement is SQL text
//! with its arguments ([`Statement`]), run on a connection of either backend through [`Conn`],
//! and read into row structs deriving `sqlx::FromRow` ([`Record`]). What differs between
//! SQLite and PostgreSQL — how a writing transaction begins, bulk writes, notifications — is
//! the [`Backend`] trait, implemented once per database in `store/backend.rs`.
//!
//! Both databases understand `$n` placeholders when each number first appears in ascending
//! order, so every statement is written once.

use std::borrow::Cow;

use sqlx::{Arguments, Database, Encode, Type};

use super::StoreError;

/// One argument of a statement. The store binds integers, floats, text and bytes only.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Int(Option<i64>),
    Float(f64),
    Text(Option<String>),
    Bytes(Vec<u8>),
}

impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::Int(Some(v))
    }
}

impl From<Option<i64>> for Arg {
    fn from(v: Option<i64>) -> Self {
        Arg::Int(v)
    }
}

impl From<u8> for Arg {
    fn from(v: u8) -> Self {
        Arg::Int(Some(i64::from(v)))
    }
}

impl<K> From<wafuel_domain::codes::Code<K>> for Arg {
    fn from(v: wafuel_domain::codes::Code<K>) -> Self {
        Arg::Int(Some(i64::from(v)))
    }
}

impl From<f64> for Arg {
    fn from(v: f64) -> Self {
        Arg::Float(v)
    }
}

impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Text(Some(v.to_string()))
    }
}

impl From<&String> for Arg {
    fn from(v: &String) -> Self {
        Arg::Text(Some(v.clone()))
    }
}

impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Text(Some(v))
    }
}

impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Self {
        Arg::Text(v)
    }
}

impl From<Vec<u8>> for Arg {
    fn from(v: Vec<u8>) -> Self {
        Arg::Bytes(v)
    }
}

/// SQL text and its arguments, in placeholder order.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    sql: Cow<'static, str>,
    args: Vec<Arg>,
}

/// A statement of fixed text.
pub fn sql(text: &'static str) -> Statement {
    Statement { sql: Cow::Borrowed(text), args: Vec::new() }
}

impl Statement {
    /// The next argument.
    pub fn bind(mut self, value: impl Into<Arg>) -> Self {
        self.args.push(value.into());
        self
    }

    /// `head` followed by one `($n, …)` group per row and then `tail`: a multi-row `INSERT`.
    /// Every row must have the same number of values.
    pub fn rows(head: &str, rows: impl IntoIterator<Item = Vec<Arg>>, tail: &str) -> Self {
        let mut text = String::with_capacity(head.len() + tail.len() + 64);
        text.push_str(head);
        text.push_str(" VALUES ");
        let mut args = Vec::new();
        for (i, row) in rows.into_iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            text.push('(');
            for (j, value) in row.into_iter().enumerate() {
                if j > 0 {
                    text.push_str(", ");
                }
                args.push(value);
                text.push('$');
                text.push_str(&args.len().to_string());
            }
            text.push(')');
        }
        text.push_str(tail);
        Statement { sql: Cow::Owned(text), args }
    }

    /// The text for sqlx and the arguments encoded for `DB`.
    fn parts<DB>(self) -> Result<(sqlx::AssertSqlSafe<Cow<'static, str>>, DB::Arguments), StoreError>
    where
        DB: Database,
        Option<i64>: for<'e> Encode<'e, DB> + Type<DB>,
        f64: for<'e> Encode<'e, DB> + Type<DB>,
        Option<String>: for<'e> Encode<'e, DB> + Type<DB>,
        Vec<u8>: for<'e> Encode<'e, DB> + Type<DB>,
    {
        // Statement text is the store's own constants, or rows of placeholders built above:
        // values only ever travel as arguments.
        Ok((sqlx::AssertSqlSafe(self.sql), arguments::<DB>(self.args)?))
    }
}

/// A row struct either database can decode (derive `sqlx::FromRow`; tuples work too).
pub trait Record:
    for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
    + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
    + Send
    + Unpin
    + 'static
{
}

impl<T> Record for T where
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
        + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
        + Send
        + Unpin
        + 'static
{
}

/// A connection (or the connection of a transaction) of either database.
#[async_trait::async_trait]
pub trait Conn: Send {
    /// Run a statement; the rows it changed.
    async fn execute(&mut self, s: Statement) -> Result<u64, StoreError>;
    /// Every row, to completion (so a failed commit of an autocommit statement is reported).
    async fn fetch_all<R: Record>(&mut self, s: Statement) -> Result<Vec<R>, StoreError>;
    /// The first row, if any.
    async fn fetch_optional<R: Record>(&mut self, s: Statement) -> Result<Option<R>, StoreError>;
    /// Each row in turn, never all of them at once.
    async fn fetch_each<R: Record>(
        &mut self,
        s: Statement,
        each: &mut (dyn FnMut(R) + Send),
    ) -> Result<(), StoreError>;
}

/// The arguments of `args`, encoded for `DB`.
fn arguments<DB>(args: Vec<Arg>) -> Result<DB::Arguments, StoreError>
where
    DB: Database,
    Option<i64>: for<'e> Encode<'e, DB> + Type<DB>,
    f64: for<'e> Encode<'e, DB> + Type<DB>,
    Option<String>: for<'e> Encode<'e, DB> + Type<DB>,
    Vec<u8>: for<'e> Encode<'e, DB> + Type<DB>,
{
    let mut out = DB::Arguments::default();
    for arg in args {
        let added = match arg {
            Arg::Int(v) => out.add(v),
            Arg::Float(v) => out.add(v),
            Arg::Text(v) => out.add(v),
            Arg::Bytes(v) => out.add(v),
        };
        added.map_err(|e| StoreError::Encoding(e.to_string()))?;
    }
    Ok(out)
}

/// `Conn` for one sqlx connection type: the two backends differ only in the types, so the
/// implementation is written once. These two expansions are the only code that names a
/// database's connection type.
macro_rules! conn_for {
    ($connection:ty, $database:ty) => {
        #[async_trait::async_trait]
        impl Conn for $connection {
            async fn execute(&mut self, s: Statement) -> Result<u64, StoreError> {
                let (text, args) = s.parts::<$database>()?;
                Ok(sqlx::query_with(text, args).execute(self).await?.rows_affected())
            }

            async fn fetch_all<R: Record>(&mut self, s: Statement) -> Result<Vec<R>, StoreError> {
                let (text, args) = s.parts::<$database>()?;
                Ok(sqlx::query_as_with::<_, R, _>(text, args).fetch_all(self).await?)
            }

            async fn fetch_optional<R: Record>(&mut self, s: Statement) -> Result<Option<R>, StoreError> {
                let (text, args) = s.parts::<$database>()?;
                Ok(sqlx::query_as_with::<_, R, _>(text, args).fetch_optional(self).await?)
            }

            async fn fetch_each<R: Record>(
                &mut self,
                s: Statement,
                each: &mut (dyn FnMut(R) + Send),
            ) -> Result<(), StoreError> {
                use futures::TryStreamExt;
                let (text, args) = s.parts::<$database>()?;
                let mut rows = sqlx::query_as_with::<_, R, _>(text, args).fetch(self);
                while let Some(row) = rows.try_next().await? {
                    each(row);
                }
                Ok(())
            }
        }
    };
}

conn_for!(sqlx::SqliteConnection, sqlx::Sqlite);
conn_for!(sqlx::PgConnection, sqlx::Postgres);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_number_their_placeholders_in_order() {
        let rows =
            vec![vec![Arg::from(1_i64), Arg::from("a")], vec![Arg::from(2_i64), Arg::from(None::<String>)]];
        let s = Statement::rows("INSERT INTO t (n, s)", rows, " ON CONFLICT DO NOTHING");
        assert_eq!(s.sql, "INSERT INTO t (n, s) VALUES ($1, $2), ($3, $4) ON CONFLICT DO NOTHING");
        assert_eq!(s.args.len(), 4);
        assert_eq!(s.args[3], Arg::Text(None));
        let one = sql("SELECT $1").bind(7_u8);
        assert_eq!(one.args, vec![Arg::Int(Some(7))]);
    }
}
