//! The functions (upstream `promql/functions.go` and `quantile.go`):
//! `extrapolatedRate` for `rate`/`increase`/`delta`, `instantValue` for
//! `irate`/`idelta`, the `*_over_time` family, `bucketQuantile` for
//! `histogram_quantile`, and the element-wise math.

use super::eval::{kahan_sum, variance};
use super::parser::Func;

/// A range selector's window at one evaluation: `(start, end]` in ms, and
/// its length.
pub(crate) struct Window {
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) range: i64,
}

/// A range function over one series' samples in the window (oldest first);
/// `None` drops the series from the result.
pub(crate) fn over_range(f: Func, pts: &[(i64, f64)], w: &Window, param: Option<f64>) -> Option<f64> {
    let values = || pts.iter().map(|(_, v)| *v);
    if pts.is_empty() {
        return None;
    }
    Some(match f {
        Func::Rate => extrapolated_rate(pts, w, true, true)?,
        Func::Increase => extrapolated_rate(pts, w, true, false)?,
        Func::Delta => extrapolated_rate(pts, w, false, false)?,
        Func::Irate => instant_value(pts, true)?,
        Func::Idelta => instant_value(pts, false)?,
        Func::Deriv => deriv(pts)?,
        Func::Changes => pts
            .windows(2)
            .filter(|p| p[0].1 != p[1].1 && !(p[0].1.is_nan() && p[1].1.is_nan()))
            .count() as f64,
        Func::Resets => pts.windows(2).filter(|p| p[1].1 < p[0].1).count() as f64,
        Func::AvgOverTime => kahan_sum(values()) / pts.len() as f64,
        Func::SumOverTime => kahan_sum(values()),
        Func::MinOverTime => values().fold(f64::NAN, |acc, x| if acc > x || acc.is_nan() { x } else { acc }),
        Func::MaxOverTime => values().fold(f64::NAN, |acc, x| if acc < x || acc.is_nan() { x } else { acc }),
        Func::CountOverTime => pts.len() as f64,
        Func::LastOverTime => pts.last()?.1,
        Func::PresentOverTime => 1.0,
        Func::StddevOverTime => variance(values()).sqrt(),
        Func::StdvarOverTime => variance(values()),
        Func::QuantileOverTime => {
            let mut vs: Vec<f64> = values().collect();
            quantile(param.unwrap_or(f64::NAN), &mut vs)
        }
        _ => return None,
    })
}

/// Upstream `extrapolatedRate`: the increase between the first and last
/// sample (counter resets added back for counters), extrapolated to the
/// window's edges, but only as far as 1.1 average sample intervals (else
/// half an interval), and for counters never below zero; per second for
/// a rate.
fn extrapolated_rate(pts: &[(i64, f64)], w: &Window, is_counter: bool, is_rate: bool) -> Option<f64> {
    if pts.len() < 2 {
        return None;
    }
    let (first_t, first_v) = pts[0];
    let (last_t, last_v) = pts[pts.len() - 1];
    let mut result = last_v - first_v;
    if is_counter {
        let mut prev = first_v;
        for (_, v) in &pts[1..] {
            if *v < prev {
                result += prev;
            }
            prev = *v;
        }
    }
    let mut to_start = (first_t - w.start) as f64 / 1000.0;
    let mut to_end = (w.end - last_t) as f64 / 1000.0;
    let sampled = (last_t - first_t) as f64 / 1000.0;
    if sampled <= 0.0 {
        return None;
    }
    let avg = sampled / (pts.len() - 1) as f64;
    let threshold = avg * 1.1;
    if to_start >= threshold {
        to_start = avg / 2.0;
    }
    if is_counter && result > 0.0 && first_v >= 0.0 {
        // The counter's zero point, if it lies nearer than the window start.
        let to_zero = sampled * (first_v / result);
        if to_zero < to_start {
            to_start = to_zero;
        }
    }
    if to_end >= threshold {
        to_end = avg / 2.0;
    }
    let mut factor = (sampled + to_start + to_end) / sampled;
    if is_rate {
        factor /= w.range as f64 / 1000.0;
    }
    Some(result * factor)
}

/// Upstream `instantValue`: from the last two samples.
fn instant_value(pts: &[(i64, f64)], is_rate: bool) -> Option<f64> {
    let [.., (t0, v0), (t1, v1)] = pts else {
        return None;
    };
    let interval = (t1 - t0) as f64 / 1000.0;
    if interval <= 0.0 {
        return None;
    }
    let diff = if is_rate && v1 < v0 { *v1 } else { v1 - v0 };
    Some(if is_rate { diff / interval } else { diff })
}

/// Upstream `deriv`: the least-squares slope per second.
fn deriv(pts: &[(i64, f64)]) -> Option<f64> {
    if pts.len() < 2 {
        return None;
    }
    let t0 = pts[0].0;
    let n = pts.len() as f64;
    let (mut sx, mut sy, mut sxy, mut sxx) = (0.0, 0.0, 0.0, 0.0);
    for (t, v) in pts {
        let x = (t - t0) as f64 / 1000.0;
        sx += x;
        sy += v;
        sxy += x * v;
        sxx += x * x;
    }
    let cov = sxy - sx * sy / n;
    let var = sxx - sx * sx / n;
    Some(cov / var)
}

/// Upstream `quantile`: linear interpolation between the closest ranks (φ·(n−1)).
pub(crate) fn quantile(q: f64, values: &mut [f64]) -> f64 {
    if values.is_empty() || q.is_nan() {
        return f64::NAN;
    }
    if q < 0.0 {
        return f64::NEG_INFINITY;
    }
    if q > 1.0 {
        return f64::INFINITY;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let rank = q * (n - 1.0);
    let lower = rank.floor().max(0.0);
    let upper = (lower + 1.0).min(n - 1.0);
    let weight = rank - rank.floor();
    values[lower as usize] * (1.0 - weight) + values[upper as usize] * weight
}

/// Relative difference under which a bucket count below its predecessor
/// is float noise (upstream's `smallDeltaTolerance`).
const SMALL_DELTA_TOLERANCE: f64 = 1e-12;

/// Upstream `bucketQuantile` over classic buckets `(upper bound, cumulative
/// count)`: sorted by bound, equal bounds merged, counts forced monotonic;
/// the quantile interpolated linearly within its bucket. NaN without a
/// `+Inf` bucket or without observations; the highest finite bound when
/// the rank falls in the `+Inf` bucket.
pub(crate) fn bucket_quantile(q: f64, buckets: &mut [(f64, f64)]) -> f64 {
    if q.is_nan() {
        return f64::NAN;
    }
    if q < 0.0 {
        return f64::NEG_INFINITY;
    }
    if q > 1.0 {
        return f64::INFINITY;
    }
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    if !buckets.last().is_some_and(|b| b.0 == f64::INFINITY) {
        return f64::NAN;
    }
    // Merge equal bounds.
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(buckets.len());
    for &(bound, count) in buckets.iter() {
        match merged.last_mut() {
            Some(last) if last.0 == bound => last.1 += count,
            _ => merged.push((bound, count)),
        }
    }
    // Monotonic counts: a dip is raised to the maximum so far.
    let mut max = f64::NEG_INFINITY;
    for b in merged.iter_mut() {
        if b.1 < max {
            b.1 = max;
        } else if max.is_finite() && b.1 - max <= max.abs() * SMALL_DELTA_TOLERANCE {
            // Float noise above the previous count: keep the previous.
            b.1 = max;
        } else {
            max = b.1;
        }
    }
    if merged.len() < 2 {
        return f64::NAN;
    }
    let observations = merged[merged.len() - 1].1;
    if observations == 0.0 || observations.is_nan() {
        return f64::NAN;
    }
    let mut rank = q * observations;
    let last = merged.len() - 1;
    let b = merged[..last].partition_point(|x| x.1 < rank);
    if b == last {
        return merged[last - 1].0;
    }
    if b == 0 && merged[0].0 <= 0.0 {
        return merged[0].0;
    }
    let (mut start, end, mut count) = (0.0, merged[b].0, merged[b].1);
    if b > 0 {
        start = merged[b - 1].0;
        count -= merged[b - 1].1;
        rank -= merged[b - 1].1;
    }
    start + (end - start) * (rank / count)
}

/// The element-wise functions.
pub(crate) fn map_value(f: Func, v: f64, params: &[f64]) -> f64 {
    match f {
        Func::Abs => v.abs(),
        Func::Ceil => v.ceil(),
        Func::Floor => v.floor(),
        Func::Round => {
            // Upstream: half up, to the nearest multiple of `to_nearest`.
            let to = params.first().copied().unwrap_or(1.0);
            let inv = 1.0 / to;
            (v * inv + 0.5).floor() / inv
        }
        Func::Sqrt => v.sqrt(),
        Func::Exp => v.exp(),
        Func::Ln => v.ln(),
        Func::Log2 => v.log2(),
        Func::Log10 => v.log10(),
        Func::Sgn => {
            if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                v
            }
        }
        Func::Clamp => v.max(params[0]).min(params[1]),
        Func::ClampMin => v.max(params[0]),
        Func::ClampMax => v.min(params[0]),
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(end_s: i64, range_s: i64) -> Window {
        Window {
            start: (end_s - range_s) * 1000,
            end: end_s * 1000,
            range: range_s * 1000,
        }
    }

    #[test]
    fn rate_of_a_steady_counter_is_its_slope() {
        // 10/s, sampled every 15s, window (60, 120]: samples at 75..120.
        let pts: Vec<(i64, f64)> = (5..=8).map(|i| (i * 15_000, 1000.0 + 150.0 * i as f64)).collect();
        let r = extrapolated_rate(&pts, &window(120, 60), true, true).unwrap();
        assert!((r - 10.0).abs() < 1e-9, "{r}");
        let inc = extrapolated_rate(&pts, &window(120, 60), true, false).unwrap();
        assert!((inc - 600.0).abs() < 1e-9, "{inc}");
    }

    #[test]
    fn rate_adds_back_counter_resets() {
        // 0, 10, 20, reset to 5, 15: an increase of 35 over 40s of samples.
        let pts = vec![
            (10_000, 0.0),
            (20_000, 10.0),
            (30_000, 20.0),
            (40_000, 5.0),
            (50_000, 15.0),
        ];
        let w = window(50, 40);
        // Starts at zero: no extrapolation before the first sample.
        let inc = extrapolated_rate(&pts, &w, true, false).unwrap();
        assert!((inc - 35.0).abs() < 1e-9, "{inc}");
        // delta does not treat it as a counter.
        assert_eq!(extrapolated_rate(&pts, &w, false, false).unwrap(), 15.0);
    }

    #[test]
    fn extrapolation_stops_half_an_interval_out() {
        // Samples at 100s and 110s in a (0, 120] window: 10 up in 10 s.
        // Start is 100 s away (> 1.1·10): extrapolate 5 s; end 10 s away
        // (< 11): all the way. 10 · (10+5+10)/10 = 25 over 120 s.
        let pts = vec![(100_000, 100.0), (110_000, 110.0)];
        let inc = extrapolated_rate(&pts, &window(120, 120), true, false).unwrap();
        assert!((inc - 25.0).abs() < 1e-9, "{inc}");
        assert!(extrapolated_rate(&pts[..1], &window(120, 120), true, false).is_none());
    }

    #[test]
    fn irate_and_idelta() {
        let pts = vec![(0, 1.0), (10_000, 11.0), (20_000, 31.0)];
        assert_eq!(instant_value(&pts, true), Some(2.0));
        assert_eq!(instant_value(&pts, false), Some(20.0));
        let reset = vec![(0, 50.0), (10_000, 20.0)];
        assert_eq!(instant_value(&reset, true), Some(2.0));
    }

    #[test]
    fn bucket_quantiles() {
        let mut b = vec![(0.1, 10.0), (f64::INFINITY, 100.0), (0.5, 60.0), (1.0, 90.0)];
        // Rank 50 lies in (0.1, 0.5]: 40 of 50 in it → 0.1 + 0.4·0.8.
        assert!((bucket_quantile(0.5, &mut b.clone()) - 0.42).abs() < 1e-12);
        // Rank 99 falls in +Inf: the highest finite bound.
        assert_eq!(bucket_quantile(0.99, &mut b), 1.0);
        assert!(bucket_quantile(0.5, &mut [(0.1, 0.0), (f64::INFINITY, 0.0)]).is_nan());
        assert!(bucket_quantile(0.5, &mut [(0.1, 1.0), (1.0, 2.0)]).is_nan());
        assert_eq!(
            bucket_quantile(-1.0, &mut [(f64::INFINITY, 1.0)]),
            f64::NEG_INFINITY
        );
        // Non-monotonic counts are raised: (0.1,10),(0.5,8→10),(+Inf,20); rank 10 → bucket 0.
        let mut dip = vec![(0.1, 10.0), (0.5, 8.0), (f64::INFINITY, 20.0)];
        assert!((bucket_quantile(0.5, &mut dip) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn quantiles_interpolate() {
        assert_eq!(quantile(0.5, &mut [1.0, 3.0, 2.0, 4.0]), 2.5);
        assert_eq!(quantile(1.0, &mut [1.0, 3.0]), 3.0);
        assert!(quantile(0.5, &mut []).is_nan());
    }
}
