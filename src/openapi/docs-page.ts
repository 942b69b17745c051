/**
 * The interactive API reference at `GET /docs`: a small self-contained page of ours (no CDN, no
 * inline script: the CSP is `default-src 'self'`) that loads `/api/v1/openapi.json` and lists every
 * operation with its method, path, summary, security, parameters, request body and responses
 * (schemas expanded from their `$ref`s), with a filter box and a sidebar by tag.
 *
 * The script is kept as text here (no bundler step): plain ES2020, no template literals or backticks.
 */

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hostpanel API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/docs.css">
<script src="/docs/docs.js" defer></script>
</head>
<body>
<header class="top"><strong>hostpanel API</strong> <span id="version"></span>
<a href="/api/v1/openapi.json" class="raw">openapi.json</a>
<input id="filter" type="search" placeholder="Filter operations (path, method, summary, tag)…" aria-label="Filter operations"></header>
<div class="layout"><nav id="nav" aria-label="Operations"></nav><main id="main"><p>Loading the OpenAPI document…</p></main></div>
<noscript>This page needs JavaScript. The document itself is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</noscript>
</body>
</html>
`;

export const DOCS_CSS = `
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; background: #f6f7f9; }
code, pre, .path, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.top { position: sticky; top: 0; z-index: 2; display: flex; gap: 12px; align-items: center; padding: 10px 16px; background: #1d2330; color: #fff; }
.top .raw { color: #9cc3ff; }
.top input { margin-left: auto; width: min(420px, 50vw); padding: 6px 8px; border-radius: 4px; border: 0; }
.layout { display: flex; align-items: flex-start; }
nav { position: sticky; top: 48px; width: 290px; max-height: calc(100vh - 48px); overflow: auto; padding: 12px; border-right: 1px solid #dde1e7; background: #fff; }
nav h3 { margin: 12px 0 4px; font-size: 12px; text-transform: uppercase; color: #5b6475; }
nav a { display: block; padding: 2px 4px; color: #1d2330; text-decoration: none; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
nav a:hover { background: #eef2f8; }
main { flex: 1; min-width: 0; padding: 16px 24px 64px; max-width: 1100px; }
.intro { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 8px 20px; }
.intro table, .schema table, table.params { border-collapse: collapse; margin: 6px 0; }
.intro td, .intro th, table.params td, table.params th { border: 1px solid #dde1e7; padding: 3px 8px; text-align: left; vertical-align: top; }
h2.tag { margin: 28px 0 8px; border-bottom: 2px solid #dde1e7; }
.op { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; margin: 10px 0; }
.op > summary { cursor: pointer; padding: 8px 12px; display: flex; gap: 10px; align-items: center; list-style: none; }
.op > summary::-webkit-details-marker { display: none; }
.op .body { padding: 4px 16px 12px; border-top: 1px solid #eef0f3; }
.m { display: inline-block; min-width: 64px; text-align: center; padding: 1px 6px; border-radius: 3px; color: #fff; font-weight: 600; font-size: 12px; text-transform: uppercase; }
.m.get { background: #2f7d32; } .m.post { background: #1565c0; } .m.patch { background: #8e6a00; } .m.delete { background: #b3261e; } .m.put { background: #6a1b9a; }
.path { font-weight: 600; }
.sum { color: #5b6475; }
.lock { margin-left: auto; font-size: 12px; color: #5b6475; }
h4 { margin: 14px 0 4px; font-size: 13px; text-transform: uppercase; color: #5b6475; }
.resp { border-left: 3px solid #ccd; padding: 2px 10px; margin: 6px 0; }
.resp.ok { border-color: #2f7d32; } .resp.err { border-color: #b3261e; }
.status { font-weight: 700; }
.schema { margin: 2px 0 2px 14px; }
.schema details > summary { cursor: pointer; }
.prop { margin: 1px 0; }
.pn { font-weight: 600; }
.req { color: #b3261e; font-size: 11px; margin-left: 4px; }
.ty { color: #6a1b9a; }
.cons { color: #5b6475; font-size: 12px; }
.desc { color: #3b4352; }
.hidden { display: none !important; }
`;

export const DOCS_JS = String.raw`
(function () {
  'use strict';
  var doc = null;
  var el = function (id) { return document.getElementById(id); };
  var esc = function (s) {
    return String(s).replace(/[&<>"']/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]; });
  };
  // Minimal Markdown: headings, lists, tables, paragraphs, code spans, bold, italics.
  function inline(s) {
    return esc(s)
      .replace(/\x60([^\x60]+)\x60/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
      .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>');
  }
  function markdown(text) {
    var lines = String(text || '').split('\n');
    var out = [];
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      var h = /^(#{1,6})\s+(.*)$/.exec(line);
      if (h) { var lv = Math.min(6, h[1].length + 1); out.push('<h' + lv + '>' + inline(h[2]) + '</h' + lv + '>'); i++; continue; }
      if (/^\s*\|/.test(line)) {
        var rows = [];
        while (i < lines.length && /^\s*\|/.test(lines[i])) { rows.push(lines[i]); i++; }
        var cells = function (r) { return r.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map(function (c) { return c.trim(); }); };
        var html = '<table><thead><tr>' + cells(rows[0]).map(function (c) { return '<th>' + inline(c) + '</th>'; }).join('') + '</tr></thead><tbody>';
        rows.slice(2).forEach(function (r) { html += '<tr>' + cells(r).map(function (c) { return '<td>' + inline(c) + '</td>'; }).join('') + '</tr>'; });
        out.push(html + '</tbody></table>');
        continue;
      }
      if (/^\s*[-*]\s+/.test(line)) {
        var items = [];
        while (i < lines.length && (/^\s*[-*]\s+/.test(lines[i]) || (/^\s{2,}\S/.test(lines[i]) && items.length))) {
          if (/^\s*[-*]\s+/.test(lines[i])) items.push(lines[i].replace(/^\s*[-*]\s+/, ''));
          else items[items.length - 1] += ' ' + lines[i].trim();
          i++;
        }
        out.push('<ul>' + items.map(function (t) { return '<li>' + inline(t) + '</li>'; }).join('') + '</ul>');
        continue;
      }
      if (!line.trim()) { i++; continue; }
      var para = [];
      while (i < lines.length && lines[i].trim() && !/^(#{1,6}\s|\s*\||\s*[-*]\s)/.test(lines[i])) { para.push(lines[i]); i++; }
      out.push('<p>' + inline(para.join(' ')) + '</p>');
    }
    return out.join('\n');
  }
  function resolve(s) {
    var seen = 0;
    while (s && s.$ref && seen++ < 20) {
      var parts = s.$ref.replace(/^#\//, '').split('/');
      var cur = doc;
      parts.forEach(function (p) { cur = cur && cur[p.replace(/~1/g, '/').replace(/~0/g, '~')]; });
      s = cur;
    }
    return s || {};
  }
  function refName(s) { return s && s.$ref ? s.$ref.split('/').pop() : null; }
  function typeOf(s) {
    var r = resolve(s);
    var t = Array.isArray(r.type) ? r.type.join(' | ') : r.type;
    if (r.enum) t = (t || '') + ' enum';
    if (!t && (r.anyOf || r.oneOf)) t = (r.anyOf ? 'anyOf' : 'oneOf');
    if (!t && r.allOf) t = 'object';
    if (!t) t = 'any';
    if (t === 'array' || (Array.isArray(r.type) && r.type.indexOf('array') >= 0)) {
      var it = r.items || {};
      t = t.replace('array', 'array of ' + (refName(it) || typeOf(it)));
    }
    if (r.format) t += ' (' + r.format + ')';
    return t;
  }
  function constraints(r) {
    var c = [];
    if (r.enum) c.push('one of ' + r.enum.map(function (v) { return JSON.stringify(v); }).join(', '));
    if (r.minimum !== undefined) c.push('≥ ' + r.minimum);
    if (r.maximum !== undefined) c.push('≤ ' + r.maximum);
    if (r.minLength !== undefined) c.push('min length ' + r.minLength);
    if (r.maxLength !== undefined) c.push('max length ' + r.maxLength);
    if (r.pattern) c.push('pattern ' + r.pattern);
    if (r.default !== undefined) c.push('default ' + JSON.stringify(r.default));
    if (r.example !== undefined) c.push('example ' + JSON.stringify(r.example));
    return c.length ? ' <span class="cons">' + esc(c.join(' · ')) + '</span>' : '';
  }
  function properties(r) {
    var props = {};
    var req = [];
    (r.allOf || []).forEach(function (part) {
      var p = resolve(part);
      var sub = properties(p);
      Object.assign(props, sub.props);
      req = req.concat(sub.req);
    });
    Object.assign(props, r.properties || {});
    req = req.concat(r.required || []);
    return { props: props, req: req };
  }
  function schemaHtml(s, depth) {
    var r = resolve(s);
    if (depth > 6) return '<div class="schema cons">…</div>';
    var target = r;
    if ((r.type === 'array' || (Array.isArray(r.type) && r.type.indexOf('array') >= 0)) && r.items) target = resolve(r.items);
    var pr = properties(target);
    var keys = Object.keys(pr.props);
    var html = '';
    if (keys.length) {
      html += keys.map(function (k) {
        var p = pr.props[k];
        var rp = resolve(p);
        var name = refName(p);
        var head = '<span class="pn">' + esc(k) + '</span>' + (pr.req.indexOf(k) >= 0 ? '<span class="req">required</span>' : '') +
          ' <span class="ty">' + esc(name ? name + ' · ' + typeOf(p) : typeOf(p)) + '</span>' + constraints(rp) +
          (rp.description ? ' <span class="desc">— ' + inline(rp.description) + '</span>' : '');
        var inner = properties(rp.items ? resolve(rp.items) : rp).props;
        if (Object.keys(inner).length || (rp.additionalProperties && typeof rp.additionalProperties === 'object' && Object.keys(rp.additionalProperties).length)) {
          return '<div class="prop"><details' + (depth < 1 ? ' open' : '') + '><summary>' + head + '</summary>' + schemaHtml(p, depth + 1) + '</details></div>';
        }
        return '<div class="prop">' + head + '</div>';
      }).join('');
    }
    if (target.additionalProperties && typeof target.additionalProperties === 'object' && Object.keys(target.additionalProperties).length) {
      html += '<div class="prop"><span class="pn">{any key}</span> <span class="ty">' + esc(typeOf(target.additionalProperties)) + '</span></div>';
    }
    if (!html) html = '<span class="ty">' + esc(typeOf(s)) + '</span>' + constraints(r) + (r.description ? ' <span class="desc">— ' + inline(r.description) + '</span>' : '');
    return '<div class="schema">' + html + '</div>';
  }
  function content(c, collapsed) {
    if (!c) return '';
    return Object.keys(c).map(function (type) {
      var s = c[type].schema || {};
      var name = refName(s);
      var label = esc(type) + (name ? ' · ' + esc(name) : '');
      if (collapsed) return '<details><summary class="cons">' + label + '</summary>' + schemaHtml(s, 0) + '</details>';
      return '<div class="cons">' + label + '</div>' + schemaHtml(s, 0);
    }).join('');
  }
  function security(op) {
    var sec = op.security || doc.security || [];
    if (!sec.length) return 'no credentials';
    return sec.map(function (s) { return Object.keys(s).join(' + '); }).join(' or ') + (op['x-roles'] ? ' · ' + op['x-roles'].join(', ') + ' only' : '');
  }
  function opHtml(path, method, op, id) {
    var h = '<details class="op" id="' + esc(id) + '" data-search="' + esc([method, path, op.summary || '', (op.tags || []).join(' '), op.operationId || ''].join(' ').toLowerCase()) + '">';
    h += '<summary><span class="m ' + esc(method) + '">' + esc(method) + '</span><span class="path">' + esc(path) + '</span><span class="sum">' + esc(op.summary || '') + '</span><span class="lock">' + esc(security(op)) + '</span></summary><div class="body">';
    if (op.description) h += markdown(op.description);
    h += '<div class="cons">operationId: <code>' + esc(op.operationId || '') + '</code> · security: ' + esc(security(op)) + '</div>';
    var params = (op.parameters || []).map(resolve);
    if (params.length) {
      h += '<h4>Parameters</h4><table class="params"><tr><th>name</th><th>in</th><th>type</th><th>description</th></tr>';
      params.forEach(function (p) {
        var s = resolve(p.schema || {});
        h += '<tr><td class="mono">' + esc(p.name) + (p.required ? '<span class="req">required</span>' : '') + '</td><td>' + esc(p.in) + '</td><td class="ty">' + esc(typeOf(s)) + constraints(s) + '</td><td>' + inline(p.description || s.description || '') + '</td></tr>';
      });
      h += '</table>';
    }
    if (op.requestBody) {
      var rb = resolve(op.requestBody);
      h += '<h4>Request body' + (rb.required ? ' (required)' : '') + '</h4>' + (rb.description ? '<div>' + inline(rb.description) + '</div>' : '') + content(rb.content);
    }
    h += '<h4>Responses</h4>';
    Object.keys(op.responses || {}).forEach(function (status) {
      var r = resolve(op.responses[status]);
      var headers = Object.keys(r.headers || {});
      h += '<div class="resp ' + (status < '400' ? 'ok' : 'err') + '"><span class="status">' + esc(status) + '</span> ' + inline(r.description || '') +
        (headers.length ? '<div class="cons">headers: ' + esc(headers.join(', ')) + '</div>' : '') + content(r.content, status >= '400') + '</div>';
    });
    return h + '</div></details>';
  }
  function render() {
    el('version').textContent = 'v' + doc.info.version + ' · OpenAPI ' + doc.openapi;
    var byTag = {};
    var order = (doc.tags || []).map(function (t) { return t.name; });
    var n = 0;
    Object.keys(doc.paths).forEach(function (path) {
      Object.keys(doc.paths[path]).forEach(function (method) {
        if (['get', 'post', 'put', 'patch', 'delete', 'head', 'options'].indexOf(method) < 0) return;
        var op = doc.paths[path][method];
        var tag = (op.tags && op.tags[0]) || 'Other';
        if (order.indexOf(tag) < 0) order.push(tag);
        (byTag[tag] = byTag[tag] || []).push({ path: path, method: method, op: op, id: 'op-' + (op.operationId || ++n) });
      });
    });
    var main = '<section class="intro"><h1>' + esc(doc.info.title) + '</h1>' + markdown(doc.info.description) + '</section>';
    var nav = '<a href="#top">Introduction</a>';
    order.forEach(function (tag) {
      var ops = byTag[tag];
      if (!ops) return;
      var t = (doc.tags || []).filter(function (x) { return x.name === tag; })[0];
      main += '<section class="tagsec" data-tag="' + esc(tag) + '"><h2 class="tag">' + esc(tag) + '</h2>' + (t && t.description ? '<p>' + inline(t.description) + '</p>' : '');
      nav += '<div class="navsec" data-tag="' + esc(tag) + '"><h3>' + esc(tag) + '</h3>';
      ops.forEach(function (o) {
        main += opHtml(o.path, o.method, o.op, o.id);
        nav += '<a href="#' + esc(o.id) + '" data-op="' + esc(o.id) + '"><span class="m ' + esc(o.method) + '">' + esc(o.method) + '</span> ' + esc(o.path) + '</a>';
      });
      main += '</section>';
      nav += '</div>';
    });
    el('main').innerHTML = main;
    el('nav').innerHTML = nav;
    el('nav').addEventListener('click', function (e) {
      var a = e.target.closest('a[data-op]');
      if (a) { var d = el(a.getAttribute('data-op')); if (d) d.open = true; }
    });
    if (location.hash) { var d = document.querySelector(location.hash.replace(/[^#\w-]/g, '')); if (d && d.tagName === 'DETAILS') { d.open = true; d.scrollIntoView(); } }
  }
  function filter() {
    var q = el('filter').value.trim().toLowerCase();
    document.querySelectorAll('.op').forEach(function (d) {
      var hit = !q || d.getAttribute('data-search').indexOf(q) >= 0;
      d.classList.toggle('hidden', !hit);
      var a = document.querySelector('nav a[data-op="' + d.id + '"]');
      if (a) a.classList.toggle('hidden', !hit);
    });
    document.querySelectorAll('.tagsec, .navsec').forEach(function (s) {
      s.classList.toggle('hidden', !s.querySelector('.op:not(.hidden), a[data-op]:not(.hidden)'));
    });
    document.querySelector('.intro').classList.toggle('hidden', !!q);
  }
  document.addEventListener('DOMContentLoaded', function () {
    el('filter').addEventListener('input', filter);
    fetch('/api/v1/openapi.json', { credentials: 'same-origin' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
      .then(function (d) { doc = d; render(); })
      .catch(function (e) { el('main').innerHTML = '<p>Could not load the OpenAPI document: ' + esc(e.message) + '</p>'; });
  });
})();
`;
