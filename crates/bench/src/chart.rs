//! The benchmark table drawn as an SVG chart (BENCHMARKS.md embeds it): one bar per measure,
//! its ratio against the baseline of the same run on a log scale, with the line at 1.0 where
//! maskbus and its baseline are level. Plain SVG text: no plotting stack to build. Pure.

/// One bar: the measure's name, its ratio, and its goal (printed beside it).
pub struct Bar {
    pub name: String,
    pub ratio: f64,
    pub goal: String,
}

const LABEL_WIDTH: f64 = 470.0;
const PLOT_WIDTH: f64 = 420.0;
const ROW: f64 = 18.0;
const TOP: f64 = 40.0;
/// The scale's ends (ratios outside are drawn at the end, with their value written).
const LOW: f64 = 0.01;
const HIGH: f64 = 100.0;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Where `ratio` falls on the log scale, in pixels from the plot's left edge.
fn x_of(ratio: f64) -> f64 {
    let clamped = ratio.clamp(LOW, HIGH);
    (clamped.log10() - LOW.log10()) / (HIGH.log10() - LOW.log10()) * PLOT_WIDTH
}

/// The chart, titled `title`.
pub fn ratio_chart(title: &str, bars: &[Bar]) -> String {
    let height = TOP + ROW * bars.len() as f64 + 30.0;
    let width = LABEL_WIDTH + PLOT_WIDTH + 260.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        escape(title)
    );
    for tick in [0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0] {
        let x = LABEL_WIDTH + x_of(tick);
        let stroke = if tick == 1.0 { "#333" } else { "#ddd" };
        svg.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{stroke}\"/>\n\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{tick}</text>\n",
            TOP - 6.0,
            height - 24.0,
            height - 10.0
        ));
    }
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let (one, end) = (x_of(1.0), x_of(bar.ratio));
        let (left, right) = if end >= one { (one, end) } else { (end, one) };
        let fill = if bar.ratio >= 1.0 {
            "#4c8bf5"
        } else {
            "#f5a04c"
        };
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n\
             <rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#333\">{:.2} (goal {})</text>\n",
            LABEL_WIDTH - 8.0,
            y + 12.0,
            escape(&bar.name),
            LABEL_WIDTH + left,
            y + 3.0,
            (right - left).max(1.0),
            ROW - 6.0,
            LABEL_WIDTH + PLOT_WIDTH + 8.0,
            y + 12.0,
            bar.ratio,
            escape(&bar.goal)
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_sit_on_a_log_scale_around_one_and_text_is_escaped() {
        assert_eq!(x_of(1.0), PLOT_WIDTH / 2.0);
        assert_eq!(x_of(1000.0), PLOT_WIDTH);
        assert!(x_of(0.5) < x_of(1.0) && x_of(2.0) > x_of(1.0));
        let svg = ratio_chart(
            "a & b",
            &[Bar {
                name: "sync vs pg_dump|pg_restore <large>".into(),
                ratio: 0.5,
                goal: ">= 0.5".into(),
            }],
        );
        assert!(svg.starts_with("<svg "));
        assert!(svg.contains("a &amp; b"));
        assert!(svg.contains("&lt;large&gt;"));
        assert!(svg.contains("0.50 (goal &gt;= 0.5)"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}
