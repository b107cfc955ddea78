// memdir ui: search as you type, and each memory's verification status once the background check is done.
// Text from memories is only ever set with textContent, never parsed as HTML.
"use strict";

function filterRows() {
  const box = document.getElementById("search");
  if (!box) return;
  const wanted = box.value.trim().toLowerCase();
  let shown = 0;
  for (const row of document.querySelectorAll("#memories tr.row")) {
    const hit = !wanted || row.dataset.search.includes(wanted);
    row.hidden = !hit;
    if (hit) shown += 1;
  }
  const count = document.getElementById("shown-count");
  if (count) count.textContent = String(shown);
}

function showStatuses(report) {
  const state = document.getElementById("verify-state");
  if (state) {
    state.textContent = !report.project ? "no project to check against"
      : report.error ? "failed: " + report.error : "checked against " + report.project;
  }
  for (const cell of document.querySelectorAll(".status[data-file]")) {
    const found = (report.memories[cell.dataset.source] || {})[cell.dataset.file];
    const status = found ? found.status : "none";
    cell.textContent = { ok: "verified", stale: "stale", unchecked: "not checked", none: "names nothing" }[status];
    cell.className = "status status-" + status;
    if (found && found.summary) cell.title = found.summary;
  }
}

async function pollVerification(tries) {
  if (!document.querySelector(".status[data-file]")) return;
  try {
    const answer = await fetch("verify.json", { credentials: "same-origin" });
    const report = await answer.json();
    if (report.ready) { showStatuses(report); return; }
  } catch (err) {
    return;  // the server stopped: leave the page as it is
  }
  if (tries > 0) setTimeout(() => pollVerification(tries - 1), 1500);
}

document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("search");
  if (box) {
    box.addEventListener("input", filterRows);
    filterRows();
  }
  for (const select of document.querySelectorAll("#type-filter, #source-filter")) {
    select.addEventListener("change", () => select.form.submit());
  }
  for (const form of document.querySelectorAll("form.delete")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm("Delete this memory? Its bytes are kept in its history; you can restore it.")) {
        event.preventDefault();
      }
    });
  }
  pollVerification(80);
});
