'use strict';
// Floe's web UI: one page over the views API. No framework, no CDN: this file is all there is.

// The API token lives for this tab only (sessionStorage), never in localStorage, where earlier
// versions kept it and where it would outlive the session.
localStorage.removeItem('floe.token');
// ranges: the time range typed into each card's range form, by view, kept across the cards'
// redraws (every 2 s) so that a redraw never loses what is being typed.
const state = { views: [], token: sessionStorage.getItem('floe.token') || null, editing: null, ranges: {} };

const NEEDS_TOKEN = 'this Floe needs its API token: enter it in the field at the top';

async function api(method, path, body) {
  // Every request that changes something is JSON, even without a body: the server refuses others.
  const headers = { 'Content-Type': 'application/json' };
  if (state.token) headers.Authorization = 'Bearer ' + state.token;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let json = {};
  try { json = text ? JSON.parse(text) : {}; } catch (e) { json = { error: text }; }
  if (response.status === 401) {
    document.getElementById('token').classList.add('needed');
    throw Object.assign(new Error(NEEDS_TOKEN), { status: 401, body: json });
  }
  if (!response.ok) throw Object.assign(new Error(json.error || response.statusText), { status: response.status, body: json });
  return json;
}

function setToken(value) {
  state.token = value.trim() || null;
  if (state.token) sessionStorage.setItem('floe.token', state.token);
  else sessionStorage.removeItem('floe.token');
  document.getElementById('token').classList.remove('needed');
  load();
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function ago(ms) {
  if (!ms) return 'never';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  return Math.round(s / 3600) + ' h ago';
}

function duration(ms) {
  if (ms === null || ms === undefined) return '–';
  return ms < 1000 ? ms + ' ms' : (ms / 1000).toFixed(ms < 10000 ? 1 : 0) + ' s';
}

// The lag of recent refreshes, with the view's staleness objective drawn across (a refresh whose lag
// is above the line ended a stale spell).
function lagChart(recent, objective) {
  const points = recent.filter(r => r.lagMs !== null && r.lagMs !== undefined).slice(-30);
  const svgNS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(svgNS, 'svg');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('viewBox', '0 0 300 46');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('data-testid', 'lag-chart');
  const axis = document.createElementNS(svgNS, 'line');
  axis.setAttribute('class', 'axis');
  axis.setAttribute('x1', '0'); axis.setAttribute('x2', '300'); axis.setAttribute('y1', '45'); axis.setAttribute('y2', '45');
  svg.append(axis);
  if (points.length > 0) {
    const max = Math.max(...points.map(p => p.lagMs), objective || 0, 1);
    if (objective) {
      const y = (44 - 40 * objective / max).toFixed(1);
      const line = document.createElementNS(svgNS, 'line');
      line.setAttribute('class', 'objective');
      line.setAttribute('data-testid', 'lag-objective');
      line.setAttribute('x1', '0'); line.setAttribute('x2', '300'); line.setAttribute('y1', y); line.setAttribute('y2', y);
      svg.append(line);
    }
    const step = points.length > 1 ? 300 / (points.length - 1) : 0;
    const line = document.createElementNS(svgNS, 'polyline');
    line.setAttribute('points', points.map((p, i) => `${(i * step).toFixed(1)},${(44 - 40 * p.lagMs / max).toFixed(1)}`).join(' '));
    svg.append(line);
    const title = document.createElementNS(svgNS, 'title');
    title.textContent = `lag, last ${points.length} refreshes (max ${duration(Math.max(...points.map(p => p.lagMs)))}`
      + (objective ? `, objective ${duration(objective)})` : ')');
    svg.append(title);
  }
  return svg;
}

function card(view, detail) {
  const last = view.lastRefresh;
  const recent = detail ? detail.recentRefreshes : [];
  return el('article', { class: 'card', 'data-testid': 'view-card', 'data-view': view.name },
    el('h3', {}, el('span', { 'data-testid': 'view-name' }, view.name),
      el('span', { class: 'badge ' + view.status, 'data-testid': 'view-status' }, view.status),
      view.staleness > 0 ? el('span', { class: 'badge staleness' + (view.staleness > view.objective ? ' over' : ''), 'data-testid': 'view-staleness',
        title: `the target has not reflected a source commit for ${duration(view.staleness)}; objective ${duration(view.objective)}` },
        `${duration(view.staleness)} behind`) : null),
    el('div', { class: 'flow' }, `${view.source || '?'} → ${view.target}`),
    el('dl', { class: 'facts' },
      el('dt', {}, 'granularity'), el('dd', {}, view.granularity || '–'),
      el('dt', {}, 'last refresh'), el('dd', { 'data-testid': 'last-refresh' },
        last ? `${last.mode.toLowerCase()} ${ago(last.finishedAt)}, ${duration(last.durationMs)}, ${last.rowsWritten} rows` : 'none yet'),
      el('dt', {}, 'lag'), el('dd', { 'data-testid': 'lag' }, duration(view.lagMs)),
      el('dt', {}, 'staleness'), el('dd', { 'data-testid': 'staleness' },
        view.staleness === undefined ? '–' : `${duration(view.staleness)} (objective ${duration(view.objective)})`),
      // Snapshot ids arrive as strings: they need all 64 bits, a JavaScript number holds 53.
      el('dt', {}, 'source snapshot'), el('dd', { 'data-testid': 'source-snapshot' }, view.watermark ?? '–'),
      view.pendingRanges ? [el('dt', {}, 'pending'), el('dd', {}, view.pendingRanges < 0 ? 'every bucket' : view.pendingRanges + ' bucket ranges')] : null,
      view.progress ? [el('dt', {}, 'progress'), el('dd', { 'data-testid': 'progress' }, view.progress)] : null,
      last && last.reason ? [el('dt', {}, 'reason'), el('dd', {}, last.reason)] : null),
    view.lastError ? el('div', { class: 'error-box', 'data-testid': 'view-error' }, view.lastError) : null,
    lagChart(recent, view.objective),
    recent.length ? el('ol', { class: 'recent', 'data-testid': 'recent-refreshes' },
      recent.slice(-5).reverse().map(r => el('li', {},
        `${r.mode.toLowerCase()} ${ago(r.finishedAt)}` + (r.lagMs != null ? `, lag ${duration(r.lagMs)}` : '') + (r.error ? ` — ${r.error}` : '')))) : null,
    el('div', { class: 'actions' },
      el('button', { 'data-testid': 'refresh', onclick: () => refresh(view.name, false) }, 'Refresh'),
      el('button', { onclick: () => refresh(view.name, true) }, 'Full refresh'),
      el('button', { 'data-testid': 'edit', onclick: () => edit(view.name) }, 'Edit'),
      el('button', { class: 'danger', onclick: () => remove(view.name) }, 'Delete')),
    rangeForm(view.name));
}

// Recompute every bucket of a time range, even where no change is known (a repair after an outside
// write to the target): instants (2026-04-08T10:00:00Z) or dates (the day's start in the view's zone).
function rangeForm(name) {
  const typed = state.ranges[name] || { from: '', to: '' };
  const input = (key, placeholder) => el('input', {
    name: key, placeholder, value: typed[key], 'aria-label': key, 'data-testid': 'range-' + key,
    oninput: e => { state.ranges[name] = { ...(state.ranges[name] || { from: '', to: '' }), [key]: e.target.value }; },
  });
  return el('form', { class: 'range', 'data-testid': 'range-form', onsubmit: e => { e.preventDefault(); refreshRange(name); } },
    input('from', 'from 2026-04-08T10:00:00Z'), input('to', 'to (exclusive)'),
    el('button', { type: 'submit', 'data-testid': 'refresh-range' }, 'Refresh range'));
}

async function refreshRange(name) {
  const { from = '', to = '' } = state.ranges[name] || {};
  try {
    const query = new URLSearchParams({ from: from.trim(), to: to.trim() });
    await api('POST', `/api/views/${encodeURIComponent(name)}/refresh?${query}`);
    toast(`Refresh of ${name} from ${from.trim()} to ${to.trim()} requested`);
    setTimeout(load, 500);
  } catch (e) { toast(`Cannot refresh ${name}: ${e.message}`); }
}

async function load() {
  // A redraw would take the caret out of a range being typed: the cards wait for the next one.
  const typing = document.activeElement && document.activeElement.closest && document.activeElement.closest('form.range');
  if (!typing) try {
    const views = await api('GET', '/api/views');
    const details = await Promise.all(views.map(v => api('GET', '/api/views/' + encodeURIComponent(v.name)).catch(() => null)));
    state.views = views;
    const container = document.getElementById('views');
    container.replaceChildren(...views.map((v, i) => card(v, details[i])));
    document.getElementById('empty').hidden = views.length > 0;
  } catch (e) {
    // Starting up or unreachable: keep the last picture.
  }
  try {
    const ready = await fetch('/health/ready');
    const health = document.getElementById('health');
    health.textContent = ready.ok ? 'ready' : 'starting…';
    health.className = 'health' + (ready.ok ? ' ready' : '');
  } catch (e) { /* ignore */ }
}

function toast(message) {
  const node = document.getElementById('toast');
  node.textContent = message;
  node.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { node.hidden = true; }, 4000);
}

async function refresh(name, full) {
  try {
    await api('POST', `/api/views/${encodeURIComponent(name)}/refresh` + (full ? '?full=true' : ''));
    toast(`${full ? 'Full refresh' : 'Refresh'} of ${name} requested`);
    setTimeout(load, 500);
  } catch (e) { toast(`Cannot refresh ${name}: ${e.message}`); }
}

async function remove(name) {
  if (!confirm(`Delete view ${name}? Its target table is kept.`)) return;
  try {
    await api('DELETE', '/api/views/' + encodeURIComponent(name));
    toast(`View ${name} deleted`);
    setTimeout(load, 500);
  } catch (e) { toast(`Cannot delete ${name}: ${e.message}`); }
}

function form() { return document.getElementById('view-form'); }

function openEditor(definition) {
  const f = form();
  f.reset();
  state.editing = definition ? definition.name : null;
  document.getElementById('editor-title').textContent = definition ? `Edit ${definition.name}` : 'New view';
  f.name.readOnly = !!definition;
  if (definition) {
    f.name.value = definition.name;
    f.query.value = definition.query;
    f.target.value = definition.target;
    f.timezone.value = definition.timezone;
    f.linger.value = definition.refresh.linger;
    f.min_interval.value = definition.refresh.min_interval;
  }
  document.getElementById('form-error').textContent = '';
  validate();
  document.getElementById('editor').showModal();
}

async function edit(name) {
  try {
    const detail = await api('GET', '/api/views/' + encodeURIComponent(name));
    openEditor(detail.definition);
  } catch (e) { toast(`Cannot edit ${name}: ${e.message}`); }
}

function definitionFromForm() {
  const f = form();
  return {
    name: f.name.value.trim(),
    query: f.query.value,
    target: f.target.value.trim(),
    timezone: f.timezone.value.trim() || 'UTC',
    refresh: { linger: f.linger.value.trim() || '200ms', min_interval: f.min_interval.value.trim() || '0s' },
  };
}

let validateTimer = null;
function validate() {
  clearTimeout(validateTimer);
  validateTimer = setTimeout(async () => {
    const panel = document.getElementById('validation');
    const query = form().query.value;
    if (!query.trim()) { panel.textContent = ''; panel.className = 'validation'; return; }
    try {
      const result = await api('POST', '/api/validate', { query, timezone: form().timezone.value.trim() || 'UTC' });
      if (result.valid) {
        panel.className = 'validation ok';
        const columns = (result.columns || []).map(c => c.type ? `${c.name} ${c.type}` : c.name).join(', ');
        panel.textContent = `source ${result.source} · bucket date_trunc('${result.granularity}', ${result.bucketColumn}) AS ${result.bucketOutput}`
          + ` · keys ${(result.groupKeys || []).join(', ') || '(none)'} · columns ${columns}`
          + (result.deltaPath == null ? '' : result.deltaPath ? ' · appends folded in (delta path)' : ' · appends recompute their buckets')
          + (result.error ? ` · ${result.error}` : '');
      } else {
        panel.className = 'validation bad';
        panel.textContent = result.error;
      }
    } catch (e) {
      panel.className = 'validation bad';
      panel.textContent = e.message;
    }
  }, 250);
}

async function save(event) {
  event.preventDefault();
  const definition = definitionFromForm();
  const errorBox = document.getElementById('form-error');
  try {
    if (state.editing) await api('PUT', '/api/views/' + encodeURIComponent(state.editing), definition);
    else await api('POST', '/api/views', definition);
    document.getElementById('editor').close();
    toast(`View ${definition.name} saved`);
    setTimeout(load, 500);
  } catch (e) {
    errorBox.textContent = e.message;
  }
}

const tokenField = document.getElementById('token');
tokenField.value = state.token || '';
tokenField.addEventListener('change', () => setToken(tokenField.value));
document.getElementById('new-view').addEventListener('click', () => openEditor(null));
document.getElementById('cancel').addEventListener('click', () => document.getElementById('editor').close());
form().addEventListener('submit', save);
form().query.addEventListener('input', validate);
form().timezone.addEventListener('input', validate);
load();
setInterval(load, 2000);
