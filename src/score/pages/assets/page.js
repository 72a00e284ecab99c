// sqlgold review page: the table of records (filter, sort, open) over the JSON data block.
// Everything it shows comes from <script id="data" type="application/json">; text goes
// into the page through escaping (esc) or textContent only, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var cols = data.columns;
  var rows = data.rows;
  var byId = {};
  rows.forEach(function (r, i) { r.i = i; byId[r.id] = r; });
  var state = { sort: null, desc: false, text: "", picks: {}, list: [], drawn: 0 };
  var tbody = document.getElementById("rows");
  var shown = document.getElementById("shown");
  var KEYWORDS = new RegExp("^(" + ["select", "from", "where", "group", "by", "order", "having",
    "limit", "offset", "join", "left", "right", "inner", "outer", "full", "cross", "on", "as",
    "and", "or", "not", "in", "is", "null", "case", "when", "then", "else", "end", "with",
    "union", "all", "intersect", "except", "distinct", "over", "partition", "between", "like",
    "ilike", "exists", "asc", "desc", "cast", "filter", "using", "true", "false", "interval",
    "top", "nulls", "first", "last", "rows", "range", "lateral", "qualify", "into", "insert",
    "update", "delete", "create", "drop", "table", "values", "set"].join("|") + ")$", "i");

  // characters that change how the text around them is shown without being seen (bidi
  // overrides, zero-width characters, controls): shown as their code point, so what the
  // page shows is what ran or was asked (score/pages/document.py HIDDEN: the same set)
  var HIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]/g;
  function visible(s) {
    return String(s).replace(HIDDEN, function (c) {
      return "\u27e8U+" + ("000" + c.charCodeAt(0).toString(16).toUpperCase()).slice(-4) + "\u27e9";
    });
  }

  function esc(s) {
    return visible(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // SQL with keywords, strings, numbers and comments in spans (escaped first, token by token)
  function sqlHtml(sql) {
    var out = "";
    var re = /(--[^\n]*|\/\*[\s\S]*?\*\/)|('(?:[^']|'')*'?)|("(?:[^"]|"")*"?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z_0-9]*)|([\s\S])/g;
    var m;
    while ((m = re.exec(sql)) !== null) {
      if (m[1]) out += '<span class="c">' + esc(m[1]) + "</span>";
      else if (m[2]) out += '<span class="s">' + esc(m[2]) + "</span>";
      else if (m[3]) out += esc(m[3]);
      else if (m[4]) out += '<span class="n">' + esc(m[4]) + "</span>";
      else if (m[5]) out += KEYWORDS.test(m[5]) ? '<span class="k">' + esc(m[5]) + "</span>" : esc(m[5]);
      else out += esc(m[6]);
    }
    return out;
  }

  // a one-line SQL text laid out one clause a line (query parentheses indented); text
  // that already has lines is the author's layout and is left as written
  var CLAUSE = /^(select|from|where|group|order|having|limit|offset|union|intersect|except|with|qualify|window|join|left|right|inner|full|cross)$/i;
  var JOINS = /^(left|right|inner|full|cross|natural)$/i;
  function layoutSql(sql) {
    if (sql.indexOf("\n") >= 0 || sql.length <= 80) return sql;
    var re = /(--[^\n]*|\/\*[\s\S]*?\*\/)|('(?:[^']|'')*'?)|("(?:[^"]|"")*"?)|([A-Za-z_][A-Za-z_0-9]*)|(\s+)|([\s\S])/g;
    var out = "", stack = [], m, prevWord = "", afterOpen = false;
    function indent() { var n = 0; stack.forEach(function (q) { if (q) n++; }); return "\n" + new Array(n + 1).join("  "); }
    while ((m = re.exec(sql)) !== null) {
      if (m[5]) { if (out && !/[\s(]$/.test(out)) out += " "; continue; }
      var tok = m[0];
      if (m[4] && CLAUSE.test(tok)) {
        var inQuery = stack.length === 0 || stack[stack.length - 1];
        if (afterOpen && /^(select|with)$/i.test(tok)) { stack[stack.length - 1] = true; inQuery = true; }
        var joinTail = /^join$/i.test(tok) && JOINS.test(prevWord);
        var orderInWindow = /^(order|by)$/i.test(tok) && !inQuery;
        if (inQuery && !joinTail && !orderInWindow && out.trim()) out = out.replace(/\s+$/, "") + indent();
      }
      if (tok === "(") { stack.push(false); out += tok; afterOpen = true; prevWord = ""; continue; }
      if (tok === ")") { var q = stack.pop(); if (q) out = out.replace(/\s+$/, "") + indent(); out += tok; afterOpen = false; continue; }
      out += tok;
      afterOpen = false;
      if (m[4]) prevWord = tok;
    }
    return out;
  }

  function rowKey(cells) { return JSON.stringify(cells); }

  function tableHtml(b) {
    var marks = {};
    (b.mark || []).forEach(function (r) { marks[rowKey(r)] = true; });
    var h = '<table class="result"><thead><tr>';
    b.columns.forEach(function (c, j) {
      var note = b.colmark && b.colmark[j] ? ' class="colmark" title="' + esc(b.colmark[j]) + '"' : "";
      h += "<th scope=\"col\"" + note + ">" + esc(c) + (note ? " <small>(" + esc(b.colmark[j]) + ")</small>" : "") + "</th>";
    });
    h += "</tr></thead><tbody>";
    b.rows.forEach(function (r) {
      var marked = marks[rowKey(r)];
      h += "<tr" + (marked ? ' class="' + esc(b.markClass || "differs") + '"' : "") + ">";
      r.forEach(function (c) { h += "<td>" + esc(c) + "</td>"; });
      h += "</tr>";
    });
    h += "</tbody></table>";
    var hidden = b.total - b.rows.length;
    h += '<p class="count">' + esc(b.total) + " row(s)" + (hidden > 0 ? ", " + esc(hidden) + " not shown" : "") +
      (b.hiddenColumns ? "; " + esc(b.hiddenColumns) + " more column(s) not shown" : "") + "</p>";
    return h;
  }

  function blockHtml(b) {
    var label = b.label ? "<h4>" + esc(b.label) + "</h4>" : "";
    switch (b.t) {
      case "h":
        return "<h3>" + esc(b.text) + "</h3>";
      case "sql":
        return '<div class="block">' + label + '<pre class="sql"><code>' + sqlHtml(b.fmt ? layoutSql(b.sql) : b.sql) + "</code></pre></div>";
      case "text":
        return '<div class="block">' + label + '<pre class="text">' + esc(b.text) + "</pre></div>";
      case "kv":
        return '<div class="block">' + label + '<dl class="kv">' + b.items.map(function (kv) {
          return "<dt>" + esc(kv[0]) + "</dt><dd>" + esc(kv[1]) + "</dd>";
        }).join("") + "</dl></div>";
      case "rows":
        return '<div class="block ' + esc(b.cls || "") + '">' + label + tableHtml(b) + "</div>";
      case "side":
        return '<div class="side">' + b.items.map(blockHtml).join("") + "</div>";
      case "diff":
        return '<div class="block">' + label + '<pre class="diff">' + b.lines.map(function (l) {
          var cls = l[0] === "+" ? "add" : l[0] === "-" ? "del" : "ctx";
          return '<span class="' + cls + '">' + esc(l) + "</span>";
        }).join("\n") + "</pre></div>";
      default:
        return "";
    }
  }

  function matches(r) {
    for (var k in state.picks) {
      if (state.picks[k] !== "" && String(r.c[k]) !== state.picks[k]) return false;
    }
    if (state.text) {
      var hay = r.search || (r.search = (r.c.join(" ") + " " + JSON.stringify(r.d)).toLowerCase());
      if (hay.indexOf(state.text) < 0) return false;
    }
    return true;
  }

  function compareRows(a, b) {
    var x = a.c[state.sort], y = b.c[state.sort];
    var d;
    if (typeof x === "number" && typeof y === "number") d = x - y;
    else if (x === null || x === undefined) d = (y === null || y === undefined) ? 0 : 1;
    else if (y === null || y === undefined) d = -1;
    else d = String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
    if (d === 0) d = a.i - b.i;
    return state.desc ? -d : d;
  }

  function cellText(v) { return v === null || v === undefined ? "" : String(v); }

  // rows are drawn a page at a time (the rest as the "more" button scrolls into view or
  // is pressed), so ten thousand records open and filter as fast as five hundred
  var PAGE = 500;
  var more = document.getElementById("more");
  var currentRow = null;

  function rowHtml(r) {
    var h = '<tr data-id="' + esc(r.id) + '"' + (r.cls ? ' class="' + esc(r.cls) + '"' : "") + '><td><button type="button" class="open" aria-expanded="false" aria-controls="detail">' + esc(r.id) + "</button></td>";
    for (var j = 1; j < cols.length; j++) {
      h += '<td class="' + esc(cols[j].key) + '">' + esc(cellText(r.c[j])) + "</td>";
    }
    return h + "</tr>";
  }

  function drawTo(end) {
    end = Math.min(state.list.length, end);
    var h = "";
    for (var i = state.drawn; i < end; i++) h += rowHtml(state.list[i]);
    if (h) tbody.insertAdjacentHTML("beforeend", h);
    state.drawn = Math.max(state.drawn, end);
    var left = state.list.length - state.drawn;
    more.hidden = left <= 0;
    more.textContent = "show " + Math.min(PAGE, left) + " more (" + left + " not drawn yet)";
  }

  function render() {
    state.list = rows.filter(matches);
    if (state.sort !== null) state.list.sort(compareRows);
    tbody.innerHTML = "";
    state.drawn = 0;
    currentRow = null;
    drawTo(PAGE);
    shown.textContent = state.list.length + " of " + rows.length + " shown";
    var current = decodeURIComponent(location.hash.slice(1));
    var r = current ? findRecord(current) : null;
    if (r) mark(r.id);
  }

  function mark(id) {
    if (currentRow) {
      currentRow.classList.remove("current");
      currentRow.querySelector("button").setAttribute("aria-expanded", "false");
    }
    currentRow = tbody.querySelector('tr[data-id="' + CSS.escape(id) + '"]');
    if (currentRow) {
      currentRow.classList.add("current");
      currentRow.querySelector("button").setAttribute("aria-expanded", "true");
    }
  }

  function findRecord(id) {
    if (byId[id]) return byId[id];
    for (var i = 0; i < rows.length; i++) if ((rows[i].task || rows[i].id) === id) return rows[i];
    return null;
  }

  var openedId = null;  // the id whose record the detail shows

  function open(id) {
    var detail = document.getElementById("detail");
    var r = findRecord(id);
    if (!r) { detail.hidden = true; openedId = null; return; }
    openedId = id;
    document.getElementById("detail-title").textContent = visible(r.id);
    var own = [];  // the row's cells, in full (the table cuts long ones)
    for (var j = 1; j < cols.length; j++) {
      if (r.c[j] !== null && r.c[j] !== undefined && r.c[j] !== "") own.push([cols[j].label, r.c[j]]);
    }
    var blocks = r.d;
    if (blocks.length && blocks[0].t === "kv" && !blocks[0].label) {  // the record's own facts join them
      own = own.concat(blocks[0].items);
      blocks = blocks.slice(1);
    }
    document.getElementById("detail-body").innerHTML =
      blockHtml({ t: "kv", items: own }) + blocks.map(blockHtml).join("");
    detail.hidden = false;
    if (state.list.indexOf(r) < 0) clearFilters();
    var at = state.list.indexOf(r);
    if (at >= state.drawn) drawTo(at + 1);
    mark(r.id);
    detail.focus();
  }

  function clearFilters() {
    state.text = ""; state.picks = {};
    document.getElementById("q").value = "";
    Array.prototype.forEach.call(document.querySelectorAll("select.pick"), function (s) { s.value = ""; });
    render();
  }

  function setupFilters() {
    var bar = document.getElementById("filters");
    (data.filters || []).forEach(function (k) {
      var counts = {};
      rows.forEach(function (r) { var v = cellText(r.c[k]); counts[v] = (counts[v] || 0) + 1; });
      var label = document.createElement("label");
      label.textContent = cols[k].label + " ";
      var sel = document.createElement("select");
      sel.className = "pick";
      sel.id = "pick-" + cols[k].key;
      var all = document.createElement("option");
      all.value = ""; all.textContent = "all";
      sel.appendChild(all);
      Object.keys(counts).sort().forEach(function (v) {
        var o = document.createElement("option");
        o.value = v; o.textContent = visible(v || "(none)") + " (" + counts[v] + ")";
        sel.appendChild(o);
      });
      sel.addEventListener("change", function () { state.picks[k] = sel.value; render(); });
      label.appendChild(sel);
      bar.appendChild(label);
    });
    document.getElementById("q").addEventListener("input", function (e) {
      state.text = e.target.value.trim().toLowerCase(); render();
    });
  }

  function setupSort() {
    var tr = document.getElementById("head");
    cols.forEach(function (c, j) {
      var th = document.createElement("th");
      th.scope = "col";
      th.setAttribute("aria-sort", "none");
      var b = document.createElement("button");
      b.type = "button";
      b.className = "sort";
      b.textContent = c.label;
      b.addEventListener("click", function () {
        state.desc = state.sort === j ? !state.desc : false;
        state.sort = j;
        Array.prototype.forEach.call(tr.children, function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", state.desc ? "descending" : "ascending");
        render();
      });
      th.appendChild(b);
      tr.appendChild(th);
    });
  }

  tbody.addEventListener("click", function (e) {
    var b = e.target.closest("button.open");
    if (!b) return;
    var id = b.closest("tr").getAttribute("data-id");
    open(id);  // at once: the hashchange event that follows comes later and finds it open
    if (decodeURIComponent(location.hash.slice(1)) !== id) location.hash = encodeURIComponent(id);
  });
  window.addEventListener("hashchange", function () {
    var id = decodeURIComponent(location.hash.slice(1));
    if (id !== openedId) open(id);
  });
  more.addEventListener("click", function () { drawTo(state.drawn + PAGE); });
  if ("IntersectionObserver" in window) {
    new IntersectionObserver(function (seen) {
      if (seen[0].isIntersecting && !more.hidden) drawTo(state.drawn + PAGE);
    }, { rootMargin: "400px" }).observe(more);
  }
  document.getElementById("table-part").hidden = false;
  setupSort();
  setupFilters();
  render();
  if (location.hash.length > 1) open(decodeURIComponent(location.hash.slice(1)));
  document.body.setAttribute("data-ready", "1");
})();
