// report.html's script: renders the tables and a job's details from the
// JSON document embedded in the page (`#report-data`). It builds every
// element with createElement and sets text with textContent only, so text
// from jobs (ids, test output, patches, the model's messages) stays text.
// It loads nothing and sends nothing.
(function () {
  'use strict';
  var source = document.getElementById('report-data');
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var PAGE_SIZES = [50, 100, 500, 1000];

  function h(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function text(parent, t) { parent.appendChild(document.createTextNode(String(t))); }

  // A cell: a string, null (a dash), or [text, class] / [text, class, a
  // cell under it].
  function cell(parent, c) {
    if (c === null || c === undefined || c === '') { add(parent, h('span', 'muted', '\u2013')); return; }
    if (typeof c === 'string') { text(parent, c); return; }
    add(parent, h('span', c[1] || '', c[0]));
    if (c.length > 2) cell(add(parent, h('div', 'sub')), c[2]);
  }
  function label(c) { return c === null ? '' : typeof c === 'string' ? c : c[0]; }
  function cells(parent, list) {
    list.forEach(function (c, i) { if (i) text(parent, ' '); cell(parent, c); });
  }
  function mark(ok) {
    var m = h('span', ok ? 'mark ok' : 'mark bad', ok ? '\u2713' : '\u2717');
    m.title = ok ? 'ok' : 'failed';
    return m;
  }
  function diff(parent, t) {
    var pre = add(parent, h('pre', 'diff'));
    t.split('\n').forEach(function (l) {
      var k = /^(\+\+\+|---|diff |index )/.test(l) ? 'meta'
        : l.charAt(0) === '+' ? 'add' : l.charAt(0) === '-' ? 'del'
        : l.slice(0, 2) === '@@' ? 'hunk' : 'ctx';
      add(pre, h('span', k, l));
    });
  }
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

  // One job's details, from its blocks.
  function block(parent, b) {
    if (b.h !== undefined) {
      var head = add(parent, h('h3', '', b.h.text));
      if (b.h.muted) { text(head, ' '); add(head, h('span', 'muted', b.h.muted)); }
    } else if (b.top !== undefined) {
      var top = add(parent, h('div', 'job-top'));
      cells(top, b.top.left);
      add(top, h('span', 'muted right', b.top.right));
    } else if (b.n !== undefined) {
      cells(add(parent, h('p', 'note')), b.n);
    } else if (b.pre !== undefined) {
      add(parent, h('pre', b.pre.c, b.pre.text));
    } else if (b.say !== undefined) {
      add(parent, h('p', b.say.c, data.texts[b.say.key]));
    } else if (b.facts !== undefined) {
      var grid = add(parent, h('div', 'facts'));
      b.facts.forEach(function (value, i) {
        var d = add(grid, h('div'));
        add(d, h('span', '', data.fact_names[i]));
        cell(add(d, h('span')), value);
      });
    } else if (b.ul !== undefined) {
      var ul = add(parent, h('ul', b.ul.c));
      b.ul.items.forEach(function (item) {
        var li = add(ul, h('li', item.c || ''));
        cells(li, item.line);
        if (item.pre !== undefined) add(li, h('pre', 'excerpt', item.pre));
      });
    } else if (b.links !== undefined) {
      var list = add(parent, h('ul', 'links'));
      b.links.paths.forEach(function (path) {
        var a = add(add(list, h('li')), h('a', 'mono', path));
        // A relative path to a file beside the log: the base the runtime
        // encoded, then each segment encoded here, so never a scheme.
        var href = b.links.base + path.split('/').map(encodeURIComponent).join('/');
        if (!/^[a-z][a-z0-9+.-]*:/i.test(href)) a.setAttribute('href', href);
      });
    } else if (b.diff !== undefined) {
      diff(parent, b.diff);
    } else if (b.time !== undefined) {
      // Where the time went, as the viewer draws it.
      var total = b.time.reduce(function (s, p) { return s + p[1]; }, 0);
      var bar = add(parent, h('div', 'timebar'));
      var legend = add(parent, h('div', 'timelegend muted'));
      b.time.forEach(function (p, i) {
        var seg = add(bar, h('span', 'seg s' + i));
        seg.style.width = (100 * p[1] / total).toFixed(2) + '%';
        seg.title = p[0];
        var item = add(legend, h('span'));
        add(item, h('i', 'seg s' + i));
        text(item, p[0] + ' ' + (p[1] < 1000 ? p[1] + ' ms' : (p[1] / 1000).toFixed(1) + ' s'));
      });
    } else if (b.steps !== undefined) {
      var ol = add(parent, h('ol', 'trajectory'));
      b.steps.forEach(function (g) { step(ol, g); });
    }
  }
  // g: [ok, at, kind, text] for a phase, [ok, at, kind, text, [attempt,
  // step], lines] for a model step; a line: [ok, kind, text, fields,
  // diff, observation].
  function step(ol, g) {
    var li = add(ol, h('li', g.length > 4 ? '' : 'phase'));
    var head = li;
    if (g.length > 4) {
      var details = add(li, h('details', 'step'));
      head = add(details, h('summary'));
      // The lines are built when the step is first opened.
      details.addEventListener('toggle', function () {
        if (!details.open || details.dataset.built) return;
        details.dataset.built = '1';
        var lines = add(details, h('div', 'lines'));
        g[5].forEach(function (l) {
          var d = add(lines, h('div'));
          d.appendChild(mark(l[0]));
          text(d, ' ');
          add(d, h('span', 'mono', l[1]));
          text(d, ' ' + l[2]);
          if (l[3] !== undefined && l[3] !== null) add(lines, h('div', 'mono muted', l[3]));
          if (l[4] !== undefined && l[4] !== null) diff(lines, l[4]);
          if (l[5] !== undefined && l[5] !== null) {
            add(lines, h('div', 'muted', 'observation'));
            add(lines, h('pre', 'obs', l[5]));
          }
        });
      });
    }
    head.appendChild(mark(g[0]));
    text(head, ' ');
    var when = g.length > 4 ? 'attempt ' + g[4][0] + ' \u00b7 step ' + g[4][1] + ' \u00b7 ' + g[1] : g[1];
    add(head, h('span', 'muted', when));
    text(head, ' ');
    add(head, h('span', 'mono', g[2]));
    text(head, ' ' + g[3]);
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
    var box = add(detail, h('section', 'job'));
    d.forEach(function (b) { block(box, b); });
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
