// Owns the console's stylesheet, served as /console/assets/app-<hash>.css (no inline styles: the CSP
// forbids them). Kept in a module so it ships inside dist/ with the compiled code.
export const STYLES = String.raw`
:root {
  --bg: #f5f7fb; --surface: #fff; --text: #172033; --muted: #5a6478; --border: #e2e7f0;
  --primary: #2f5bea; --primary-dark: #2248c4; --primary-soft: #eaf0ff;
  --danger: #c62f3c; --danger-soft: #fdecee; --success: #176a40; --success-soft: #e7f6ee;
  --warn: #8a5a00; --warn-soft: #fff5dc; --radius: 10px;
  --shadow: 0 1px 2px rgba(16,24,40,.06), 0 1px 3px rgba(16,24,40,.08);
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
/* Anchors stop below the sticky top bar: one row from about 1150 px, two rows down to 721 px, not sticky below. */
html { -webkit-text-size-adjust: 100%; scroll-padding-top: 84px; }
@media (max-width: 1150px) { html { scroll-padding-top: 128px; } }
@media (max-width: 720px) { html { scroll-padding-top: 12px; } }
body { margin: 0; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--text); background: var(--bg); }
a { color: var(--primary); text-underline-offset: 2px; }
a:hover { color: var(--primary-dark); }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 .35rem; letter-spacing: -.01em; }
h2 { font-size: 1.12rem; margin: 0 0 .75rem; }
h3 { font-size: 1rem; margin: 0 0 .5rem; }
p { margin: 0 0 .9rem; }
code, .mono { font-family: var(--mono); font-size: .92em; }
code.wrap { overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.small { font-size: .88rem; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0,0,0,0); border: 0; }
.skip { position: absolute; left: -999px; top: 8px; background: #fff; padding: 8px 12px; z-index: 10; }
.skip:focus { left: 8px; }
:focus-visible { outline: 3px solid #8aa6ff; outline-offset: 2px; }

/* Brand */
.brand { display: inline-flex; align-items: center; gap: .55rem; font-weight: 700; color: var(--text); text-decoration: none; font-size: 1.05rem; }
.brand-mark { width: 28px; height: 28px; border-radius: 8px; background: linear-gradient(135deg, #2f5bea, #7b5cff); display: inline-grid; place-items: center; color: #fff; font-size: .8rem; }

/* Auth layout: one centred card */
.auth-wrap { min-height: 100vh; display: flex; flex-direction: column; align-items: center; padding: 40px 16px; }
.auth-wrap > .brand { margin-bottom: 24px; }
.auth-card { width: 100%; max-width: 480px; background: var(--surface); border: 1px solid var(--border); border-radius: 14px; box-shadow: var(--shadow); padding: 32px; }
.auth-card.wide { max-width: 640px; }
.auth-foot { margin-top: 20px; color: var(--muted); font-size: .88rem; text-align: center; }
.steps { display: flex; gap: 6px; list-style: none; padding: 0; margin: 0 0 20px; counter-reset: step; }
.steps li { flex: 1; min-width: 0; border-top: 4px solid var(--border); padding-top: 6px; font-size: .78rem; color: var(--muted); line-height: 1.25; }
.steps li.done { border-top-color: var(--primary); }
.steps li.current { color: var(--text); font-weight: 600; }
.steps .step-n { display: none; }
@media (max-width: 560px) { .steps li .step-label { display: none; } .steps li .step-n { display: inline; } .steps li.current .step-label { display: inline; } .steps li.current { flex: 3; } }
.lead { color: var(--muted); margin-bottom: 1.4rem; }

/* App layout */
.topbar { background: var(--surface); border-bottom: 1px solid var(--border); position: sticky; top: 0; z-index: 5; }
/* Brand, seven links and the account buttons fit one row from about 1150 px (narrower screens wrap the links). */
.topbar-inner { max-width: 1120px; margin: 0 auto; padding: 0 20px; display: flex; align-items: center; gap: 18px; min-height: 60px; flex-wrap: wrap; }
.nav { display: flex; gap: 2px; flex-wrap: wrap; flex: 1; }
.nav a { color: var(--muted); text-decoration: none; padding: 8px 9px; border-radius: 8px; font-weight: 500; font-size: .94rem; white-space: nowrap; }
.nav a:hover { background: var(--bg); color: var(--text); }
.nav a[aria-current="page"] { color: var(--primary); background: var(--primary-soft); }
.account-menu { display: flex; align-items: center; gap: 8px; }
@media (max-width: 720px) {
  .topbar-inner { gap: 6px 12px; padding: 10px 16px 0; }
  .account-menu { margin-left: auto; }
  .topbar { position: static; }
  .nav { order: 3; flex: 1 0 100%; flex-wrap: wrap; padding-bottom: 8px; }
  .nav a { white-space: nowrap; padding: 6px 10px; }
  main.app { padding: 20px 14px 48px; }
  .card { padding: 18px; }
}
main.app { max-width: 1120px; margin: 0 auto; padding: 28px 20px 64px; }
.page-head { display: flex; justify-content: space-between; align-items: flex-end; gap: 16px; flex-wrap: wrap; margin-bottom: 20px; }
.page-head p { margin: 0; color: var(--muted); }
.grid { display: grid; gap: 20px; grid-template-columns: repeat(12, minmax(0, 1fr)); align-items: start; }
.grid > * { min-width: 0; }
.card.narrow { max-width: 720px; }
.span-12 { grid-column: span 12; } .span-8 { grid-column: span 8; } .span-6 { grid-column: span 6; } .span-4 { grid-column: span 4; }
@media (max-width: 860px) { .span-8, .span-6, .span-4 { grid-column: span 12; } }
.card { background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); padding: 22px; }
.card-head { display: flex; justify-content: space-between; align-items: baseline; gap: 12px; margin-bottom: 12px; }
.card-head h2 { margin: 0; }

/* Stats */
.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(135px, 1fr)); gap: 14px; margin-bottom: 20px; }
.stat { background: var(--bg); border-radius: 8px; padding: 12px 14px; }
.stat .label { color: var(--muted); font-size: .82rem; text-transform: uppercase; letter-spacing: .04em; }
.stat .value { font-size: 1.25rem; font-weight: 650; font-variant-numeric: tabular-nums; white-space: nowrap; }
.stat .hint { color: var(--muted); font-size: .82rem; }
.stat { min-width: 0; }
@media (max-width: 640px) { .stat { padding: 12px; } }
.meter { height: 8px; background: var(--border); border-radius: 8px; overflow: hidden; margin: 6px 0 14px; }
.meter > svg { display: block; }

/* Chart: a wide SVG for desktops, a taller one with larger text for phones */
.chart-box { margin: 0 0 8px; }
.chart { width: 100%; height: auto; display: block; }
.chart-narrow { display: none; }
@media (max-width: 640px) { .chart-wide { display: none; } .chart-narrow { display: block; } }
.chart .bar { cursor: pointer; }
table.compact th, table.compact td { padding: 4px 8px; }
#daily-table { max-width: 320px; }
.chart .bar { fill: var(--primary); }
.chart .bar.zero { fill: #d9e0ef; }
.chart .axis { fill: var(--muted); font-family: inherit; }
.chart .grid-line { stroke: var(--border); stroke-width: 1; }

/* Forms */
.field { margin-bottom: 16px; }
.field label, .label { display: block; font-weight: 600; margin-bottom: 6px; font-size: .92rem; }
.field .hint { color: var(--muted); font-size: .84rem; margin-top: 5px; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: 14px; }
@media (max-width: 560px) { .row { grid-template-columns: 1fr; } .auth-card { padding: 24px 18px; } }
input[type=text], input[type=email], input[type=url], input[type=password], input:not([type]), select {
  width: 100%; padding: 10px 12px; font: inherit; color: inherit; background: #fff;
  border: 1px solid #c9d1df; border-radius: 8px; transition: border-color .15s, box-shadow .15s;
}
input:focus { outline: none; border-color: var(--primary); box-shadow: 0 0 0 3px rgba(47,91,234,.18); }
input[readonly] { background: var(--bg); color: var(--muted); }
input[aria-invalid="true"] { border-color: var(--danger); }
input[aria-invalid="true"]:focus { box-shadow: 0 0 0 3px rgba(198,47,60,.15); }
.error-text { color: var(--danger); font-size: .85rem; margin-top: 5px; min-height: 0; }
.error-text:empty { display: none; }
.code-input { font-family: var(--mono); font-size: 1.5rem !important; letter-spacing: .4em; text-align: center; max-width: 240px; }
.check { display: flex; gap: 10px; align-items: flex-start; font-weight: 500; margin: 18px 0; }
.check input { margin-top: 4px; width: 18px; height: 18px; accent-color: var(--primary); }
fieldset { border: 1px solid var(--border); border-radius: 8px; padding: 12px 14px 4px; margin: 0 0 16px; }
legend { font-weight: 600; font-size: .85rem; color: var(--muted); padding: 0 6px; }
.readonly-pairs { display: grid; grid-template-columns: auto 1fr; gap: 4px 14px; font-size: .9rem; margin: 0 0 10px; }
.readonly-pairs dt { color: var(--muted); }
.readonly-pairs dd { margin: 0; font-family: var(--mono); font-size: .85rem; overflow-wrap: anywhere; }
/* After the base rules, so it wins on phones: each label above its value, the value on the full width. */
@media (max-width: 560px) { .readonly-pairs { grid-template-columns: 1fr; } .readonly-pairs dd { margin-bottom: 6px; } }

/* Password rules */
.rules { list-style: none; padding: 0; margin: 8px 0 0; display: grid; grid-template-columns: 1fr 1fr; gap: 4px 12px; font-size: .86rem; }
@media (max-width: 560px) { .rules { grid-template-columns: 1fr; } }
.rules li { color: var(--muted); padding-left: 22px; position: relative; }
.rules li::before { content: "○"; position: absolute; left: 2px; }
.rules li.ok { color: var(--success); }
.rules li.ok::before { content: "✓"; font-weight: 700; }

/* Buttons */
.btn { display: inline-flex; align-items: center; justify-content: center; gap: 6px; padding: 10px 16px; border-radius: 8px; border: 1px solid transparent; font: inherit; font-weight: 600; cursor: pointer; text-decoration: none; line-height: 1.2; }
.btn-primary { background: var(--primary); color: #fff; }
.btn-primary:hover { background: var(--primary-dark); color: #fff; }
.btn-secondary { background: #fff; color: var(--text); border-color: #c9d1df; }
.btn-secondary:hover { background: var(--bg); color: var(--text); }
.btn-danger { background: var(--danger); color: #fff; }
.btn-danger:hover { background: #a82431; color: #fff; }
.btn-link { background: none; border: none; color: var(--primary); padding: 0; font-weight: 500; cursor: pointer; font: inherit; text-decoration: underline; text-underline-offset: 2px; }
.btn-block { width: 100%; }
.btn-sm { padding: 6px 10px; font-size: .86rem; }
.btn[disabled], .btn[aria-disabled="true"] { opacity: .5; cursor: not-allowed; }
.actions { display: flex; gap: 10px; flex-wrap: wrap; align-items: center; margin-top: 8px; }
form.inline { display: inline; }

/* Alerts and badges */
.alert { padding: 12px 14px; border-radius: 8px; margin-bottom: 18px; border: 1px solid; }
.alert p:last-child { margin: 0; }
.alert-error { background: var(--danger-soft); border-color: #f4c3c8; color: #7d1620; }
.alert-success { background: var(--success-soft); border-color: #bfe6cf; color: #14532d; }
.alert-info { background: var(--primary-soft); border-color: #c8d5ff; color: #1b3590; }
.alert-warn { background: var(--warn-soft); border-color: #f3dc9c; color: var(--warn); }
.alert:target { box-shadow: 0 0 0 3px #8aa6ff; }
.alert .actions { margin-top: 10px; }
.badge { display: inline-block; padding: 2px 9px; border-radius: 999px; font-size: .78rem; font-weight: 600; background: var(--bg); color: var(--muted); border: 1px solid var(--border); }
.badge-primary { background: var(--primary-soft); color: var(--primary); border-color: #c8d5ff; }
.badge-success { background: var(--success-soft); color: var(--success); border-color: #bfe6cf; }
.badge-warn { background: var(--warn-soft); color: var(--warn); border-color: #f3dc9c; }

/* Secrets shown once */
.secret { display: flex; gap: 8px; align-items: stretch; margin-bottom: 14px; }
.secret output, .secret code { flex: 1; display: block; padding: 10px 12px; background: #0f172a; color: #e2e8f0; border-radius: 8px; font-family: var(--mono); font-size: .86rem; word-break: break-all; }
.key-label { font-weight: 600; margin-bottom: 6px; display: flex; gap: 8px; align-items: center; }
.copy-state { font-size: .8rem; color: var(--success); }

/* Tables */
table { width: 100%; border-collapse: collapse; font-size: .92rem; }
th, td { text-align: left; padding: 10px 10px; border-bottom: 1px solid var(--border); vertical-align: middle; }
th { color: var(--muted); font-weight: 600; font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; }
tr.current td, tr.current th { background: var(--primary-soft); }
tbody th { text-transform: none; letter-spacing: 0; font-size: .95rem; color: var(--text); }
details > summary { cursor: pointer; margin-top: 14px; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.table-wrap { overflow-x: auto; }
/* Tables that become one card per row on phones (each cell names its column) */
@media (max-width: 640px) {
  table.stack thead { display: none; }
  table.stack, table.stack tbody, table.stack tr, table.stack th, table.stack td { display: block; width: 100%; }
  table.stack tr { border: 1px solid var(--border); border-radius: 8px; padding: 8px 12px; margin-bottom: 10px; }
  table.stack tbody th { border: 0; padding: 4px 0 6px; font-size: 1rem; }
  table.stack td { border: 0; padding: 3px 0; display: flex; justify-content: space-between; gap: 12px; text-align: right; }
  table.stack td[data-label]::before { content: attr(data-label); color: var(--muted); text-align: left; }
  table.stack td.action { justify-content: flex-start; padding-top: 8px; }
}
pre.code { margin: 6px 0 12px; padding: 10px 12px; background: #0f172a; color: #e2e8f0; border-radius: 8px; overflow-x: auto; max-width: 100%; font-size: .82rem; white-space: pre-wrap; word-break: break-all; }
pre.code code { font-size: inherit; }
.steps-list { padding-left: 1.2rem; }
.steps-list li { margin-bottom: 6px; }
dl.facts { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 8px 0 0; }
dl.facts div { display: flex; gap: 6px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
ol.codes { columns: 2; gap: 24px; font-family: var(--mono); font-size: 1rem; padding-left: 1.6rem; margin: 0 0 14px; }
ol.codes li { padding: 3px 0; }
ul.effects { padding-left: 1.2rem; }
ul.effects li { margin-bottom: 8px; }
.account-menu a[aria-current="page"] { border-color: var(--primary); color: var(--primary); }

/* Key list */
.keys { display: grid; gap: 12px; }
.key-row { display: flex; align-items: center; justify-content: space-between; gap: 12px; padding: 14px; border: 1px solid var(--border); border-radius: 8px; flex-wrap: wrap; }
.key-row .prefix { font-family: var(--mono); background: var(--bg); padding: 3px 8px; border-radius: 6px; }

/* Hard cap switch */
.switch-row { display: flex; gap: 16px; align-items: flex-start; justify-content: space-between; flex-wrap: wrap; }
.switch { display: inline-flex; align-items: center; gap: 10px; border: 0; background: none; padding: 0; cursor: pointer; font: inherit; font-weight: 600; color: var(--text); }
.switch .track { width: 46px; height: 26px; border-radius: 26px; background: #c9d1df; position: relative; transition: background .15s; flex: none; }
.switch .track::after { content: ""; position: absolute; top: 3px; left: 3px; width: 20px; height: 20px; border-radius: 50%; background: #fff; box-shadow: var(--shadow); transition: left .15s; }
.switch[aria-checked="true"] .track { background: var(--success); }
.switch[aria-checked="true"] .track::after { left: 23px; }
.switch[disabled] { cursor: not-allowed; opacity: .7; }
.explain { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; margin-top: 14px; }
@media (max-width: 560px) { .explain { grid-template-columns: 1fr; } }
.explain > div { border: 1px solid var(--border); border-radius: 8px; padding: 12px; font-size: .9rem; }
.explain > div.active { border-color: var(--primary); background: var(--primary-soft); }

/* QR */
.qr { display: flex; gap: 20px; align-items: center; flex-wrap: wrap; margin: 10px 0 18px; }
.qr svg { width: 208px; height: 208px; border: 1px solid var(--border); border-radius: 8px; background: #fff; flex: none; }
.qr .manual { flex: 1; min-width: 200px; }
.secret-text { font-family: var(--mono); background: var(--bg); padding: 8px 10px; border-radius: 6px; display: block; margin: 6px 0 8px; letter-spacing: .06em; }
/* The key wraps between its groups of four, never inside one. */
.secret-text .group { white-space: nowrap; }

/* Activity */
.timeline { list-style: none; margin: 0; padding: 0; }
.timeline li { display: flex; justify-content: space-between; gap: 16px; padding: 10px 0; border-bottom: 1px solid var(--border); flex-wrap: wrap; }
.timeline li:last-child { border-bottom: 0; }
.timeline time { color: var(--muted); font-size: .86rem; font-variant-numeric: tabular-nums; }

/* Mailbox (local mode) */
.mail { border: 1px solid var(--border); border-radius: 8px; margin-bottom: 14px; }
.mail summary { padding: 12px 14px; cursor: pointer; display: flex; justify-content: space-between; gap: 12px; flex-wrap: wrap; }
.mail pre { margin: 0; padding: 14px; border-top: 1px solid var(--border); white-space: pre-wrap; word-break: break-word; font-family: var(--mono); font-size: .85rem; }
.devbar { background: #1f2937; color: #f9fafb; font-size: .82rem; text-align: center; padding: 6px; }
.devbar a { color: #c7d2fe; }
footer.site { text-align: center; color: var(--muted); font-size: .82rem; padding: 24px 16px 32px; overflow-wrap: anywhere; }

/* Printing (the recovery codes' Print button): the page's content only, no navigation or buttons. */
@media print {
  .topbar, .devbar, .skip, footer.site, .auth-foot, .auth-wrap > .brand, .steps, .actions, button, .btn { display: none !important; }
  body { background: #fff; }
  .card, .auth-card { border: 0; box-shadow: none; }
}
`;
