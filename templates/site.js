/* site.js - the pages of `hybench publish` (docs/history.md, "The site"): the filterable case table
 * of a machine page and the history graph of a case page. Copied into SITE/lib/ by hybench publish;
 * drawn with dygraphs (Debian libjs-dygraphs, SITE/lib/dygraph.min.js). No network: the data come
 * from .js files loaded by <script src> (file:// pages cannot fetch JSON). Every text from the store
 * reaches the page through textContent or hbEsc. */
'use strict';

function hbEsc(s) {
  return String(s).replace(/[&<>"']/g, function (c) {
    return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
  });
}

/* a script error anywhere on the page is written into <body data-error>, for the headless check */
window.addEventListener('error', function (e) {
  document.body && document.body.setAttribute('data-error', String(e.message || e));
});

/* Machine page: fill each filter <select> with its column's values, then show only the rows that
 * match every filter and the free-text search. */
function hbCaseTable() {
  var table = document.getElementById('cases');
  if (!table) return;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var selects = Array.prototype.slice.call(document.querySelectorAll('select[data-col]'));
  selects.forEach(function (sel) {
    var col = +sel.getAttribute('data-col'), seen = {};
    rows.forEach(function (r) { seen[r.cells[col].textContent] = 1; });
    Object.keys(seen).sort().forEach(function (v) {
      var o = document.createElement('option');
      o.value = v;
      o.textContent = v;
      sel.appendChild(o);
    });
  });
  var text = document.getElementById('search'), shown = document.getElementById('shown');
  function apply() {
    var q = text ? text.value.toLowerCase() : '', n = 0;
    rows.forEach(function (r) {
      var ok = selects.every(function (sel) {
        return !sel.value || r.cells[+sel.getAttribute('data-col')].textContent === sel.value;
      });
      if (ok && q) ok = r.textContent.toLowerCase().indexOf(q) >= 0;
      r.style.display = ok ? '' : 'none';
      n += ok;
    });
    if (shown) shown.textContent = n + ' of ' + rows.length + ' cases shown';
  }
  selects.forEach(function (sel) { sel.addEventListener('change', apply); });
  if (text) text.addEventListener('input', apply);
  apply();
  document.body.setAttribute('data-rows', rows.length);
}

/* the unit that shows the largest median with 1 to 3 digits before the point */
function hbUnit(max) {
  if (max >= 1) return { f: 1, name: 's' };
  if (max >= 1e-3) return { f: 1e3, name: 'ms' };
  if (max >= 1e-6) return { f: 1e6, name: '\u00b5s' };
  return { f: 1e9, name: 'ns' };
}

/* Case page: HB_NIGHTS (the machine's nights) and HB_CASE (this case's points and changes);
 * root is the relative path from this page to the site's root ("../../../"). */
function hbCasePage(root) {
  var N = HB_NIGHTS.nights, C = HB_CASE, div = document.getElementById('graph');
  var max = 0;
  C.points.forEach(function (p) { if (p[1] > max) max = p[1]; });
  var u = hbUnit(max), byTime = {}, data = [];
  function when(i) {
    var t = Date.parse(N[i].date);
    return isNaN(t) ? i * 86400000 : t;
  }
  C.points.forEach(function (p) {
    var i = p[0], t = when(i), lo = p[2] == null ? p[1] : p[2], hi = p[3] == null ? p[1] : p[3];
    byTime[t] = { night: i, p: p };
    data.push([new Date(t), [lo * u.f, p[1] * u.f, hi * u.f]]);
  });
  var legend = document.getElementById('legend');
  function fmt(v) { return (v * u.f).toPrecision(4) + ' ' + u.name; }
  function describe(t) {
    var hit = byTime[t];
    if (!hit) return '';
    var n = N[hit.night], p = hit.p;
    var s = '<b>' + hbEsc(n.date) + '</b> (night ' + hit.night + '): median ' + hbEsc(fmt(p[1]));
    if (p[2] != null && p[3] != null) s += ', 95% CI [' + hbEsc(fmt(p[2])) + ', ' + hbEsc(fmt(p[3])) + ']';
    s += '<br>run <code>' + hbEsc(n.run) + '</code>, commit <code>' + hbEsc(n.commit.slice(0, 12)) + '</code>';
    s += n.report ? ' \u2014 click the point to open its report' : ' \u2014 no report was rendered that night';
    return s;
  }
  var g = new Dygraph(div, data, {
    labels: ['night', 'median'],
    customBars: true,
    fillAlpha: 0.25,
    colors: ['#1f5fa8'],
    drawPoints: true,
    pointSize: 2.5,
    highlightCircleSize: 5,
    strokeWidth: 1.5,
    labelsUTC: true,
    ylabel: 'median time per call (' + u.name + '), band: 95% CI',
    xlabel: 'night (date of the run)',
    axisLabelFontSize: 14,
    showRangeSelector: true,
    rangeSelectorHeight: 36,
    labelsDiv: legend,
    legend: 'always',
    legendFormatter: function (d) {
      return d.x == null ? 'Hover a night for its median, 95% CI, run and commit; drag to zoom, double-click to reset.'
                         : describe(d.x);
    },
    pointClickCallback: function (e, pt) {
      var hit = byTime[pt.xval];
      if (!hit) return;
      var n = N[hit.night];
      if (n.report) window.location.href = root + n.report;
      else legend.innerHTML = describe(pt.xval) + '<br><i>No report for this night.</i>';
    },
    drawCallback: function (gr, initial) {
      if (!initial) return;
      div.setAttribute('data-points', gr.numRows());
      document.body.setAttribute('data-ready', '1');
    }
  });
  var ann = [];
  C.changes.forEach(function (c, i) {
    var t = when(c.night);
    if (!byTime[t]) return;
    ann.push({ series: 'median', x: t, shortText: String(i + 1), width: 18, height: 18,
               text: c.kind + ' ' + (c.size >= 0 ? '+' : '') + (100 * c.size).toFixed(1) + '% from ' + N[c.night].date });
  });
  g.ready(function () {
    g.setAnnotations(ann);
    /* #night=N (the machine page's links to a change): that night selected, its legend shown */
    var m = /^#night=(\d+)$/.exec(window.location.hash), t = m ? when(+m[1]) : null;
    for (var row = 0; m && row < data.length; row++)
      if (data[row][0].getTime() === t) { g.setSelection(row); break; }
  });
  window.hbGraph = g;
}
