// The viewer's page. Every value comes from the viewer's JSON and reaches
// the document as text (text nodes, attribute values set one by one):
// nothing from a log, a model or a workspace is ever parsed as markup.
'use strict';

(function () {
  const POLL_MS = 1000;
  // Rows drawn at first; the rest on request (a table of thousands of
  // rows takes seconds to lay out and paint).
  const ROWS_SHOWN = 300;
  const ui = {
    route: null, // {page, ...}
    version: 0, // of what is shown
    list: null,
    filters: { run: '', state: '', kind: '', family: '', provider: '', integrity: '', text: '' },
    sort: { key: 'index', dir: 1 },
    limit: ROWS_SHOWN,
    timer: null,
    failures: 0,
  };

  // Keep the token out of the address bar and history: the cookie the
  // first load set carries it from now on.
  if (location.search.includes('token=')) {
    history.replaceState(null, '', '/' + location.hash);
  }

  // ---- building the DOM from data, as text ----

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else if (key === 'data') {
        for (const [k, v] of Object.entries(value)) node.dataset[k] = String(v);
      } else node.setAttribute(key, String(value));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function badge(text, cls) {
    return el('span', { class: 'badge ' + (cls || text) }, text);
  }

  // A link to an artifact the server named: only ever one of its own paths.
  function artifactLink(href, text) {
    if (typeof href !== 'string' || !href.startsWith('/runs/')) return text;
    return el('a', { href: href, class: 'artifact' }, text);
  }

  function jobHref(run, instance) {
    return jobPath(run, instance) + listQuery();
  }

  function jobPath(run, instance) {
    return '#/job/' + run + '/' + encodeURIComponent(instance);
  }

  // ---- formatting ----

  function ms(value) {
    if (value === null || value === undefined) return '-';
    if (value < 1000) return value + ' ms';
    const s = value / 1000;
    if (s < 60) return s.toFixed(1) + ' s';
    const m = Math.floor(s / 60);
    if (m < 60) return m + ' m ' + Math.round(s - 60 * m) + ' s';
    return Math.floor(m / 60) + ' h ' + (m % 60) + ' m';
  }

  function count(n) {
    if (n === null || n === undefined) return '-';
    if (n >= 1e6) return (n / 1e6).toFixed(1) + 'M';
    if (n >= 1e4) return (n / 1e3).toFixed(1) + 'k';
    return String(n);
  }

  function usd(c) {
    if (c === null || c === undefined) return '-';
    return '$' + (c >= 100 ? c.toFixed(2) : c.toFixed(4));
  }

  function pct(p) {
    return p === null || p === undefined ? '-' : (100 * p).toFixed(1) + '%';
  }

  function bytes(n) {
    if (n === null || n === undefined) return '';
    if (n < 1024) return n + ' B';
    if (n < 1 << 20) return (n / 1024).toFixed(1) + ' KiB';
    return (n / (1 << 20)).toFixed(1) + ' MiB';
  }

  // ---- fetching, live ----

  async function getJson(path) {
    const response = await fetch(path, { credentials: 'same-origin', cache: 'no-store' });
    if (!response.ok) throw new Error(response.status + ' ' + (await response.text()).trim());
    return response.json();
  }

  function live(text, bad) {
    const node = document.getElementById('live');
    node.textContent = text;
    node.className = bad ? 'error' : 'muted';
  }

  function schedule() {
    clearTimeout(ui.timer);
    ui.timer = setTimeout(poll, POLL_MS);
  }

  async function poll() {
    const route = ui.route;
    try {
      const url = endpoint(route) + (endpoint(route).includes('?') ? '&' : '?') + 'since=' + ui.version;
      const data = await getJson(url);
      if (route !== ui.route) return; // the page changed meanwhile
      ui.failures = 0;
      live('live · updated ' + new Date().toLocaleTimeString());
      if (!data.unchanged) {
        ui.version = data.version;
        show(route, data);
      }
    } catch (e) {
      ui.failures += 1;
      live('cannot reach the viewer: ' + e.message, true);
    }
    if (route === ui.route) schedule();
  }

  function endpoint(route) {
    if (route.page === 'job') {
      return '/api/job?run=' + route.run + '&id=' + encodeURIComponent(route.id);
    }
    if (route.page === 'compare') {
      const q = new URLSearchParams();
      for (const k of ['kind', 'a', 'b']) if (route.params.get(k)) q.set(k, route.params.get(k));
      return '/api/compare?' + q.toString();
    }
    return '/api/jobs';
  }

  function parseRoute() {
    const hash = location.hash.replace(/^#/, '') || '/';
    const [path, query] = hash.split('?');
    const parts = path.split('/').filter(Boolean);
    const params = new URLSearchParams(query || '');
    if (parts[0] === 'job' && parts.length >= 3) {
      return { page: 'job', run: Number(parts[1]), id: decodeURIComponent(parts.slice(2).join('/')), params };
    }
    if (parts[0] === 'compare') return { page: 'compare', params };
    return { page: 'jobs', params };
  }

  // The filters and the sort live in the address (`#/?state=failed&sort=wall_ms`),
  // so a reload, a link or the back button keeps them.
  function readListState(params) {
    for (const k of Object.keys(ui.filters)) ui.filters[k] = params.get(k) || '';
    const key = params.get('sort');
    ui.sort = key ? { key, dir: params.get('dir') === 'desc' ? -1 : 1 } : { key: 'index', dir: 1 };
  }

  function listQuery() {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(ui.filters)) if (v) q.set(k, v);
    if (ui.sort.key !== 'index') {
      q.set('sort', ui.sort.key);
      if (ui.sort.dir < 0) q.set('dir', 'desc');
    }
    const text = q.toString();
    return text ? '?' + text : '';
  }

  function writeListState() {
    history.replaceState(null, '', '/#/' + listQuery());
  }

  function navigate() {
    ui.route = parseRoute();
    if (ui.route.page !== 'compare') readListState(ui.route.params);
    ui.version = 0;
    const main = clear(document.getElementById('main'));
    main.append(el('p', { class: 'muted' }, 'loading…'));
    document.body.dataset.page = ui.route.page;
    poll();
  }

  function show(route, data) {
    if (route.page === 'job') showJob(data);
    else if (route.page === 'compare') showCompare(data);
    else showJobs(data);
    document.body.dataset.version = String(data.version);
  }

  // ---- the jobs page ----

  const COLUMNS = [
    { key: 'instance', label: 'instance', cls: 'id' },
    { key: 'run', label: 'data dir', many: true },
    { key: 'family', label: 'family' },
    { key: 'provider', label: 'provider' },
    { key: 'state', label: 'state', cls: 'state' },
    { key: 'failure_kind', label: 'failure kind' },
    { key: 'cause', label: 'cause / now', cls: 'cause' },
    { key: 'attempts', label: 'attempts', cls: 'num' },
    { key: 'steps', label: 'steps', cls: 'num' },
    { key: 'tokens', label: 'tokens', cls: 'num' },
    { key: 'cost_usd', label: 'cost', cls: 'num' },
    { key: 'wall_ms', label: 'wall', cls: 'num' },
    { key: 'tests', label: 'tests' },
    { key: 'signals', label: 'integrity', cls: 'num' },
  ];

  function sortValue(job, key) {
    if (key === 'tokens') return job.input_tokens + job.output_tokens;
    if (key === 'index') return job.index;
    const v = job[key];
    return v === null || v === undefined ? '' : v;
  }

  function matches(job, f) {
    if (f.run !== '' && String(job.run) !== f.run) return false;
    if (f.state === 'finished' && !['succeeded', 'failed', 'cancelled'].includes(job.state)) return false;
    if (f.state && f.state !== 'finished' && job.state !== f.state) return false;
    if (f.kind === 'model' && (!job.failure_kind || job.infrastructure)) return false;
    if (f.kind === 'infrastructure' && !job.infrastructure) return false;
    if (f.kind && !['model', 'infrastructure'].includes(f.kind) && job.failure_kind !== f.kind) return false;
    if (f.family && job.family !== f.family) return false;
    if (f.provider && (job.provider || '') !== f.provider) return false;
    if (f.integrity === 'clean' && (job.signals > 0 || job.forged)) return false;
    if (f.integrity === 'signals' && job.signals === 0) return false;
    if (f.integrity === 'forged' && !job.forged) return false;
    if (f.text) {
      const hay = [job.instance, job.family, job.provider, job.cause, job.failure_kind].join(' ').toLowerCase();
      if (!hay.includes(f.text.toLowerCase())) return false;
    }
    return true;
  }

  function selectFilter(name, label, values, labels) {
    const select = el('select', {
      name: name,
      onchange: (e) => { ui.filters[name] = e.target.value; writeListState(); renderJobRows(); },
    });
    fillSelect(select, values, labels, ui.filters[name]);
    return el('label', null, label, select);
  }

  function fillSelect(select, values, labels, chosen) {
    clear(select);
    select.append(el('option', { value: '' }, 'any'));
    values.forEach((v, i) => {
      select.append(el('option', { value: v, selected: v === chosen }, labels ? labels[i] : v));
    });
    select.value = values.includes(chosen) ? chosen : '';
  }

  function distinct(jobs, key) {
    return [...new Set(jobs.map((j) => j[key]).filter((v) => v !== null && v !== undefined))].sort();
  }

  function showJobs(data) {
    performance.mark('jobs-data');
    data.jobs.forEach((j, i) => { j.index = i; });
    ui.list = data;
    const main = document.getElementById('main');
    if (!main.querySelector('#jobs')) {
      clear(main);
      main.append(
        el('h1', null, 'Runs and jobs'),
        el('div', { id: 'runs' }),
        el('div', { id: 'filters', class: 'filters' }),
        el('p', { id: 'shown', class: 'muted' }),
        el('table', { id: 'jobs' }, el('thead'), el('tbody')),
        el('p', null, el('button', {
          id: 'more', type: 'button', hidden: true,
          onclick: () => { ui.limit += 1000; renderJobRows(); },
        }, 'show more')),
      );
    }
    renderRuns(data);
    renderFilters(data);
    renderJobRows();
    performance.mark('jobs-rendered');
    // The frame after next: the rows have been painted.
    requestAnimationFrame(() => requestAnimationFrame(() => performance.mark('jobs-painted')));
  }

  function renderRuns(data) {
    const table = el('table', { class: 'runs' },
      el('thead', null, el('tr', null,
        ['data dir', 'events', 'jobs', 'succeeded', 'failed', 'cancelled', 'running', 'queued', 'pass rate', 'cost', 'elapsed']
          .map((h, i) => el('th', { class: i ? 'num' : null }, h)))),
      el('tbody', null, data.runs.map((r) => el('tr', { data: { run: r.index } },
        el('td', { class: 'id' }, r.label, r.error ? el('div', { class: 'error' }, r.error) : null),
        el('td', { class: 'num' }, r.events),
        el('td', { class: 'num' }, r.tally.jobs),
        el('td', { class: 'num' }, r.tally.succeeded),
        el('td', { class: 'num' }, r.tally.failed),
        el('td', { class: 'num' }, r.tally.cancelled),
        el('td', { class: 'num' }, r.running),
        el('td', { class: 'num' }, r.queued),
        el('td', { class: 'num' }, pct(r.tally.pass_rate)),
        el('td', { class: 'num' }, usd(r.tally.cost_usd)),
        el('td', { class: 'num' }, ms(r.tally.elapsed_ms)),
      ))));
    const breakdown = data.runs.flatMap((r) => [['family', r.families], ['provider', r.providers]]
      .filter(([, groups]) => groups.length > 1)
      .map(([what, groups]) => groupTable(data.runs.length > 1 ? r.label + ' · ' + what : what, what, groups)));
    const passes = data.runs.filter((r) => r.pass_at_k).map((r) => passTable(r, data.runs.length > 1));
    document.getElementById('runs').replaceChildren(table, ...breakdown, ...passes);
  }

  // pass@1 and pass@k per provider, with their bootstrap intervals.
  function passTable(r, named) {
    const p = r.pass_at_k;
    const ci = (c) => c ? ' [' + pct(c.low) + ', ' + pct(c.high) + ']' : '';
    return el('table', { class: 'groups passk' },
      el('thead', null, el('tr', null,
        [(named ? r.label + ' · ' : '') + 'provider', 'jobs', 'pass@1', 'pass@' + p.k].map((h, i) => el('th', { class: i ? 'num' : null }, h)))),
      el('tbody', null, p.providers.map((q) => el('tr', { data: { provider: q.provider || '' } },
        el('td', { class: 'id' }, q.provider || '(the manifests\' own)'),
        el('td', { class: 'num' }, q.groups),
        el('td', { class: 'num' }, pct(q.pass_at_1) + ci(q.pass_at_1_ci)),
        el('td', { class: 'num' }, pct(q.pass_at_k) + ci(q.pass_at_k_ci))))));
  }

  // Pass rate per family or provider, a bar with its 95% interval.
  function groupTable(title, what, groups) {
    return el('table', { class: 'groups', data: { by: what } },
      el('thead', null, el('tr', null,
        [title, 'jobs', 'succeeded', 'failed', 'pass rate', '', 'cost'].map((h, i) => el('th', { class: i && i !== 5 ? 'num' : null }, h)))),
      el('tbody', null, groups.map((g) => el('tr', { data: { group: g.name } },
        el('td', { class: 'id' }, g.name),
        el('td', { class: 'num' }, g.tally.jobs),
        el('td', { class: 'num' }, g.tally.succeeded),
        el('td', { class: 'num' }, g.tally.failed),
        el('td', { class: 'num' }, pct(g.tally.pass_rate)),
        el('td', { class: 'rate' }, rateBar(g.tally.pass_rate, g.tally.pass_rate_ci)),
        el('td', { class: 'num' }, usd(g.tally.cost_usd))))));
  }

  function rateBar(rate, ci) {
    const bar = el('div', { class: 'rate-bar', title: ci ? 'pass rate, 95% interval ' + pct(ci.low) + '–' + pct(ci.high) : 'pass rate' });
    if (rate === null || rate === undefined) return bar;
    const fill = el('span', { class: 'fill' });
    fill.style.width = (100 * rate).toFixed(1) + '%'; // CSSOM: allowed by the page's policy
    bar.append(fill);
    if (ci) {
      const whisker = el('span', { class: 'ci' });
      whisker.style.left = (100 * ci.low).toFixed(1) + '%';
      whisker.style.width = (100 * (ci.high - ci.low)).toFixed(1) + '%';
      bar.append(whisker);
    }
    return bar;
  }

  function renderFilters(data) {
    const box = document.getElementById('filters');
    const kinds = distinct(data.jobs, 'failure_kind');
    const runs = data.runs.map((r) => String(r.index));
    const controls = [
      data.runs.length > 1 ? selectFilter('run', 'data dir', runs, data.runs.map((r) => r.label)) : null,
      selectFilter('state', 'state', ['queued', 'running', 'finished', 'succeeded', 'failed', 'cancelled']),
      selectFilter('kind', 'failure kind', ['model', 'infrastructure', ...kinds],
        ['any model failure', 'any infrastructure failure', ...kinds]),
      selectFilter('family', 'family', distinct(data.jobs, 'family')),
      selectFilter('provider', 'provider', distinct(data.jobs, 'provider')),
      selectFilter('integrity', 'integrity', ['clean', 'signals', 'forged'],
        ['no signal', 'any tamper signal', 'canary forged']),
    ];
    const focused = document.activeElement && document.activeElement.name;
    if (!box.querySelector('input')) {
      box.append(el('label', null, 'search', el('input', {
        type: 'search', name: 'text', placeholder: 'id, family, cause…', value: ui.filters.text,
        oninput: (e) => { ui.filters.text = e.target.value; writeListState(); renderJobRows(); },
      })));
    }
    for (const old of [...box.querySelectorAll('label')].filter((l) => !l.querySelector('input'))) old.remove();
    const search = box.querySelector('label');
    for (const control of controls) if (control) box.insertBefore(control, search);
    if (focused) {
      const again = box.querySelector('[name="' + focused + '"]');
      if (again) again.focus();
    }
  }

  function renderJobRows() {
    const data = ui.list;
    if (!data) return;
    const many = data.runs.length > 1;
    const columns = COLUMNS.filter((c) => !c.many || many);
    const table = document.getElementById('jobs');
    const head = el('tr', null, columns.map((c) => {
      const sorted = ui.sort.key === c.key ? (ui.sort.dir > 0 ? ' sorted-asc' : ' sorted-desc') : '';
      return el('th', {
        class: 'sortable' + (c.cls === 'num' ? ' num' : '') + sorted,
        data: { key: c.key },
        onclick: () => {
          ui.sort = { key: c.key, dir: ui.sort.key === c.key ? -ui.sort.dir : 1 };
          writeListState();
          renderJobRows();
        },
      }, c.label);
    }));
    table.tHead.replaceChildren(head);
    const rows = orderedRows(data);
    const body = document.createElement('tbody');
    for (const j of rows.slice(0, ui.limit)) body.append(jobRow(j, columns, data));
    table.tBodies[0].replaceWith(body);
    const matching = rows.length === data.jobs.length
      ? data.jobs.length + ' jobs'
      : rows.length + ' of ' + data.jobs.length + ' jobs';
    const hidden = rows.length - Math.min(rows.length, ui.limit);
    document.getElementById('shown').textContent =
      matching + (hidden > 0 ? ', the first ' + ui.limit + ' shown' : '');
    const more = document.getElementById('more');
    more.hidden = hidden === 0;
    more.textContent = 'show ' + Math.min(hidden, 1000) + ' more';
  }

  // The jobs the filters keep, in the chosen order: the list, and the
  // order prev/next follow on a job's page.
  function orderedRows(data) {
    const rows = data.jobs.filter((j) => matches(j, ui.filters));
    const { key, dir } = ui.sort;
    rows.sort((a, b) => {
      const x = sortValue(a, key);
      const y = sortValue(b, key);
      if (x < y) return -dir;
      if (x > y) return dir;
      return a.index - b.index;
    });
    return rows;
  }

  function jobRow(j, columns, data) {
    const cells = {
      instance: () => el('a', { href: jobHref(j.run, j.instance) }, j.instance),
      run: () => data.runs[j.run] ? shortLabel(data.runs[j.run].label) : j.run,
      family: () => j.family,
      provider: () => j.provider || '-',
      state: () => [j.state, j.waiting ? el('div', { class: 'muted' }, 'waiting for provider: ' + j.waiting) : null],
      failure_kind: () => j.failure_kind ? badge(j.failure_kind, 'failed') : '',
      // Two lines at most; the whole cause on hover and on the job's page.
      cause: () => j.state === 'running'
        ? el('div', { class: 'clip muted', title: j.last || '' }, j.last || '')
        : el('div', { class: 'clip', title: j.cause || '' }, j.cause || ''),
      attempts: () => j.attempts + '/' + j.max_attempts,
      steps: () => j.steps,
      tokens: () => count(j.input_tokens) + ' / ' + count(j.output_tokens),
      cost_usd: () => usd(j.cost_usd),
      wall_ms: () => ms(j.wall_ms),
      tests: () => (j.tests || '').replace(/ (\d)/g, '\u00a0$1'),
      signals: () => j.forged ? badge('forged', 'failed') : (j.signals ? badge(j.signals + ' signals', 'signal') : ''),
    };
    return el('tr', { class: j.state, data: { instance: j.instance, state: j.state, run: j.run } },
      columns.map((c) => el('td', { class: c.cls || null }, cells[c.key]())));
  }

  // A data dir's last two path components (`runs/sweep-a`), the whole
  // path on hover.
  function shortLabel(label) {
    const parts = String(label).split('/').filter(Boolean);
    const short = parts.length > 2 ? '…/' + parts.slice(-2).join('/') : String(label);
    return el('span', { title: String(label) }, short);
  }

  // ---- one job's page ----

  function facts(pairs) {
    return el('div', { class: 'facts' }, pairs.map(([k, v]) => el('div', null, el('span', null, k), el('span', null, v))));
  }

  // A job's page: where it sits among the jobs (prev/next), its state as
  // the batch runs, its details drawn by the renderer report.html uses
  // (detail.js, from the blocks the runtime built: the model's text whole
  // here), then every attempt's files.
  function showJob(page) {
    const r = page.result;
    const row = page.row;
    const main = clear(document.getElementById('main'));
    main.append(
      el('p', { class: 'jobnav' }, el('a', { href: '#/' + listQuery() }, '← all jobs'),
        el('span', { id: 'prevnext' })),
      el('h1', { id: 'job-title' }, r.instance, ' ', badge(row.state), ' ',
        r.failure_kind ? badge(r.failure_kind, 'failed') : null),
      el('p', { class: 'muted' }, 'data dir ' + page.run_label + ' · wall time ' + ms(row.wall_ms)
        + (page.prompt_file ? ' · prompt from ' + page.prompt_file : '')),
    );
    neighbours(page.run, r.instance);
    if (row.state === 'running' && row.last) {
      main.append(el('p', { class: 'muted', id: 'now' }, 'now: ' + row.last));
    }
    const detail = window.JobDetail.render(main, page.detail.blocks, page.detail);
    detail.id = 'detail';

    main.append(el('h2', null, 'Attempts and files'));
    const history = el('ul', null, r.attempt_history.map((a) =>
      el('li', null, 'attempt ' + a.attempt + ': ' + a.status + (a.failure_kind ? ' (' + a.failure_kind + ')' : ''))));
    main.append(history);
    for (const a of page.attempts) {
      main.append(el('div', null, el('strong', null, 'runs/' + r.instance + '/' + a.attempt + '/'),
        a.files.length === 0 ? el('span', { class: 'muted' }, ' nothing kept') :
          el('ul', null, a.files.map((f) => el('li', null, artifactLink(f.href, f.name),
            f.bytes !== null ? el('span', { class: 'muted' }, ' ' + bytes(f.bytes)) : null)))));
    }
  }

  // Links to the jobs before and after this one in the list's order (its
  // filters and sort, from the address); the list is fetched when this
  // page was opened on its own.
  async function neighbours(run, instance) {
    if (!ui.list) {
      try {
        const data = await getJson('/api/jobs');
        data.jobs.forEach((j, i) => { j.index = i; });
        ui.list = data;
      } catch (e) {
        return;
      }
    }
    const rows = orderedRows(ui.list);
    const at = rows.findIndex((j) => j.run === run && j.instance === instance);
    const box = document.getElementById('prevnext');
    if (!box || at < 0) return;
    const link = (j, id, text) => j ? el('a', { id, href: jobHref(j.run, j.instance) }, text) : null;
    box.replaceChildren(el('span', null, ' · ', link(rows[at - 1], 'prev', '← previous'),
      rows[at - 1] && rows[at + 1] ? ' · ' : null, link(rows[at + 1], 'next', 'next →'),
      el('span', { class: 'muted' }, ' (' + (at + 1) + ' of ' + rows.length + ')')));
  }

  // ---- comparison ----

  function showCompare(view) {
    const main = clear(document.getElementById('main'));
    const params = new URLSearchParams();
    // Which rows: every job, those both sides ran (the default), or those
    // whose outcomes differ; kept in the address like the sides.
    const shown = ui.route.params.get('rows') || 'both';
    const go = (kind, a, b, rows) => {
      params.set('kind', kind);
      if (a) params.set('a', a); else params.delete('a');
      if (b) params.set('b', b); else params.delete('b');
      if (rows && rows !== 'both') params.set('rows', rows); else params.delete('rows');
      location.hash = '#/compare?' + params.toString();
    };
    const choices = view.kind === 'run' ? view.runs.map((_, i) => String(i)) : view.providers;
    const label = (c) => view.kind === 'run' ? view.runs[Number(c)] : c;
    const side = (name, chosen) => {
      const select = el('select', {
        name: name,
        onchange: (e) => name === 'a'
          ? go(view.kind, e.target.value, view.b, shown)
          : go(view.kind, view.a, e.target.value, shown),
      }, choices.map((c) => el('option', { value: c, selected: c === chosen }, label(c))));
      return el('label', null, name.toUpperCase(), select);
    };
    main.append(
      el('h1', null, 'Comparison'),
      el('div', { class: 'filters' },
        el('label', null, 'compare', el('select', { name: 'kind', onchange: (e) => go(e.target.value) },
          el('option', { value: 'provider', selected: view.kind === 'provider' }, 'two providers'),
          el('option', { value: 'run', selected: view.kind === 'run' }, 'two data dirs'))),
        side('a', view.a), side('b', view.b),
        el('label', null, 'show', el('select', { name: 'rows', onchange: (e) => go(view.kind, view.a, view.b, e.target.value) },
          [['both', 'jobs both ran'], ['differ', 'where they differ'], ['all', 'every job']].map(([v, t]) =>
            el('option', { value: v, selected: v === shown }, t))))),
    );
    if (!view.comparison) {
      main.append(el('p', { class: 'muted' }, view.kind === 'run'
        ? 'Give `view` two data dirs to compare runs.'
        : 'No two providers to compare: a sweep (`batch --provider A --provider B`) has them.'));
      return;
    }
    const c = view.comparison;
    const a = label(view.a);
    const b = label(view.b);
    const ran = (x) => x.finished + x.pending > 0;
    const rows = view.rows.filter((row) => shown === 'all'
      || (shown === 'both' && ran(row.a) && ran(row.b))
      || (shown === 'differ' && ran(row.a) && ran(row.b) && (row.winner === 'a' || row.winner === 'b')));
    main.append(
      el('p', { class: 'summary-line', id: 'verdict' }, el('span', { class: 'count' }, verdictText(view.verdict, view, a, b))),
      facts([
        ['jobs both finished', c.jobs],
        [a + ' wins', c.a_wins],
        [b + ' wins', c.b_wins],
        ['ties', c.ties],
        [a + ' pass@1', pct(c.a_pass_at_1)],
        [b + ' pass@1', pct(c.b_pass_at_1)],
        ['difference', pct(c.difference) + (c.difference_ci ? ' [' + pct(c.difference_ci.low) + ', ' + pct(c.difference_ci.high) + ']' : '')],
        ['p (exact sign test)', c.p_value.toFixed(4)],
      ]),
      el('h2', null, 'Outcomes per job'),
      el('p', { class: 'muted', id: 'matrix-shown' }, rows.length + ' of ' + view.rows.length + ' jobs shown'),
      el('table', { id: 'matrix' },
        el('thead', null, el('tr', null, el('th', null, 'job'), el('th', null, a), el('th', null, b), el('th', null, 'won by'))),
        el('tbody', null, rows.map((row) => el('tr', { data: { key: row.key, winner: row.winner || '' } },
          el('td', { class: 'id' }, row.key),
          el('td', null, cell(row.a)),
          el('td', null, cell(row.b)),
          el('td', null, row.winner === 'a' ? badge(a, 'a-win') : row.winner === 'b' ? badge(b, 'a-win') : row.winner === 'tie' ? badge('tie') : '-'))))),
    );
  }

  // The server's verdict names data dirs by index: say their labels.
  function verdictText(text, view, a, b) {
    if (!text || view.kind !== 'run') return text || '';
    if (text === view.a + ' better') return a + ' better';
    if (text === view.b + ' better') return b + ' better';
    return text;
  }

  function cell(c) {
    if (c.finished + c.pending === 0) return el('span', { class: 'muted' }, 'not run');
    const parts = [c.succeeded + '/' + c.finished + ' succeeded'];
    if (c.pending) parts.push(c.pending + ' pending');
    return [parts.join(', '),
      c.failure_kinds.length ? el('div', { class: 'muted' }, c.failure_kinds.join(', ')) : null,
      el('div', null, c.instances.map(([run, instance], i) => [i ? ' ' : '', el('a', { href: jobHref(run, instance) }, '#' + (i + 1))]))];
  }

  window.addEventListener('hashchange', navigate);
  navigate();
})();
