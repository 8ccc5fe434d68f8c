/* The interactive report's script (gpusim.observe.html_report): sortable tables, the zoomable warp
   timeline with hover, and a self-test that runs when the page is opened with #selftest. Plain JS, no
   libraries, no network. */
(function () {
  "use strict";
  var dataElement = document.getElementById("gpusim-data");
  var data = dataElement ? JSON.parse(dataElement.textContent) : {};

  /* ------------------------------------------------------------------ sortable tables */
  function cellValue(cell, kind) {
    var v = cell.getAttribute("data-v");
    if (kind !== "text" && v !== null && v !== "" && !isNaN(Number(v))) { return Number(v); }
    return (v !== null ? v : cell.textContent).toLowerCase();
  }

  function sortTable(table, column, header) {
    var kind = header.getAttribute("data-kind") || "num";
    var current = header.getAttribute("data-sort");
    var direction = current ? (current === "asc" ? "desc" : "asc") : (kind === "text" ? "asc" : "desc");
    var headers = table.tHead.rows[0].cells;
    for (var h = 0; h < headers.length; h++) { headers[h].removeAttribute("data-sort"); }
    header.setAttribute("data-sort", direction);
    var body = table.tBodies[0];
    var keyed = [];
    for (var i = 0; i < body.rows.length; i++) {
      keyed.push([cellValue(body.rows[i].cells[column], kind), i, body.rows[i]]);
    }
    var sign = direction === "asc" ? 1 : -1;
    keyed.sort(function (a, b) {
      if (a[0] < b[0]) { return -sign; }
      if (a[0] > b[0]) { return sign; }
      return a[1] - b[1];
    });
    var fragment = document.createDocumentFragment();
    keyed.forEach(function (k) { fragment.appendChild(k[2]); });
    body.appendChild(fragment);
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable-table"), function (table) {
    if (!table.tHead) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.addEventListener("click", function (event) {
        if (event.target.closest && event.target.closest("a")) { return; }
        sortTable(table, column, header);
      });
    });
  });

  /* ------------------------------------------------------------------ warp timeline */
  function decode(seg, nRows) {
    var n = seg.k.length;
    var row = new Int32Array(n), start = new Float64Array(n), end = new Float64Array(n);
    var state = new Int32Array(n), pc = new Int32Array(n), rowStart = new Int32Array(nRows + 1);
    var r = 0, previousEnd = 0;
    for (var i = 0; i < n; i++) {
      if (seg.r[i]) { r += seg.r[i]; previousEnd = 0; }
      row[i] = r;
      start[i] = previousEnd + seg.g[i];
      end[i] = start[i] + seg.d[i];
      previousEnd = end[i];
      state[i] = seg.k[i];
      pc[i] = seg.p[i];
    }
    var j = 0;
    for (var q = 0; q <= nRows; q++) {
      while (j < n && row[j] < q) { j++; }
      rowStart[q] = j;
    }
    return { row: row, start: start, end: end, state: state, pc: pc, rowStart: rowStart, n: n };
  }

  function niceStep(span, count) {
    var raw = span / count, power = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) { if (steps[i] * power >= raw) { return steps[i] * power; } }
    return 10 * power;
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c];
    });
  }

  function Timeline(root, tl, program, meanings) {
    var self = this;
    this.tl = tl;
    this.seg = decode(tl.segments, tl.rows.length);
    this.view = { t0: 0, t1: tl.cycles };
    this.nRows = tl.rows.length;
    this.rowHeight = Math.max(2, Math.min(14, Math.floor(520 / Math.max(1, this.nRows))));
    this.axisHeight = 18;
    this.canvas = root.querySelector("canvas.rows");
    this.strip = root.querySelector("canvas.strip");
    this.brush = root.querySelector(".rows-wrap .brush");
    this.stripBrush = root.querySelector(".strip-wrap .brush");
    this.tooltip = root.querySelector(".tooltip");
    this.info = root.querySelector(".view-info");
    this.lastHover = null;
    this.program = program;
    this.meanings = meanings;
    this.full = Math.max(300, Math.floor(root.getBoundingClientRect().width) - 2);
    this.left = 88;
    this.width = this.full - this.left;
    var ratio = window.devicePixelRatio || 1;
    var height = this.axisHeight + this.nRows * this.rowHeight;
    this.setup(this.canvas, this.full, height, ratio);
    this.setup(this.strip, this.full, 60, ratio);
    this.brushOn(this.canvas, this.brush);
    this.brushOn(this.strip, this.stripBrush);
    this.canvas.addEventListener("mousemove", function (e) { if (!self.dragging) { self.hover(e); } });
    this.canvas.addEventListener("mouseleave", function () { self.tooltip.style.display = "none"; });
    root.querySelector("button.reset").addEventListener("click", function () { self.reset(); });
    this.draw();
  }

  Timeline.prototype.setup = function (canvas, width, height, ratio) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    canvas.getContext("2d").setTransform(ratio, 0, 0, ratio, 0, 0);
  };

  Timeline.prototype.x = function (cycle) {
    return this.left + (cycle - this.view.t0) / (this.view.t1 - this.view.t0) * this.width;
  };

  Timeline.prototype.cycleAt = function (x) {
    var inside = Math.max(0, Math.min(this.width, x - this.left));
    return this.view.t0 + inside / this.width * (this.view.t1 - this.view.t0);
  };

  Timeline.prototype.zoom = function (a, b) {
    var t0 = Math.max(0, Math.min(a, b)), t1 = Math.min(this.tl.cycles, Math.max(a, b));
    if (t1 - t0 < 2) { t1 = Math.min(this.tl.cycles, t0 + 2); t0 = Math.max(0, t1 - 2); }
    this.view = { t0: t0, t1: t1 };
    this.draw();
  };

  Timeline.prototype.reset = function () { this.zoom(0, this.tl.cycles); };

  Timeline.prototype.brushOn = function (canvas, brush) {
    var self = this;
    function localX(e) { return e.clientX - canvas.getBoundingClientRect().left; }
    canvas.addEventListener("mousedown", function (e) {
      self.dragging = { x: localX(e), brush: brush };
      brush.style.display = "block";
      brush.style.left = self.dragging.x + "px";
      brush.style.width = "0px";
      self.tooltip.style.display = "none";
      e.preventDefault();
    });
    canvas.addEventListener("mousemove", function (e) {
      if (!self.dragging || self.dragging.brush !== brush) { return; }
      var x = localX(e), a = Math.min(x, self.dragging.x), b = Math.max(x, self.dragging.x);
      brush.style.left = a + "px";
      brush.style.width = (b - a) + "px";
    });
    canvas.addEventListener("mouseup", function (e) {
      if (!self.dragging || self.dragging.brush !== brush) { return; }
      var x = localX(e), start = self.dragging.x;
      self.dragging = null;
      brush.style.display = "none";
      if (Math.abs(x - start) >= 3) { self.zoom(self.cycleAt(start), self.cycleAt(x)); }
    });
    canvas.addEventListener("dblclick", function () { self.reset(); });
  };

  Timeline.prototype.draw = function () {
    var ctx = this.canvas.getContext("2d"), seg = this.seg, colors = this.tl.colors;
    var t0 = this.view.t0, t1 = this.view.t1, h = this.rowHeight, top = this.axisHeight;
    ctx.clearRect(0, 0, this.full, top + this.nRows * h);
    var gap = h > 3 ? 1 : 0;
    for (var r = 0; r < this.nRows; r++) {
      var lo = seg.rowStart[r], hi = seg.rowStart[r + 1];
      var a = lo, b = hi;
      while (a < b) { var mid = (a + b) >> 1; if (seg.end[mid] <= t0) { a = mid + 1; } else { b = mid; } }
      var y = top + r * h;
      for (var i = a; i < hi && seg.start[i] < t1; i++) {
        var x0 = this.x(seg.start[i]), x1 = this.x(seg.end[i]);
        ctx.fillStyle = colors[seg.state[i]];
        ctx.fillRect(x0, y, Math.max(1, x1 - x0), h - gap);
      }
    }
    ctx.clearRect(0, 0, this.left, top + this.nRows * h);
    this.drawLabels(ctx);
    var step = niceStep(t1 - t0, 10);
    ctx.fillStyle = "#57606a";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillRect(this.left, top - 1, this.width, 1);
    for (var t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      var tx = this.x(t);
      ctx.fillRect(tx, top - 5, 1, 5);
      ctx.fillText(String(Math.round(t)), Math.min(tx + 2, this.full - 40), 11);
    }
    this.drawStrip();
    this.info.textContent = "cycles " + Math.round(t0) + "\u2013" + Math.round(t1) + " of " + this.tl.cycles +
      (t0 > 0 || t1 < this.tl.cycles ? " (zoomed: double-click or reset to see all)" : "");
  };

  Timeline.prototype.drawLabels = function (ctx) {
    var h = this.rowHeight, top = this.axisHeight, rows = this.tl.rows, previousSm = null;
    ctx.fillStyle = "#57606a";
    ctx.font = (h >= 10 ? 10 : 11) + "px system-ui, sans-serif";
    for (var r = 0; r < this.nRows; r++) {
      var sm = rows[r].split(" ")[0];
      if (h >= 10) {
        ctx.fillText(rows[r], 2, top + r * h + h - 2);
      } else if (sm !== previousSm) {
        ctx.fillText(sm, 2, top + r * h + 11);
        ctx.fillRect(0, top + r * h, this.full, 1);
      }
      previousSm = sm;
    }
  };

  Timeline.prototype.drawStrip = function () {
    var ctx = this.strip.getContext("2d"), issue = this.tl.issue, height = 60;
    ctx.clearRect(0, 0, this.full, height);
    ctx.fillStyle = "#2ca02c";
    for (var i = 0; i < issue.pct.length; i++) {
      var a = issue.edges[i], b = issue.edges[i + 1];
      if (b <= this.view.t0 || a >= this.view.t1) { continue; }
      var x0 = this.x(a), x1 = this.x(b), bar = issue.pct[i] / 100 * (height - 14);
      ctx.fillRect(x0, height - bar, Math.max(1, x1 - x0), bar);
    }
    ctx.fillStyle = "#57606a";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText("issue slots used (all SMs), 0\u2013100%: brush here or on the rows to zoom", 4, 11);
  };

  Timeline.prototype.find = function (row, cycle) {
    var seg = this.seg, a = seg.rowStart[row], b = seg.rowStart[row + 1];
    while (a < b) { var mid = (a + b) >> 1; if (seg.end[mid] <= cycle) { a = mid + 1; } else { b = mid; } }
    return a < seg.rowStart[row + 1] && seg.start[a] <= cycle ? a : -1;
  };

  Timeline.prototype.hover = function (e) {
    var rect = this.canvas.getBoundingClientRect();
    var x = e.clientX - rect.left, y = e.clientY - rect.top - this.axisHeight;
    var row = Math.floor(y / this.rowHeight), cycle = Math.floor(this.cycleAt(x));
    if (y < 0 || row < 0 || row >= this.nRows) { this.tooltip.style.display = "none"; return; }
    var i = this.find(row, cycle), seg = this.seg;
    this.lastHover = { row: row, cycle: cycle, segment: i };
    var html = "<b>" + escapeHtml(this.tl.rows[row]) + "</b> \u00b7 cycle " + cycle;
    if (i < 0) {
      html += "<br>no warp resident";
    } else {
      var state = this.tl.states[seg.state[i]], pc = seg.pc[i], p = this.program;
      html += "<br><b>" + escapeHtml(state) + "</b> cycles " + seg.start[i] + "\u2013" + seg.end[i] +
        " (" + (seg.end[i] - seg.start[i]) + ")<br><i>" + escapeHtml(this.meanings[state] || "") + "</i>" +
        "<br>stream #" + pc + " <code>" + escapeHtml(p.op[pc]) + "</code> \u00b7 PTX line " + p.line[pc] +
        ": <code>" + escapeHtml(p.text[pc]) + "</code>" + (p.src[pc] ? "<br>CUDA " + escapeHtml(p.src[pc]) : "");
    }
    this.tooltip.innerHTML = html;
    this.tooltip.style.display = "block";
    var wrap = this.canvas.parentNode.getBoundingClientRect();
    this.tooltip.style.left = Math.max(0, Math.min(x + 14, this.full - 400)) + "px";
    this.tooltip.style.top = (e.clientY - wrap.top + 16) + "px";
  };

  var timeline = null;
  var timelineRoot = document.querySelector(".gpusim-report .timeline");
  if (timelineRoot && data.timeline) {
    timeline = new Timeline(timelineRoot, data.timeline, data.program, data.meanings || {});
  }
  var loadMs = window.performance ? performance.now() : 0;

  /* ------------------------------------------------------------------ self-test (#selftest) */
  function mouse(target, type, x, y, buttons) {
    target.dispatchEvent(new MouseEvent(type, { clientX: x, clientY: y, bubbles: true, buttons: buttons || 0 }));
  }

  function selftest() {
    var out = { load_ms: loadMs };
    var table = document.querySelector("table.source-view");
    if (table) {
      var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
      var column = headers.findIndex(function (th) { return th.textContent.trim().indexOf("stall cycles") === 0; });
      function values() {
        return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
          return Number(r.cells[column].getAttribute("data-v"));
        });
      }
      headers[column].click();
      var desc = values();
      out.sort_desc = desc.every(function (v, i) { return i === 0 || desc[i - 1] >= v; });
      out.sort_first_pc = Number(table.tBodies[0].rows[0].getAttribute("data-pc"));
      headers[column].click();
      var asc = values();
      out.sort_asc = asc.every(function (v, i) { return i === 0 || asc[i - 1] <= v; });
      out.sort_header_state = headers[column].getAttribute("data-sort");
    }
    if (timeline) {
      var rect = timeline.canvas.getBoundingClientRect(), w = timeline.width, left = rect.left + timeline.left;
      var y = rect.top + timeline.axisHeight + 1;
      mouse(timeline.canvas, "mousedown", left + 0.25 * w, y, 1);
      mouse(timeline.canvas, "mousemove", left + 0.5 * w, y, 1);
      mouse(timeline.canvas, "mouseup", left + 0.5 * w, y, 0);
      out.zoom = [timeline.view.t0, timeline.view.t1];
      out.info = timeline.info.textContent;
      var seg = timeline.seg, target = -1;
      for (var i = 0; i < seg.n; i++) {
        if (seg.end[i] > timeline.view.t0 + 1 && seg.start[i] < timeline.view.t1 - 1) { target = i; break; }
      }
      if (target >= 0) {
        var cycle = Math.max(seg.start[target], Math.ceil(timeline.view.t0));
        var hx = rect.left + timeline.x(cycle + 0.5);
        var hy = rect.top + timeline.axisHeight + (seg.row[target] + 0.5) * timeline.rowHeight;
        mouse(timeline.canvas, "mousemove", hx, hy, 0);
        out.hover = timeline.lastHover;
        out.hover_row = timeline.lastHover ? timeline.tl.rows[timeline.lastHover.row] : null;
        out.tooltip = timeline.tooltip.textContent;
      }
      mouse(timeline.canvas, "dblclick", left + 10, y, 0);
      out.reset = [timeline.view.t0, timeline.view.t1];
      out.segments = seg.n;
    }
    out.sections = {};
    Array.prototype.forEach.call(document.querySelectorAll(".gpusim-report h2[id]"), function (h) {
      out.sections[h.id] = Math.round(h.getBoundingClientRect().top + window.scrollY);
    });
    out.height = document.documentElement.scrollHeight;
    var links = Array.prototype.slice.call(document.querySelectorAll("a[href^='#']"));
    out.links = links.length;
    out.broken = links.filter(function (a) {
      return !document.getElementById(a.getAttribute("href").slice(1));
    }).map(function (a) { return a.getAttribute("href"); });
    var result = document.createElement("pre");
    result.id = "selftest-result";
    result.className = "selftest";
    result.textContent = JSON.stringify(out);
    document.body.appendChild(result);
  }

  /* The hash opens a view: #sort=HEADER sorts the source view by that column, #zoom=A-B zooms the timeline
     to cycles A..B, #hover=ROW,CYCLE shows the tooltip there (joined with &; the docs' screenshots use them) */
  var params = {};
  location.hash.slice(1).split("&").forEach(function (part) {
    var eq = part.indexOf("=");
    if (eq > 0) { params[part.slice(0, eq)] = decodeURIComponent(part.slice(eq + 1)); }
  });
  var sourceTable = document.querySelector("table.source-view");
  if (params.sort && sourceTable) {
    Array.prototype.forEach.call(sourceTable.tHead.rows[0].cells, function (th) {
      if (th.textContent.trim().replace(/\s*\?$/, "") === params.sort) { th.click(); }
    });
  }
  if (timeline && params.zoom) {
    var span = params.zoom.split("-").map(Number);
    if (span.length === 2 && !isNaN(span[0]) && !isNaN(span[1])) { timeline.zoom(span[0], span[1]); }
  }
  if (timeline && params.hover) {
    var at = params.hover.split(",").map(Number), box = timeline.canvas.getBoundingClientRect();
    mouse(timeline.canvas, "mousemove", box.left + timeline.x(at[1] + 0.5),
          box.top + timeline.axisHeight + (at[0] + 0.5) * timeline.rowHeight, 0);
  }
  if (location.hash === "#selftest") { selftest(); }
})();
