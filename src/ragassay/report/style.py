"""The stylesheet of the report pages, inlined in a ``<style>`` element (no external file).

Korean text needs a CJK font: the body's font stack names Noto Sans CJK KR (Debian/Ubuntu
``fonts-noto-cjk``), Malgun Gothic (Windows) and Apple SD Gothic Neo (macOS) before the
generic ``sans-serif``. On a narrow screen (400 px) a wide table scrolls sideways in its own
box with its first column (the question id) kept in view.
"""

from __future__ import annotations

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d8dee4;--fail:#fff1ef;--soft:#f6f8fa}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK KR",
"Noto Sans KR","Malgun Gothic","Apple SD Gothic Neo",sans-serif;color:var(--fg);line-height:1.45;
margin:0 auto;padding:1rem 1.25rem 3rem;max-width:78rem}
h1{font-size:1.5rem;margin:.5rem 0}
h2{font-size:1.2rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:2rem}
h4{font-size:.9rem;margin:.8rem 0 .3rem}
code,.ids{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;
overflow-wrap:anywhere}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:0}
.facts dt{color:var(--muted)}.facts dd{margin:0;overflow-wrap:anywhere}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem .75rem;border-radius:4px}
.pair{display:flex;flex-wrap:wrap;gap:1rem 2rem;align-items:flex-start}
.pair>div{min-width:0;max-width:100%}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.9rem}
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line);
vertical-align:top}
th{background:var(--soft)}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.nm{color:var(--muted);font-style:italic}
svg.chart{max-width:100%;height:auto;display:block}
.legend-item{display:inline-block;margin-right:1rem;white-space:nowrap}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:-.05em}
table.questions{width:100%}
table.questions td.question{min-width:14rem}
table.questions tr.main td:first-child{white-space:nowrap}
tbody.q tr.main td{border-bottom:none}
tbody.q tr.more td{padding-top:0}
tbody.fail td{background:var(--fail)}
tbody.fail tr.main td:first-child{box-shadow:inset 3px 0 0 #cf222e}
.tag{display:inline-block;border-left:4px solid;background:var(--soft);padding:0 .3rem;
margin:0 .25rem .2rem 0;font-size:.8rem;white-space:nowrap}
summary{cursor:pointer;color:var(--muted);font-size:.85rem}
.detail{padding:.25rem 0 .5rem}
.answer{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.gold{background:#dafbe1;color:#116329;padding:0 .3rem;border-radius:3px;font-size:.8rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft);padding:.5rem;
font-size:.8rem;margin:0}
.totals{background:var(--soft);border:1px solid var(--line);border-radius:6px;
padding:.5rem .9rem;margin-top:1rem}.totals p{margin:.25rem 0}.totals .line{font-size:1.1rem}
.notes ul{margin:.2rem 0 .2rem 1.2rem;padding:0}
.filters{display:flex;flex-wrap:wrap;gap:.4rem 1rem;font-size:.85rem;margin:.5rem 0}
.filters select,.filters input{font:inherit;max-width:16rem}
.count{color:var(--muted);font-size:.85rem;margin:.2rem 0}
tr.cut td{border-bottom:2px dashed #cf222e;color:#cf222e;font-size:.75rem;padding:0 .5rem}
tr.beyond td{color:var(--muted)}
details.chunk summary{font-size:.75rem}
.ctext{max-width:40rem;max-height:16rem;overflow:auto}
.src{color:var(--muted);font-size:.75rem}
.gold-list,.cites,.evidence{margin:.2rem 0;padding-left:1.2rem}
.evidence li{overflow-wrap:anywhere}
#pager button{font:inherit;padding:.3rem .8rem;cursor:pointer}
@media (max-width:40rem){body{padding:.5rem}.facts{grid-template-columns:1fr}
.facts dt{font-weight:600}
table.questions td.question{min-width:10rem}
.scroll>table>tbody>tr>td:first-child,.scroll>table>thead>tr>th:first-child{position:sticky;
left:0;z-index:1;background:#fff;max-width:7rem;white-space:normal}
.scroll>table>thead>tr>th:first-child{background:var(--soft)}
.scroll>table>tbody.fail>tr>td:first-child,.scroll>table>tbody.lost>tr>td:first-child{
background:var(--fail)}}
"""
