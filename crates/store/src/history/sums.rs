//! The figures written beside the prices: each day's summary, each week's and month's sums
//! of its days, and each station's month rows, computed from the days being written.

use super::*;

/// Days of prices being written: (product, day) → sid → tenths of a cent.
#[derive(Default)]
pub(super) struct Days {
    pub(super) map: HashMap<(ProductCode, i64), HashMap<i64, i64>>,
}

impl Days {
    /// Read the stored days of `product` from `from` to `to` that are not held yet.
    pub(super) async fn load<C: Conn + ?Sized>(
        &mut self,
        conn: &mut C,
        product: ProductCode,
        from: i64,
        to: i64,
    ) -> Result<(), StoreError> {
        let rows: Vec<(i64, String)> = conn.fetch_all(sql(DAYS).bind(product).bind(from).bind(to)).await?;
        for (day, pairs) in rows {
            self.map.entry((product, day)).or_insert_with(|| parse_pairs(&pairs).collect());
        }
        Ok(())
    }

    /// The figures of the days of `product` from `from` to `to`, as one period.
    pub(super) fn period(&self, product: ProductCode, from: Date, to: Date) -> PeriodSums {
        let mut period = PeriodSums::default();
        let mut d = from;
        while d <= to {
            if let Some(day) = self.map.get(&(product, day_number(d))) {
                period.add(day);
            }
            let Ok(next) = d.tomorrow() else { break };
            d = next;
        }
        period
    }
}

/// A day's figures and every sid at its minimum, ascending.
pub(super) fn day_figures(prices: &HashMap<i64, i64>) -> Option<(DayFigures, Vec<i64>)> {
    DayFigures::of_prices(prices.iter().map(|(sid, p)| (*sid, *p)))
}

/// A week or month being summed from its days.
#[derive(Default)]
pub(super) struct PeriodSums {
    pub(super) figures: PeriodFigures,
    pub(super) cheapest: BTreeSet<i64>,
    pub(super) sids: std::collections::HashSet<i64>,
}

impl PeriodSums {
    pub(super) fn add(&mut self, prices: &HashMap<i64, i64>) {
        let Some((figures, cheapest)) = day_figures(prices) else { return };
        match self.figures.add(&figures) {
            std::cmp::Ordering::Less => self.cheapest = cheapest.into_iter().collect(),
            std::cmp::Ordering::Equal => self.cheapest.extend(cheapest),
            std::cmp::Ordering::Greater => {}
        }
        self.sids.extend(prices.keys().copied());
    }

    /// Its row of `period_summaries`; `None` without days.
    pub(super) fn values(&self, product: ProductCode, interval: Interval, start: Date) -> Option<Vec<Arg>> {
        let f = &self.figures;
        (f.days > 0).then(|| {
            let stations = i64::try_from(self.sids.len()).unwrap_or(i64::MAX);
            let [p10, median, mean, p90] = f.sums;
            vec![
                product.into(),
                period_code(interval).into(),
                day_number(start).into(),
                f.days.into(),
                stations.into(),
                f.min.into(),
                f.max.into(),
                p10.into(),
                median.into(),
                mean.into(),
                p90.into(),
                sids_text(self.cheapest.iter().copied()).into(),
            ]
        })
    }
}

/// The figures of one day's prices and its summary row's arguments.
pub(super) fn summary_values(product: ProductCode, day: i64, prices: &HashMap<i64, i64>) -> Option<Vec<Arg>> {
    let (f, cheapest) = day_figures(prices)?;
    let stations = i64::try_from(f.stations).unwrap_or(i64::MAX);
    Some(vec![
        product.into(),
        day.into(),
        stations.into(),
        f.min.into(),
        f.p10.into(),
        f.median.into(),
        f.mean.into(),
        f.p90.into(),
        f.max.into(),
        sids_text(cheapest).into(),
    ])
}

/// The month rows of `sids` for one product and month, from the days held.
pub(super) fn station_month_rows(
    days: &Days,
    product: ProductCode,
    month: i64,
    sids: &BTreeSet<i64>,
) -> Vec<MonthRow> {
    let mut texts: BTreeMap<i64, String> = BTreeMap::new();
    for dom in 1..=31 {
        let Some(day) = days.map.get(&(product, month * 100 + dom)) else { continue };
        for sid in sids {
            if let Some(price) = day.get(sid) {
                let text = texts.entry(*sid).or_default();
                if !text.is_empty() {
                    text.push(',');
                }
                text.push_str(&format!("{dom}:{price}"));
            }
        }
    }
    texts
        .into_iter()
        .map(|(sid, prices)| MonthRow { sid, product: i64::from(product), month, prices })
        .collect()
}
