//! Reads the JSON lines the benchmarks printed (stdin) and prints the one table of
//! `scripts/bench`: each figure, its baseline from the same run, the ratio and the goal. Writes
//! them all to `target/bench/results.json`, and draws the ratios in `target/bench/ratios.svg`.

use serde_json::{json, Value};
use std::io::BufRead;

struct Row {
    name: String,
    figure: String,
    baseline: String,
    ratio: Option<f64>,
    goal: String,
}

fn main() -> anyhow::Result<()> {
    let lines: Vec<Value> = std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .filter(|v: &Value| v.get("bench").is_some())
        .collect();
    let of = |bench: &'static str| lines.iter().filter(move |l| l["bench"] == bench);
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mut rows = Vec::new();
    let syncs: Vec<&Value> = of("sync").collect();
    if let Some(largest) = syncs.last() {
        for sync in &syncs {
            let profile = sync["profile"].as_str().unwrap_or("");
            // Each a median of runs taken in turn (sync-bench --repeats).
            let runs = sync["sync_runs"].as_array().map_or(1, Vec::len);
            rows.push(Row {
                name: format!("1. sync vs pg_dump|pg_restore, {profile}, median of {runs}"),
                figure: format!("{:.0} rows/s", f(&sync["sync_rows_per_s"])),
                baseline: format!("{:.0} rows/s", f(&sync["dump_restore_rows_per_s"])),
                ratio: Some(f(&sync["sync_rows_per_s"]) / f(&sync["dump_restore_rows_per_s"])),
                goal: ">= 1.0".into(),
            });
        }
        for sync in &syncs {
            rows.push(Row {
                name: format!(
                    "2. sync vs COPY|COPY, {}",
                    sync["profile"].as_str().unwrap_or("")
                ),
                figure: format!("{:.0} rows/s", f(&sync["sync_rows_per_s"])),
                baseline: format!("{:.0} rows/s", f(&sync["copy_rows_per_s"])),
                ratio: Some(f(&sync["sync_rows_per_s"]) / f(&sync["copy_rows_per_s"])),
                goal: "informative".into(),
            });
        }
        for sync in &syncs {
            rows.push(Row {
                name: format!(
                    "2c. delta pass, no change, {}",
                    sync["profile"].as_str().unwrap_or("")
                ),
                figure: format!("{:.2} s", f(&sync["delta_seconds"])),
                baseline: format!("{:.2} s initial", f(&sync["sync_seconds"])),
                ratio: Some(f(&sync["delta_seconds"]) / f(&sync["sync_seconds"])),
                goal: "informative (issue 15)".into(),
            });
        }
        for sync in &syncs {
            if sync.get("delta_no_delete_check_seconds").is_none() {
                continue;
            }
            rows.push(Row {
                name: format!(
                    "2f. no-change pass, delete check vs none, {}",
                    sync["profile"].as_str().unwrap_or("")
                ),
                figure: format!("{:.2} s", f(&sync["delta_seconds"])),
                baseline: format!("{:.2} s without", f(&sync["delta_no_delete_check_seconds"])),
                ratio: Some(
                    f(&sync["delta_seconds"]) / f(&sync["delta_no_delete_check_seconds"]).max(1e-9),
                ),
                goal: "informative (issue 53)".into(),
            });
        }
        rows.push(Row {
            name: format!(
                "2d. scale-out: 2 producers + 2 workers, {}",
                largest["profile"].as_str().unwrap_or("")
            ),
            figure: format!("{:.2} s", f(&largest["two_workers_seconds"])),
            baseline: format!("{:.2} s one of each", f(&largest["sync_seconds"])),
            ratio: Some(f(&largest["sync_seconds"]) / f(&largest["two_workers_seconds"])),
            goal: "speed-up; 2 cores here".into(),
        });
        rows.push(Row {
            name: format!(
                "2e. ranges: each table in 2 streams, {}",
                largest["profile"].as_str().unwrap_or("")
            ),
            figure: format!("{:.2} s", f(&largest["two_streams_seconds"])),
            baseline: format!("{:.2} s in one", f(&largest["sync_seconds"])),
            ratio: Some(f(&largest["sync_seconds"]) / f(&largest["two_streams_seconds"]).max(1e-9)),
            goal: "speed-up; 2 cores here".into(),
        });
        let smallest_cost = f(&syncs[0]["sync_us_per_row"]);
        for sync in &syncs {
            rows.push(Row {
                name: format!(
                    "3. sync cost, {} ({} rows)",
                    sync["profile"].as_str().unwrap_or(""),
                    sync["rows"]
                ),
                figure: format!("{:.1} us/row", f(&sync["sync_us_per_row"])),
                baseline: format!("{smallest_cost:.1} us/row"),
                ratio: Some(f(&sync["sync_us_per_row"]) / smallest_cost),
                goal: "linear: ~1.0".into(),
            });
        }
        // Flat: the largest size against the one before it (ten times fewer rows). The smallest
        // profile's tables do not fill an agent's buffers (32 pages of 200 rows read ahead),
        // so against it the ratio would measure the buffers filling, not growth with size.
        let before_largest = &syncs[syncs.len().saturating_sub(2)];
        for side in ["producer", "consumer"] {
            let key = format!("{side}_peak_rss_mb");
            rows.push(Row {
                name: format!("4. peak RSS, {side}"),
                figure: format!("{:.1} MB", f(&largest[&key])),
                baseline: format!(
                    "{:.1} MB {}",
                    f(&before_largest[&key]),
                    before_largest["profile"].as_str().unwrap_or("")
                ),
                ratio: Some(f(&largest[&key]) / f(&before_largest[&key])),
                goal: "< 100 MB, ratio <= 1.5".into(),
            });
        }
    }
    for zoo in of("zoo") {
        rows.push(Row {
            name: format!(
                "2b. sync, schema zoo ({} rows, {} tables)",
                zoo["rows"], zoo["tables"]
            ),
            figure: format!("{:.0} rows/s", f(&zoo["sync_rows_per_s"])),
            baseline: format!("{:.0} rows/s COPY", f(&zoo["copy_rows_per_s"])),
            ratio: Some(f(&zoo["sync_rows_per_s"]) / f(&zoo["copy_rows_per_s"])),
            goal: "informative".into(),
        });
        if zoo.get("schema_bus_seconds").is_some() {
            rows.push(Row {
                name:
                    "2c. the zoo's schema made through the bus (empty target, then an empty pass)"
                        .into(),
                figure: format!("{:.2} s", f(&zoo["schema_bus_seconds"])),
                baseline: format!(
                    "{:.2} s pg_dump --schema-only | psql",
                    f(&zoo["schema_dump_seconds"])
                ),
                ratio: Some(f(&zoo["schema_dump_seconds"]) / f(&zoo["schema_bus_seconds"])),
                goal: "informative".into(),
            });
        }
    }
    for stream in of("stream") {
        let profile = stream["profile"].as_str().unwrap_or("");
        rows.push(Row {
            name: format!("8. change stream: 3 customers reach the target, {profile}"),
            figure: format!("{:.3} s", f(&stream["stream_3_customers_seconds"])),
            baseline: format!(
                "{:.2} s watermark pass",
                f(&stream["watermark_no_change_seconds"])
            ),
            ratio: Some(
                f(&stream["stream_3_customers_seconds"])
                    / f(&stream["watermark_no_change_seconds"]),
            ),
            goal: "< 0.1 (no-change watermark pass)".into(),
        });
        rows.push(Row {
            name: format!("8. change stream: 300 customers, {profile}"),
            figure: format!("{:.3} s", f(&stream["stream_300_customers_seconds"])),
            baseline: format!("{:.3} s for 3", f(&stream["stream_3_customers_seconds"])),
            ratio: Some(
                f(&stream["stream_300_customers_seconds"])
                    / f(&stream["stream_3_customers_seconds"]),
            ),
            goal: "grows with the change".into(),
        });
        rows.push(Row {
            name: format!("8b. first change right after the copy, {profile}"),
            figure: format!("{:.3} s", f(&stream["stream_first_change_seconds"])),
            baseline: format!(
                "{:.2} s watermark pass",
                f(&stream["watermark_no_change_seconds"])
            ),
            ratio: Some(
                f(&stream["stream_first_change_seconds"])
                    / f(&stream["watermark_no_change_seconds"]),
            ),
            goal: "informative (one server)".into(),
        });
        rows.push(Row {
            name: format!(
                "8c. one {:.0}-row update, stream vs pgoutput, {profile}",
                f(&stream["update_rows"])
            ),
            figure: format!("{:.3} s", f(&stream["stream_update_seconds"])),
            baseline: format!("{:.3} s pgoutput", f(&stream["pgoutput_update_seconds"])),
            ratio: Some(
                f(&stream["pgoutput_update_seconds"])
                    / f(&stream["stream_update_seconds"]).max(1e-9),
            ),
            goal: ">= 0.8 (speed)".into(),
        });
        // The source can only be read masked: the goal's "one read of each side" is the
        // producer's masked read of the source plus a COPY of the target. Raw COPY of both
        // sides, which no maskbus path may do, is shown beside it.
        let masked = f(&stream["read_source_masked_seconds"]) + f(&stream["read_target_seconds"]);
        rows.push(Row {
            name: format!("9. verify, two equal databases, {profile}"),
            figure: format!("{:.2} s", f(&stream["verify_seconds"])),
            baseline: format!("{masked:.2} s masked read + COPY"),
            ratio: Some(f(&stream["verify_seconds"]) / masked),
            goal: "<= 1.0".into(),
        });
        let reads = f(&stream["read_source_seconds"]) + f(&stream["read_target_seconds"]);
        rows.push(Row {
            name: format!("9. verify vs raw COPY of both, {profile}"),
            figure: format!("{:.2} s", f(&stream["verify_seconds"])),
            baseline: format!("{reads:.2} s COPY out both"),
            ratio: Some(f(&stream["verify_seconds"]) / reads),
            goal: "informative (unmasked)".into(),
        });
        rows.push(Row {
            name: format!("9. verify vs the copy it spares, {profile}"),
            figure: format!("{:.2} s", f(&stream["verify_seconds"])),
            baseline: format!("{:.2} s copy", f(&stream["copy_seconds"])),
            ratio: Some(f(&stream["verify_seconds"]) / f(&stream["copy_seconds"])),
            goal: "informative".into(),
        });
    }
    for subset in of("subset") {
        let profile = subset["profile"].as_str().unwrap_or("?");
        let full = f(&subset["full_seconds"]);
        for (what, key) in [
            ("1% of customers", "percent"),
            ("one state's customers", "state"),
        ] {
            let seconds = f(&subset[format!("{key}_seconds").as_str()]);
            let moved = f(&subset[format!("{key}_rows").as_str()]);
            rows.push(Row {
                name: format!("10. subset sync, {what}, {profile} ({moved:.0} rows)"),
                figure: format!("{seconds:.2} s"),
                baseline: format!("{full:.2} s full sync"),
                ratio: Some(seconds / full),
                goal: format!(
                    "{} ({:.1}% of the rows)",
                    if key == "percent" {
                        "<= 0.10"
                    } else {
                        "informative"
                    },
                    100.0 * moved / f(&subset["full_rows"]).max(1.0)
                ),
            });
        }
        rows.push(Row {
            name: format!("10. subset plan (both subsets counted), {profile}"),
            figure: format!("{:.2} s", f(&subset["plan_seconds"])),
            baseline: format!("{full:.2} s full sync"),
            ratio: Some(f(&subset["plan_seconds"]) / full),
            goal: "informative".into(),
        });
    }
    for audit in of("wire_audit") {
        rows.push(Row {
            name: format!("5. wire audit ({:.0} MB bus)", f(&audit["megabytes"])),
            figure: format!("{:.1} MB/s", f(&audit["audit_mb_s"])),
            baseline: format!("{:.1} MB/s one-liner", f(&audit["sql_mb_s"])),
            ratio: Some(f(&audit["audit_mb_s"]) / f(&audit["sql_mb_s"])),
            goal: "informative".into(),
        });
        rows.push(Row {
            name: "5. wire audit vs reading".into(),
            figure: format!("{:.1} MB/s", f(&audit["audit_mb_s"])),
            baseline: format!("{:.1} MB/s read", f(&audit["read_mb_s"])),
            ratio: Some(f(&audit["audit_mb_s"]) / f(&audit["read_mb_s"])),
            goal: ">= 0.8".into(),
        });
    }
    for quality in of("audit_quality") {
        rows.push(Row {
            name: format!("5b. audit recall ({} planted leaks)", quality["planted"]),
            figure: format!("{} found", quality["found"]),
            baseline: format!("{} planted", quality["planted"]),
            ratio: Some(f(&quality["recall"])),
            goal: "1.00".into(),
        });
        rows.push(Row {
            name: format!("5b. audit precision ({} clean bodies)", quality["clean"]),
            figure: format!("{} false alarms", quality["false_alarms"]),
            baseline: format!("{} leaks found", quality["found"]),
            ratio: Some(f(&quality["precision"])),
            goal: "1.00".into(),
        });
    }
    for quality in of("init-quality") {
        let schema = quality["schema"].as_str().unwrap_or("");
        rows.push(Row {
            name: format!(
                "5c. policy init recall, {schema} ({} labelled columns)",
                quality["labelled"]
            ),
            figure: format!("{} masked of them", quality["found"]),
            baseline: format!("{} labelled", quality["labelled"]),
            ratio: Some(f(&quality["recall"])),
            goal: ">= 0.98".into(),
        });
        rows.push(Row {
            name: format!("5c. policy init precision, {schema}"),
            figure: format!("{} masked", quality["masked"]),
            baseline: format!(
                "{} labelled among them; {} check errors",
                quality["found"], quality["check_errors"]
            ),
            ratio: Some(f(&quality["precision"])),
            goal: ">= 0.90, 0 check errors".into(),
        });
    }
    for mask in of("mask") {
        rows.push(Row {
            name: "6. masking, one core".into(),
            figure: format!("{:.2} M rows/s", f(&mask["mask_rows_per_s"]) / 1e6),
            baseline: format!("{:.1} M rows/s moved", f(&mask["clone_rows_per_s"]) / 1e6),
            ratio: Some(f(&mask["mask_rows_per_s"]) / f(&mask["clone_rows_per_s"])),
            goal: ">= 1 M rows/s".into(),
        });
        // The egress guard's cost: its time per row as a share of the whole sync's time per
        // row (the largest profile synced in this run), every cell checked.
        if let (Some(guard), Some(sync)) = (mask["guard_rows_per_s"].as_f64(), syncs.last()) {
            let sync_rate = f(&sync["sync_rows_per_s"]);
            rows.push(Row {
                name: "6b. egress guard, one core".into(),
                figure: format!("{:.2} M rows/s", guard / 1e6),
                baseline: format!("{sync_rate:.0} rows/s synced"),
                ratio: Some(sync_rate / guard),
                goal: "<= 0.10 of the sync".into(),
            });
        }
    }
    for mailbox in of("mailbox") {
        let theirs = mailbox["pgmq_msgs_per_s"].as_f64();
        rows.push(Row {
            name: format!("7. mailbox round trips, batch {}", mailbox["batch"]),
            figure: format!("{:.0} msg/s", f(&mailbox["maskbus_msgs_per_s"])),
            baseline: theirs.map_or("pgmq missing".into(), |t| format!("{t:.0} msg/s pgmq")),
            ratio: theirs.map(|t| f(&mailbox["maskbus_msgs_per_s"]) / t),
            goal: ">= 1.0".into(),
        });
    }
    // The bus alone as writer/reader pairs are added, against one pair.
    let pairs: Vec<&Value> = of("bus_pairs").collect();
    if let Some(one) = pairs.iter().find(|p| p["pairs"] == 1) {
        for scaled in &pairs {
            rows.push(Row {
                name: format!("7b. bus alone, {} pairs, 40 KB pages", scaled["pairs"]),
                figure: format!("{:.1} MB/s", f(&scaled["mb_per_s"])),
                baseline: format!("{:.1} MB/s one pair", f(&one["mb_per_s"])),
                ratio: Some(f(&scaled["mb_per_s"]) / f(&one["mb_per_s"]).max(1e-9)),
                goal: "informative (2 cores)".into(),
            });
        }
    }
    println!(
        "{:<40} {:>18} {:>24} {:>7}  goal",
        "measure", "figure", "baseline (same run)", "ratio"
    );
    for row in &rows {
        let ratio = row.ratio.map_or("-".into(), |r| format!("{r:.2}"));
        println!(
            "{:<40} {:>18} {:>24} {:>7}  {}",
            row.name, row.figure, row.baseline, ratio, row.goal
        );
    }
    std::fs::create_dir_all("target/bench")?;
    // The same rows drawn: what BENCHMARKS.md embeds (copied to docs/ from a full run).
    let bars: Vec<maskbus_bench::chart::Bar> = rows
        .iter()
        .filter_map(|row| {
            Some(maskbus_bench::chart::Bar {
                name: row.name.clone(),
                ratio: row.ratio.filter(|r| r.is_finite() && *r > 0.0)?,
                goal: row.goal.clone(),
            })
        })
        .collect();
    std::fs::write(
        "target/bench/ratios.svg",
        maskbus_bench::chart::ratio_chart(
            "maskbus benchmarks: each figure against its baseline in the same run (log scale)",
            &bars,
        ),
    )?;
    std::fs::write(
        "target/bench/results.json",
        serde_json::to_string_pretty(&json!({ "results": lines }))?,
    )?;
    Ok(())
}
