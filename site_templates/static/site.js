/* MTG総合ルール — the English toggle, hover/tap previews of referenced rules and glossary terms, and the static search.
   Everything is local: search shards are plain scripts under search/ loaded with <script> tags, so the search
   works from any static server and from file://. The query is analysed like kb search does it (see
   kb/site/search_export.py): NFKC + lower case, Latin words stemmed, Japanese runs segmented by longest match
   against the exported vocabulary, character bigrams for what the vocabulary does not cover; quoted phrases by the
   places of adjacent terms (search/q/), kana runs also by their readings (search/r/), typos by the lexicon (l.js),
   as kb/search/query.py and kb/search/fuzzy.py do (but for kanji IME slips: their readings are Sudachi's). Every
   constant shared with Python (stop words, the rule-number grammar, labels, shard prefixes, a query's bounds) comes
   from the "k" of search/meta.js (kb.site.search_export.browser_constants), never written here; data keys are read as own
   properties only (a query "constructor" is a word like any other). */
(function () {
  "use strict";
  var doc = document.documentElement;
  var root = document.body.getAttribute("data-root") || "";

  /* -- English original on/off ------------------------------------------------------------------------ */
  var toggle = document.querySelector(".toggle-en");
  if (toggle && document.querySelector(".secondary.lang-en")) {
    var sync = function () {
      var hidden = doc.classList.contains("hide-en");
      toggle.setAttribute("aria-pressed", hidden ? "false" : "true");
      toggle.textContent = hidden ? "英語原文を表示" : "英語原文を隠す";
    };
    toggle.hidden = false;
    sync();
    toggle.addEventListener("click", function () {
      var hidden = doc.classList.toggle("hide-en");
      try { localStorage.setItem("kb-en", hidden ? "hide" : "show"); } catch (e) { /* storage off */ }
      sync();
    });
  }

  /* -- the sticky header: its height for the jumps (CSS scroll-padding), its menu -------------------------- */
  var header = document.querySelector(".site-header");
  function headerBottom() { return header ? Math.max(0, header.getBoundingClientRect().bottom) : 0; }
  if (header) {
    var measured = 0;
    var measure = function () {
      var hh = Math.ceil(header.getBoundingClientRect().height);
      if (hh === measured) { return; }
      measured = hh;
      doc.style.setProperty("--header-h", hh + "px");
    };
    measure();
    if (window.ResizeObserver) { new ResizeObserver(measure).observe(header); }
    var nav = window.performance && performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    if (location.hash && !(nav && nav.type === "back_forward")) {  // jumped before the height was known: again, below it
      var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      if (target) { target.scrollIntoView(); }
    }
  }
  var menu = document.querySelector(".site-header .menu");
  if (menu) {  // closed by a tap elsewhere, by Escape and by following one of its links
    document.addEventListener("click", function (e) { if (menu.open && !menu.contains(e.target)) { menu.open = false; } });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && menu.open) { menu.open = false; menu.querySelector("summary").focus(); }
    });
  }

  /* -- a long page's own contents: open beside the text on a wide screen, closed on a phone ---------------- */
  var toc = document.querySelector(".page-toc details");
  if (toc && window.matchMedia) {
    var wide = window.matchMedia("(min-width: 75rem)");
    var fit = function () { toc.open = wide.matches; };
    fit();
    if (wide.addEventListener) { wide.addEventListener("change", fit); }
    toc.addEventListener("click", function (e) {  // on a phone a jump closes it again, so the text is in view
      if (e.target.closest && e.target.closest("a") && !wide.matches) { toc.open = false; }
    });
    /* beside the text, the line of the part being read is marked (and kept in view in a long contents) */
    var box = toc.parentNode, entries = [], current = null, queued = false;
    Array.prototype.forEach.call(toc.querySelectorAll("a"), function (a) {
      var at = new URL(a.href, location.href), el = at.hash && document.getElementById(decodeURIComponent(at.hash.slice(1)));
      if (el && at.pathname === location.pathname) { entries.push([el, a]); }
    });
    var spy = function () {
      queued = false;
      if (!wide.matches) { return; }
      var line = headerBottom() + 12, now = null;
      for (var i = 0; i < entries.length && entries[i][0].getBoundingClientRect().top <= line; i++) { now = entries[i][1]; }
      if (now === current) { return; }
      if (current) { current.classList.remove("current"); }
      current = now;
      if (!now) { return; }
      now.classList.add("current");
      var r = now.getBoundingClientRect(), b = box.getBoundingClientRect();
      if (r.top < b.top || r.bottom > b.bottom) { box.scrollTop += r.top - b.top - b.height / 3; }
    };
    window.addEventListener("scroll", function () { if (!queued) { queued = true; requestAnimationFrame(spy); } }, {passive: true});
    spy();
  }

  /* -- previews ------------------------------------------------------------------------------------------ */
  /* A reference previews what it links to: on hover or keyboard focus; on a touch screen the first tap shows the
     preview and a second tap on the same reference (or the preview's 開く link) follows it. */
  var pop = null, popFor = null, hideTimer = 0, lastPointer = "mouse", focusByPointer = false;
  var PREVIEWABLE = "a.ref-rule, a.ref-section, a.ref-term, a.ref-auto-term, a.ref-wiki, a.ref-card, a.ref-note";
  function closestPreview(el) { return el && el.closest ? el.closest(PREVIEWABLE) : null; }
  function ruleOf(a) {  // cr/601.html#601.2f → 601.2f; cr/601.html → 601
    var url = new URL(a.href, location.href);
    var number = url.hash ? decodeURIComponent(url.hash.slice(1)) : url.pathname.split("/").pop().replace(/\.html$/, "");
    return K.number.test(number) ? number : null;
  }
  function pageOf(a) {  // glossary/唱える.html → ["gl", "唱える"]: the shard prefix and the key in previews/<prefix>-*.js
    var m = /\/([^\/]+)\/([^\/]+)\.html$/.exec(new URL(a.href, location.href).pathname);
    var prefix = m && own(K.previews, m[1]);
    return prefix ? [prefix, decodeURIComponent(m[2])] : null;
  }
  function previewShard(a) {  // [shard, key] of the text a reference previews (see kb/site/pages.py), or null
    if (a.matches("a.ref-rule, a.ref-section")) {
      var number = ruleOf(a);
      return number && ["pv/" + (number.length >= 3 ? number.slice(0, 3) : "chapters"), number];
    }
    var page = pageOf(a);
    return page && ["pv/" + page[0] + "-" + page[1].codePointAt(0).toString(16), page[1]];
  }
  /* The preview inside the window at any width and scroll position: as wide as its text wants (up to its CSS
     max-width, never squeezed by the space right of the reference), left-aligned with the reference's line but moved
     left to fit, below the reference or above it when there is more room there, and no taller than that room (it
     scrolls). Placed again when its text arrives. */
  function place(p, a) {
    var GAP = 6, vw = doc.clientWidth, vh = doc.clientHeight;  // the layout viewport (a phone's innerHeight may be a zoomed one)
    var rects = a.getClientRects(), r = rects.length ? rects[0] : a.getBoundingClientRect();
    var top = headerBottom();
    p.style.left = window.scrollX + "px";
    p.style.top = window.scrollY + "px";
    p.style.maxHeight = "";
    var w = p.offsetWidth, h = p.offsetHeight;
    var below = vh - r.bottom - 2 * GAP, above = r.top - top - 2 * GAP;
    var down = h <= below || below >= above;
    var room = Math.max(down ? below : above, 48);
    if (h > room) { p.style.maxHeight = room + "px"; h = room; }
    var y = down ? r.bottom + GAP : r.top - GAP - h;
    var x = Math.max(GAP, Math.min(r.left, vw - w - GAP));
    p.style.left = (window.scrollX + x) + "px";
    p.style.top = (window.scrollY + y) + "px";
  }
  function hidePreview() { if (pop) { pop.remove(); } pop = null; popFor = null; }
  function scheduleHide() { clearTimeout(hideTimer); hideTimer = setTimeout(hidePreview, 300); }
  function showPreview(a) {
    clearTimeout(hideTimer);
    if (popFor === a) { return; }
    hidePreview();
    pop = document.createElement("div");
    pop.className = "preview";
    pop.setAttribute("role", "tooltip");
    var head = document.createElement("strong");
    head.textContent = a.textContent;
    var body = document.createElement("div");
    body.textContent = "…";
    constants().then(function () {
      var shard = K && previewShard(a);
      if (!shard) { body.textContent = ""; return; }
      load(shard[0]).then(function (texts) { body.textContent = own(texts, shard[1]) || ""; if (popFor === a) { place(pop, a); } });
    });
    var go = document.createElement("a");
    go.className = "go";
    go.href = a.href;
    go.textContent = "開く →";
    pop.appendChild(head); pop.appendChild(body); pop.appendChild(go);
    document.body.appendChild(pop);
    place(pop, a);
    pop.addEventListener("mouseenter", function () { clearTimeout(hideTimer); });
    pop.addEventListener("mouseleave", scheduleHide);
    popFor = a;
  }
  function pointer(e) { lastPointer = e.pointerType || "mouse"; }
  document.addEventListener("pointerdown", function (e) { pointer(e); focusByPointer = true; }, true);
  document.addEventListener("pointermove", pointer, true);
  document.addEventListener("keydown", function () { focusByPointer = false; }, true);
  document.addEventListener("mouseover", function (e) {
    var a = closestPreview(e.target);
    if (a && lastPointer === "mouse") { showPreview(a); }
  });
  document.addEventListener("mouseout", function (e) { if (closestPreview(e.target) && lastPointer === "mouse") { scheduleHide(); } });
  document.addEventListener("focusin", function (e) {
    var a = closestPreview(e.target);
    if (a && !focusByPointer) { showPreview(a); }  // keyboard focus; a tap also focuses, and the click below decides
    else if (!a && !(pop && pop.contains(e.target))) { hidePreview(); }
  });
  document.addEventListener("click", function (e) {
    var a = closestPreview(e.target);
    if (a && (lastPointer === "touch" || lastPointer === "pen") && popFor !== a) { e.preventDefault(); showPreview(a); return; }
    if (pop && !a && !pop.contains(e.target)) { hidePreview(); }
  });
  window.addEventListener("hashchange", hidePreview);  // followed on this page: the preview would cover where it lands
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") { hidePreview(); } });

  /* -- search: loading shards ------------------------------------------------------------------------------ */
  var loaded = {}, waiting = {}, delta = null, stale = {};
  window.__kbSearch = function (name, data) {
    if (name === "meta" && data && data.x && !delta) {  // the delta first: no p/g/q shard is used without it
      load(data.x).then(function (x) {
        delta = x || {d: []};  // a delta that did not load: the base shards as they are
        delta.d.forEach(function (id) { stale[id] = 1; });
        window.__kbSearch(name, data);
      });
      return;
    }
    if (delta && /^[pgq]\//.test(name)) { data = mergedShard(name, data); }
    loaded[name] = data;
    (waiting[name] || []).forEach(function (f) { f(data); });
    delete waiting[name];
  };
  /* A p/, g/ or q/ shard with the delta merged in (search/x/<hash>.js, named by meta.x; kb/site/search_delta.py,
     whose merged_shard is this in Python): the records of the delta's documents (d) dropped from each list, the
     delta's records of this shard inserted in document order, a list left empty dropped; lists gap-coded as before,
     records of [doc gap, weight] (p/, g/) or [doc gap, n, n places] (q/). */
  function mergedShard(name, data) {
    var sizes = name[0] === "q", adds = own(own(delta, name[0]), name.slice(2)) || {}, out = {};
    var records = function (coded) {  // [[doc, items…]…], absolute doc ids
      var list = [], id = 0;
      for (var i = 0; i < coded.length; i += 2 + (sizes ? coded[i + 1] : 0)) {
        id += coded[i];
        list.push([id].concat(coded.slice(i + 1, i + 2 + (sizes ? coded[i + 1] : 0))));
      }
      return list;
    };
    var keys = Object.keys(data || {}).concat(Object.keys(adds).filter(function (key) { return !own(data, key); }));
    var holdsStale = function (coded) {
      for (var i = 0, id = 0; i < coded.length; i += 2 + (sizes ? coded[i + 1] : 0)) { id += coded[i]; if (own(stale, id)) { return true; } }
      return false;
    };
    keys.forEach(function (key) {
      var base = own(data, key);
      if (base && !own(adds, key) && !holdsStale(base)) { out[key] = base; return; }  // as it was
      var kept = records(base || []).filter(function (r) { return !own(stale, r[0]); });
      var list = kept.concat(records(own(adds, key) || [])).sort(function (x, y) { return x[0] - y[0]; });
      if (!list.length) { return; }
      var coded = [], last = 0;
      list.forEach(function (r) { coded.push(r[0] - last); last = r[0]; for (var j = 1; j < r.length; j++) { coded.push(r[j]); } });
      out[key] = coded;
    });
    return out;
  }
  function load(name) {
    if (Object.prototype.hasOwnProperty.call(loaded, name)) { return Promise.resolve(loaded[name]); }
    var listed = loaded.meta && loaded.meta.s;  // the vocabulary, name and reading shards there are: never ask for another
    if (listed && /^[vnr]\//.test(name) && (listed[name[0]] || []).indexOf(name.slice(2)) < 0) { return Promise.resolve(null); }
    return new Promise(function (resolve) {
      if (waiting[name]) { waiting[name].push(resolve); return; }
      waiting[name] = [resolve];
      var s = document.createElement("script");
      s.src = root + (name.slice(0, 3) === "pv/" ? "previews/" + name.slice(3) : "search/" + name) + ".js";
      s.async = true;
      s.onerror = function () { window.__kbSearch(name, null); };
      document.head.appendChild(s);
    });
  }

  function vocabulary(c) {  // the vocabulary of the surfaces starting with c: meta.js's own, or its bucket's
    var meta = loaded.meta;
    return meta.vb ? load("v/" + fnv1a(c) % meta.vb) : Promise.resolve(meta.v || null);
  }

  function own(obj, key) { return obj && Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined; }

  /* -- the constants shared with Python, from search/meta.js -------------------------------------------- */
  var K = null;
  function compile(k) {
    var stop = {};
    k.stop.forEach(function (w) { stop[w] = 1; });
    return {
      stop: stop, letters: k.letters, kinds: k.kinds, previews: k.previews, maxQuery: k.maxQuery,
      maxVocab: k.maxVocab, maxLookups: k.maxLookups, maxSurface: k.maxSurface, cover: k.cover, idfScale: k.idfScale,
      termShare: k.termShare, gramShare: k.gramShare, variants: k.variants, question: k.question,
      minContent: k.minContent, minFuzzy: k.minFuzzy, twoEdits: k.twoEdits, maxReading: k.maxReading,
      number: new RegExp("^" + k.number + "$"),
      ruleWord: new RegExp("^" + k.rule + k.letter + "?$"),
      ruleQuery: new RegExp("^\\s*" + k.prefix + "?\\s*" + k.parts + "\\.?\\s*$"),
      range: new RegExp("^(.+?)\\s*" + k.dash + "\\s*(" + k.rangeEnd + ")$"), ruleSpan: k.ruleSpan, sectionSpan: k.sectionSpan,
      whole: new RegExp("^" + k.parts + "$")
    };
  }
  function constants() {  // search/meta.js, its constants compiled once
    return load("meta").then(function (meta) {
      if (meta && meta.k && !K) { K = compile(meta.k); }
      return K ? meta : null;
    });
  }

  /* -- search: analysis (mirrors kb/search/analysis.py) ---------------------------------------------------- */
  var JA_CHAR = /[\p{L}\p{N}\p{M}]/u;
  function fold(text) {
    var out = [];
    Array.from(text).forEach(function (ch) {
      var f = ch.charCodeAt(0) < 128 ? ch.toLowerCase() : ch.normalize("NFKC").toLowerCase();
      if ((f === "\u3099" || f === "\u309a" || f === " \u3099" || f === " \u309a") && out.length) {
        var combined = (out[out.length - 1] + f.trim()).normalize("NFC");
        if (combined.length === 1) { out[out.length - 1] = combined; return; }
      }
      Array.from(f).forEach(function (c) { out.push(K ? own(K.variants, c) || c : c); });  // 豫 → 予 (kb/search/variants.py)
    });
    return out;
  }
  function isLatin(c) { return c !== undefined && c.charCodeAt(0) < 128 && /[a-z0-9]/.test(c); }
  function isJapanese(c) {
    if (c.charCodeAt(0) < 128 || /\s/.test(c)) { return false; }
    return c === "・" || c === "･" || c === "ー" || JA_CHAR.test(c);
  }
  function runs(chars) {
    var out = [], i = 0, n = chars.length;
    while (i < n) {
      var j = i + 1;
      if (isLatin(chars[i])) {
        while (j < n && (isLatin(chars[j]) || (".'’".indexOf(chars[j]) >= 0 && isLatin(chars[j + 1]) && isLatin(chars[j - 1])))) { j++; }
        out.push(["latin", chars.slice(i, j).join("")]);
      } else if (isJapanese(chars[i])) {
        while (j < n && isJapanese(chars[j])) { j++; }
        out.push(["ja", chars.slice(i, j)]);
      }
      i = j;
    }
    return out;
  }
  function lightStem(w) {
    if (w.length <= 3 || !/^[a-z]+$/.test(w)) { return w; }
    if (/ies$/.test(w) && w.length > 4) { w = w.slice(0, -3) + "y"; }
    else if (/sses$/.test(w)) { w = w.slice(0, -2); }
    else if (/(ches|shes|xes|zes)$/.test(w)) { w = w.slice(0, -2); }
    else if (/s$/.test(w) && !/(ss|us|is)$/.test(w)) { w = w.slice(0, -1); }
    var suffixes = ["ing", "ed"];
    for (var k = 0; k < suffixes.length; k++) {
      var s = suffixes[k];
      if (w.slice(-s.length) === s && w.length - s.length >= 3) {
        w = w.slice(0, -s.length);
        if (w.length >= 3 && w[w.length - 1] === w[w.length - 2] && "aeiouls".indexOf(w[w.length - 1]) < 0) { w = w.slice(0, -1); }
        break;
      }
    }
    if (w.slice(-1) === "e" && w.length >= 5) { w = w.slice(0, -1); }
    return w;
  }
  function latinTerms(run) {
    var out = [];
    (run.match(/[a-z0-9]+(?:[.'’][a-z0-9]+)*/g) || []).forEach(function (word) {
      if (K.ruleWord.test(word)) { out.push(word); return; }
      (word.match(/[a-z0-9]+/g) || []).forEach(function (w) {
        if (own(K.stop, w) || (w.length === 1 && /[a-z]/.test(w))) { return; }
        out.push(lightStem(w));
      });
    });
    return out;
  }
  var HIRAGANA = /^[\u3041-\u3096\u30fc]+$/;
  function segment(chars, vocabs, dropped) {  // dropped: the kana of meta.js "f" (null: none)
    var terms = [], rest = [], buf = "", i = 0;
    while (i < chars.length) {
      var vocab = own(vocabs, chars[i]), found = 0, term = null, s = "";
      if (vocab) {  // the longest match, no longer than any surface can be
        for (var j = Math.min(chars.length, i + K.maxSurface); j > i; j--) {
          s = chars.slice(i, j).join("");
          if (Object.prototype.hasOwnProperty.call(vocab, s)) { found = j - i; term = vocab[s] === 1 ? s : vocab[s]; break; }
        }
      }
      if (found && (buf || terms.length) && HIRAGANA.test(buf + s) && own(dropped, buf + s)) {  // 唱え|られ|ない: an ending
        buf += s; i += found;
      } else if (found) { if (buf) { rest.push(buf); buf = ""; } terms.push(term); i += found; }
      else { buf += chars[i]; i++; }
    }
    if (buf) { rest.push(buf); }
    return {terms: terms, rest: rest, trailing: buf};  // trailing: the leftover that ends the run ("" for none)
  }
  function bigrams(piece) {
    var c = Array.from(piece).filter(function (x) { return x !== "・" && x !== "･"; });
    if (c.length === 1) { return c; }
    var out = [];
    for (var i = 0; i + 1 < c.length; i++) { out.push(c[i] + c[i + 1]); }
    return out;
  }
  var encoder = new TextEncoder();
  function fnv1a(s) {
    var h = 0x811c9dc5, b = encoder.encode(s);
    for (var i = 0; i < b.length; i++) { h = Math.imul(h ^ b[i], 0x01000193) >>> 0; }
    return h >>> 0;
  }
  function ruleTarget(folded) {
    var m = K.ruleQuery.exec(folded);
    if (!m || (!m[2] && !/^\s*\D/.test(folded))) { return null; }  // a lone digit is a rule only with a prefix
    var number = m[1] + (m[2] || "") + (m[3] ? "." + m[3] + (m[4] || "") : "");
    if (!m[2]) { return {number: number, url: "cr/" + number + ".html"}; }
    var page = "cr/" + m[1] + m[2] + ".html";
    return {number: number, url: m[3] ? page + "#" + number : page};
  }

  /* -- search: the query (filters, rule numbers and ranges, as kb/search/query.py) -------------------------- */
  var FILTER = /(^|\s)(kind|lang|version):(\S*)/gi, PHRASE = /"([^"]*)"|\u300c([^\u300d]*)\u300d|\u201c([^\u201d]*)\u201d/g;
  function parseQuery(query) {  // filters, then "quoted phrases" (or 「…」, “…”): what is left is the text
    var q = {kind: null, lang: null, version: null, phrases: []};
    var rest = query.replace(FILTER, function (m, pre, name, value) { q[name.toLowerCase()] = value.toLowerCase(); return pre + " "; });
    q.text = rest.replace(PHRASE, function (m, a, b, c) {
      var p = a !== undefined ? a : b !== undefined ? b : c;
      if (p.trim()) { q.phrases.push(p); }
      return " ";
    }).split(/\s+/).filter(Boolean).join(" ");
    return q;
  }
  function ruleNumbers(folded) {  // the rule numbers a query asks for (a number in any form, or a range), or null;
    var t = ruleTarget(folded);      // each as its key in the name shards (kb.search.view.asked_by): "601.2" with its
    if (t) { return [/\.\s*$/.test(folded) ? t.number + "." : t.number]; }  // subrules, "601.2." alone
    var m = K.range.exec(folded.trim()), first = m && K.ruleQuery.exec(m[1]);
    var numbers = first ? expandRange(first.slice(1, 5), m[2].replace(/\.+$/, "")) : [];
    return numbers.length ? numbers.map(function (n) { return n + "."; }) : null;
  }
  function expandRange(a, last) {  // kb.rulenum.expand_range: a = [chapter, section digits, rule, letter] of the first
    var section = a[1] ? Number(a[0] + a[1]) : null, rule = a[2] ? Number(a[2]) : null, out = [], x;
    if (/^[a-z]$/.test(last)) {
      if (!a[3]) { return []; }
      var i = K.letters.indexOf(a[3]), j = K.letters.indexOf(last);
      return i < 0 || j < i ? [] : K.letters.slice(i, j + 1).split("").map(function (c) { return section + "." + rule + c; });
    }
    var b = K.whole.exec(last);
    if (!b) { return []; }
    var kind = function (p) { return p[3] ? 3 : p[2] ? 2 : p[1] ? 1 : 0; };
    if (kind(a) !== kind(b.slice(1, 5))) { return []; }
    var bSection = b[2] ? Number(b[1] + b[2]) : null, bRule = b[3] ? Number(b[3]) : null;
    if (a[3]) { return section === bSection && rule === bRule ? expandRange(a, b[4]) : []; }
    if (rule !== null) {
      if (section !== bSection || bRule < rule || bRule - rule > K.ruleSpan) { return []; }
      for (x = rule; x <= bRule; x++) { out.push(section + "." + x); }
    } else if (section !== null) {
      if (bSection < section || bSection - section > K.sectionSpan) { return []; }
      for (x = section; x <= bSection; x++) { out.push(String(x)); }
    } else {
      for (x = Number(a[0]); x <= Number(b[1]); x++) { out.push(String(x)); }
    }
    return out;
  }
  function katakana(s) { return s.replace(/[\u3041-\u3096]/g, function (c) { return String.fromCharCode(c.charCodeAt(0) + 0x60); }); }
  function firstShard(f) { return "n/" + f.codePointAt(0).toString(16); }

  /* The analysis of a query, as kb.search.analysis.query_terms: index terms (Latin words stemmed, Japanese runs
     segmented by the exported vocabulary), bigram groups for the rest, and the surfaces to highlight. */
  function analyseQuery(text) {
    return constants().then(function (meta) { return meta ? analysed(text) : {folded: "", terms: [], grams: [], marks: []}; });
  }
  function analysed(text) {
    var chars = fold(text), pieces = runs(chars), firsts = [];
    pieces.forEach(function (p) {  // the first characters whose vocabulary is loaded: at most K.maxVocab of them
      if (p[0] === "ja") { p[1].forEach(function (c) { if (firsts.length < K.maxVocab && firsts.indexOf(c) < 0) { firsts.push(c); } }); }
    });
    var dropped = null;  // the kana the analysis drops (meta.js "f"), wanted by a query with hiragana
    if (firsts.some(function (c) { return HIRAGANA.test(c); }) && loaded.meta.f) {
      dropped = {};
      loaded.meta.f.forEach(function (d) { dropped[d] = 1; });
    }
    return Promise.all(firsts.map(function (c) { return vocabulary(c); })).then(function (got) {
      var vocabs = {}, terms = [], grams = [], marks = [];
      firsts.forEach(function (c, k) { vocabs[c] = got[k]; });
      pieces.forEach(function (p) {
        if (p[0] === "latin") {
          terms = terms.concat(latinTerms(p[1]));
          (p[1].match(/[a-z0-9]+(?:\.[a-z0-9]+)*/g) || []).forEach(function (w) { if (w.length > 1) { marks.push(w); } });
          return;
        }
        var seg = segment(p[1], vocabs, dropped);
        terms = terms.concat(seg.terms);
        seg.terms.forEach(function (t) {  // every surface of the vocabulary that stands for the term
          marks.push(t);
          var vocab = own(vocabs, Array.from(t)[0]) || {};
          Object.keys(vocab).forEach(function (s) { if ((vocab[s] === 1 ? s : vocab[s]) === t) { marks.push(s); } });
        });
        seg.rest.forEach(function (r, k) {  // endings and particles: the kana the analysis drops (meta.js "f"), and any
          var ending = seg.terms.length && HIRAGANA.test(r) && (!dropped || (k === seg.rest.length - 1 && r === seg.trailing));
          if (ending || own(dropped, r)) { return; }  // kana ending a run after a term (多人数|せん, 唱え|た)
          if (Array.from(r).length > 1 || (!seg.terms.length && pieces.length === 1)) { grams.push(bigrams(r)); marks.push(r); }
        });
      });
      var sequence = terms;
      terms = terms.filter(function (t, i) { return terms.indexOf(t) === i; });
      return {folded: chars.join(""), terms: terms, sequence: sequence, grams: grams, marks: marks};
    });
  }
  window.kbAnalyse = analyseQuery;

  /* -- search: scoring ---------------------------------------------------------------------------------- */
  function allowed(d, q) {  // a document is one node: its kind and language
    if (q.kind && d[3] !== q.kind) { return false; }
    return !q.lang || d[4] === q.lang;
  }
  function docs(meta, ids, q, limit, partial) {  // the first `limit` URLs of the documents `ids` that pass the filters,
    var out = [], at = 0, urls = {}, entries = {};  // a rule and its translation (one entry: one URL) one result;
    var slot = q.lang ? (meta.langs || []).indexOf(q.lang) : -1;  // document 2k + slot is entry k's in langs[slot]
    function next() {  // loading only the chunks of the next documents that may be shown (one round trip, mostly)
      if (out.length >= limit || at >= ids.length) { return Promise.resolve(out); }
      var batch = [], fresh = 0;
      for (; at < ids.length && fresh < limit - out.length; at++) {
        var entry = Math.floor(ids[at] / 2);
        if (own(entries, entry) || (slot >= 0 && ids[at] % 2 !== slot)) { continue; }
        entries[entry] = 1;
        batch.push(ids[at]);
        fresh++;
      }
      var chunks = batch.map(function (id) { return Math.floor(id / meta.c); }).filter(function (c, i, all) { return all.indexOf(c) === i; });
      return Promise.all(chunks.map(function (c) { return load("d/" + c); })).then(function () {
        batch.forEach(function (id) {
          var chunk = loaded["d/" + Math.floor(id / meta.c)], d = chunk && chunk[id % meta.c];
          if (d && out.length < limit && allowed(d, q) && !own(urls, d[0])) {
            urls[d[0]] = 1;
            out.push({url: d[0], label: d[1], snippet: d[2], kind: d[3] || "", lang: d[4], partial: !!(partial && own(partial, id)), id: id});
          }
        });
        return next();
      });
    }
    return next();
  }
  function named(forms) {  // whole-query lookups (names, readings, rule numbers): document ids in order
    return Promise.all(forms.map(function (f) { return load(firstShard(f)); })).then(function (tables) {
      var ids = [];
      forms.forEach(function (f, k) { (own(tables[k], f) || []).forEach(function (id) { if (ids.indexOf(id) < 0) { ids.push(id); } }); });
      return ids;
    });
  }
  function englishNames(forms) {  // the English names the forms stand for: the vocabulary's form and a tab
    return Promise.all(forms.map(function (f) { return vocabulary(Array.from(f)[0]); })).then(function (vocabs) {
      var english = [];
      forms.forEach(function (f, k) { (own(vocabs[k], f + "\t") || []).forEach(function (e) { if (english.indexOf(e) < 0) { english.push(e); } }); });
      return english;
    });
  }
  function nameTerms(name) {  // the index terms of an English name, each once (as query_terms)
    var out = [];
    runs(fold(name)).forEach(function (p) { if (p[0] === "latin") { out = out.concat(latinTerms(p[1])); } });
    return out.filter(function (t, i) { return out.indexOf(t) === i; });
  }
  function search(query, limit) {
    return constants().then(function (meta) {
      var none = {jump: null, results: [], marks: []};
      if (!meta) { return none; }
      if (Array.from(query).length > K.maxQuery) {  // as kb search and kb serve refuse it
        return {jump: null, results: [], marks: [], error: "検索語が長すぎます（" + K.maxQuery + "文字まで）"};
      }
      return searchWith(meta, query, limit, none);
    });
  }
  function searchWith(meta, query, limit, none) {
    var q = parseQuery(query);
    if (!q.text && !q.phrases.length) { return Promise.resolve(none); }
    if (q.version) {  // the archive is searched live only
      return Promise.resolve({jump: null, results: [], marks: [], error: "version: の検索は kb search / kb serve で"});
    }
    var numbers = q.phrases.length ? null : ruleNumbers(fold(q.text).join(""));
    return (numbers ? named(numbers) : Promise.resolve([])).then(function (ruleIds) {
      if (ruleIds.length) {  // rule numbers that have pages: those rules, the first one to jump to
        return docs(meta, ruleIds, q, limit).then(function (results) {
          var number = numbers[0].replace(/\.$/, "");
          return {jump: numbers.length === 1 && results.length ? {number: number, url: results[0].url} : null,
                  results: results, marks: []};
        });
      }
      if (numbers || q.phrases.length) { return words(meta, q, limit); }  // as typed (kb/search/query.py)
      return words(meta, q, limit).then(function (found) { return forgiving(meta, q, limit, found); });
    });
  }
  function words(meta, q, limit) {  // names, then words ranked as kb/search/ranking.py; with phrases, no names
    return phraseDocs(meta, q.phrases || []).then(function (held) {  // and only the documents holding them
      return analyseQuery([q.text].concat(q.phrases || []).join(" ")).then(function (a) {
        var plain = a.folded.replace(/[\s・･]/g, "");
        var forms = held ? [] : [plain, katakana(plain), a.terms.join("")].filter(function (f, i, all) { return f && all.indexOf(f) === i; });
        var asked = a.terms.filter(function (t) { return K.question.indexOf(t) < 0; });  // kb/search/questions.py
        var question = asked.length >= K.minContent && asked.length < a.terms.length;
        var termLookups = (asked.length >= K.minContent ? asked : a.terms).map(function (t) { return ["p/" + (fnv1a(t) % meta.p), t, 1, 0]; });
        termLookups.slice(0, K.maxLookups).forEach(function (l) { load(l[0]); });  // fetched beside the names: one round trip less
        return englishNames(forms).then(function (english) {
          var lookups = termLookups.slice();
          english.forEach(function (e, n) {  // name n + 1
            nameTerms(e).forEach(function (t) { lookups.push(["p/" + (fnv1a(t) % meta.p), t, 1, n + 1]); });
          });
          a.grams.forEach(function (g) { g.forEach(function (t) { lookups.push(["g/" + (fnv1a(t) % meta.g), t, g.length, 0]); }); });
          lookups = lookups.slice(0, K.maxLookups);
          lookups.forEach(function (l) { load(l[0]); });  // all postings fetched beside the names: one round trip
          return named(forms).then(function (first) {
            docs(meta, first, q, limit);  // the names' documents come first: their chunks fetched beside the postings
            return Promise.all([first].concat(lookups.map(function (l) { return load(l[0]); }))).then(function (tables) {
              var first = tables[0], scores = {}, names = {};  // the whole query is a name: its rule, then its entry, first
              lookups.forEach(function (l, k) {  // kb/search/ranking.py, in integers as there
                var post = own(tables[k + 1], l[1]), name = l[3];
                if (!Array.isArray(post)) { return; }
                var df = post.length / 2, idf = Math.round(K.idfScale * Math.log(1 + (meta.n - df + 0.5) / (df + 0.5)));
                var gram = l[0].charAt(0) === "g", id = 0, into = scores;
                if (name) { into = names[name] || (names[name] = {}); }
                var cover = name ? 1 : gram ? Math.floor(K.cover / l[2]) : K.cover, weight = idf * (gram ? K.gramShare : K.termShare);
                for (var i = 0; i < post.length; i += 2) {
                  id += post[i];  // doc ids are stored as gaps
                  var e = into[id] || (into[id] = [0, 0]);
                  e[0] += cover;
                  e[1] += weight * post[i + 1];
                }
              });
              Object.keys(names).forEach(function (name) {  // an English name counts where all its words are
                var size = lookups.filter(function (l) { return String(l[3]) === name; }).length;
                Object.keys(names[name]).forEach(function (id) {
                  var held = names[name][id];
                  if (held[0] !== size) { return; }
                  var e = scores[id] || (scores[id] = [0, 0]);
                  e[0] += K.cover;
                  e[1] += held[1];
                });
              });
              var parts = {};  // a long article's sections answering a question: after the rest (ranking.rank_key)
              if (question) { (meta.sections || []).forEach(function (k) { parts[k] = 1; }); }
              var behind = function (id) { return own(parts, Math.floor(id / 2)) ? 1 : 0; };
              var ranked = first.concat(Object.keys(scores).map(Number).filter(function (id) { return first.indexOf(id) < 0 && (!held || own(held, id)); }).sort(function (x, y) {
                return (behind(x) - behind(y)) || (scores[y][0] - scores[x][0]) || (scores[y][1] - scores[x][1]) || (x - y);
              }));
              var full = 0, partial = {}, nameSet = {};  // "some words": below the coverage of every lookup
              lookups.forEach(function (l) {
                if (l[3]) { nameSet[l[3]] = 1; } else { full += l[0].charAt(0) === "g" ? Math.floor(K.cover / l[2]) : K.cover; }
              });
              full += K.cover * Object.keys(nameSet).length;
              Object.keys(scores).forEach(function (id) { if (scores[id][0] < full && first.indexOf(Number(id)) < 0) { partial[id] = 1; } });
              return docs(meta, ranked, q, limit, partial).then(function (results) {
                results.forEach(function (r) { r.named = first.indexOf(r.id) >= 0; });  // a name's, not the words'
                return {jump: null, results: results, marks: a.marks};
              });
            });
          });
        });
      });
    });
  }
  /* The documents holding every phrase (an object of ids), or null for none asked, as kb/search/query.py
     _phrase_query: a phrase of index terms holds them at consecutive positions of its title or body (the pairs of
     search/q/, kb/site/search_phrases.py: a pair's places, 2 × position + field), a phrase of one term is its
     postings; a phrase with a word the index lacks holds all its bigrams. */
  function phraseDocs(meta, phrases) {
    if (!phrases.length) { return Promise.resolve(null); }
    return Promise.all(phrases.map(function (phrase) {
      return analysed(phrase).then(function (a) {
        var terms = a.sequence;
        return Promise.all(terms.map(function (t) { return load("p/" + (fnv1a(t) % meta.p)); })).then(function (shards) {
          var known = terms.length && !a.grams.length && terms.every(function (t, k) { return Array.isArray(own(shards[k], t)); });
          if (known && terms.length > 1) { return pairDocs(meta, terms); }
          var keys = [];
          if (known) { keys = [["p/" + (fnv1a(terms[0]) % meta.p), terms[0]]]; }
          else {
            runs(fold(phrase)).forEach(function (p) {
              if (p[0] === "ja") { bigrams(p[1].join("")).forEach(function (g) { keys.push(["g/" + (fnv1a(g) % meta.g), g]); }); }
            });
          }
          return Promise.all(keys.map(function (k) { return load(k[0]); })).then(function (tables) {
            var held = null;
            keys.forEach(function (k, n) {
              var post = own(tables[n], k[1]) || [], here = {}, id = 0;
              for (var i = 0; i < post.length; i += 2) { id += post[i]; if (!held || own(held, id)) { here[id] = 1; } }
              held = here;
            });
            return held || {};  // a phrase of nothing indexable holds nowhere
          });
        });
      });
    })).then(function (each) {
      return each.reduce(function (held, docs) {
        var both = {};
        Object.keys(held).forEach(function (id) { if (own(docs, id)) { both[id] = 1; } });
        return both;
      });
    });
  }
  function pairDocs(meta, terms) {  // the documents where terms[0], terms[1], … stand at consecutive positions
    var pairs = [];
    for (var i = 0; i + 1 < terms.length; i++) { pairs.push(terms[i] + "\t" + terms[i + 1]); }
    return Promise.all(pairs.map(function (p) { return load("q/" + (fnv1a(p) % meta.q)); })).then(function (tables) {
      var places = pairs.map(function (p, k) {  // per pair: document → {place: 1}
        var coded = own(tables[k], p) || [], out = {}, id = 0;
        for (var i = 0; i < coded.length; i += 2 + coded[i + 1]) {
          id += coded[i];
          var at = out[id] = {};
          coded.slice(i + 2, i + 2 + coded[i + 1]).forEach(function (x) { at[x] = 1; });
        }
        return out;
      });
      var held = {};
      Object.keys(places[0]).forEach(function (id) {
        if (Object.keys(places[0][id]).some(function (x) {
          return places.every(function (byDoc, k) { return own(byDoc, id) && own(byDoc[id], Number(x) + 2 * k); });
        })) { held[id] = 1; }
      });
      return held;
    });
  }
  /* Forgiving queries, as kb/search/fuzzy.py corrected: a word of K.minFuzzy letters or more that is no index term
     becomes the nearest term of search/l.js (edit distance 1, 2 from K.twoEdits letters; one of its first two
     letters right; the most frequent, then the first, on a tie); a run of kana the vocabulary does not cover becomes
     the term of its reading (search/r/, kb/site/search_readings.py), else the terms whose readings cover it, longest
     first (the kana between kept as typed; every word of the result known). The query so rewritten is searched
     too: its results after those of the whole query as a name, before those of its words as typed
     (kb/search/query.py Searcher._forgiving). */
  function forgiving(meta, q, limit, found) {
    var text = fold(q.text).join(""), typos = [], kana = [];
    text.replace(/[a-z0-9]+/g, function (w, at) {
      if (w.length >= K.minFuzzy && !own(K.stop, w)) { typos.push([w, at, lightStem(w)]); }
      return w;
    });
    text.replace(/[\u3041-\u3096\u30a1-\u30fa\u30fc\u30fb\uff65]+/g, function (run, at) {
      var before = text.charAt(at - 1), after = text.charAt(at + run.length);  // a whole Japanese run only
      if (!(before && isJapanese(before)) && !(after && isJapanese(after))) { kana.push([run, at]); }
      return run;
    });
    if (!typos.length && !kana.length) { return Promise.resolve(found); }
    return Promise.all([
      Promise.all(typos.map(function (t) { return load("p/" + (fnv1a(t[2]) % meta.p)); })),
      Promise.all(kana.map(function (k) { return kanaRewrite(k[0]); }))
    ]).then(function (got) {
      typos = typos.filter(function (t, k) { return !Array.isArray(own(got[0][k], t[2])); });
      var rewrites = [];
      kana.forEach(function (k, n) { if (got[1][n]) { rewrites.push([k[1], k[0].length, got[1][n]]); } });
      return (typos.length ? load("l") : Promise.resolve(null)).then(function (lex) {
        typos.forEach(function (t) {
          var near = nearest(lex || {}, t[2]);
          if (near) { rewrites.push([t[1], t[0].length, near]); }
        });
        if (!rewrites.length) { return found; }
        var out = "", at = 0;
        rewrites.sort(function (x, y) { return x[0] - y[0]; }).forEach(function (r) { out += text.slice(at, r[0]) + r[2]; at = r[0] + r[1]; });
        var rewritten = {kind: q.kind, lang: q.lang, version: q.version, text: out + text.slice(at)};
        return words(meta, rewritten, limit).then(function (better) {
          var seen = {}, results = [];
          var all = found.results.filter(function (r) { return r.named; }).concat(better.results,
            found.results.filter(function (r) { return !r.named; }));
          all.forEach(function (r) { if (!own(seen, r.url) && results.length < limit) { seen[r.url] = 1; results.push(r); } });
          return {jump: null, results: results, marks: found.marks.concat(better.marks)};
        });
      });
    });
  }
  /* A kana run (folded) as indexed terms by reading (kb/search/fuzzy.py _japanese on a kana run), or null. */
  function kanaRewrite(run) {
    var typed = Array.from(run).filter(function (c) { return c !== "・" && c !== "･"; });
    var reading = typed.map(function (c) { return katakana(c); }), firsts = reading.filter(function (c, i) { return reading.indexOf(c) === i; });
    return Promise.all(firsts.map(function (c) { return load("r/" + c.codePointAt(0).toString(16)); })).then(function (got) {
      var shards = {};
      firsts.forEach(function (c, k) { shards[c] = got[k]; });
      var term = function (r) { return own(shards[r[0]], r); };
      var whole = term(reading.join(""));
      if (whole && whole !== typed.join("")) { return whole; }  // the run as one word of that reading
      var out = "", i = 0, matched = false;
      while (i < reading.length) {
        var n = Math.min(K.maxReading, reading.length - i), t = null;
        for (; n > 1 && !(t = term(reading.slice(i, i + n).join(""))); n--) { /* the longest reading first */ }
        if (t) { out += t; i += n; matched = true; } else { out += typed[i]; i++; }
      }
      if (!matched || out === typed.join("")) { return null; }
      return analysed(out).then(function (b) { return b.grams.length ? null : out; });  // every word of it known
    });
  }

  function nearest(lex, word) {
    var most = word.length >= K.twoEdits ? 2 : 1, best = null;
    Object.keys(lex).forEach(function (t) {
      if (Math.abs(t.length - word.length) > most || !(t[0] === word[0] || t.slice(1, 2) === word.slice(1, 2))) { return; }
      var d = editDistance(word, t, most);
      if (d > most) { return; }
      if (!best || d < best[0] || (d === best[0] && (lex[t] > best[1] || (lex[t] === best[1] && t < best[2])))) { best = [d, lex[t], t]; }
    });
    return best && best[2];
  }
  function editDistance(a, b, most) {  // Levenshtein, or most + 1 once it must exceed most (kb/search/fuzzy.py)
    var previous = [];
    for (var j = 0; j <= b.length; j++) { previous.push(j); }
    for (var i = 1; i <= a.length; i++) {
      var current = [i], low = i;
      for (j = 1; j <= b.length; j++) {
        current.push(Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
        low = Math.min(low, current[j]);
      }
      if (low > most) { return most + 1; }
      previous = current;
    }
    return previous[b.length];
  }
  window.kbSearch = search;
  /* a search file as the search reads it (a p/, g/ or q/ shard with the delta merged in), or null: for checks */
  search.shard = function (name) { return constants().then(function () { return load(name); }); };

  function highlighted(text, marks) {  // a fragment: text with each mark (case-insensitive) in <mark>
    var frag = document.createDocumentFragment();
    var words = marks.filter(function (m, i) { return m && marks.indexOf(m) === i; }).sort(function (x, y) { return y.length - x.length; });
    if (!words.length) { frag.appendChild(document.createTextNode(text)); return frag; }
    var re = new RegExp(words.map(function (w) { return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }).join("|"), "gi"), at = 0, m;
    while ((m = re.exec(text)) !== null) {
      if (!m[0]) { re.lastIndex++; continue; }
      frag.appendChild(document.createTextNode(text.slice(at, m.index)));
      var mark = document.createElement("mark"); mark.textContent = m[0]; frag.appendChild(mark);
      at = m.index + m[0].length;
    }
    frag.appendChild(document.createTextNode(text.slice(at)));
    return frag;
  }
  function resultLink(x, marks) {
    var a = document.createElement("a");
    a.href = root + x.url;
    if (x.kind) { var k = document.createElement("span"); k.className = "kind kind-" + x.kind; k.textContent = own(K.kinds, x.kind) || x.kind; a.appendChild(k); }
    var l = document.createElement("span");
    l.className = "label";
    l.appendChild(highlighted(x.label, marks || []));
    a.appendChild(l);
    if (x.snippet) { var s = document.createElement("span"); s.className = "snippet"; s.appendChild(highlighted(x.snippet, marks || [])); a.appendChild(s); }
    return a;
  }

  /* -- search box in the header ------------------------------------------------------------------------ */
  var form = document.querySelector(".search-form");
  if (form) {
    var input = form.querySelector(".search-input"), box = form.querySelector(".search-results");
    var timer = 0, serial = 0, busy = 0, SHOWN = 8;
    var run = function () {
      var q = input.value, mine = ++serial;
      timer = 0;
      if (!q.trim()) { box.hidden = true; box.textContent = ""; return; }
      busy++;
      search(q, SHOWN + 1).then(function (r) {  // one more than shown: whether the search page has more
        busy--;
        if (mine !== serial) { return; }
        box.textContent = "";
        r.results.slice(0, SHOWN).forEach(function (x) { box.appendChild(resultLink(x, r.marks)); });
        if (r.results.length > SHOWN) {
          var all = document.createElement("a"); all.className = "all"; all.href = root + "search.html?q=" + encodeURIComponent(q);
          all.textContent = "すべての結果を見る →"; box.appendChild(all);
        }
        if (!r.results.length) {
          var none = document.createElement("div"); none.className = "none"; none.textContent = r.error || "見つかりませんでした"; box.appendChild(none);
        }
        box.hidden = false;
      });
    };
    /* a keystroke is searched at once when no search is under way (a first query waits for nothing); while one is,
       40 ms after the last keystroke (its shards load meanwhile) */
    input.addEventListener("input", function () {
      clearTimeout(timer);
      if (busy || timer) { timer = setTimeout(run, 40); } else { run(); }
    });
    /* what every query needs (meta.js: the constants, the vocabulary) is fetched when the box is focused or the
       pointer comes into the header, never with the page */
    input.addEventListener("focus", function () { constants(); if (box.childNodes.length) { box.hidden = false; } });
    (header || form).addEventListener("pointerenter", function () { constants(); });
    input.addEventListener("keydown", function (e) {
      var links = Array.prototype.slice.call(box.querySelectorAll("a"));
      var at = links.indexOf(document.activeElement);
      if (e.key === "ArrowDown" && links.length) { e.preventDefault(); links[Math.min(at + 1, links.length - 1)].focus(); }
      if (e.key === "Escape") { box.hidden = true; }
    });
    box.addEventListener("keydown", function (e) {
      var links = Array.prototype.slice.call(box.querySelectorAll("a"));
      var at = links.indexOf(document.activeElement);
      if (e.key === "ArrowDown") { e.preventDefault(); if (at + 1 < links.length) { links[at + 1].focus(); } }
      if (e.key === "ArrowUp") { e.preventDefault(); if (at > 0) { links[at - 1].focus(); } else { input.focus(); } }
    });
    form.addEventListener("submit", function (e) {  // a rule number that has a page: go there; else the search page
      e.preventDefault();
      var q = input.value;
      search(q, 1).then(function (r) {
        location.href = r.jump ? root + r.jump.url : root + "search.html?q=" + encodeURIComponent(q);
      });
    });
    document.addEventListener("click", function (e) { if (!form.contains(e.target)) { box.hidden = true; } });
    box.addEventListener("click", function (e) {  // a hit on this very page: the jump must not land under the list
      if (e.target.closest && e.target.closest("a")) { box.hidden = true; input.blur(); }
    });
  }

  /* -- the search page ---------------------------------------------------------------------------------- */
  var pageList = document.querySelector(".search-page-results");
  if (pageList) {
    var pageInput = document.querySelector(".search-page-input");
    var q = new URLSearchParams(location.search).get("q") || "";
    pageInput.value = q;
    var count = document.querySelector(".search-count"), MOST = 50;
    if (q.trim()) {
      search(q, MOST + 1).then(function (r) {  // one more than shown: whether there are more
        r.results.slice(0, MOST).forEach(function (x) { var li = document.createElement("li"); li.appendChild(resultLink(x, r.marks)); pageList.appendChild(li); });
        if (count && r.results.length) {
          count.textContent = "「" + q + "」の検索結果：" + (r.results.length > MOST ? "上位 " + MOST + " 件を表示" : r.results.length + " 件");
        }
        if (!r.results.length) {  // said once, not as a numbered result
          var none = document.createElement("p"); none.className = "none"; none.textContent = r.error || "見つかりませんでした";
          pageList.parentNode.insertBefore(none, pageList.nextSibling);
        }
      });
    }
  }
}());
