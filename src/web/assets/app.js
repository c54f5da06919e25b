// agentpane's page: the list of agent panes, live; a pane's last answer; Allow/Deny and a
// reply box. Everything from the server is untrusted text: it reaches the page through
// textContent only, never as markup.
'use strict';

const token = new URLSearchParams(location.hash.slice(1)).get('t') || '';
const $ = (id) => document.getElementById(id);
const state = { rows: [], receivedAt: 0, current: null, shown: null, stopped: false };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function authFail(message) {
  state.stopped = true;
  $('auth-error').textContent = message;
  $('auth-error').hidden = false;
  $('panes').replaceChildren();
  $('detail').hidden = true;
  $('live').textContent = 'offline';
  $('live').className = 'off';
}

async function api(path, options) {
  const opts = options || {};
  const headers = { Authorization: 'Bearer ' + token };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const resp = await fetch(path, {
    method: opts.method || 'GET',
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    cache: 'no-store',
    credentials: 'omit',
    signal: opts.signal,
  });
  if (resp.status === 401 || resp.status === 429) {
    const j = await resp.json().catch(() => ({}));
    authFail(resp.status === 429
      ? 'Too many wrong secrets from this device: wait a minute, then open the URL `agentpane web --url` prints.'
      : 'This page needs its secret: open the exact URL `agentpane web` (or `agentpane web --url`) printed. ' + (j.error || ''));
    throw new Error('auth');
  }
  return resp;
}

function age(secs) {
  if (secs === null || secs === undefined) return '';
  const s = Math.max(0, Math.round(secs + (Date.now() - state.receivedAt) / 1000));
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm';
  if (s < 86400) return Math.floor(s / 3600) + 'h';
  return Math.floor(s / 86400) + 'd';
}

function renderList() {
  const list = $('panes');
  const items = state.rows.map((p) => {
    const li = el('li', 'pane');
    li.dataset.id = p.id;
    li.dataset.state = p.state;
    li.append(el('span', 'glyph', p.glyph));
    li.append(el('span', 'agent', (p.agent || '?') + (p.host ? ' @ ' + p.host : '')));
    li.append(el('span', 'state', p.state + (p.seen && p.state === 'your-turn' ? ' (seen)' : '')));
    li.append(el('span', 'target', p.target));
    const meta = [age(p.age_secs)];
    if (p.context_percent !== null && p.context_percent !== undefined) meta.push('ctx ' + Math.round(p.context_percent) + '%');
    if (p.cost_usd !== null && p.cost_usd !== undefined) meta.push('$' + p.cost_usd.toFixed(2));
    li.append(el('span', 'meta', meta.filter(Boolean).join(' · ')));
    li.append(el('span', 'folder', p.folder || ''));
    const reason = [p.reason, p.request && p.request.summary].filter(Boolean).join(' · ');
    li.append(el('span', 'reason', reason));
    li.addEventListener('click', () => openDetail(p.id));
    return li;
  });
  list.replaceChildren(...items);
}

function onPanes(data) {
  state.rows = data.panes || [];
  state.receivedAt = Date.now();
  const notice = $('notice');
  const notes = [];
  if (data.watcher === false) notes.push('No watcher serves this tmux server yet: the list fills once it runs (`agentpane watch`).');
  for (const d of data.down || []) notes.push(d.host + ' is unreachable: ' + d.reason);
  notice.textContent = notes.join(' ');
  notice.hidden = notes.length === 0;
  renderList();
  if (state.current) {
    const row = state.rows.find((r) => r.id === state.current);
    const fp = row && row.request ? row.request.fingerprint : null;
    if (!row || row.state !== state.currentState || fp !== state.shown) openDetail(state.current, true);
  }
}

async function stream() {
  while (!state.stopped) {
    try {
      const resp = await api('/api/events');
      if (!resp.ok || !resp.body) throw new Error('events ' + resp.status);
      $('live').textContent = 'live';
      $('live').className = 'on';
      const reader = resp.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const chunk = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let event = 'message';
          const data = [];
          for (const line of chunk.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
          }
          if (event === 'panes') onPanes(JSON.parse(data.join('\n')));
        }
      }
    } catch (e) {
      if (state.stopped) return;
    }
    $('live').textContent = 'reconnecting';
    $('live').className = 'off';
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function renderBlocks(blocks) {
  const out = blocks.map((b) => {
    if (b.kind === 'code') {
      const pre = el('pre');
      const code = el('code', b.lang ? 'lang-' + b.lang.replace(/[^a-z0-9_-]/gi, '') : '', b.text);
      pre.append(code);
      return pre;
    }
    if (b.kind === 'heading') return el('h3', null, b.text);
    if (b.kind === 'list') {
      const ul = el('ul');
      for (const item of b.text.split('\n')) ul.append(el('li', null, item));
      return ul;
    }
    return el('p', null, b.text);
  });
  if (out.length === 0) out.push(el('p', 'dim', '(no answer yet)'));
  $('answer').replaceChildren(...out);
}

async function openDetail(id, refresh) {
  state.current = id;
  if (!refresh) {
    $('result').textContent = '';
    $('result').className = '';
  }
  $('panes').hidden = true;
  $('detail').hidden = false;
  let d;
  try {
    const resp = await api('/api/pane/' + encodeURIComponent(id));
    d = await resp.json();
    if (!resp.ok) {
      showResult(false, d.error || 'cannot read this pane');
      return;
    }
  } catch (e) {
    return;
  }
  if (state.current !== id) return;
  state.currentState = d.state;
  $('detail-title').textContent = (d.agent || '?') + ' — ' + (d.host ? d.host + ':' : '') + d.target;
  $('detail-state').textContent = d.state + (d.reason ? ' · ' + d.reason : '') + (d.folder ? ' · ' + d.folder : '');
  const r = d.request;
  state.shown = r ? r.fingerprint : null;
  $('request-box').hidden = !r;
  $('request').textContent = r ? (r.tool + ': ' + (r.text || r.summary)) : '';
  $('always').hidden = !(r && r.always);
  $('always-confirm').hidden = true;
  $('reply-box').hidden = !d.can_reply;
  renderBlocks(d.answer || []);
}

function showResult(ok, text) {
  $('result').textContent = text;
  $('result').className = ok ? 'ok' : 'bad';
}

async function post(path, body, buttons) {
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const resp = await api(path, { method: 'POST', body });
    const j = await resp.json().catch(() => ({}));
    return { status: resp.status, body: j };
  } finally {
    buttons.forEach((b) => { b.disabled = false; });
  }
}

async function decide(decision, always) {
  const id = state.current;
  if (!id || !state.shown) return;
  const buttons = ['allow', 'deny', 'always', 'confirm-always'].map($);
  const r = await post('/api/pane/' + encodeURIComponent(id) + '/answer',
    { decision, always, confirm: always, fingerprint: state.shown }, buttons);
  $('always-confirm').hidden = true;
  if (r.body.ok) showResult(true, decision === 'allow' ? (always ? 'Allowed, not asked again.' : 'Allowed once.') : 'Denied.');
  else showResult(false, 'Refused, nothing typed: ' + (r.body.refused || r.body.error || r.status));
}

async function sendReply() {
  const id = state.current;
  const text = $('reply').value;
  if (!id || !text.trim()) return;
  const r = await post('/api/pane/' + encodeURIComponent(id) + '/reply', { text }, [$('send')]);
  if (r.body.ok) {
    $('reply').value = '';
    showResult(true, r.body.queued ? 'Queued: ' + r.body.why : 'Sent.');
  } else showResult(false, 'Not sent: ' + (r.body.refused || r.body.error || r.status));
}

function closeDetail() {
  state.current = null;
  state.shown = null;
  $('detail').hidden = true;
  $('panes').hidden = false;
}

document.addEventListener('DOMContentLoaded', () => {
  $('back').addEventListener('click', closeDetail);
  $('allow').addEventListener('click', () => decide('allow', false));
  $('deny').addEventListener('click', () => decide('deny', false));
  $('always').addEventListener('click', () => { $('always-confirm').hidden = false; });
  $('cancel-always').addEventListener('click', () => { $('always-confirm').hidden = true; });
  $('confirm-always').addEventListener('click', () => decide('allow', true));
  $('send').addEventListener('click', sendReply);
  if (!token) {
    authFail('This page needs its secret: open the exact URL `agentpane web` (or `agentpane web --url`) printed.');
    return;
  }
  setInterval(() => { if (!state.current && state.rows.length) renderList(); }, 10000);
  stream();
});
