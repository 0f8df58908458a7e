//! The inline stylesheet of `report.html`: a light theme on the system font
//! stack; tables wrap their text so they fit the window. Nothing here may
//! load anything from outside the page (the page's policy forbids it too).

/// Inline CSS for `report.html`.
pub(super) const STYLE: &str = r#"
:root{--fg:#1f2328;--muted:#656d76;--line:#d8dee4;--bg:#fff;--soft:#f6f8fa;
--good:#1a7f37;--good-bg:#dafbe1;--bad:#cf222e;--bad-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;
--info:#0969da;--info-bg:#ddf4ff;--gray-bg:#eaeef2}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1440px;margin:0 auto;padding:32px 24px 64px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:18px;margin:36px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:16px 0 8px}
.muted{color:var(--muted);fill:var(--muted)}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(118px,1fr));gap:10px;margin-top:20px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;background:var(--soft)}
.card .n{font-size:22px;font-weight:600}
.card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600;font-size:12px;color:var(--muted);vertical-align:bottom;overflow-wrap:normal}
td.num,th.num{text-align:right}
td.num{white-space:nowrap}
table.jobs th,table.jobs td{padding:6px 5px}
table.jobs td:first-child{min-width:11em;overflow-wrap:anywhere}
table.jobs td.num,table.jobs .badge{white-space:normal}
td .mono,td a{overflow-wrap:anywhere}
td .sub{font-size:12px;color:var(--muted);margin-top:2px}
th.sortable{cursor:pointer;user-select:none}th.sortable:hover{color:var(--fg)}
th[aria-sort=ascending]::after{content:" \25B4"}th[aria-sort=descending]::after{content:" \25BE"}
tbody tr:hover{background:#f6f8fa80}
a{color:var(--info);text-decoration:none}a:hover{text-decoration:underline}
.badge{display:inline-block;white-space:nowrap;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;background:var(--gray-bg);color:var(--muted)}
.succeeded,.passed,.ok{background:var(--good-bg);color:var(--good)}
.failed,.bad{background:var(--bad-bg);color:var(--bad)}
.pending{background:var(--info-bg);color:var(--info)}
.cancelled,.missing{background:var(--warn-bg);color:var(--warn)}
.failing{background:var(--bad-bg);color:var(--bad)}
.bad-text{color:var(--bad);font-weight:600}
svg.chart{max-width:100%;height:auto;display:block}
svg .grid{stroke:var(--line);stroke-width:1}
svg .tick{font-size:11px;fill:var(--muted)}
svg .label{font-size:13px;fill:var(--fg)}
svg .value{font-size:13px;font-weight:600;fill:var(--fg)}
svg .track{fill:var(--soft);stroke:var(--line)}
svg .bar.good{fill:#2da44e}svg .bar.fair{fill:#d4a72c}svg .bar.poor{fill:#e5534b}
svg .ci{stroke:var(--fg);stroke-width:1.5;fill:none}
.pager{display:flex;gap:12px;align-items:center;flex-wrap:wrap;margin:8px 0}
.pager button,.filters select,.filters input{font:inherit;font-size:12px}
.filters{display:flex;gap:12px;flex-wrap:wrap;margin:8px 0}
.filters label{font-size:12px;color:var(--muted)}
"#;

/// The rules of one job's details, which the live viewer serves too.
pub(crate) const DETAIL_STYLE: &str = include_str!("detail.css");
