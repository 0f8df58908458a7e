// One job's details, drawn from the blocks the runtime built for it
// (report/html_detail.rs): the one renderer of report.html and the live
// viewer's job page. It builds every element with createElement and sets
// text with textContent only, so text from jobs (ids, test output,
// patches, the model's messages) stays text. It loads nothing.
(function (root) {
  'use strict';

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
  function mark(ok, why) {
    var m = h('span', ok ? 'mark ok' : 'mark bad', ok ? '\u2713' : '\u2717' + (why ? ' ' + why : ''));
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
    return pre;
  }
  function ms(v) { return v < 1000 ? v + ' ms' : (v / 1000).toFixed(1) + ' s'; }

  // b: one block; ctx: { texts, fact_names, prompt, steps }.
  function block(parent, b, ctx) {
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
      var said = add(parent, h('p', b.say.c, ctx.texts[b.say.key]));
      said.dataset.say = b.say.key;
    } else if (b.facts !== undefined) {
      var grid = add(parent, h('div', 'facts'));
      b.facts.forEach(function (value, i) {
        var d = add(grid, h('div'));
        add(d, h('span', '', ctx.fact_names[i]));
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
        // A path to a file beside the log: the base the runtime encoded,
        // then each segment encoded here, so never a scheme.
        var href = b.links.base + path.split('/').map(encodeURIComponent).join('/');
        if (!/^[a-z][a-z0-9+.-]*:/i.test(href)) a.setAttribute('href', href);
      });
    } else if (b.diff !== undefined) {
      diff(parent, b.diff);
    } else if (b.time !== undefined) {
      // Where the job's time went, as one bar.
      var total = b.time.reduce(function (s, p) { return s + p[1]; }, 0);
      var bar = add(parent, h('div', 'timebar'));
      var legend = add(parent, h('div', 'timelegend muted'));
      b.time.forEach(function (p, i) {
        var seg = add(bar, h('span', 'seg s' + i));
        seg.style.width = (100 * p[1] / total).toFixed(2) + '%';
        seg.title = p[0] + ' ' + ms(p[1]);
        var item = add(legend, h('span'));
        add(item, h('i', 'seg s' + i));
        text(item, p[0] + ' ' + ms(p[1]));
      });
    } else if (b.steps !== undefined) {
      var ol = add(parent, h('ol', 'trajectory'));
      b.steps.forEach(function (g, i) { step(ol, g, i, b.steps, ctx); });
    }
  }

  // g: [ok, at, kind, text] for a phase; [ok, at, kind, text, [attempt,
  // step], lines, call] for a model step, a line being [ok, kind, text]
  // and the call { failed, figures, fields, reply, obs, diff }.
  function step(ol, g, index, all, ctx) {
    var model = g.length > 4;
    var li = add(ol, h('li', model ? 'step' : 'phase'));
    var head = li;
    var call = model ? g[6] || {} : {};
    if (model) {
      var details = add(li, h('details', 'step'));
      head = add(details, h('summary'));
      // The rest is built when the step is first opened.
      details.addEventListener('toggle', function () {
        if (!details.open || details.dataset.built) return;
        details.dataset.built = '1';
        var lines = add(details, h('div', 'lines'));
        if (call.figures) add(lines, h('div', 'muted', 'model call: ' + call.figures));
        if (call.reply !== undefined) modelCall(lines, g, index, all, ctx);
        g[5].forEach(function (l) {
          var d = add(lines, h('div'));
          d.appendChild(mark(l[0]));
          text(d, ' ');
          add(d, h('span', 'mono', l[1]));
          text(d, ' ' + l[2]);
        });
        if (call.fields !== undefined) add(lines, h('div', 'mono muted', call.fields));
        if (call.diff !== undefined) diff(lines, call.diff);
        if (call.obs !== undefined) {
          add(lines, h('div', 'muted', 'observation'));
          add(lines, h('pre', 'obs', call.obs));
        }
      });
    }
    var when = model ? 'attempt ' + g[4][0] + ' \u00b7 step ' + g[4][1] + ' \u00b7 ' + g[1] : g[1];
    add(head, h('span', 'muted', when));
    text(head, ' ');
    // The kind, unless the headline starts with it.
    if (String(g[3]).indexOf(g[2]) !== 0) {
      add(head, h('span', 'mono kind', g[2]));
      text(head, ' ');
    }
    add(head, h('span', 'what', g[3]));
    text(head, ' ');
    head.appendChild(mark(g[0], call.failed));
  }

  // What the model was sent at this step (the task prompt, then each
  // earlier step of its attempt: the reply and what came back) and what
  // it replied, opened on demand.
  function modelCall(parent, g, index, all, ctx) {
    var box = add(parent, h('details', 'call'));
    add(box, h('summary', '', 'model call: input and output'));
    box.addEventListener('toggle', function () {
      if (!box.open || box.dataset.built) return;
      box.dataset.built = '1';
      var input = [['user', ctx.prompt || '']];
      for (var i = 0; i < index; i++) {
        var e = all[i];
        if (e.length <= 4 || e[4][0] !== g[4][0] || !e[6] || e[6].reply === undefined) continue;
        input.push(['assistant', e[6].reply]);
        if (e[6].obs !== undefined) input.push(['runtime', e[6].obs]);
      }
      add(box, h('div', 'muted', 'input: ' + input.length + ' messages'));
      input.forEach(function (m) {
        var d = add(box, h('div', 'msg'));
        add(d, h('span', 'role', m[0]));
        add(d, h('pre', 'obs', m[1]));
      });
      add(box, h('div', 'muted', 'output'));
      var out = add(box, h('div', 'msg'));
      add(out, h('span', 'role', 'assistant'));
      add(out, h('pre', 'obs reply', g[6].reply));
    });
  }

  // Draws `blocks` into a new section of `parent`; dict holds the texts
  // and the fact names every job shares.
  function render(parent, blocks, dict) {
    var box = add(parent, h('section', 'job'));
    var prompt = null;
    blocks.forEach(function (b) { if (b.pre !== undefined && b.pre.c === 'prompt') prompt = b.pre.text; });
    var ctx = { texts: dict.texts, fact_names: dict.fact_names, prompt: prompt };
    blocks.forEach(function (b) { block(box, b, ctx); });
    return box;
  }

  root.JobDetail = { render: render, h: h, add: add, text: text, cell: cell, label: label };
})(window);
