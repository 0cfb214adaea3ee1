/* Clustering: each text gets a cluster name, by typing it or by keys (1-9 an existing cluster, n a new one).
   The named inputs stay the single source of truth (plain posts and drafts use them); the groups panel,
   rebuilt after every change, shows the clusters as they form and renames or merges them. */
(function () {
  "use strict";
  var COLOURS = 8;

  function rows(box) { return Array.prototype.slice.call(box.querySelectorAll(".ctext")); }
  function field(row) { return row.querySelector("input[name]"); }
  function nameOf(row) { return field(row).value.trim(); }

  function order(box) { // palette order is stable: keys must not move under the annotator's fingers
    var used = [];
    rows(box).forEach(function (r) { var n = nameOf(r); if (n && used.indexOf(n) < 0) used.push(n); });
    var kept = (box.dataset.order ? JSON.parse(box.dataset.order) : []).filter(function (n) { return used.indexOf(n) >= 0; });
    used.forEach(function (n) { if (kept.indexOf(n) < 0) kept.push(n); });
    box.dataset.order = JSON.stringify(kept);
    return kept;
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function groupItem(box, name, k, names) {
    var li = el("li", "group g" + (k % COLOURS));
    var head = el("div", "group-head");
    var assign = el("button", "assign", k < 9 ? String(k + 1) : "+");
    assign.type = "button";
    assign.title = "Put the highlighted text here";
    assign.dataset.assign = name;
    var rename = el("input", "cname");
    rename.value = name; rename.dataset.old = name; rename.setAttribute("aria-label", "Rename cluster " + name);
    rename.setAttribute("dir", "auto"); rename.maxLength = 60;
    var members = rows(box).filter(function (r) { return nameOf(r) === name; });
    head.append(assign, rename, el("span", "count muted", "(" + members.length + ")"));
    if (names.length > 1) {
      var merge = el("select", "merge");
      merge.dataset.from = name; merge.setAttribute("aria-label", "Merge cluster " + name + " into");
      merge.append(new Option("merge into…", ""));
      names.forEach(function (other) { if (other !== name) merge.append(new Option(other, other)); });
      head.append(merge);
    }
    var list = el("ul", "members");
    members.forEach(function (r) {
      var text = r.querySelector(".text-box").textContent.trim();
      list.append(el("li", "", r.querySelector(".cnum").textContent + ". " + (text.length > 70 ? text.slice(0, 70) + "…" : text)));
    });
    li.append(head, list);
    return li;
  }

  function render(box) {
    var names = order(box), list = box.querySelector(".group-list"), missing = 0;
    list.textContent = "";
    names.forEach(function (name, k) { list.append(groupItem(box, name, k, names)); });
    rows(box).forEach(function (r) {
      var k = names.indexOf(nameOf(r));
      if (k < 0) { missing += 1; delete r.dataset.group; } else { r.dataset.group = String(k % COLOURS); }
    });
    box.querySelector("[data-unassigned]").textContent = missing ? missing + " text" + (missing > 1 ? "s" : "") + " without a cluster" : "every text has a cluster";
  }

  function changed(box) {
    render(box);
    box.dispatchEvent(new Event("change", { bubbles: true })); // drafts save on change
  }

  function current(box) {
    return box.querySelector(".ctext.current") || rows(box).filter(function (r) { return !nameOf(r); })[0] || rows(box)[0];
  }

  function highlight(box, row) {
    if (!row) return;
    rows(box).forEach(function (r) { r.classList.toggle("current", r === row); });
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }

  function advance(box, row) {
    var all = rows(box), after = all.slice(all.indexOf(row) + 1).concat(all);
    highlight(box, after.filter(function (r) { return !nameOf(r); })[0] || row);
  }

  function assign(box, row, name) {
    field(row).value = name;
    changed(box);
    advance(box, row);
  }

  function newName(box) {
    var names = order(box), n = names.length + 1;
    while (names.indexOf("C" + n) >= 0) n += 1;
    return "C" + n;
  }

  function relabel(box, from, to) { // a renamed cluster keeps its place (and key); a merged one disappears
    var names = order(box), i = names.indexOf(from);
    if (i >= 0 && names.indexOf(to) < 0) { names[i] = to; box.dataset.order = JSON.stringify(names); }
    rows(box).forEach(function (r) { if (nameOf(r) === from) field(r).value = to; });
    changed(box);
  }

  function init(root) {
    root.querySelectorAll("[data-clusters]:not([data-ready])").forEach(function (box) {
      box.dataset.ready = "1";
      box.querySelector(".groups").hidden = false;
      rows(box).forEach(function (r) { r.tabIndex = 0; field(r).tabIndex = -1; });
      render(box);
      highlight(box, current(box));
    });
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:load", function (e) { init(e.detail.elt); });

  document.addEventListener("invalid", function (e) { // Enter too early: highlight the first text left over
    var box = e.target.closest && e.target.closest("[data-clusters][data-ready]");
    if (box && e.target === box.querySelector(".ctext input:invalid")) setTimeout(function () { highlight(box, e.target.closest(".ctext")); }, 0);
  }, true);

  document.addEventListener("input", function (e) {
    var box = e.target.closest && e.target.closest("[data-clusters]");
    if (box && e.target.name) render(box);
  });

  document.addEventListener("change", function (e) {
    var box = e.target.closest && e.target.closest("[data-clusters]"), t = e.target;
    if (!box) return;
    if (t.classList.contains("cname")) {
      var to = t.value.trim();
      if (to && to !== t.dataset.old) relabel(box, t.dataset.old, to); else t.value = t.dataset.old;
    } else if (t.classList.contains("merge") && t.value) {
      relabel(box, t.dataset.from, t.value);
    }
  });

  document.addEventListener("click", function (e) {
    var box = e.target.closest && e.target.closest("[data-clusters]");
    if (!box) return;
    var row = e.target.closest(".ctext"), button = e.target.closest("button");
    if (row && !e.target.matches("input")) highlight(box, row);
    if (button && button.dataset.assign) assign(box, current(box), button.dataset.assign);
    if (button && button.hasAttribute("data-new-cluster")) assign(box, current(box), newName(box));
  });

  document.addEventListener("keydown", function (e) {
    var box = document.querySelector("[data-clusters][data-ready]"), t = e.target;
    if (!box || e.ctrlKey || e.metaKey || e.altKey) return;
    if (t.classList && t.classList.contains("cname")) {
      if (e.key === "Enter") { e.preventDefault(); t.blur(); }
      return;
    }
    if (t !== document.body && !(t.classList && t.classList.contains("ctext") && box.contains(t))) return;
    var row = current(box), names = order(box), all = rows(box);
    if (/^[1-9]$/.test(e.key) && names[Number(e.key) - 1] !== undefined) {
      assign(box, row, names[Number(e.key) - 1]);
    } else if (e.key === "n" || e.key === "N") {
      assign(box, row, newName(box));
    } else if (e.key === "ArrowDown" || e.key === "j") {
      highlight(box, all[Math.min(all.indexOf(row) + 1, all.length - 1)]);
    } else if (e.key === "ArrowUp" || e.key === "k") {
      highlight(box, all[Math.max(all.indexOf(row) - 1, 0)]);
    } else {
      return;
    }
    e.preventDefault();
  });
})();
