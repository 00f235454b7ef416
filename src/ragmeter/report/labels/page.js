// ragmeter's labelling page: shows the sampled rows held in #data, keeps the labels in
// localStorage and exports them as labels.jsonl. Texts from the data are set with
// textContent only, never parsed as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var CLAIMS = data.kind === "claims";
  var LABELS = [
    ["supported", "supported", "s"],
    ["not_supported", "not supported", "n"],
    ["unsure", "can't tell", "u"]
  ];
  var lo = data.range[0], hi = data.range[1];
  var STEPS = [0, 0.25, 0.5, 0.75, 1].map(function (f) { return round(lo + f * (hi - lo)); });

  var store = null;
  try {
    store = window.localStorage;
    store.getItem(data.key);
  } catch (e) {
    store = null;
  }
  var state = { labels: {}, labeller: "", cursor: 0 };
  try {
    var saved = store && JSON.parse(store.getItem(data.key) || "null");
    if (saved && typeof saved.labels === "object" && saved.labels) state = saved;
  } catch (e) { /* a damaged entry: start again */ }

  var items = [];
  var cursor = -1;
  var app = document.getElementById("app");

  function round(x) { return Math.round(x * 10000) / 10000; }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function save() {
    if (!store) return;
    try { store.setItem(data.key, JSON.stringify(state)); } catch (e) { /* full or denied */ }
  }

  // The text with the evidence spans of its claims in <mark> elements (data-c: the claims).
  function marked(text, marks) {
    var box = el("span", "txt");
    var cuts = [0, text.length];
    marks.forEach(function (m) {
      cuts.push(Math.min(m[0], text.length), Math.min(m[1], text.length));
    });
    cuts = cuts.filter(function (c, i, all) { return all.indexOf(c) === i; });
    cuts.sort(function (a, b) { return a - b; });
    for (var i = 0; i + 1 < cuts.length; i++) {
      var a = cuts[i], b = cuts[i + 1];
      var by = marks.filter(function (m) { return m[0] <= a && m[1] >= b; })
        .map(function (m) { return m[2]; });
      var part = text.slice(a, b);
      if (!by.length) {
        box.appendChild(document.createTextNode(part));
        continue;
      }
      var mark = el("mark", null, part);
      mark.setAttribute("data-c", " " + by.join(" ") + " ");
      mark.title = "evidence of " + by.map(function (c) {
        return (c.charAt(0) === "r" ? "reference claim " : "claim ") + (Number(c.slice(1)) + 1);
      }).join(", ");
      box.appendChild(mark);
    }
    return box;
  }

  function field(parent, name, child) {
    var box = el("div", "field");
    box.appendChild(el("b", null, name));
    box.appendChild(child);
    parent.appendChild(box);
  }

  function keyOf(row, part) { return JSON.stringify([row.id, part]); }

  // The mark token of a claim: "a0" for answer claim 0 against the contexts, "p0" for answer
  // claim 0 against the reference answers, "r0" for reference claim 0.
  function token(source, claim, against) {
    if (source === "reference") return "r" + claim;
    return (against === "reference" ? "p" : "a") + claim;
  }
  var ANSWER_AGAINST = data.answer_against || ["contexts"];
  var QUESTION = {
    contexts: "do the contexts support it?",
    reference: "does a reference answer state it?"
  };

  function header() {
    var head = el("header");
    head.appendChild(el("h1", null, "Label " + data.metric + " · " + data.results));
    var note = data.selection === "stratified"
      ? el("p", "warn", "Stratified sample by " + data.metric + " score band, for looking " +
        "only: its labels are marked \"selection\": \"stratified\" and are never used for " +
        "estimates.")
      : data.selection === "uncertainty"
      ? el("p", null, "A sample of " + data.rows.length + " of the " + data.population +
        " rows with a " + data.metric + " score drawn by the judge's uncertainty (about " +
        data.sample + " asked for, seed " + data.seed + "): rows where the judge is unsure " +
        "are more likely to be here, and each row's probability goes with its labels, so " +
        "they can calibrate the judge's estimates.")
      : el("p", null, "A uniform random sample of " + data.rows.length + " of the " +
        data.population + " rows with a " + data.metric + " score (seed " + data.seed +
        "): its labels can calibrate the judge's estimates.");
    note.id = "selection";
    head.appendChild(note);
    // Ask only about the claims the page shows: a faithfulness page has no reference claims.
    var hasAnswerClaims = data.rows.some(function (r) { return (r.claims || []).length; });
    var hasRefClaims = data.rows.some(function (r) { return (r.reference_claims || []).length; });
    head.appendChild(el("p", null, CLAIMS
      ? (hasAnswerClaims || !hasRefClaims ? "For each claim of the answer: " +
        ANSWER_AGAINST.map(function (a) { return QUESTION[a]; }).join(" And ") + " " : "") +
        (hasRefClaims ? "For each claim of the reference answers: " +
          (data.reference_against === "contexts"
            ? "do the contexts support it? " : "does the answer state it? ") : "") +
        "Marked spans are where the judge looked."
      : "Give each row the " + data.metric + " score you judge right, between " + lo +
        " and " + hi + "."));
    var bar = el("div", "bar");
    var progress = el("span");
    progress.id = "progress";
    bar.appendChild(progress);
    var name = el("input");
    name.id = "labeller";
    name.placeholder = "your name";
    name.value = state.labeller || "";
    name.addEventListener("input", function () { state.labeller = name.value; save(); });
    var who = el("label", null, "labeller ");
    who.appendChild(name);
    bar.appendChild(who);
    var exp = el("button", null, "Export labels.jsonl");
    exp.id = "export";
    exp.addEventListener("click", exportLabels);
    bar.appendChild(exp);
    var status = el("span");
    status.id = "status";
    bar.appendChild(status);
    if (data.target_width) {
      var budget = el("span");
      budget.id = "budget";
      bar.appendChild(budget);
    }
    bar.appendChild(el("span", "keys", CLAIMS
      ? "keys: s supported · n not supported · u can't tell · x clear · j next · k previous"
      : "keys: 1–5 score " + STEPS.join(" / ") + " · x clear · j next · k previous · " +
        "or type a score"));
    head.appendChild(bar);
    if (!store) {
      head.appendChild(el("p", "warn", "This browser keeps no local storage for this page: " +
        "labels are lost when it closes. Export before closing."));
    }
    return head;
  }

  function labelButtons(item, box) {
    LABELS.forEach(function (spec) {
      var button = el("button", null, spec[1] + " (" + spec[2] + ")");
      button.setAttribute("data-label", spec[0]);
      button.addEventListener("click", function (event) {
        event.stopPropagation();
        go(item.n);
        setLabel(item, { label: spec[0] });
      });
      box.appendChild(button);
    });
  }

  function scoreInputs(item, box) {
    STEPS.forEach(function (value, i) {
      var button = el("button", null, String(value));
      button.setAttribute("data-value", String(value));
      button.title = "key " + (i + 1);
      button.addEventListener("click", function (event) {
        event.stopPropagation();
        go(item.n);
        setLabel(item, { value: value });
      });
      box.appendChild(button);
    });
    var input = el("input");
    input.type = "number";
    input.step = "any";
    input.min = String(lo);
    input.max = String(hi);
    input.setAttribute("aria-label", "score");
    input.addEventListener("change", function () {
      var value = input.value === "" ? null : Number(input.value);
      if (value === null) setLabel(item, null);
      else if (isFinite(value) && value >= lo && value <= hi) setLabel(item, { value: value });
      else flash("A score lies between " + lo + " and " + hi + "; got " + input.value + ".");
    });
    box.appendChild(input);
    item.input = input;
  }

  function addItem(row, claim, container, text, source, against) {
    var item = {
      n: items.length, row: row, claim: claim, source: source || "answer",
      against: against || (source === "reference" ? data.reference_against : "contexts")
    };
    // Answer claims against the contexts keep the keys pages before the others saved them
    // under.
    item.key = keyOf(row, !CLAIMS ? data.metric
      : item.source === "reference" ? "r" + claim
      : item.against === "reference" ? "p" + claim : claim);
    var node = el("div", "item");
    node.setAttribute("data-item", String(item.n));
    node.setAttribute("data-source", item.source);
    node.setAttribute("data-against", item.against);
    node.appendChild(el("span", "n", CLAIMS ? String(claim + 1) : ""));
    node.appendChild(el("span", "txt", text));
    var buttons = el("span", "choices");
    if (CLAIMS) labelButtons(item, buttons); else scoreInputs(item, buttons);
    node.appendChild(buttons);
    node.addEventListener("click", function () { go(item.n); });
    item.el = node;
    items.push(item);
    container.appendChild(node);
    show(item);
  }

  function renderRow(row, main) {
    var card = el("section", "row");
    card.appendChild(el("h2", null, "row " + row.index + (row.id !== row.index
      ? " · id " + row.id : "")));
    if (row.question !== null) field(card, "question", el("div", "txt", row.question));
    var toContexts = data.reference_against === "contexts";
    var refMarks = (row.reference_marks || []).map(function (m) {
      return [m[0], m[1], m[2], token("reference", m[3])];
    });
    var ctxMarks = row.marks.map(function (m) {
      return [m[0], m[1], m[2], token("answer", m[3], "contexts")];
    }).concat(toContexts ? refMarks : []);
    var precisionMarks = (row.precision_marks || []).map(function (m) {
      return [m[0], m[1], m[2], token("answer", m[3], "reference")];
    });
    if (row.answer !== null) {
      field(card, "answer", marked(row.answer, toContexts ? [] : refMarks
        .map(function (m) { return [m[1], m[2], m[3]]; })));
    }
    if ((row.references || []).length) {
      var refs = el("div");
      row.references.forEach(function (text, j) {
        var box = el("div", "ctx");
        box.appendChild(el("b", null, "reference " + j + ": "));
        box.appendChild(marked(text, precisionMarks.filter(function (m) { return m[0] === j; })
          .map(function (m) { return [m[1], m[2], m[3]]; })));
        refs.appendChild(box);
      });
      field(card, "reference answers", refs);
    }
    if (row.contexts !== null) {
      var list = el("div");
      row.contexts.forEach(function (text, j) {
        var box = el("div", "ctx");
        box.appendChild(el("b", null, "context " + j + ": "));
        var marks = ctxMarks.filter(function (m) { return m[0] === j; })
          .map(function (m) { return [m[1], m[2], m[3]]; });
        box.appendChild(marked(text, marks));
        list.appendChild(box);
      });
      if (row.more_contexts) list.appendChild(el("i", null, "… " + row.more_contexts + " more"));
      if (!row.contexts.length) list.appendChild(el("i", null, "(none)"));
      field(card, "contexts", list);
    }
    if (row.question === null && row.answer === null && row.contexts === null) {
      card.appendChild(el("p", "warn", "The input texts of this row were not found: run " +
        "'ragmeter label' with --data FILE (the input the run scored) to show them."));
    }
    var box = el("div");
    var refClaims = row.reference_claims || [];
    if (CLAIMS) {
      var several = ANSWER_AGAINST.length > 1 || ANSWER_AGAINST[0] !== "contexts";
      ANSWER_AGAINST.forEach(function (against, k) {
        var claimBox = k === 0 ? box : el("div");
        row.claims.forEach(function (claim, i) {
          addItem(row, i, claimBox, claim, "answer", against);
        });
        if (!row.claims.length && !refClaims.length && k === 0) {
          claimBox.appendChild(el("i", null, "(no claims)"));
        }
        if (row.claims.length || (!refClaims.length && k === 0)) {
          field(card, several ? "claims (" + QUESTION[against] + ")" : "claims", claimBox);
        }
      });
      if (refClaims.length) {
        var refBox = el("div");
        refClaims.forEach(function (claim, i) {
          addItem(row, i, refBox, claim, "reference");
        });
        field(card, "claims of the reference answers (" + (toContexts
          ? "do the contexts support it?" : "does the answer state it?") + ")", refBox);
      }
    } else {
      addItem(row, null, box, data.metric);
      field(card, "your score", box);
    }
    main.appendChild(card);
  }

  function show(item) {
    var saved = state.labels[item.key];
    item.el.querySelectorAll("button").forEach(function (button) {
      var on = saved && (CLAIMS ? button.getAttribute("data-label") === saved.label
        : Number(button.getAttribute("data-value")) === saved.value);
      button.classList.toggle("sel", !!on);
    });
    if (item.input && document.activeElement !== item.input) {
      item.input.value = saved ? String(saved.value) : "";
    }
  }

  function progress() {
    var done = items.filter(function (item) { return state.labels[item.key]; }).length;
    var node = document.getElementById("progress");
    node.textContent = done + " of " + items.length + " labelled";
    node.className = done === items.length && items.length ? "done" : "";
    budget();
  }

  // Each labelled row's value as the people's labels give it (a row's score, or the share of
  // its labelled claims of the first kind called supported), beside the judge's score.
  function rowValues() {
    var out = [];
    data.rows.forEach(function (row) {
      var mine = items.filter(function (item) {
        return item.row === row && state.labels[item.key] && (!CLAIMS ||
          (item.source === "answer" && row.claims.length
            ? item.against === ANSWER_AGAINST[0] : item.source === "reference"));
      });
      var values = mine.map(function (item) {
        var saved = state.labels[item.key];
        return CLAIMS ? { supported: 1, not_supported: 0 }[saved.label] : saved.value;
      }).filter(function (v) { return v !== undefined; });
      if (!values.length) return;
      var sum = values.reduce(function (a, b) { return a + b; }, 0);
      out.push([sum / values.length, row.judge]);
    });
    return out;
  }

  // How near the labels so far bring a calibrated interval to the target width: the spread
  // of the people's values minus the judge's (the error the judge's scores leave), over the
  // labelled rows; a rough figure (calibrate gives the exact one).
  function budget() {
    var node = document.getElementById("budget");
    if (!node) return;
    var pairs = rowValues().filter(function (p) { return typeof p[1] === "number"; });
    var n = pairs.length;
    var target = data.target_width;
    if (n < 3) {
      node.textContent = "target width " + target + ": label 3 rows or more to see how far";
      return;
    }
    var d = pairs.map(function (p) { return p[0] - p[1]; });
    var mean = d.reduce(function (a, b) { return a + b; }, 0) / n;
    var variance = d.reduce(function (a, b) { return a + (b - mean) * (b - mean); }, 0) /
      (n - 1);
    variance = Math.max(variance, (hi - lo) * (hi - lo) / ((n + 1) * (n + 1)));
    var width = 2 * 1.96 * Math.sqrt(variance / n);
    var needed = Math.max(10, Math.ceil(variance * Math.pow(2 * 1.96 / target, 2)));
    node.textContent = "about " + width.toFixed(3) + " wide from " + n + " labelled rows; " +
      (width <= target ? "target width " + target + " reached"
        : "target width " + target + ": about " + needed + " labelled rows in all (" +
          Math.max(0, needed - n) + " more)");
    node.className = width <= target ? "done" : "";
  }

  function setLabel(item, value) {
    if (value === null) {
      delete state.labels[item.key];
    } else {
      value.time = new Date().toISOString();
      if (state.labeller) value.labeller = state.labeller;
      state.labels[item.key] = value;
    }
    save();
    show(item);
    progress();
  }

  // Move to item n. Opening the page moves without saving: a page that wrote at load could put
  // back an older state over labels another tab (or the page before a reload) had just written.
  function go(n, opening) {
    if (!items.length) return;
    n = Math.max(0, Math.min(items.length - 1, n));
    if (cursor >= 0) {
      items[cursor].el.classList.remove("cur");
      document.querySelectorAll("mark.on").forEach(function (m) { m.classList.remove("on"); });
    }
    cursor = n;
    state.cursor = n;
    var item = items[n];
    item.el.classList.add("cur");
    if (CLAIMS) {
      var card = item.el.closest("section");
      var mine = token(item.source, item.claim, item.against);
      card.querySelectorAll('mark[data-c*=" ' + mine + ' "]').forEach(function (m) {
        m.classList.add("on");
      });
    }
    item.el.scrollIntoView({ block: "center" });
    if (!opening) save();
  }

  function flash(text) {
    document.getElementById("status").textContent = text;
  }

  function line(item, saved) {
    var out = { id: item.row.id };
    if (CLAIMS) {
      out.claim = item.claim;
      out.label = saved.label;
      out.source = item.source;
      if (item.source === "reference") out.against = data.reference_against || "answer";
      else if (item.against === "reference") out.against = "reference";
    } else {
      out.metric = data.metric;
      out.value = saved.value;
    }
    var who = saved.labeller || state.labeller;
    if (who) out.labeller = who;
    out.time = saved.time;
    out.selection = data.selection;
    if (data.selection === "uncertainty") out.probability = item.row.probability;
    out.fingerprint = item.row.fingerprint;
    return JSON.stringify(out);
  }

  function exportLabels() {
    var lines = [];
    items.forEach(function (item) {
      var saved = state.labels[item.key];
      if (saved) lines.push(line(item, saved));
    });
    if (!lines.length) {
      flash("Nothing labelled yet.");
      return;
    }
    // First, how the rows were chosen (the line without an id that label readers look for).
    // "key": whether the ids are the rows' ids or their indexes (the reader looks up by it).
    // "fingerprint" ties the labels to the rows and claims they were given on.
    var first = {
      selection: data.selection, sample: data.sample, seed: data.seed,
      of_rows: data.population, key: data.row_key, metric: data.metric,
      drawn: data.rows.length, fingerprint: data.fingerprint
    };
    if (data.input) first.input = data.input;
    lines.unshift(JSON.stringify(first));
    var blob = new Blob([lines.join("\n") + "\n"], { type: "application/x-ndjson" });
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "labels.jsonl";
    document.body.appendChild(link);
    link.click();
    // The browser reads the blob after the click returns, when it gets to it: on a busy
    // machine a second was not always enough (the download failed), so the link is kept
    // for a minute.
    setTimeout(function () {
      URL.revokeObjectURL(link.href);
      link.remove();
    }, 60000);
    flash("Exported " + (lines.length - 1) + " labels to labels.jsonl.");
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA");
    if (typing) {
      if (event.key === "Enter" || event.key === "Escape") {
        target.blur();
        if (event.key === "Enter" && target !== document.getElementById("labeller")) go(cursor + 1);
      }
      return;
    }
    if (cursor < 0) return;
    var item = items[cursor];
    var key = event.key;
    var handled = true;
    if (key === "j") go(cursor + 1);
    else if (key === "k") go(cursor - 1);
    else if (key === "x") setLabel(item, null);
    else if (CLAIMS && (key === "s" || key === "n" || key === "u")) {
      setLabel(item, { label: { s: "supported", n: "not_supported", u: "unsure" }[key] });
      go(cursor + 1);
    } else if (!CLAIMS && key >= "1" && key <= "5" && key.length === 1) {
      setLabel(item, { value: STEPS[Number(key) - 1] });
      go(cursor + 1);
    } else if (!CLAIMS && key === "e") {
      item.input.focus();
    } else handled = false;
    if (handled) event.preventDefault();
  }

  document.title = "ragmeter labels: " + data.metric + " · " + data.results;
  app.textContent = "";
  app.appendChild(header());
  var main = el("main");
  data.rows.forEach(function (row) { renderRow(row, main); });
  if (!items.length) main.appendChild(el("p", null, "Nothing to label in this sample."));
  app.appendChild(main);
  progress();
  document.addEventListener("keydown", onKey);
  var start = typeof state.cursor === "number" ? state.cursor : 0;
  go(Math.min(start, items.length - 1), true);
  document.documentElement.setAttribute("data-render-ms", performance.now().toFixed(1));
})();
