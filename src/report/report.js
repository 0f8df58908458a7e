// report.html's script: renders the tables from the JSON document
// embedded in the page (`#report-data`), and a job's details through the
// renderer the live viewer shares (detail.js, before this in the page).
// It builds every element with createElement and sets text with
// textContent only, so text from jobs stays text. It loads nothing and
// sends nothing.
(function () {
  'use strict';
  var source = document.getElementById('report-data');
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var PAGE_SIZES = [50, 100, 500, 1000];

  var D = window.JobDetail, h = D.h, add = D.add, text = D.text, cell = D.cell, label = D.label;
  function jobLink(index, label) {
    var a = h('a', '', label);
    a.setAttribute('href', '#job-' + (Number(index) | 0));
    return a;
  }

  // A table of many rows, a page at a time: sorted by the header clicked,
  // filtered by the selects and the search box. A row is [job index or
  // null, cells, sort keys, filter values].
  function pagedTable(spec, root) {
    var rows = spec.rows, order = rows.map(function (_, i) { return i; });
    var shown = order, page = 0, size = 100, sortCol = -1, dir = 1;
    var chosen = spec.filters.map(function () { return ''; }), needle = '';
    var bar = add(root, h('div', 'filters'));
    spec.filters.forEach(function (name, fi) {
      var seen = {}, values = [];
      rows.forEach(function (r) {
        var v = r[3][fi];
        if (v && !seen[v]) { seen[v] = 1; values.push(v); }
      });
      if (values.length < 2) return;
      values.sort();
      var label = add(bar, h('label', '', name + ' '));
      var select = add(label, h('select'));
      add(select, h('option', '', 'all')).value = '';
      values.forEach(function (v) { add(select, h('option', '', v)).value = v; });
      select.addEventListener('change', function () { chosen[fi] = select.value; page = 0; apply(); });
    });
    if (spec.search) {
      var search = add(bar, h('input'));
      search.type = 'search';
      search.placeholder = spec.search;
      search.setAttribute('aria-label', spec.search);
      search.addEventListener('input', function () { needle = search.value.toLowerCase(); page = 0; apply(); });
    }
    var count = add(bar, h('span', 'muted'));
    var table = add(add(root, h('div', 'table-wrap')), h('table', spec.cls || ''));
    table.id = spec.id;
    var head = add(add(table, h('thead')), h('tr'));
    spec.headers.forEach(function (name, i) {
      var th = add(head, h('th', (spec.num.indexOf(i) >= 0 ? 'num ' : '') + 'sortable', name));
      th.title = 'sort';
      th.addEventListener('click', function () {
        dir = sortCol === i ? -dir : 1;
        sortCol = i;
        spec.headers.forEach(function (_, j) { head.children[j].removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
        order.sort(compare);
        apply();
      });
    });
    var body = add(table, h('tbody'));
    var pager = add(root, h('div', 'pager'));
    var prev = add(pager, h('button', '', '\u2039 previous'));
    var info = add(pager, h('span', 'muted'));
    var next = add(pager, h('button', '', 'next \u203a'));
    var sizes = add(add(pager, h('label', '', 'rows per page ')), h('select'));
    PAGE_SIZES.forEach(function (n) { add(sizes, h('option', '', n)).value = String(n); });
    sizes.value = String(size);
    prev.type = next.type = 'button';
    prev.addEventListener('click', function () { page -= 1; render(); });
    next.addEventListener('click', function () { page += 1; render(); });
    sizes.addEventListener('change', function () { size = Number(sizes.value) || 100; page = 0; render(); });

    function key(i) { var k = rows[i][2][sortCol]; return k === undefined ? null : k; }
    function compare(a, b) {
      var p = key(a), q = key(b);
      if (p === q) return a - b;
      if (p === null) return 1;
      if (q === null) return -1;
      return (p < q ? -1 : 1) * dir;
    }
    function passes(r) {
      for (var fi = 0; fi < chosen.length; fi++) if (chosen[fi] && r[3][fi] !== chosen[fi]) return false;
      return !needle || label(r[1][0]).toLowerCase().indexOf(needle) >= 0;
    }
    function apply() { shown = order.filter(function (i) { return passes(rows[i]); }); render(); }
    function render() {
      var pages = Math.max(1, Math.ceil(shown.length / size));
      page = Math.max(0, Math.min(page, pages - 1));
      var from = page * size, to = Math.min(shown.length, from + size);
      var rowsOut = document.createDocumentFragment();
      for (var n = from; n < to; n++) {
        var r = rows[shown[n]], tr = add(rowsOut, h('tr'));
        r[1].forEach(function (c, i) {
          var td = add(tr, h('td', spec.num.indexOf(i) >= 0 ? 'num' : ''));
          if (i === 0 && r[0] !== null) {
            add(td, jobLink(r[0], label(c)));
            if (Array.isArray(c) && c.length > 2) cell(add(td, h('div', 'sub')), c[2]);
          } else {
            cell(td, c);
          }
        });
      }
      body.textContent = '';
      body.appendChild(rowsOut);
      count.textContent = shown.length + ' of ' + rows.length + ' ' + spec.noun;
      info.textContent = shown.length ? (from + 1) + '\u2013' + to + ' of ' + shown.length : 'none';
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
      pager.hidden = rows.length <= PAGE_SIZES[0];
    }
    apply();
  }

  var detail = document.getElementById('job-detail');
  var hint = document.getElementById('job-detail-hint');
  function showJob() {
    var m = /^#job-(\d+)$/.exec(location.hash);
    var d = m && data.details[Number(m[1])];
    if (!d || !detail) return;
    // Each job's details are parsed when it is first opened.
    if (typeof d === 'string') d = data.details[Number(m[1])] = JSON.parse(d);
    detail.textContent = '';
    D.render(detail, d, data);
    detail.hidden = false;
    if (hint) hint.hidden = true;
    detail.scrollIntoView();
  }

  data.tables.forEach(function (spec) {
    var root = document.getElementById(spec.id + '-table');
    if (root) pagedTable(spec, root);
  });
  window.addEventListener('hashchange', showJob);
  showJob();
})();
