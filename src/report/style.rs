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
section.job{border:1px solid var(--line);border-radius:8px;margin:10px 0;padding:0 16px 16px;background:var(--bg)}
.job-top{display:flex;gap:10px;align-items:center;flex-wrap:wrap;padding:10px 0;border-bottom:1px solid var(--line);overflow-wrap:anywhere}
.job-top .right{margin-left:auto}
.strong{font-weight:600}
pre.prompt,pre.excerpt{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 10px;margin:4px 0 10px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:24em;overflow:auto}
ul.excerpts{list-style:none;margin:0;padding:0}
ul.excerpts>li{padding:4px 0;overflow-wrap:anywhere}
ul.links{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 18px}
.hint{color:var(--warn)}
.pager{display:flex;gap:12px;align-items:center;flex-wrap:wrap;margin:8px 0}
.pager button,.filters select,.filters input{font:inherit;font-size:12px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:6px 16px;margin:12px 0}
.facts>div{display:flex;flex-direction:column}
.facts>div>span:first-child{color:var(--muted);font-size:12px}
pre.diff{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:10px 0;overflow-x:auto;line-height:1.45;margin:0}
pre.diff span{display:block;padding:0 12px;min-height:1.45em}
pre.diff .add{background:#e6ffec;color:#116329}
pre.diff .del{background:#ffebe9;color:#82071e}
pre.diff .hunk{color:#0550ae;background:#ddf4ff}
pre.diff .meta{color:var(--muted);font-weight:600}
p.note{margin:8px 0;word-break:break-word}
ul.tests{list-style:none;margin:0;padding:0;column-width:28em;column-gap:24px}
ul.tests li{padding:2px 0;word-break:break-word;break-inside:avoid}
ol.trajectory{list-style:none;margin:0;padding:0;border-left:2px solid var(--line)}
ol.trajectory>li{margin:0 0 2px;padding:2px 0 2px 10px;word-break:break-word}
ol.trajectory li.phase{color:var(--fg)}
details.step>summary{cursor:pointer}
details.step[open]>summary{font-weight:600}
details.step .lines{margin:4px 0 8px 18px;display:flex;flex-direction:column;gap:3px}
pre.obs{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:6px 10px;margin:0;white-space:pre-wrap;word-break:break-word;max-height:18em;overflow:auto}
.filters{display:flex;gap:12px;flex-wrap:wrap;margin:8px 0}
.filters label{font-size:12px;color:var(--muted)}
.mark{font-weight:700}.mark.ok{background:none;color:var(--good)}.mark.bad{background:none;color:var(--bad)}
.timebar{display:flex;height:12px;border:1px solid var(--line);border-radius:3px;overflow:hidden;margin:10px 0 4px}
.timelegend{display:flex;flex-wrap:wrap;gap:2px 16px;font-size:12px}
.timelegend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
.seg.s0{background:#5b8def}.seg.s1{background:#e59f3b}.seg.s2{background:#53a868}
.seg.s3{background:#9b7bd4}.seg.s4{background:#d45b7b}.seg.s5{background:#b0b6bf}
"#;
