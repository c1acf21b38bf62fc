//! Every price write, live and archive, in one transaction: the days, their summaries, the
//! period sums and the month rows ([`apply`]); and the one-off settling of summaries owed by
//! a store migrated from before they existed.

use super::*;

/// Write `rows` with one multi-row statement per [`BATCH`] (fewer for wide rows).
pub(super) async fn put_rows<C: Conn + ?Sized>(
    conn: &mut C,
    (head, tail): (&str, &str),
    rows: Vec<Vec<Arg>>,
    per_statement: usize,
) -> Result<(), StoreError> {
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<Vec<Arg>> = rows.by_ref().take(per_statement).collect();
        conn.execute(Statement::rows(head, chunk, tail)).await?;
    }
    Ok(())
}

/// One price to store: product, day (`YYYYMMDD`), sid, tenths of a cent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Incoming {
    pub product: ProductCode,
    pub day: i64,
    pub sid: i64,
    pub price: i64,
}

/// What happens to a price the store already has with another value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Differing {
    /// Replaced: the live feed corrects itself.
    Replace,
    /// Kept, and counted as a conflict: an archive row never overrides what is stored.
    Keep,
}

/// Every price of one station over a range of days given to another (an archive station
/// split in two: docs/api.md "History back to 2001").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Move {
    pub from: i64,
    pub to: i64,
    /// First and last day (`YYYYMMDD`), inclusive.
    pub days: (i64, i64),
}

/// What [`apply`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Applied {
    pub written: u64,
    pub replaced: u64,
    pub unchanged: u64,
    pub conflicts: u64,
    /// Prices moved to another station.
    pub moved: u64,
}

/// Store `prices` in the caller's transaction, with everything read from them: the days'
/// pairs, their summaries, the distinct stations of their weeks and months, and the month
/// rows of each station that gained or changed a price. Nothing is written when nothing is
/// new.
pub(crate) async fn apply<B: Backend>(
    tx: &mut B::Conn,
    prices: &[Incoming],
    differing: Differing,
) -> Result<Applied, StoreError> {
    apply_with_moves::<B>(tx, prices, differing, &[]).await
}

/// [`apply`], after `moves` have taken each moved station's prices off the days it held them
/// and handed them, as new prices, to the station they move to.
pub(crate) async fn apply_with_moves<B: Backend>(
    tx: &mut B::Conn,
    prices: &[Incoming],
    differing: Differing,
    moves: &[Move],
) -> Result<Applied, StoreError> {
    let mut report = Applied::default();
    let mut days = Days::default();
    let mut touched_days: BTreeSet<(ProductCode, i64)> = BTreeSet::new();
    let mut touched_rows: BTreeMap<(ProductCode, i64), BTreeSet<i64>> = BTreeMap::new();
    let mut moved: Vec<Incoming> = Vec::new();
    for m in moves {
        for product in wafuel_domain::codes::product_codes() {
            days.load(tx, product, m.days.0, m.days.1).await?;
            for (&(p, day), pairs) in days.map.iter_mut() {
                if p != product || day < m.days.0 || day > m.days.1 {
                    continue;
                }
                if let Some(price) = pairs.remove(&m.from) {
                    moved.push(Incoming { product, day, sid: m.to, price });
                    touched_days.insert((product, day));
                    touched_rows.entry((product, month_of(day))).or_default().insert(m.from);
                }
            }
        }
    }
    report.moved = moved.len() as u64;
    let prices: Vec<Incoming> = moved.into_iter().chain(prices.iter().copied()).collect();
    let prices = prices.as_slice();
    // The stored prices of the days written to.
    let mut spans: BTreeMap<ProductCode, (i64, i64)> = BTreeMap::new();
    for p in prices {
        let span = spans.entry(p.product).or_insert((p.day, p.day));
        *span = (span.0.min(p.day), span.1.max(p.day));
    }
    for (product, (from, to)) in &spans {
        days.load(tx, *product, *from, *to).await?;
    }
    for p in prices {
        let day = days.map.entry((p.product, p.day)).or_default();
        match day.get(&p.sid) {
            Some(&stored) if stored == p.price => {
                report.unchanged += 1;
                continue;
            }
            Some(_) if differing == Differing::Keep => {
                report.conflicts += 1;
                continue;
            }
            Some(_) => report.replaced += 1,
            None => report.written += 1,
        }
        day.insert(p.sid, p.price);
        touched_days.insert((p.product, p.day));
        touched_rows.entry((p.product, month_of(p.day))).or_default().insert(p.sid);
    }
    if touched_days.is_empty() {
        return Ok(report);
    }
    // Every day of the touched months, and of the weeks that overlap them.
    for &(product, month) in touched_rows.keys() {
        let Some((first, last)) = month_days(month) else { continue };
        days.load(tx, product, day_number(shift(first, -6)), day_number(shift(last, 6))).await?;
    }
    let mut day_rows = Vec::new();
    let mut summary_rows = Vec::new();
    let mut weeks: BTreeSet<(ProductCode, Date)> = BTreeSet::new();
    let mut months: BTreeSet<(ProductCode, Date)> = BTreeSet::new();
    for &(product, day) in &touched_days {
        let Some(prices) = days.map.get(&(product, day)) else { continue };
        day_rows.push(vec![product.into(), day.into(), format_pairs(prices).into()]);
        summary_rows.extend(summary_values(product, day, prices));
        if let Some(date) = from_day_number(day) {
            weeks.insert((product, Interval::Week.start(date)));
            months.insert((product, Interval::Month.start(date)));
        }
    }
    put_rows(tx, (PUT_DAYS, PUT_DAYS_TAIL), day_rows, 50).await?;
    put_rows(tx, (PUT_SUMMARIES, PUT_SUMMARIES_TAIL), summary_rows, BATCH / 2).await?;
    let mut period_rows = Vec::new();
    for (interval, starts) in [(Interval::Week, &weeks), (Interval::Month, &months)] {
        for &(product, start) in starts {
            period_rows
                .extend(days.period(product, start, interval.end(start)).values(product, interval, start));
        }
    }
    put_rows(tx, (PUT_PERIODS, PUT_PERIODS_TAIL), period_rows, BATCH / 3).await?;
    let mut month_rows = Vec::new();
    for (&(product, month), sids) in &touched_rows {
        let rows = station_month_rows(&days, product, month, sids);
        // A station moved off every day of a month keeps no row for it.
        for sid in sids.iter().filter(|sid| !rows.iter().any(|r| r.sid == **sid)) {
            tx.execute(sql(DELETE_MONTH_ROW).bind(*sid).bind(product).bind(month)).await?;
        }
        month_rows.extend(rows);
    }
    B::put_month_rows(tx, &month_rows).await?;
    Ok(report)
}

/// Compute the summaries of days stored before summaries existed, once (a migration marks
/// them owed): each product's days are read in order, a day at a time.
pub(crate) async fn settle_summaries<B: Backend>(db: &B) -> Result<(), StoreError> {
    let mut tx = db.write().await?;
    if counters::read(&mut *tx, counters::SUMMARIES_OWED).await? == 0 {
        return Ok(());
    }
    let products: Vec<(i64,)> = tx.fetch_all(sql(PRODUCTS)).await?;
    for (product,) in products {
        let Some(product) = u8::try_from(product).ok().and_then(ProductCode::parse) else { continue };
        let mut summaries = Vec::new();
        let mut periods: Vec<Vec<Arg>> = Vec::new();
        let intervals = [Interval::Week, Interval::Month];
        let mut open: [(Option<Date>, PeriodSums); 2] = Default::default();
        let all = sql(DAYS).bind(product).bind(0_i64).bind(i64::MAX);
        tx.fetch_each(all, &mut |(day, pairs): (i64, String)| {
            let prices: HashMap<i64, i64> = parse_pairs(&pairs).collect();
            summaries.extend(summary_values(product, day, &prices));
            let Some(date) = from_day_number(day) else { return };
            for (interval, (was, sums)) in intervals.iter().zip(open.iter_mut()) {
                let start = interval.start(date);
                if *was != Some(start) {
                    if let Some(was) = *was {
                        periods.extend(sums.values(product, *interval, was));
                    }
                    (*was, *sums) = (Some(start), PeriodSums::default());
                }
                sums.add(&prices);
            }
        })
        .await?;
        for (interval, (was, sums)) in intervals.iter().zip(open.iter()) {
            if let Some(was) = *was {
                periods.extend(sums.values(product, *interval, was));
            }
        }
        put_rows(&mut *tx, (PUT_SUMMARIES, PUT_SUMMARIES_TAIL), summaries, BATCH / 2).await?;
        put_rows(&mut *tx, (PUT_PERIODS, PUT_PERIODS_TAIL), periods, BATCH / 3).await?;
    }
    counters::set(&mut *tx, counters::SUMMARIES_OWED, 0).await?;
    B::commit(tx).await
}
