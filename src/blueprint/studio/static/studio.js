// Blueprint Studio: keyboard keys and live checks while editing. Every page works without it.
(function () {
  "use strict";

  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }

  function press(key) {
    var found = document.querySelector('[data-key="' + key + '"]');
    if (!found) { return false; }
    if (found.tagName === "A") { window.location.assign(found.href); } else { found.click(); }
    return true;
  }

  var KEYS = { j: "next", ArrowRight: "next", k: "previous", ArrowLeft: "previous", e: "edit",
               p: "pass", f: "fail", s: "skip" };

  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      if (press("save")) { event.preventDefault(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    if (event.key === "/") {
      var search = document.querySelector('[data-key="search"]');
      if (search) { event.preventDefault(); search.focus(); }
      return;
    }
    var named = KEYS[event.key] || (/^[0-9]$/.test(event.key) ? "score-" + event.key : null);
    if (named && press(named)) { event.preventDefault(); }
  });

  // live findings and diff while a row is edited: the form is sent to the check route, which
  // answers with the same panel the Check button renders
  var editor = document.getElementById("editor");
  var panel = document.getElementById("check");
  if (!editor || !panel || !window.fetch) { return; }
  var timer = null;
  var sent = 0;
  function check() {
    var body = new FormData(editor);
    body.set("action", "check");
    var mine = ++sent;
    fetch(editor.getAttribute("data-check"), { method: "POST", body: body, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) { if (html !== null && mine === sent) { panel.innerHTML = html; } })
      .catch(function () { /* the Check button still works */ });
  }
  function later() { clearTimeout(timer); timer = setTimeout(check, 350); }
  editor.addEventListener("input", later);
  editor.addEventListener("change", later);
})();
