/* MTG総合ルール — the English toggle, hover/tap previews of referenced rules and glossary terms, and the static search.
   Everything is local: search shards are plain scripts under search/ loaded with <script> tags, so the search
   works from any static server and from file://. The query is analysed like kb search does it (see
   kb/site/search_export.py): NFKC + lower case, Latin words stemmed, Japanese runs segmented by longest match
   against the exported vocabulary, character bigrams for what the vocabulary does not cover. */
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

  /* -- previews ------------------------------------------------------------------------------------------ */
  /* A reference previews what it links to: on hover or keyboard focus; on a touch screen the first tap shows the
     preview and a second tap on the same reference (or the preview's 開く link) follows it. */
  var pop = null, popFor = null, hideTimer = 0, lastPointer = "mouse", focusByPointer = false;
  var PREVIEWABLE = "a.ref-rule, a.ref-section, a.ref-term, a.ref-auto-term, a.ref-wiki, a.ref-card, a.ref-note";
  var SHARD_PREFIX = {glossary: "gl", wiki: "wiki", cards: "cards", notes: "notes"};
  function closestPreview(el) { return el && el.closest ? el.closest(PREVIEWABLE) : null; }
  function ruleOf(a) {  // cr/601.html#601.2f → 601.2f; cr/601.html → 601
    var url = new URL(a.href, location.href);
    var number = url.hash ? decodeURIComponent(url.hash.slice(1)) : url.pathname.split("/").pop().replace(/\.html$/, "");
    return /^[1-9](\d\d(\.\d+[a-z]?)?)?$/.test(number) ? number : null;
  }
  function pageOf(a) {  // glossary/唱える.html → ["gl", "唱える"]: the shard prefix and the key in previews/<prefix>-*.js
    var m = /\/(glossary|wiki|cards|notes)\/([^\/]+)\.html$/.exec(new URL(a.href, location.href).pathname);
    return m ? [SHARD_PREFIX[m[1]], decodeURIComponent(m[2])] : null;
  }
  function previewShard(a) {  // [shard, key] of the text a reference previews (see kb/site/pages.py), or null
    if (a.matches("a.ref-rule, a.ref-section")) {
      var number = ruleOf(a);
      return number && ["pv/" + (number.length >= 3 ? number.slice(0, 3) : "chapters"), number];
    }
    var page = pageOf(a);
    return page && ["pv/" + page[0] + "-" + page[1].codePointAt(0).toString(16), page[1]];
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
    var shard = previewShard(a);
    body.textContent = "…";
    if (shard) {
      load(shard[0]).then(function (texts) { body.textContent = (texts && texts[shard[1]]) || ""; });
    }
    var go = document.createElement("a");
    go.className = "go";
    go.href = a.href;
    go.textContent = "開く →";
    pop.appendChild(head); pop.appendChild(body); pop.appendChild(go);
    document.body.appendChild(pop);
    var r = a.getBoundingClientRect();
    var maxLeft = window.scrollX + doc.clientWidth - pop.offsetWidth - 6;
    pop.style.left = Math.max(window.scrollX + 6, Math.min(window.scrollX + r.left, maxLeft)) + "px";
    pop.style.top = (window.scrollY + r.bottom + 6) + "px";
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
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") { hidePreview(); } });

  /* -- search: loading shards ------------------------------------------------------------------------------ */
  var loaded = {}, waiting = {};
  window.__kbSearch = function (name, data) {
    loaded[name] = data;
    (waiting[name] || []).forEach(function (f) { f(data); });
    delete waiting[name];
  };
  function load(name) {
    if (Object.prototype.hasOwnProperty.call(loaded, name)) { return Promise.resolve(loaded[name]); }
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

  /* -- search: analysis (mirrors kb/search/analysis.py) ---------------------------------------------------- */
  var STOP = {};
  "a an and are as at be by for from in is it its of on or that the this to with".split(" ").forEach(function (w) { STOP[w] = 1; });
  var RULE_WORD = /^[1-9]\d\d\.\d{1,3}[a-z]?$/;
  var JA_CHAR = /[\p{L}\p{N}\p{M}]/u;
  function fold(text) {
    var out = [];
    Array.from(text).forEach(function (ch) {
      var f = ch.charCodeAt(0) < 128 ? ch.toLowerCase() : ch.normalize("NFKC").toLowerCase();
      if ((f === "\u3099" || f === "\u309a" || f === " \u3099" || f === " \u309a") && out.length) {
        var combined = (out[out.length - 1] + f.trim()).normalize("NFC");
        if (combined.length === 1) { out[out.length - 1] = combined; return; }
      }
      Array.from(f).forEach(function (c) { out.push(c); });
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
      if (RULE_WORD.test(word)) { out.push(word); return; }
      (word.match(/[a-z0-9]+/g) || []).forEach(function (w) {
        if (STOP[w] || (w.length === 1 && /[a-z]/.test(w))) { return; }
        out.push(lightStem(w));
      });
    });
    return out;
  }
  function segment(chars, vocabs) {
    var terms = [], rest = [], buf = "", i = 0;
    while (i < chars.length) {
      var vocab = vocabs[chars[i]], found = 0, term = null;
      if (vocab) {
        for (var j = chars.length; j > i; j--) {
          var s = chars.slice(i, j).join("");
          if (Object.prototype.hasOwnProperty.call(vocab, s)) { found = j - i; term = vocab[s] === 1 ? s : vocab[s]; break; }
        }
      }
      if (found) { if (buf) { rest.push(buf); buf = ""; } terms.push(term); i += found; }
      else { buf += chars[i]; i++; }
    }
    if (buf) { rest.push(buf); }
    return {terms: terms, rest: rest};
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
  var RULE_QUERY = /^\s*(?:cr\s*[:：]?|rules?|ルール|総合ルール|section|sections|セクション)?\s*([1-9])(?:(\d\d)(?:\.(\d{1,3})([a-km-np-z])?)?)?\.?\s*$/;
  function ruleTarget(folded) {
    var m = RULE_QUERY.exec(folded);
    if (!m || (!m[2] && !/^\s*\D/.test(folded))) { return null; }  // a lone digit is a rule only with a prefix
    var number = m[1] + (m[2] || "") + (m[3] ? "." + m[3] + (m[4] || "") : "");
    if (!m[2]) { return {number: number, url: "cr/" + number + ".html"}; }
    var page = "cr/" + m[1] + m[2] + ".html";
    return {number: number, url: m[3] ? page + "#" + number : page};
  }

  /* -- search: scoring ---------------------------------------------------------------------------------- */
  function search(query, limit) {
    var chars = fold(query), folded = chars.join("");
    var jump = ruleTarget(folded);
    var pieces = runs(chars), firsts = {};
    pieces.forEach(function (p) { if (p[0] === "ja") { p[1].forEach(function (c) { firsts[c] = 1; }); } });
    var firstChars = Object.keys(firsts);
    return Promise.all([load("meta")].concat(firstChars.map(function (c) { return load("v/" + c.codePointAt(0).toString(16)); })))
      .then(function (got) {
        var meta = got[0], vocabs = {};
        if (!meta) { return {jump: jump, results: jump ? [{url: jump.url, label: "ルール " + jump.number + " へ移動", snippet: ""}] : []}; }
        firstChars.forEach(function (c, k) { vocabs[c] = got[k + 1]; });
        var terms = [], grams = [];
        pieces.forEach(function (p) {
          if (p[0] === "latin") { terms = terms.concat(latinTerms(p[1])); return; }
          var seg = segment(p[1], vocabs);
          terms = terms.concat(seg.terms);
          seg.rest.forEach(function (r) { if (Array.from(r).length > 1 || (!seg.terms.length && pieces.length === 1)) { grams.push(bigrams(r)); } });
        });
        terms = terms.filter(function (t, i) { return terms.indexOf(t) === i; });
        var forms = [folded.replace(/[\s・･]/g, ""), terms.join("")].filter(function (f, i, all) { return f && all.indexOf(f) === i; });
        var lookups = terms.map(function (t) { return ["p/" + (fnv1a(t) % meta.p), t, 1]; });
        grams.forEach(function (g) { g.forEach(function (t) { lookups.push(["g/" + (fnv1a(t) % meta.g), t, g.length]); }); });
        var nameShards = forms.map(function (f) { return "n/" + f.codePointAt(0).toString(16); });
        return Promise.all(lookups.map(function (l) { return load(l[0]); }).concat(nameShards.map(load))).then(function (tables) {
          var named = [];  // the whole query is a glossary name: its rule, then the entry, first (as kb search)
          forms.forEach(function (f, k) {
            var hit = tables[lookups.length + k] && tables[lookups.length + k][f];
            (hit || []).forEach(function (id) { if (named.indexOf(id) < 0) { named.push(id); } });
          });
          var scores = {};
          lookups.forEach(function (l, k) {
            var post = tables[k] && tables[k][l[1]];
            if (!post) { return; }
            var df = post.length / 2, idf = Math.log(1 + (meta.n - df + 0.5) / (df + 0.5));
            var gram = l[0].charAt(0) === "g", id = 0;
            for (var i = 0; i < post.length; i += 2) {
              id += post[i];  // doc ids are stored as gaps
              var e = scores[id] || (scores[id] = [0, 0]);
              e[0] += gram ? 1 / l[2] : 1;
              e[1] += (gram ? 0.5 : 1) * idf * post[i + 1] / 10;
            }
          });
          var ranked = named.concat(Object.keys(scores).map(Number).filter(function (id) { return named.indexOf(id) < 0; }).sort(function (a, b) {
            return (scores[b][0] - scores[a][0]) || (scores[b][1] - scores[a][1]) || (a - b);
          })).slice(0, limit);
          var chunks = ranked.map(function (id) { return Math.floor(id / meta.c); });
          chunks = chunks.filter(function (c, i) { return chunks.indexOf(c) === i; });
          return Promise.all(chunks.map(function (c) { return load("d/" + c); })).then(function () {
            var results = ranked.map(function (id) {
              var chunk = loaded["d/" + Math.floor(id / meta.c)], d = chunk && chunk[id % meta.c];
              return d ? {url: d[0], label: d[1], snippet: d[2]} : null;
            }).filter(Boolean);
            if (jump) {  // a rule number: that rule first, as kb search does
              results = [{url: jump.url, label: "ルール " + jump.number + " へ移動", snippet: ""}].concat(
                results.filter(function (x) { return x.url !== jump.url; })).slice(0, limit);
            }
            return {jump: jump, results: results};
          });
        });
      });
  }
  window.kbSearch = search;

  function resultLink(url, label, snippet) {
    var a = document.createElement("a");
    a.href = root + url;
    var l = document.createElement("span");
    l.className = "label";
    l.textContent = label;
    a.appendChild(l);
    if (snippet) { var s = document.createElement("span"); s.className = "snippet"; s.textContent = snippet; a.appendChild(s); }
    return a;
  }

  /* -- search box in the header ------------------------------------------------------------------------ */
  var form = document.querySelector(".search-form");
  if (form) {
    var input = form.querySelector(".search-input"), box = form.querySelector(".search-results");
    var timer = 0, serial = 0, current = null;
    var run = function () {
      var q = input.value, mine = ++serial;
      if (!q.trim()) { box.hidden = true; box.textContent = ""; current = null; return; }
      search(q, 8).then(function (r) {
        if (mine !== serial) { return; }
        current = r;
        box.textContent = "";
        r.results.forEach(function (x) { box.appendChild(resultLink(x.url, x.label, x.snippet)); });
        if (!r.results.length) {
          var none = document.createElement("div"); none.className = "none"; none.textContent = "見つかりませんでした"; box.appendChild(none);
        }
        box.hidden = false;
      });
    };
    input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 120); });
    input.addEventListener("focus", function () { if (box.childNodes.length) { box.hidden = false; } });
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
    form.addEventListener("submit", function (e) {
      var jump = ruleTarget(fold(input.value).join(""));
      if (jump) { e.preventDefault(); location.href = root + jump.url; }
    });
    document.addEventListener("click", function (e) { if (!form.contains(e.target)) { box.hidden = true; } });
  }

  /* -- the search page ---------------------------------------------------------------------------------- */
  var pageList = document.querySelector(".search-page-results");
  if (pageList) {
    var pageInput = document.querySelector(".search-page-input");
    var q = new URLSearchParams(location.search).get("q") || "";
    pageInput.value = q;
    if (q.trim()) {
      search(q, 50).then(function (r) {
        r.results.forEach(function (x) { var li = document.createElement("li"); li.appendChild(resultLink(x.url, x.label, x.snippet)); pageList.appendChild(li); });
        if (!r.results.length) { var none = document.createElement("li"); none.textContent = "見つかりませんでした"; pageList.appendChild(none); }
      });
    }
  }
}());
