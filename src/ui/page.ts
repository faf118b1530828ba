/**
 * The live view's page and its script, served by server.ts. Plain HTML, CSS and one small script with no
 * framework and nothing fetched from anywhere but this server: the page must work offline and in locked-down
 * browsers, and its Content-Security-Policy forbids everything else.
 *
 * The script builds every piece of text with textContent (records hold whatever the peers sent); the only
 * markup it inserts is the sequence diagram, which the server renders with the html view's escaping renderer.
 */
import { esc } from '../trace/html.js';

/** The page. */
export function uiPage(options: { logDir: string; version: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcptap live</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>mcptap live</h1>
<p class="meta">Following <code>${esc(options.logDir)}</code> · mcptap ${esc(options.version)} · <span id="status" data-state="connecting">connecting…</span></p>
<p id="left-out" class="meta" hidden></p>
</header>
<nav id="filters" aria-label="Filter">
<label>method <input id="filter-method" type="search" placeholder="tools/call" autocomplete="off"></label>
<label>tool <input id="filter-tool" type="search" placeholder="get_weather" autocomplete="off"></label>
<label>direction <select id="filter-dir"><option value="">any</option><option value="c2s">→ client to server</option><option value="s2c">← server to client</option></select></label>
<label>kind <select id="filter-kind"><option value="">any</option></select></label>
<label><input id="filter-errors" type="checkbox"> errors only</label>
<span id="shown"></span>
</nav>
<main>
<section id="sessions-section"><h2>Sessions</h2><table id="sessions"><thead><tr><th>label</th><th>role</th><th>channel</th><th>server / models</th><th>tools</th><th>records</th></tr></thead><tbody></tbody></table></section>
<section id="round-trips-section"><h2>Tool round trips</h2><table id="round-trips"><thead><tr><th>turn</th><th>tool</th><th>arguments</th><th>model</th><th>MCP call</th><th>tool time</th><th>fed back</th><th>result</th></tr></thead><tbody></tbody></table><ul id="findings"></ul></section>
<section id="diagram-section"><h2>Sequence diagram</h2><p id="diagram-note" class="hint"></p><div id="diagram" class="svg-wrap"><p class="hint">Waiting for traffic…</p></div></section>
<section id="timeline-section"><h2>Timeline</h2><p class="hint">Every record of every log, merged by time. Click one to see its JSON.</p>
<div class="split"><div class="scroll"><table id="timeline"><thead><tr><th>time</th><th>label</th><th>dir</th><th>kind</th><th>what</th><th>message</th></tr></thead><tbody></tbody></table></div>
<aside id="detail"><h3>Record</h3><pre id="json">Click a record.</pre><h3>Frame</h3><pre id="frame"></pre></aside></div></section>
</main>
<script src="/ui.js"></script>
</body>
</html>
`;
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;padding:12px 20px;color:#1d1f24;background:#fbfbfd}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:20px 0 6px;border-bottom:1px solid #dde;padding-bottom:3px}h3{font-size:12px;margin:6px 0 2px;color:#667;text-transform:uppercase}
.meta,.hint{color:#667;margin:2px 0 8px}
#status[data-state=live]{color:#2e7d32}#status[data-state=down]{color:#c0392b}
nav{position:sticky;top:0;background:#fbfbfd;padding:8px 0;border-bottom:1px solid #dde;display:flex;gap:14px;flex-wrap:wrap;align-items:center;z-index:1}
nav input[type=search]{width:130px}#shown{color:#667}
table{border-collapse:collapse;width:100%;font-size:12.5px}th,td{border:1px solid #e3e5ec;padding:3px 6px;text-align:left;vertical-align:top}th{background:#eef0f5;position:sticky;top:0}
tr.rec{cursor:pointer}tr.rec:hover td{background:#f1f5ff}tr.rec.selected td{background:#dfe8ff}tr.err td{color:#b3261e}tr.warn td{background:#fff6e5}
td.t,td.w{font:12px ui-monospace,Menlo,Consolas,monospace;white-space:nowrap}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f2f3f7;border:1px solid #e1e3ea;padding:8px;overflow:auto;max-height:60vh;white-space:pre-wrap;word-break:break-word;margin:0}
.split{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:12px}.scroll{max-height:70vh;overflow:auto;border:1px solid #dde}
.svg-wrap{overflow-x:auto;background:#fff;border:1px solid #dde;padding:8px;max-height:70vh}
#findings li.warn{color:#b35c00}
svg.sequence text{font:12px system-ui,sans-serif;fill:#1d1f24}
svg.sequence .participant rect{fill:#e8eefc;stroke:#4a6fb5;stroke-width:1.5}
svg.sequence .participant-user rect{fill:#eef8ee;stroke:#3f8f4f}svg.sequence .participant-llm rect{fill:#f6ecfb;stroke:#8a4fb5}
svg.sequence .participant-mcp rect{fill:#fff3e0;stroke:#c07a1f}svg.sequence .participant text{font-weight:600}
svg.sequence .lifeline{stroke:#aab;stroke-width:1;stroke-dasharray:3 4}svg.sequence .arrow{stroke:#334;stroke-width:1.5}
svg.sequence .error .arrow{stroke:#c0392b}svg.sequence .error text{fill:#c0392b}svg.sequence .note rect{fill:#fffbd6;stroke:#c9b458}
`;

/**
 * The page's script. Kept as plain ES2020 in a string (no bundler, no template literals inside) so the server can
 * hand it out as is.
 */
export const UI_SCRIPT = String.raw`(function () {
  'use strict';
  var MAX_ROWS = 5000;
  var records = [];
  var kinds = {};
  var selected = null;
  var lastShownTime = -Infinity;
  var $ = function (id) { return document.getElementById(id); };
  var tbody = $('timeline').tBodies[0];

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function pad(n, w) { n = String(n); while (n.length < w) n = '0' + n; return n; }
  function clock(ms) { var d = new Date(ms); return pad(d.getHours(), 2) + ':' + pad(d.getMinutes(), 2) + ':' + pad(d.getSeconds(), 2) + '.' + pad(d.getMilliseconds(), 3); }

  function isError(r) {
    return (r.level || 30) >= 40 || r.kind === 'llm-error' || r.kind === 'invalid' || !!r.error || r.isError === true ||
      (typeof r.status === 'number' && r.status >= 400);
  }
  function what(r) {
    // An eviction (log format v6) lists the requests it let go.
    if (r.kind === 'evicted') return r.requests.length + (r.requests.length === 1 ? ' request: ' : ' requests: ') + methods(r);
    if (r.method && r.tool) return r.method + ' ' + r.tool;
    if (r.method && r.path) return r.method + ' ' + r.path;
    if (r.method) return r.method;
    if (r.endpoint) return r.endpoint + (r.model ? ' ' + r.model : '');
    if (r.kind === 'lifecycle') return r.event;
    if (r.kind === 'sse') return r.event || (r.comment !== undefined ? ': comment' : 'event');
    return '';
  }
  function methods(r) {
    if (r.kind !== 'evicted') return String(r.method || r.endpoint || '');
    var seen = [];
    r.requests.forEach(function (e) { if (seen.indexOf(e.method) === -1) seen.push(e.method); });
    return seen.join(', ');
  }
  function tools(r) {
    var list = [];
    if (r.tool) list.push(r.tool);
    (r.requests || []).forEach(function (e) { if (e.tool && list.indexOf(e.tool) === -1) list.push(e.tool); });
    (r.toolCalls || []).forEach(function (c) { list.push(c.name); });
    (r.toolResults || []).forEach(function (c) { if (c.name) list.push(c.name); });
    return list;
  }
  function matches(r) {
    var m = $('filter-method').value.trim().toLowerCase();
    var t = $('filter-tool').value.trim().toLowerCase();
    var d = $('filter-dir').value;
    var k = $('filter-kind').value;
    if (m && methods(r).toLowerCase().indexOf(m) === -1) return false;
    if (t && !tools(r).some(function (x) { return String(x).toLowerCase().indexOf(t) !== -1; })) return false;
    if (d && r.dir !== d) return false;
    if (k && r.kind !== k) return false;
    if ($('filter-errors').checked && !isError(r)) return false;
    return true;
  }

  function row(r, i) {
    var tr = el('tr', undefined, 'rec' + (isError(r) ? ' err' : ''));
    tr.dataset.i = String(i);
    tr.dataset.session = r.session;
    tr.dataset.kind = r.kind;
    if (r.method) tr.dataset.method = r.method;
    if (r.tool) tr.dataset.tool = r.tool;
    if (r.dir) tr.dataset.dir = r.dir;
    tr.appendChild(el('td', clock(r.time), 't'));
    tr.appendChild(el('td', r.label));
    tr.appendChild(el('td', r.dir === 'c2s' ? '\u2192' : r.dir === 's2c' ? '\u2190' : ''));
    tr.appendChild(el('td', r.kind));
    tr.appendChild(el('td', what(r), 'w'));
    tr.appendChild(el('td', r.msg));
    if (selected === r) tr.classList.add('selected');
    return tr;
  }

  function renderAll() {
    tbody.textContent = '';
    var shown = [];
    for (var i = 0; i < records.length; i++) if (matches(records[i])) shown.push(i);
    var from = Math.max(0, shown.length - MAX_ROWS);
    var frag = document.createDocumentFragment();
    for (var j = from; j < shown.length; j++) frag.appendChild(row(records[shown[j]], shown[j]));
    tbody.appendChild(frag);
    lastShownTime = records.length ? records[records.length - 1].time : -Infinity;
    $('shown').textContent = shown.length + ' of ' + records.length + ' records' + (from > 0 ? ' (last ' + MAX_ROWS + ' shown)' : '');
  }

  /** Keep records, and the kinds they bring to the filter; false when one came before the last kept. */
  function keep(list) {
    var inOrder = true;
    list.forEach(function (r) {
      if (!kinds[r.kind]) {
        kinds[r.kind] = true;
        var o = el('option', r.kind);
        o.value = r.kind;
        $('filter-kind').appendChild(o);
      }
      if (records.length && r.time < records[records.length - 1].time) inOrder = false;
      records.push(r);
    });
    return inOrder;
  }
  function byTime(a, b) { return a.time - b.time; }

  function addRecords(list) {
    if (!keep(list)) {
      records.sort(byTime);
      renderAll();
      return;
    }
    var frag = document.createDocumentFragment();
    for (var i = records.length - list.length; i < records.length; i++) if (matches(records[i])) frag.appendChild(row(records[i], i));
    tbody.appendChild(frag);
    // Counted once: each look at tbody.rows.length walks the rows again once one is deleted.
    for (var excess = tbody.rows.length - MAX_ROWS; excess > 0; excess--) tbody.removeChild(tbody.firstChild);
    var count = 0;
    for (var k = 0; k < records.length; k++) if (matches(records[k])) count++;
    $('shown').textContent = count + ' of ' + records.length + ' records';
  }

  function frameOf(r) {
    var text = typeof r.raw === 'string' && !r.rawEncoding ? r.raw : typeof r.body === 'string' && !r.bodyEncoding ? r.body : null;
    if (text === null) return '';
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }

  tbody.addEventListener('click', function (ev) {
    var tr = ev.target.closest ? ev.target.closest('tr.rec') : null;
    if (!tr) return;
    var r = records[Number(tr.dataset.i)];
    if (!r) return;
    selected = r;
    Array.prototype.forEach.call(tbody.querySelectorAll('tr.selected'), function (x) { x.classList.remove('selected'); });
    tr.classList.add('selected');
    $('json').textContent = JSON.stringify(r, null, 2);
    $('frame').textContent = frameOf(r);
  });
  ['filter-method', 'filter-tool'].forEach(function (id) { $(id).addEventListener('input', renderAll); });
  ['filter-dir', 'filter-kind', 'filter-errors'].forEach(function (id) { $(id).addEventListener('change', renderAll); });

  function cell(tr, text) { tr.appendChild(el('td', text)); }
  function ms(v) { return v === undefined || v === null ? '\u2013' : Math.round(v) + ' ms'; }
  function renderTrace(m) {
    var s = $('sessions').tBodies[0];
    s.textContent = '';
    (m.sessions || []).forEach(function (x) {
      var tr = el('tr');
      var who = x.server ? ((x.server.name || '') + ' ' + (x.server.version || '')) : (x.models || []).join(', ');
      [x.label, x.role, x.channel, who.trim(), (x.tools || []).join(', '), x.records].forEach(function (v) { cell(tr, v); });
      s.appendChild(tr);
    });
    var t = $('round-trips').tBodies[0];
    t.textContent = '';
    (m.roundTrips || []).forEach(function (r) {
      var tr = el('tr', undefined, 'trip' + (r.diagnostics && r.diagnostics.length ? ' warn' : ''));
      tr.dataset.tool = r.tool;
      cell(tr, r.turn === null ? '\u2013' : r.turn);
      cell(tr, r.tool);
      cell(tr, JSON.stringify(r.arguments));
      cell(tr, r.llm ? r.llm.channel + ' ' + (r.llm.model || '') : '\u2013');
      cell(tr, r.mcp ? r.mcp.server + ' #' + r.mcp.id + (r.mcp.isError ? ' (error)' : '') : 'not in logs');
      cell(tr, ms(r.timing && r.timing.toolMs));
      cell(tr, r.fedBack ? 'yes' : 'no');
      cell(tr, r.result || '');
      t.appendChild(tr);
    });
    var f = $('findings');
    f.textContent = '';
    (m.diagnostics || []).forEach(function (d) { f.appendChild(el('li', d.code + ': ' + d.msg, d.level)); });
    if (m.error) f.appendChild(el('li', m.error, 'warn'));
    // Rendered by the server with the html view's renderer, which escapes every text it draws.
    if (typeof m.svg === 'string') $('diagram').innerHTML = m.svg;
    $('diagram-note').textContent = m.earlierSteps > 0 ? 'The diagram draws the newest ' + m.drawnSteps + ' arrows; the ' + m.earlierSteps + ' before them are left out (mcptap view --format timeline shows every one).' : '';
  }

  function status(state, text) { var s = $('status'); s.dataset.state = state; s.textContent = text; }

  var delay = 500;
  function connect() {
    var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
    ws.onopen = function () { delay = 500; };
    ws.onmessage = function (ev) {
      var m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      if (m.type === 'hello') {
        // A (re)connection replays everything: start from scratch.
        records = [];
        selected = null;
        renderAll();
        status('loading', 'loading ' + m.records + ' past records…');
        var left = $('left-out');
        left.hidden = !(m.leftOutMb > 0);
        left.textContent = m.leftOutMb > 0 ? 'The older ' + m.leftOutMb + ' MB of the logs are not shown: the live view holds their newest ' + m.maxMb + ' MB (mcptap view reads them all).' : '';
      } else if (m.type === 'records' && m.backfill) {
        // The past is drawn once, when all of it is here: drawing each batch as it came took seconds.
        keep(m.records);
      } else if (m.type === 'records') {
        addRecords(m.records);
        status('live', 'live \u00b7 ' + records.length + ' records');
      } else if (m.type === 'backfill-done') {
        records.sort(byTime);
        renderAll();
        status('live', 'live \u00b7 ' + records.length + ' records');
      } else if (m.type === 'trace') {
        renderTrace(m);
      }
    };
    ws.onclose = function () {
      status('down', 'disconnected; retrying\u2026');
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 5000);
    };
  }
  connect();
})();
`;
